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
use crate::store::queries::callbacks::AttemptOutcome;
use crate::store::rows::{CallbackAttemptRow, CallbackDeliveryRow};
use crate::telemetry::{metrics, redact};
use std::collections::HashMap;
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
    let senders = Senders::for_batch(app, &claimed).await;
    let mut attempts = JoinSet::new();
    for delivery in claimed {
        let app = app.clone();
        let sender = senders.of(&delivery.merchant_id);
        attempts.spawn(async move {
            let sent = send(&app, delivery, sender?).await?;
            record(&app, vec![sent]).await;
            Ok::<_, ApiError>(())
        });
    }
    while let Some(done) = attempts.join_next().await {
        if let Ok(Err(e)) = done {
            tracing::error!(error = %e, "a callback attempt could not be made");
        }
    }
    Ok(count)
}

/// What an attempt needs of its merchant: the key that signs and how long
/// the receiver may take.
#[derive(Clone)]
struct Sender {
    key: String,
    timeout: Duration,
}

/// The senders of one claimed batch, looked up once per merchant in it
/// rather than once per attempt: a drained backlog is mostly one merchant's.
struct Senders(HashMap<String, Result<Sender, ApiError>>);

impl Senders {
    async fn for_batch(app: &App, batch: &[CallbackDeliveryRow]) -> Senders {
        let mut found = HashMap::new();
        for delivery in batch {
            if found.contains_key(&delivery.merchant_id) {
                continue;
            }
            let sender = async {
                let merchant = merchants::find(app, &delivery.merchant_id).await?;
                let key = merchants::signing_key(app, &delivery.merchant_id).await?;
                let timeout = Duration::from_secs(
                    u64::try_from(merchant.callback_timeout_seconds)
                        .unwrap_or(10)
                        .max(1),
                );
                Ok(Sender { key, timeout })
            }
            .await;
            found.insert(delivery.merchant_id.clone(), sender);
        }
        Senders(found)
    }

    fn of(&self, merchant_id: &str) -> Result<Sender, ApiError> {
        match self.0.get(merchant_id) {
            Some(Ok(sender)) => Ok(sender.clone()),
            Some(Err(e)) => Err(ApiError::Internal(format!(
                "the sender of a callback of merchant {merchant_id}: {e}"
            ))),
            None => Err(ApiError::Internal(format!(
                "merchant {merchant_id} was not looked up"
            ))),
        }
    }
}

/// An attempt made, its outcome not yet recorded.
struct Sent {
    delivery: CallbackDeliveryRow,
    record: CallbackAttemptRow,
    order_status: CallbackStatus,
    now: i64,
    outcome: Outcome,
    told: Told,
}

impl Sent {
    fn outcome(&self) -> AttemptOutcome {
        AttemptOutcome {
            delivery: self.delivery.clone(),
            attempt: self.record.clone(),
            order_status: self.order_status,
            now: self.now,
        }
    }
}

/// One attempt of one claimed delivery: signs (once per record), posts,
/// and judges the answer. Nothing is written here; `record` writes.
async fn send(
    app: &App,
    mut delivery: CallbackDeliveryRow,
    sender: Sender,
) -> Result<Sent, ApiError> {
    let schedule = app.config.callback_schedule;
    let scheduled_at = delivery.next_attempt_at.unwrap_or(delivery.updated_at);
    let signature = match &delivery.signature {
        Some(s) => s.clone(),
        None => {
            let fields = payments_wire::SigningFields::from_json_body(delivery.body.as_bytes())
                .map_err(|e| ApiError::Internal(format!("stored callback body: {e}")))?;
            payments_wire::sign(&fields, &sender.key)
        }
    };
    let headers = [
        ("x-api-key", sender.key),
        // Real time, on every profile: the receiver checks it against its
        // own clock (a 300 s window in the seed's sample), and a sandbox
        // clock moved forward to make schedules run must not make every
        // callback look stale. Request timestamps are checked the same way.
        ("x-timestamp", app.wall_unix().to_string()),
        ("x-signature", signature.clone()),
    ];
    let started_at = app.now_unix();
    let started_ms = app.clock.now().timestamp_millis();
    let started = Instant::now();
    let answer = app
        .courier
        .post(
            &delivery.callback_url,
            &headers,
            &delivery.body,
            sender.timeout,
        )
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
        outcome,
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
    Ok(Sent {
        delivery,
        record,
        order_status,
        now,
        outcome,
        told,
    })
}

/// Writes the outcomes of attempts made, each with its attempt record and
/// its order's summary, all in one transaction: one commit for as many
/// attempts as finished while the last commit was under way. A batch the
/// database refuses is written again one attempt at a time, so that one
/// bad record does not cost the others theirs. Returns the outcomes.
async fn record(app: &App, batch: Vec<Sent>) -> Vec<Outcome> {
    let rows: Vec<_> = batch.iter().map(Sent::outcome).collect();
    let single = rows.len() == 1;
    let kept = write_outcomes(app, rows).await;
    let kept: Vec<Option<bool>> = match kept {
        Ok(kept) => kept.into_iter().map(Some).collect(),
        Err(e) if single => {
            tracing::error!(error = %e, "recording a callback attempt failed");
            vec![None]
        }
        Err(e) => {
            tracing::warn!(error = %e, attempts = batch.len(), "recording a batch of callback attempts failed; recording them one at a time");
            let mut each = Vec::with_capacity(batch.len());
            for s in &batch {
                each.push(match write_outcomes(app, vec![s.outcome()]).await {
                    Ok(k) => k.first().copied(),
                    Err(e) => {
                        tracing::error!(error = %e, "recording a callback attempt failed");
                        None
                    }
                });
            }
            each
        }
    };
    batch
        .into_iter()
        .zip(kept)
        .map(|(s, kept)| {
            s.told.tell(kept);
            s.outcome
        })
        .collect()
}

