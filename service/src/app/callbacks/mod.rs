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

use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::events::{
    deposit_body, withdrawal_body, BodyError, DepositCallback, WithdrawalCallback,
};
use crate::domain::status::{DeliveryStatus, OrderKind};
use crate::store::queries::callbacks::Backlog;
use crate::store::rows::{CallbackDeliveryRow, DepositRow, WithdrawalRow};
use crate::store::{Store, StoreError, StoreResult};

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
    };
    let body = body().map_err(|e| StoreError::corrupt(table, queued.order_no, e.to_string()))?;
    // The event and its callback record share one id, so a merchant that
    // reads both (the feed and its receiver) can tell them for one.
    let id = uuid::Uuid::new_v4().to_string();
    let delivery_id = queued.callback_url.map(|_| id.clone());
    crate::app::events::record(
        tx,
        crate::app::events::Recorded {
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
    tx.insert_callback_delivery(&CallbackDeliveryRow {
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
        queued_at_ms: Some(tx.began_ms()),
    })
    .await?;
    Ok(true)
}

/// An operator's retry: the same record, its attempt count back to 0, due
/// now. Refused while an attempt is under way. Answers the record as the
/// retry left it: a worker may claim it the moment the retry commits.
pub async fn retry(app: &App, delivery_id: &str) -> Result<CallbackDeliveryRow, ApiError> {
    let mut current = find(app, delivery_id).await?;
    let now = app.now_unix();
    let id = delivery_id.to_string();
    // A transaction, though one statement: an operator's retry carries
    // its audit row in it (`store::audit`), and a refusal inside it rolls
    // that back too.
    app.db
        .transaction::<_, ApiError, _>(move |s| {
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
