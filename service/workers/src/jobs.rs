//! Background work that moves orders with time: inquiries about channel
//! payments whose notification never came (`payment_sync`), expiry, the dispatch
//! of approved withdrawals that could not be dispatched at approval (or
//! whose outcome is in doubt), and inquiries about payouts under way. It
//! reads the injected clock for what is due and sleeps until the next
//! `expire_at` (or until an earlier one is created, or the clock moves);
//! the interval only bounds a sleep with nothing due, for orders another
//! instance created.

use crate::app::deposits;
use crate::app::App;
use crate::telemetry::metrics;
use std::sync::Arc;
use std::time::Duration;

/// A pass that failed (the database is away) is tried again after this.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(1);

/// Expires due deposits and dispatches waiting withdrawals, until the task
/// is dropped.
pub async fn expiry_loop(app: Arc<App>, longest_sleep: Duration) {
    // The first pass asks channels about every deposit awaiting payment
    // once: what they did while this instance was away is not missed.
    let mut inquired_until = 0;
    loop {
        app.beats.expiry.beat(longest_sleep);
        app.expiry.reset();
        let mut failed = false;
        // Before expiry: a deposit paid at its channel whose notification
        // was lost completes rather than expires.
        let now = app.now_unix();
        let asked = crate::app::payment_sync::inquire_due(&app, inquired_until, now).await;
        metrics::worker_run("payment_inquiry", asked.is_ok());
        match asked {
            Ok(_) => inquired_until = now,
            Err(e) => {
                tracing::error!(error = %e, "asking channels about payments failed");
                failed = true;
            }
        }
        // A channel deposit is expired only once its channel has said it
        // was not paid (a paid one completes instead, or is held): one
        // whose payment is unknown waits, and is asked again soon.
        let expired = crate::app::payment_sync::expire_due(&app).await;
        metrics::worker_run("expiry", expired.is_ok());
        let waiting_for_channels = match expired {
            Ok((_, kept)) => kept > 0,
            Err(e) => {
                // Nothing is lost: the orders stay pending until expired,
                // and a payment reaching one meanwhile expires it itself.
                tracing::error!(error = %e, "expiring due deposits failed");
                failed = true;
                false
            }
        };
        let dispatched = crate::app::withdrawals::dispatch_due(&app).await;
        metrics::worker_run("dispatch", dispatched.is_ok());
        if let Err(e) = dispatched {
            tracing::error!(error = %e, "dispatching approved withdrawals failed");
            failed = true;
        }
        let inquired = crate::app::withdrawals::inquire_due(&app).await;
        metrics::worker_run("inquiry", inquired.is_ok());
        if let Err(e) = inquired {
            tracing::error!(error = %e, "asking channels about payouts under way failed");
            failed = true;
        }
        let next = match deposits::next_expiry(&app).await {
            Ok(next) => next,
            Err(e) => {
                tracing::error!(error = %e, "reading the next deposit expiry failed");
                failed = true;
                None
            }
        };
        // Past-due deposits waiting for their channel keep `next` in the
        // past: the retry's sleep, not `next`, paces the asking.
        let next = if waiting_for_channels { None } else { next };
        let failed = failed || waiting_for_channels;
        let longest = if failed {
            RETRY_AFTER_FAILURE.min(longest_sleep)
        } else {
            longest_sleep
        };
        app.expiry.sleep(app.clock.as_ref(), next, longest).await;
    }
}

/// How often the sequencer looks for unplaced events without being rung:
/// events an instance committed but could not place before it stopped.
const SEQUENCE_UNRUNG: Duration = Duration::from_secs(1);
/// After a pass that placed events, how long the sequencer lets the next
/// ones gather before it answers the bell again. A pass is six round
/// trips however few events it places: rung by every commit, it ran
/// about once for every seven events under 16 approvals in flight, a
/// tenth of the database's statements (`pg_stat_statements`, issue 56).
/// Gathering makes the passes fewer and fuller for at most this much
/// more delay before an event is readable in the feed. Real time on
/// purpose: it paces the database's work, it is not when anything is due.
const SEQUENCE_GATHER: Duration = Duration::from_millis(10);
/// Seconds between two retention sweeps, on the injected clock.
const SWEEP_EVERY: i64 = 600;

