//! The callback outbox. Every state change the seed's event table names
//! writes its delivery record in the transaction of the change, with the
//! body exactly as the seed gives it, serialized once; delivery reads the
//! records later. No `callback_url`, no record (the merchant's event
//! feed, `events`, has every change either way). `attempts` claims the
//! records due, judges each answer and writes the outcomes.

pub mod attempts;
pub mod signing;

/// A delivery record and one attempt's record as the store keeps them;
/// operators read them as they are.
pub use crate::store::rows::{
    CallbackAttemptRow as AttemptRecord, CallbackDeliveryRow as Delivery,
};

use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::events::{
    deposit_body, withdrawal_body, BodyError, DepositCallback, WithdrawalCallback,
};
use crate::domain::status::{DeliveryStatus, OrderKind};
use crate::store::queries::callbacks::Backlog;
use crate::store::rows::{CallbackDeliveryRow, DepositRow, WithdrawalRow};
use crate::store::{Store, StoreError, StoreResult};
use crate::App;

/// Queues a deposit event's delivery inside the caller's transaction.
/// Returns whether a record was written (the order has a `callback_url`).
pub async fn enqueue_deposit(
    tx: &mut dyn Store,
    row: &DepositRow,
    event: DepositCallback,
    now: i64,
) -> StoreResult<bool> {
    let queued = Queued {
        kind: OrderKind::Deposit,
        merchant_id: &row.merchant_id,
        order_no: &row.order_no,
        callback_url: row.callback_url.as_deref(),
        event: event.name(),
        order_created_at: Some(row.created_at),
    };
    enqueue(tx, queued, || deposit_body(event, &row.facts(), now), now).await
}

/// Queues a withdrawal event's delivery inside the caller's transaction.
pub async fn enqueue_withdrawal(
    tx: &mut dyn Store,
    row: &WithdrawalRow,
    event: WithdrawalCallback,
    now: i64,
) -> StoreResult<bool> {
    let queued = Queued {
        kind: OrderKind::Withdrawal,
        merchant_id: &row.merchant_id,
        order_no: &row.order_no,
        callback_url: row.callback_url.as_deref(),
        event: event.name(),
        order_created_at: Some(row.created_at),
    };
    enqueue(
        tx,
        queued,
        || withdrawal_body(event, &row.facts(), now),
        now,
    )
    .await
}

/// Whose event is queued, and where it goes.
struct Queued<'a> {
    kind: OrderKind,
    merchant_id: &'a str,
    order_no: &'a str,
    callback_url: Option<&'a str>,
    event: &'a str,
    /// When the order was created (a merchant's order only): no key
    /// issued later goes with its callbacks.
    order_created_at: Option<i64>,
}

async fn enqueue(
    tx: &mut dyn Store,
    queued: Queued<'_>,
    body: impl FnOnce() -> Result<String, BodyError>,
    now: i64,
) -> StoreResult<bool> {
    let table = match queued.kind {
        OrderKind::Deposit => "deposit_orders",
        OrderKind::Withdrawal => "withdrawal_orders",
        OrderKind::OwnerInvitation => "owner_invitations",
        OrderKind::BillingStatement => "billing_statements",
    };
    let body = body().map_err(|e| StoreError::corrupt(table, queued.order_no, e.to_string()))?;
    // The event and its callback record share one id, so a merchant that
    // reads both (the feed and its receiver) can tell them for one.
    let id = uuid::Uuid::new_v4().to_string();
    let delivery_id = queued.callback_url.map(|_| id.clone());
    crate::events::record(
        tx,
        crate::events::Recorded {
            id: id.clone(),
            merchant_id: queued.merchant_id,
            kind: queued.kind,
            order_no: queued.order_no,
            event: queued.event,
            body: &body,
            delivery_id,
        },
        now,
    )
    .await?;
    let Some(url) = queued.callback_url else {
        return Ok(false);
    };
    let row = due_now(id, &queued, url, body, now, tx.began_ms());
    tx.insert_callback_delivery(&row).await?;
    Ok(true)
}