async fn write_outcomes(app: &App, rows: Vec<AttemptOutcome>) -> Result<Vec<bool>, ApiError> {
    // A sweep that reclaimed a record meanwhile owns it now: that
    // attempt's result is dropped (not kept), the record redelivered.
    app.db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move { Ok(tx.finish_callback_attempts(&rows).await?) })
        })
        .await
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

/// At most this many attempts' outcomes go into one transaction.
const RECORD_BATCH: usize = 256;

/// An attempt made, with what it holds until its outcome is written: its
/// place among the concurrent attempts, and its claim.
struct Finished {
    sent: Sent,
    permit: tokio::sync::OwnedSemaphorePermit,
}

/// The delivery worker: attempts what is due, sweeps every minute, and
/// sleeps until the next due time, a commit that queued a callback, or a
/// clock change wakes it. Stops claiming when `stop` turns true and lets
/// the attempts under way finish and be recorded; whoever stops it may
/// abort it once its grace is over and give back what `claims` still
/// holds.
///
/// Attempts run concurrently; a recorder beside the claiming loop writes
/// their outcomes, as many as finished meanwhile in one transaction, and
/// only then frees their places, so that nothing waits unrecorded in
/// memory beyond `callback_concurrency` attempts.
pub async fn worker(app: Arc<App>, stop: tokio::sync::watch::Receiver<bool>, claims: Arc<Claims>) {
    let (finished_tx, finished_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::join!(
        claim_and_send(app.clone(), stop, claims.clone(), finished_tx),
        recorder(app, claims, finished_rx),
    );
}

/// Writes outcomes as they come, in batches, until every attempt's sender
/// is gone; then wakes the claiming loop, whose places are free again.
async fn recorder(
    app: Arc<App>,
    claims: Arc<Claims>,
    mut finished: tokio::sync::mpsc::UnboundedReceiver<Finished>,
) {
    let mut batch = Vec::with_capacity(RECORD_BATCH);
    while finished.recv_many(&mut batch, RECORD_BATCH).await > 0 {
        let (sent, held): (Vec<Sent>, Vec<_>) = batch
            .drain(..)
            .map(|f| {
                let id = f.sent.delivery.id.clone();
                (f.sent, (id, f.permit))
            })
            .unzip();
        record(&app, sent).await;
        for (id, permit) in held {
            claims.drop_claim(&id);
            drop(permit);
        }
        app.wake.notify_one();
    }
}

async fn claim_and_send(
    app: Arc<App>,
    mut stop: tokio::sync::watch::Receiver<bool>,
    claims: Arc<Claims>,
    finished: tokio::sync::mpsc::UnboundedSender<Finished>,
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
        let mut claimed_all = false;
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
                    claimed_all = i64::try_from(claimed.len()).is_ok_and(|n| n == limit);
                    claimed_any = !claimed.is_empty();
                    let senders = Senders::for_batch(&app, &claimed).await;
                    for delivery in claimed {
                        claims.hold(&delivery);
                        let Ok(permit) = permits.clone().acquire_owned().await else {
                            break;
                        };
                        let sender = senders.of(&delivery.merchant_id);
                        let (app, claims, finished) =
                            (app.clone(), claims.clone(), finished.clone());
                        attempts.spawn(async move {
                            let id = delivery.id.clone();
                            match async { send(&app, delivery, sender?).await }.await {
                                Ok(sent) => {
                                    // The recorder is gone only when the
                                    // worker was aborted: the claim stays
                                    // for the sweep (or the restart) to
                                    // give back.
                                    let _ = finished.send(Finished { sent, permit });
                                }
                                Err(e) => {
                                    tracing::error!(error = %e, "a callback attempt could not be made; the sweep will return it");
                                    claims.drop_claim(&id);
                                    drop(permit);
                                    app.wake.notify_one();
                                }
                            }
                        });
                    }
                }
                Err(e) => tracing::error!(error = %e, "claiming due callbacks failed"),
            }
        }
        while attempts.try_join_next().is_some() {}
        // A full batch leaves more due, most likely: claim again as soon
        // as places free up, without asking when the next one is due.
        if claimed_all {
            if permits.available_permits() == 0 {
                tokio::select! {
                    _ = tokio::time::sleep(longest) => {}
                    _ = app.wake.notified() => {}
                    _ = stop.changed() => {}
                }
            }
            continue;
        }
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
    // Dropping the last sender ends the recorder once it has written what
    // the attempts above sent it.
    drop(finished);
}
