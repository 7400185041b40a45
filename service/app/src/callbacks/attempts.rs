//! Attempts at a callback delivery, as the use cases decide them: which
//! records are due and are this instance's to send (claimed), what is
//! posted (the stored body, signed once per record, with the moment's
//! timestamp), what an answer comes to (`domain::schedule`'s retry
//! discipline), and the outcomes written, as many per transaction as
//! finished together. `delivery` posts, waits and reports; it decides
//! nothing.

use super::signing::{self, Signer};
use crate::domain::error::ApiError;
use crate::domain::schedule::{judge, Outcome};
use crate::domain::status::{CallbackScheme, CallbackStatus, DeliveryStatus};
use crate::store::queries::callbacks::AttemptOutcome;
pub use crate::store::queries::callbacks::Shares;
use crate::store::rows::{CallbackAttemptRow, CallbackDeliveryRow};
use crate::telemetry::redact;
use crate::{merchants, App, PostFailure};
use std::collections::HashMap;
use std::time::Duration;

/// A record claimed for this instance, with what its attempt needs (or
/// why it cannot be made: the sweep returns it later).
pub struct Claimed {
    pub id: String,
    pub claim_token: Option<String>,
    /// Whose share of the attempts in flight it takes.
    pub merchant_id: String,
    pub receiver_host: Option<String>,
    pub attempt: Result<Attempt, ApiError>,
}

/// One attempt of one claimed record, before it is posted.
pub struct Attempt {
    delivery: CallbackDeliveryRow,
    sender: Sender,
    scheduled_at: i64,
}

/// What an attempt needs of its merchant: how it signs and how long the
/// receiver may take.
#[derive(Clone)]
struct Sender {
    signer: Signer,
    timeout: Duration,
}

/// What is posted, as the courier takes it.
pub struct Post<'a> {
    pub url: &'a str,
    pub headers: Vec<(&'static str, String)>,
    pub body: &'a str,
    pub timeout: Duration,
}

/// Claims up to `limit` records due now for this instance, no more of a
/// merchant or a receiver host than `shares` leaves room for, and looks
/// up each merchant's sender once per batch (a drained backlog is mostly
/// one merchant's).
pub async fn claim_due(app: &App, limit: usize, shares: Shares) -> Result<Vec<Claimed>, ApiError> {
    let now = app.now_unix();
    let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
    let claimer = app.config.instance_id.clone();
    // A transaction of its own, though one statement: so that the claim
    // is planned once per connection (`plan_once`), not at every claim.
    let claimed = app
        .db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                s.plan_once().await?;
                Ok(s.claim_due_callbacks(now, limit, &claimer, &shares).await?)
            })
        })
        .await?;
    let mut senders: HashMap<String, Result<Sender, String>> = HashMap::new();
    let mut out = Vec::with_capacity(claimed.len());
    for mut delivery in claimed {
        let platform = delivery.order_kind.is_platform();
        // The platform's sender is one for every platform event; a
        // merchant id cannot be empty, so the key cannot collide.
        let key = match platform {
            true => String::new(),
            false => delivery.merchant_id.clone(),
        };
        if !senders.contains_key(&key) {
            let sender = match platform {
                true => platform_sender(app),
                false => sender_of(app, &delivery.merchant_id).await,
            };
            senders.insert(key.clone(), sender.map_err(|e| e.to_string()));
        }
        let sender = match &senders[&key] {
            Ok(sender) => Ok(sender.clone()),
            Err(e) => Err(ApiError::Internal(format!(
                "the sender of a callback of merchant {}: {e}",
                delivery.merchant_id
            ))),
        };
        let opened = match platform {
            // Opened only to be posted: the record keeps it sealed.
            true => super::open_body(app, &delivery).map(|body| delivery.body = body),
            false => Ok(()),
        };
        out.push(Claimed {
            id: delivery.id.clone(),
            claim_token: delivery.claim_token.clone(),
            merchant_id: delivery.merchant_id.clone(),
            receiver_host: delivery.receiver_host.clone(),
            attempt: opened
                .and(sender)
                .and_then(|sender| Attempt::new(delivery, sender)),
        });
    }
    Ok(out)
}