/// A delivery record due for its first attempt now.
fn due_now(
    id: String,
    queued: &Queued<'_>,
    url: &str,
    body: String,
    now: i64,
    began_ms: i64,
) -> CallbackDeliveryRow {
    CallbackDeliveryRow {
        id,
        merchant_id: queued.merchant_id.to_string(),
        order_kind: queued.kind,
        order_no: queued.order_no.to_string(),
        event: queued.event.to_string(),
        callback_url: url.to_string(),
        body,
        status: DeliveryStatus::WaitingRetry,
        attempts: 0,
        next_attempt_at: Some(now),
        created_at: now,
        updated_at: now,
        signature: None,
        claim_token: None,
        queued_at_ms: Some(began_ms),
        receiver_host: crate::domain::address::receiver_host(url),
        signing_key_id: None,
        order_created_at: queued.order_created_at,
    }
}

/// A platform-level event, queued in the caller's transaction for the
/// platform-managed address: the same outbox, worker, schedule and
/// operator retry as a merchant's callback, signed with the platform's own
/// secret (`attempts`). Its body may carry a secret link, so it is stored
/// sealed under the master key (`sealed_body`), opened only to be posted.
pub struct PlatformEvent<'a> {
    pub kind: OrderKind,
    /// The invitation (or, later, statement) it is about.
    pub subject_id: &'a str,
    /// The tenant it concerns; it never goes to this merchant.
    pub merchant_id: &'a str,
    pub event: &'a str,
    pub url: &'a str,
    pub sealed_body: String,
}

pub async fn enqueue_platform(
    tx: &mut dyn Store,
    queued: PlatformEvent<'_>,
    now: i64,
) -> StoreResult<()> {
    let row = due_now(
        uuid::Uuid::new_v4().to_string(),
        &Queued {
            kind: queued.kind,
            merchant_id: queued.merchant_id,
            order_no: queued.subject_id,
            callback_url: Some(queued.url),
            event: queued.event,
            order_created_at: None,
        },
        queued.url,
        queued.sealed_body,
        now,
        tx.began_ms(),
    );
    tx.insert_callback_delivery(&row).await
}

/// The body as an operator may see it: a platform event's opened, with
/// its secret link replaced; a merchant callback's as stored.
pub fn shown_body(app: &App, delivery: &CallbackDeliveryRow) -> Result<String, ApiError> {
    if !delivery.order_kind.is_platform() {
        return Ok(delivery.body.clone());
    }
    let opened = open_body(app, delivery)?;
    let mut doc: serde_json::Value = serde_json::from_str(&opened).map_err(|e| {
        ApiError::Internal(format!("platform event {} is not JSON: {e}", delivery.id))
    })?;
    if let Some(link) = doc.get_mut("link") {
        *link = serde_json::Value::String(REDACTED.into());
    }
    Ok(doc.to_string())
}

/// What a secret link is shown as.
pub const REDACTED: &str = "[redacted]";

/// A platform event's body, opened with the master key to be posted.
pub fn open_body(app: &App, delivery: &CallbackDeliveryRow) -> Result<String, ApiError> {
    app.vault.decrypt(&delivery.body).map_err(|_| {
        // The error would say nothing but that the seal did not open.
        ApiError::Internal(format!(
            "the sealed body of platform event {} does not open with this master key",
            delivery.id
        ))
    })
}

/// An operator's retry: the same record, its attempt count back to 0, due
/// now. Refused while an attempt is under way. Answers the record as the
/// retry left it: a worker may claim it the moment the retry commits.
pub async fn retry(
    app: &App,
    by: &Actor,
    delivery_id: &str,
) -> Result<CallbackDeliveryRow, ApiError> {
    let mut current = find(app, delivery_id).await?;
    let now = app.now_unix();
    let id = delivery_id.to_string();
    // A transaction, though one statement: an operator's retry carries
    // its audit row in it, and a refusal inside it rolls that back too.
    let audit = by.audit(Target::CallbackDelivery(id.clone()), None, now);
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                if !s.reset_callback(&id, now).await? {
                    return Err(ApiError::InvalidStateTransition {
                        order_no: id,
                        status: DeliveryStatus::Sending.to_string(),
                        action: "retry".into(),
                    });
                }
                Ok(())
            })
        })
        .await?;
    current.status = DeliveryStatus::WaitingRetry;
    current.attempts = 0;
    current.next_attempt_at = Some(now);
    current.updated_at = now;
    Ok(current)
}

