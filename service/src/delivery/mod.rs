//! Callback delivery: claim what is due, post it, record what happened.
//!
//! A record waits in WAITING_RETRY until its `next_attempt_at`; a worker
//! claims it (SENDING), posts the stored body with a fresh `X-Timestamp`,
//! and writes the outcome and the attempt in one transaction: 2xx is
//! SUCCESS, 4xx is FAILED at once, anything else is retried 30 s after the
//! attempt's scheduled time until the fifth attempt fails. A sweep returns
//! records stuck in SENDING (a worker that died mid-attempt) to
//! WAITING_RETRY. Every time comes from the injected clock.

pub mod courier;

use crate::app::merchants;
use crate::app::App;
use crate::app::PostFailure;
use crate::domain::error::ApiError;
use crate::domain::schedule::{judge, Outcome};
use crate::domain::status::{CallbackStatus, DeliveryStatus};
use crate::store::rows::{CallbackAttemptRow, CallbackDeliveryRow};
use crate::telemetry::{metrics, redact};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Claims and attempts every delivery due now, concurrently (at most
/// `concurrency` at once), and waits for them. Returns how many it tried.
pub async fn run_due(app: &Arc<App>, concurrency: usize) -> Result<usize, ApiError> {
    let now = app.now_unix();
    let limit = i64::try_from(concurrency.max(1)).unwrap_or(64);
    let claimer = app.config.instance_id.clone();
    let claimed = app
        .db
        .run(move |s| Box::pin(async move { s.claim_due_callbacks(now, limit, &claimer).await }))
        .await?;
    let count = claimed.len();
    let mut attempts = JoinSet::new();
    for delivery in claimed {
        let app = app.clone();
        attempts.spawn(async move { attempt(&app, delivery).await });
    }
    while let Some(done) = attempts.join_next().await {
        if let Ok(Err(e)) = done {
            tracing::error!(error = %e, "a callback attempt could not be recorded");
        }
    }
    Ok(count)
}

/// One attempt of one claimed delivery, and its record.
pub async fn attempt(app: &App, mut delivery: CallbackDeliveryRow) -> Result<Outcome, ApiError> {
    let schedule = app.config.callback_schedule;
    let scheduled_at = delivery.next_attempt_at.unwrap_or(delivery.updated_at);
    let merchant = merchants::find(app, &delivery.merchant_id).await?;
    let key = merchants::signing_key(app, &delivery.merchant_id).await?;
    let signature = match &delivery.signature {
        Some(s) => s.clone(),
        None => {
            let fields = payments_wire::SigningFields::from_json_body(delivery.body.as_bytes())
                .map_err(|e| ApiError::Internal(format!("stored callback body: {e}")))?;
            payments_wire::sign(&fields, &key)
        }
    };
    let headers = [
        ("x-api-key", key),
        // Real time, on every profile: the receiver checks it against its
        // own clock (a 300 s window in the seed's sample), and a sandbox
        // clock moved forward to make schedules run must not make every
        // callback look stale. Request timestamps are checked the same way.
        ("x-timestamp", app.wall_unix().to_string()),
        ("x-signature", signature.clone()),
    ];
    let timeout = Duration::from_secs(
        u64::try_from(merchant.callback_timeout_seconds)
            .unwrap_or(10)
            .max(1),
    );
    let started_at = app.now_unix();
    let started_ms = app.clock.now().timestamp_millis();
    let started = Instant::now();
    let answer = app
        .courier
        .post(&delivery.callback_url, &headers, &delivery.body, timeout)
        .await;
    let took = started.elapsed();
    let duration_ms = i64::try_from(took.as_millis()).unwrap_or(i64::MAX);
    let number = delivery.attempts + 1;
    let outcome = judge(answer.as_ref().ok().copied(), number, &schedule);
    let next_attempt_at =
        (outcome == Outcome::Retry).then_some(scheduled_at + schedule.retry_interval_seconds);
    let now = app.now_unix();
    delivery.status = match outcome {
        Outcome::Success => DeliveryStatus::Success,
        Outcome::Rejected | Outcome::Failed => DeliveryStatus::Failed,
        Outcome::Retry => DeliveryStatus::WaitingRetry,
    };
    delivery.attempts = number;
    delivery.next_attempt_at = next_attempt_at;
    delivery.signature = Some(signature);
    delivery.updated_at = now;
    let (status_code, error, timed_out) = match answer {
        Ok(status) => (Some(i32::from(status)), None, false),
        Err(PostFailure { reason, timed_out }) => (None, Some(reason), timed_out),
    };
    let record = CallbackAttemptRow {
        id: uuid::Uuid::new_v4().to_string(),
        delivery_id: delivery.id.clone(),
        attempt: number,
        scheduled_at,
        started_at,
        duration_ms,
        status_code,
        error,
        outcome: outcome.as_str().to_string(),
        next_attempt_at,
    };
    let told = Told {
        order_no: delivery.order_no.clone(),
        event: delivery.event.clone(),
        receiver: redact::url_origin(&delivery.callback_url),
        attempt: number,
        outcome: if timed_out && outcome == Outcome::Retry {
            "timeout"
        } else {
            outcome.as_str()
        },
        status_code,
        error: record.error.clone(),
        took,
        first_attempt_delay_ms: (number == 1)
            .then_some(delivery.queued_at_ms)
            .flatten()
            .map(|queued| started_ms - queued),
    };
    let order_status = match outcome {
        Outcome::Success => CallbackStatus::Success,
        Outcome::Rejected | Outcome::Failed => CallbackStatus::Failed,
        Outcome::Retry => CallbackStatus::Pending,
    };
    let recorded = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move {
                // A sweep that reclaimed the record meanwhile owns it now;
                // this attempt's result is dropped, the record redelivered.
                let kept = tx.finish_callback_attempt(&delivery, &record).await?;
                if kept {
                    tx.note_order_callback(
                        &delivery.order_kind,
                        &delivery.order_no,
                        order_status,
                        now,
                    )
                    .await?;
                }
                Ok(kept)
            })
        })
        .await;
    told.tell(recorded.as_ref().ok().copied());
    recorded?;
    Ok(outcome)
}