/// Platform events are signed the Standard Webhooks way with the
/// platform's own secret from the configuration, never a merchant's key.
fn platform_sender(app: &App) -> Result<Sender, ApiError> {
    let secret = app.config.platform_events_secret.clone().ok_or_else(|| {
        ApiError::Internal(
            "a platform event is queued but no platform_events_secret is configured".into(),
        )
    })?;
    Ok(Sender {
        signer: Signer::StandardWebhooks {
            secrets: vec![secret],
        },
        timeout: Duration::from_secs(
            u64::try_from(merchants::DEFAULT_CALLBACK_TIMEOUT_SECONDS).unwrap_or(10),
        ),
    })
}

async fn sender_of(app: &App, merchant_id: &str) -> Result<Sender, ApiError> {
    let crate::credentials::CallbackRows {
        merchant: row,
        keys,
    } = crate::credentials::callback_rows(app, merchant_id).await?;
    let signer = match row.callback_scheme {
        CallbackScheme::Seed => signing::seed_signer(app, keys, app.now_unix())?,
        CallbackScheme::StandardWebhooks => signing::standard_signer(app, &row, app.now_unix())?,
    };
    Ok(Sender {
        signer,
        timeout: merchants::Merchant::from_row(row)?.callback_timeout(),
    })
}

impl Attempt {
    fn new(delivery: CallbackDeliveryRow, sender: Sender) -> Result<Attempt, ApiError> {
        // A claim takes only records due at a time; one without is not a
        // record this code wrote.
        let scheduled_at = delivery.next_attempt_at.ok_or_else(|| {
            ApiError::Internal(format!(
                "callback_deliveries row id={}: column next_attempt_at is NULL on a claimed record",
                delivery.id
            ))
        })?;
        Ok(Attempt {
            delivery,
            sender,
            scheduled_at,
        })
    }

    /// What to post now, signed by the merchant's scheme. A seed signature
    /// is computed at the first attempt and reused by every retry while
    /// its key works (`signing`); a Standard Webhooks one covers the
    /// timestamp, so each attempt has its own, under the same `webhook-id`
    /// (the record's id). The timestamp
    /// is real time on every profile: the receiver checks it against its
    /// own clock (a 300 s window in the seed's sample and in Standard
    /// Webhooks' libraries), and a sandbox clock moved forward to make
    /// schedules run must not make every callback look stale.
    pub fn post(&mut self, app: &App) -> Result<Post<'_>, ApiError> {
        let headers = self
            .sender
            .signer
            .headers(&mut self.delivery, app.wall_unix())?;
        Ok(Post {
            url: &self.delivery.callback_url,
            headers,
            body: &self.delivery.body,
            timeout: self.sender.timeout,
        })
    }

    /// What the receiver's answer (its status, or why there was none)
    /// comes to, for an attempt that began at `started` (the injected
    /// clock's milliseconds) and took `took`.
    pub fn answered(
        mut self,
        app: &App,
        answer: Result<u16, PostFailure>,
        started_ms: i64,
        took: Duration,
    ) -> Answered {
        let schedule = app.config.callback_schedule;
        let number = self.delivery.attempts + 1;
        let outcome = judge(answer.as_ref().ok().copied(), number, &schedule);
        let next_attempt_at = (outcome == Outcome::Retry)
            .then_some(self.scheduled_at + schedule.retry_interval_seconds);
        let now = app.now_unix();
        let (status_code, error, timed_out) = match answer {
            Ok(status) => (Some(i32::from(status)), None, false),
            Err(PostFailure { reason, timed_out }) => (None, Some(reason), timed_out),
        };
        let d = &mut self.delivery;
        d.status = delivery_status(outcome);
        d.attempts = number;
        d.next_attempt_at = next_attempt_at;
        d.updated_at = now;
        let report = Report {
            order_no: d.order_no.clone(),
            event: d.event.clone(),
            receiver: redact::url_origin(&d.callback_url),
            attempt: number,
            outcome: match (outcome, timed_out) {
                (Outcome::Retry, true) => "timeout",
                _ => outcome.as_str(),
            },
            status_code,
            error: error.clone(),
            took,
            first_attempt_delay_ms: (number == 1)
                .then_some(d.queued_at_ms)
                .flatten()
                .map(|queued| started_ms - queued),
        };
        let record = CallbackAttemptRow {
            id: uuid::Uuid::new_v4().to_string(),
            delivery_id: d.id.clone(),
            attempt: number,
            scheduled_at: self.scheduled_at,
            started_at: started_ms.div_euclid(1000),
            duration_ms: i64::try_from(took.as_millis()).unwrap_or(i64::MAX),
            status_code,
            error,
            outcome,
            next_attempt_at,
        };
        Answered {
            written: AttemptOutcome {
                delivery: self.delivery,
                attempt: record,
                order_status: order_callback_status(outcome),
                now,
            },
            report,
        }
    }
}