/// An owner's retry of one of its merchant's callbacks that failed (every
/// attempt used): `retry`, audited as the owner. Another merchant's record,
/// or a platform event's, is not found; one that has not failed is refused.
pub async fn retry_failed_of(
    app: &App,
    by: &Actor,
    merchant_id: &str,
    delivery_id: &str,
) -> Result<CallbackDeliveryRow, ApiError> {
    let row = find(app, delivery_id).await?;
    if row.merchant_id != merchant_id || row.order_kind.is_platform() {
        return Err(ApiError::DeliveryNotFound(delivery_id.to_string()));
    }
    if row.status != DeliveryStatus::Failed {
        return Err(ApiError::InvalidStateTransition {
            order_no: row.order_no,
            status: row.status.to_string(),
            action: "retry a callback that has not failed".into(),
        });
    }
    retry(app, by, delivery_id).await
}

/// Which failed deliveries an operator queues again in one batch.
#[derive(Clone, Debug, Default)]
pub struct RetryBatch {
    pub merchant_id: Option<String>,
    pub created_from: Option<i64>,
    pub created_to: Option<i64>,
    pub limit: Option<i64>,
}

/// What a batch queued, and whether matching failed deliveries remain.
pub struct Retried {
    pub retried: usize,
    pub more: bool,
}

/// The most deliveries one batch queues: a bound on one transaction.
pub const BATCH_MOST: i64 = 1000;

/// Queues again the failed deliveries `batch` matches, oldest first, at
/// most its limit, each as `retry` does; one audit row for the whole batch
/// (on the merchant when one is named) says how many, in the same commit.
pub async fn retry_failed(app: &App, by: &Actor, batch: RetryBatch) -> Result<Retried, ApiError> {
    let limit = batch.limit.unwrap_or(BATCH_MOST);
    if !(1..=BATCH_MOST).contains(&limit) {
        return Err(ApiError::invalid_field(
            "limit",
            format!("must be between 1 and {BATCH_MOST}"),
        ));
    }
    if let (Some(from), Some(to)) = (batch.created_from, batch.created_to) {
        if from >= to {
            return Err(ApiError::invalid_field(
                "created_to",
                "must be after created_from",
            ));
        }
    }
    if let Some(m) = &batch.merchant_id {
        crate::merchants::find_row(app, m).await?;
    }
    let filter = crate::store::paging::ListFilter {
        merchant_id: batch.merchant_id.clone(),
        created_from: batch.created_from,
        created_to: batch.created_to,
        status: Some(DeliveryStatus::Failed.to_string()),
        limit: 1,
        ..Default::default()
    };
    let target = match batch.merchant_id {
        Some(m) => Target::Merchant(m),
        // Every merchant's: the row names no one target.
        None => Target::CallbackDelivery("*".into()),
    };
    let now = app.now_unix();
    let by = by.clone();
    app.db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move {
                let retried = s.reset_failed_callbacks(&filter, now, limit).await?;
                let more = !s.list_callback_deliveries(&filter).await?.is_empty();
                let remarks = format!(
                    "queued again: {retried} failed {}{}",
                    if retried == 1 {
                        "delivery"
                    } else {
                        "deliveries"
                    },
                    if more { "; more remain" } else { "" }
                );
                if let Some(pending) = by.audit(target, Some(&remarks), now) {
                    s.append_audit(&pending.row).await?;
                }
                Ok(Retried { retried, more })
            })
        })
        .await
}

/// A record's attempts, oldest first.
pub async fn history(app: &App, delivery_id: &str) -> Result<Vec<AttemptRecord>, ApiError> {
    let id = delivery_id.to_string();
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.callback_attempts_of(&id).await }))
        .await?)
}

pub async fn find(app: &App, delivery_id: &str) -> Result<CallbackDeliveryRow, ApiError> {
    let id = delivery_id.to_string();
    app.db
        .run(|s| Box::pin(async move { s.callback_delivery_by_id(&id).await }))
        .await?
        .ok_or_else(|| ApiError::DeliveryNotFound(delivery_id.to_string()))
}

/// The outbox's unfinished part, for the metrics.
pub async fn backlog(app: &App) -> Result<Backlog, ApiError> {
    let now = app.now_unix();
    Ok(app
        .db
        .run(move |s| Box::pin(async move { s.callback_backlog(now).await }))
        .await?)
}