/// Places committed merchant events in the feed each time a commit rings
/// (`app::events` says why one pass at a time keeps the feed gap-free),
/// and deletes those past `event_retention_days` now and then.
pub async fn events_loop(app: Arc<App>) {
    let bell = app.db.events_recorded();
    let mut swept_at = i64::MIN;
    loop {
        let placed = crate::app::events::sequence(&app).await;
        metrics::worker_run("event_sequence", placed.is_ok());
        match placed {
            Ok(0) => {}
            Ok(_) => tokio::time::sleep(SEQUENCE_GATHER).await,
            Err(e) => tracing::error!(error = %e, "placing merchant events in the feed failed"),
        }
        let now = app.now_unix();
        if now.saturating_sub(swept_at) >= SWEEP_EVERY {
            swept_at = now;
            match crate::app::events::forget_expired(&app).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "merchant events past retention deleted"),
                Err(e) => tracing::error!(error = %e, "deleting expired merchant events failed"),
            }
        }
        // Unrung, the timeout is the look for what other instances left.
        let _ = tokio::time::timeout(SEQUENCE_UNRUNG, bell.notified()).await;
    }
}

/// How often every instance reads the operators' routing tables again: a
/// change approved on one instance is in force on all within a second.
/// Real time on purpose: it bounds how stale a copy is, not when anything
/// is due.
const ROUTING_REREAD: Duration = Duration::from_millis(500);

/// Keeps this instance's copy of the routing tables current
/// (`app::routing::Router::refresh`): a few rows, read twice a second.
pub async fn routing_loop(app: Arc<App>) {
    loop {
        tokio::time::sleep(ROUTING_REREAD).await;
        match app.router.refresh(&app).await {
            Ok(true) => tracing::info!("routing tables changed; now in force here"),
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(error = %e, "routing tables not read again; the copy in force stays")
            }
        }
    }
}

/// How often the billing schedule looks for ended periods. A period is
/// billed `billing::SETTLE_SECONDS` after it ends, so a pass a minute is
/// prompt enough; the clock it compares with is the injected one.
const BILL_EVERY: Duration = Duration::from_secs(60);
/// Statements one pass issues at most, so that a backlog (a first start
/// after months) is worked off in steps that each report progress.
const BILL_PER_PASS: usize = 100;
/// After a failed pass (the database away, a conflict with another
/// instance), the next one comes sooner.
const BILL_RETRY: Duration = Duration::from_secs(5);

/// Issues due billing statements until the task is dropped. Every worker
/// instance runs it; the statements' unique key makes each one once.
pub async fn billing_loop(app: Arc<App>) {
    loop {
        let issued = crate::app::billing::issue_due(&app, BILL_PER_PASS).await;
        metrics::worker_run("billing", issued.is_ok());
        let pause = match issued {
            Ok(0) => BILL_EVERY,
            Ok(n) => {
                tracing::info!(issued = n, "billing statements issued");
                // A full pass may have left more: go on at once.
                if n >= BILL_PER_PASS {
                    Duration::ZERO
                } else {
                    BILL_EVERY
                }
            }
            Err(e) => {
                // Nothing was half issued (each statement is one
                // transaction): try again soon.
                tracing::error!(error = %e, "issuing billing statements failed");
                BILL_RETRY
            }
        };
        // A moved sandbox clock ends the pause: the period it passed is due.
        let _ = tokio::time::timeout(pause, app.billing.notified()).await;
    }
}

/// How often retention looks for what aged out; what it finds is deleted
/// in batches (`app::retention`).
const RETAIN_EVERY: Duration = Duration::from_secs(600);

/// Deletes what is past its retention window until the task is dropped.
/// Every worker instance runs it; two deleting at once delete different
/// batches or find nothing.
pub async fn retention_loop(app: Arc<App>) {
    loop {
        let swept = crate::app::retention::sweep(&app, |so_far| {
            tracing::debug!(
                attempts = so_far.attempts,
                notifications = so_far.notifications,
                sessions = so_far.sessions,
                "retention: deleting"
            );
        })
        .await;
        metrics::worker_run("retention", swept.is_ok());
        match swept {
            Ok(s) if s.total() > 0 => tracing::info!(
                attempts = s.attempts,
                notifications = s.notifications,
                sessions = s.sessions,
                "retention: rows past their window deleted"
            ),
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "retention failed; the next pass tries again"),
        }
        tokio::time::sleep(RETAIN_EVERY).await;
    }
}