/// An attempt as operators see it: its counts, and one info line naming
/// the order (the receiver by its origin only: a URL's path or query may
/// hold the merchant's own secret).
struct Told {
    order_no: String,
    event: String,
    receiver: String,
    attempt: i32,
    outcome: &'static str,
    status_code: Option<i32>,
    error: Option<String>,
    took: Duration,
    first_attempt_delay_ms: Option<i64>,
}

impl Told {
    /// `kept`: whether the outcome was recorded (`Some(false)`: a sweep had
    /// reclaimed the record; `None`: the database refused the write).
    fn tell(self, kept: Option<bool>) {
        metrics::callback_attempt(self.outcome, self.took);
        if let Some(delay) = self.first_attempt_delay_ms {
            metrics::callback_first_attempt_delay(delay);
        }
        let took_ms = u64::try_from(self.took.as_millis()).unwrap_or(u64::MAX);
        match kept {
            Some(true) => tracing::info!(
                order_no = %self.order_no,
                event = %self.event,
                receiver = %self.receiver,
                attempt = self.attempt,
                outcome = self.outcome,
                status_code = self.status_code,
                error = self.error.as_deref(),
                took_ms,
                "callback attempt"
            ),
            Some(false) => tracing::warn!(
                order_no = %self.order_no,
                event = %self.event,
                attempt = self.attempt,
                outcome = self.outcome,
                "callback attempt finished after a sweep reclaimed it; it will be sent again"
            ),
            None => tracing::error!(
                order_no = %self.order_no,
                event = %self.event,
                attempt = self.attempt,
                outcome = self.outcome,
                "callback attempt could not be recorded; the sweep will send it again"
            ),
        }
    }
}

/// Returns deliveries stuck in SENDING to WAITING_RETRY, due now.
pub async fn sweep(app: &App) -> Result<usize, ApiError> {
    let now = app.now_unix();
    let before = now - app.config.callback_schedule.stuck_after_seconds;
    let swept = app
        .db
        .run(move |s| Box::pin(async move { s.sweep_stuck_callbacks(before, now).await }))
        .await?;
    Ok(swept)
}

/// The claims of attempts under way, so that a worker stopped before they
/// finished can give them back (WAITING_RETRY at their scheduled time)
/// instead of leaving them SENDING until the stuck sweep.
#[derive(Debug, Default)]
pub struct Claims(std::sync::Mutex<std::collections::HashMap<String, String>>);

impl Claims {
    fn hold(&self, delivery: &CallbackDeliveryRow) {
        if let (Ok(mut held), Some(token)) = (self.0.lock(), &delivery.claim_token) {
            held.insert(delivery.id.clone(), token.clone());
        }
    }

    fn drop_claim(&self, id: &str) {
        if let Ok(mut held) = self.0.lock() {
            held.remove(id);
        }
    }

    /// Gives back every claim still held; returns how many were.
    pub async fn release_all(&self, app: &App) -> usize {
        let held: Vec<(String, String)> = match self.0.lock() {
            Ok(mut held) => held.drain().collect(),
            Err(_) => return 0,
        };
        let mut released = 0;
        for (id, token) in held {
            let outcome = app
                .db
                .run(|s| Box::pin(async move { s.release_callback(&id, &token).await }))
                .await;
            match outcome {
                Ok(true) => released += 1,
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(error = %e, "releasing a claimed callback failed; the sweep will return it")
                }
            }
        }
        released
    }
}