fn delivery_status(outcome: Outcome) -> DeliveryStatus {
    match outcome {
        Outcome::Success => DeliveryStatus::Success,
        Outcome::Rejected | Outcome::Failed => DeliveryStatus::Failed,
        Outcome::Retry => DeliveryStatus::WaitingRetry,
    }
}

fn order_callback_status(outcome: Outcome) -> CallbackStatus {
    match outcome {
        Outcome::Success => CallbackStatus::Success,
        Outcome::Rejected | Outcome::Failed => CallbackStatus::Failed,
        Outcome::Retry => CallbackStatus::Pending,
    }
}

/// An attempt answered, its outcome not yet written.
pub struct Answered {
    written: AttemptOutcome,
    pub report: Report,
}

impl Answered {
    pub fn delivery_id(&self) -> &str {
        &self.written.delivery.id
    }
}

/// An attempt as operators see it: the counts, and one line naming the
/// order (the receiver by its origin only: a URL's path or query may hold
/// the merchant's own secret).
#[derive(Clone, Debug)]
pub struct Report {
    pub order_no: String,
    pub event: String,
    pub receiver: String,
    pub attempt: i32,
    pub outcome: &'static str,
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub took: Duration,
    pub first_attempt_delay_ms: Option<i64>,
}

/// Writes the outcomes of attempts answered, each with its attempt record
/// and its order's summary, in one transaction: one commit for as many
/// attempts as finished while the last commit was under way. A batch the
/// database refuses is written again one attempt at a time, so that one
/// bad record does not cost the others theirs. Returns each report with
/// whether its outcome was kept (`Some(false)`: a sweep had reclaimed the
/// record, which will be sent again; `None`: the database refused it).
pub async fn record(app: &App, batch: Vec<Answered>) -> Vec<(Report, Option<bool>)> {
    let (written, reports): (Vec<_>, Vec<_>) =
        batch.into_iter().map(|a| (a.written, a.report)).unzip();
    let kept = match write(app, written.clone()).await {
        Ok(kept) => kept.into_iter().map(Some).collect(),
        Err(e) if written.len() == 1 => {
            tracing::error!(error = %e, "recording a callback attempt failed");
            vec![None]
        }
        Err(e) => {
            tracing::warn!(error = %e, attempts = written.len(), "recording a batch of callback attempts failed; recording them one at a time");
            let mut each = Vec::with_capacity(written.len());
            for one in written {
                each.push(match write(app, vec![one]).await {
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
    reports.into_iter().zip(kept).collect()
}

async fn write(app: &App, rows: Vec<AttemptOutcome>) -> Result<Vec<bool>, ApiError> {
    // A sweep that reclaimed a record meanwhile owns it now: that
    // attempt's result is dropped (not kept), the record redelivered.
    app.db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move { Ok(tx.finish_callback_attempts(&rows).await?) })
        })
        .await
}

/// Returns records stuck in SENDING (their worker died mid-attempt) to
/// WAITING_RETRY, due now.
pub async fn sweep(app: &App) -> Result<usize, ApiError> {
    let now = app.now_unix();
    let before = now - app.config.callback_schedule.stuck_after_seconds;
    Ok(app
        .db
        .run(move |s| Box::pin(async move { s.sweep_stuck_callbacks(before, now).await }))
        .await?)
}

/// Gives back every claim this instance held before a restart.
pub async fn release_own_claims(app: &App) -> Result<usize, ApiError> {
    let me = app.config.instance_id.clone();
    Ok(app
        .db
        .run(move |s| Box::pin(async move { s.release_claims_of(&me).await }))
        .await?)
}

/// Gives back one claim whose attempt never finished (the worker is
/// stopping). Returns whether it was still held.
pub async fn release(app: &App, id: String, claim_token: String) -> Result<bool, ApiError> {
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.release_callback(&id, &claim_token).await }))
        .await?)
}

/// When the next record waiting for an attempt is due.
pub async fn next_due(app: &App) -> Result<Option<i64>, ApiError> {
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.next_callback_due().await }))
        .await?)
}