/// The longest the worker sleeps between passes (it looks at least this
/// often for callbacks other instances queued).
const LONGEST_PAUSE: Duration = Duration::from_secs(5);

/// The same, while the LISTEN connection that hears other instances is
/// down.
const UNHEARD_PAUSE: Duration = Duration::from_secs(1);

/// The delivery worker: attempts what is due, sweeps every minute, and
/// sleeps until the next due time, a commit that queued a callback, or a
/// clock change wakes it. Stops claiming when `stop` turns true and lets
/// the attempts under way finish; whoever stops it may abort it once its
/// grace is over and give back what `claims` still holds.
pub async fn worker(
    app: Arc<App>,
    mut stop: tokio::sync::watch::Receiver<bool>,
    claims: Arc<Claims>,
) {
    let concurrency = app.config.callback_concurrency.max(1);
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut attempts: JoinSet<()> = JoinSet::new();
    let mut next_sweep = app.now_unix();
    // This instance's claims from before a crash go back at once.
    let me = app.config.instance_id.clone();
    match app
        .db
        .run(move |s| Box::pin(async move { s.release_claims_of(&me).await }))
        .await
    {
        Ok(0) => {}
        Ok(n) => {
            tracing::warn!(released = n, instance = %app.config.instance_id, "claims held before a restart given back")
        }
        Err(e) => {
            tracing::error!(error = %e, "giving back claims from before a restart failed; the sweep will")
        }
    }
    loop {
        if *stop.borrow() {
            break;
        }
        // Without LISTEN (lost, to be reconnected) callbacks committed on
        // other instances are found by looking often.
        let longest = match app.db.listening() {
            Some(false) => UNHEARD_PAUSE,
            _ => LONGEST_PAUSE,
        };
        app.beats.delivery.beat(longest);
        let now = app.now_unix();
        if now >= next_sweep {
            let swept = sweep(&app).await;
            metrics::worker_run("sweep", swept.is_ok());
            match swept {
                Ok(0) => {}
                Ok(n) => tracing::warn!(
                    swept = n,
                    "stuck callback deliveries returned to WAITING_RETRY"
                ),
                Err(e) => tracing::error!(error = %e, "sweeping stuck callbacks failed"),
            }
            next_sweep = now + app.config.callback_schedule.sweep_every_seconds;
        }
        // Claim only as many as can be sent now, so nothing claimed waits
        // in SENDING behind a slow receiver.
        let free = permits.available_permits();
        let mut claimed_any = false;
        if free > 0 {
            let limit = i64::try_from(free).unwrap_or(1);
            let claimer = app.config.instance_id.clone();
            let claimed = app
                .db
                .run(move |s| {
                    Box::pin(async move { s.claim_due_callbacks(now, limit, &claimer).await })
                })
                .await;
            metrics::worker_run("delivery", claimed.is_ok());
            match claimed {
                Ok(claimed) => {
                    claimed_any = !claimed.is_empty();
                    for delivery in claimed {
                        claims.hold(&delivery);
                        let Ok(permit) = permits.clone().acquire_owned().await else {
                            break;
                        };
                        let app = app.clone();
                        let claims = claims.clone();
                        attempts.spawn(async move {
                            let id = delivery.id.clone();
                            if let Err(e) = attempt(&app, delivery).await {
                                tracing::error!(error = %e, "a callback attempt could not be recorded");
                            }
                            claims.drop_claim(&id);
                            drop(permit);
                            app.wake.notify_one();
                        });
                    }
                }
                Err(e) => tracing::error!(error = %e, "claiming due callbacks failed"),
            }
        }
        while attempts.try_join_next().is_some() {}
        let next_due = app
            .db
            .run(|s| Box::pin(async move { s.next_callback_due().await }))
            .await
            .ok()
            .flatten();
        let now = app.now_unix();
        // Other instances queue callbacks this one hears nothing of: look
        // at least every few seconds.
        let seconds_until =
            |t: i64| Duration::from_secs(u64::try_from(t - now).unwrap_or(0)).min(longest);
        let wait = if permits.available_permits() == 0 {
            longest
        } else {
            match next_due {
                // Due and claimed: go on at once. Due but not claimed (another
                // instance holds it): look again shortly.
                Some(due) if due <= now => {
                    if claimed_any {
                        Duration::ZERO
                    } else {
                        Duration::from_millis(100)
                    }
                }
                Some(due) => seconds_until(due.min(next_sweep)),
                None => seconds_until(next_sweep),
            }
        };
        if !wait.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = app.wake.notified() => {}
                _ = stop.changed() => {}
            }
        }
    }
    while attempts.join_next().await.is_some() {}
}
