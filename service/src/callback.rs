//! The callback outbox. Every state change the seed's event table names
//! writes its delivery record in the transaction of the change, with the
//! body exactly as the seed gives it, serialized once; delivery reads the
//! records later. No `callback_url`, no record.

use crate::db::rows::{CallbackDeliveryRow, DepositRow, WithdrawalRow};
use crate::db::{Store, StoreResult};
use crate::money::from_units;
use payments_wire::DecimalString;
use serde::Serialize;

/// Delivery states (operators see them; merchants see `callback_status`).
pub const SENDING: &str = "SENDING";
pub const WAITING_RETRY: &str = "WAITING_RETRY";
pub const SUCCESS: &str = "SUCCESS";
pub const FAILED: &str = "FAILED";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    DepositMatched,
    DepositCompleted,
    DepositExpired,
    DepositCancelled,
    WithdrawalApproved,
    WithdrawalCompleted,
    WithdrawalRejected,
    WithdrawalFailed,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::DepositMatched => "deposit.matched",
            Event::DepositCompleted => "deposit.completed",
            Event::DepositExpired => "deposit.expired",
            Event::DepositCancelled => "deposit.cancelled",
            Event::WithdrawalApproved => "withdrawal.approved",
            Event::WithdrawalCompleted => "withdrawal.completed",
            Event::WithdrawalRejected => "withdrawal.rejected",
            Event::WithdrawalFailed => "withdrawal.failed",
        }
    }
}

fn iso(t: Option<i64>) -> Option<String> {
    t.map(|t| crate::clock::from_unix(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

fn money(units: i64) -> DecimalString {
    DecimalString(from_units(units))
}

// Field order follows the seed's tables.
#[derive(Serialize)]
struct DepositSettled<'a> {
    event: &'static str,
    order_no: &'a str,
    merchant_order_no: &'a str,
    amount: DecimalString,
    actual_amount: DecimalString,
    currency: &'a str,
    status: &'a str,
    matched_at: Option<String>,
    completed_at: Option<String>,
}

#[derive(Serialize)]
struct DepositExpired<'a> {
    event: &'static str,
    order_no: &'a str,
    merchant_order_no: &'a str,
    amount: DecimalString,
    actual_amount: DecimalString,
    currency: &'a str,
    status: &'a str,
    expired_at: Option<String>,
}

#[derive(Serialize)]
struct DepositCancelled<'a> {
    event: &'static str,
    order_no: &'a str,
    merchant_order_no: &'a str,
    status: &'a str,
    amount: DecimalString,
    actual_amount: DecimalString,
    currency: &'a str,
    currency_code: &'a str,
    cancelled_at: Option<String>,
}

#[derive(Serialize)]
struct WithdrawalChanged<'a> {
    event: &'static str,
    order_no: &'a str,
    merchant_order_no: &'a str,
    status: &'a str,
    amount: DecimalString,
    currency: &'a str,
    #[serde(flatten)]
    at: std::collections::BTreeMap<&'static str, Option<String>>,
}

/// The body of a deposit event, as the seed gives it. `at` is when the
/// event happened (for expiry and cancellation, which have no column).
pub fn deposit_body(event: Event, row: &DepositRow, at: i64) -> String {
    let requested = money(row.requested_amount);
    let result = match event {
        Event::DepositMatched | Event::DepositCompleted => serde_json::to_string(&DepositSettled {
            event: event.name(),
            order_no: &row.order_no,
            merchant_order_no: &row.merchant_order_no,
            amount: requested,
            actual_amount: money(row.actual_amount),
            currency: &row.currency,
            status: &row.status,
            matched_at: iso(row.matched_at),
            completed_at: iso(row.completed_at),
        }),
        Event::DepositExpired => serde_json::to_string(&DepositExpired {
            event: event.name(),
            order_no: &row.order_no,
            merchant_order_no: &row.merchant_order_no,
            amount: requested,
            actual_amount: money(0),
            currency: &row.currency,
            status: &row.status,
            expired_at: iso(Some(at)),
        }),
        _ => serde_json::to_string(&DepositCancelled {
            event: event.name(),
            order_no: &row.order_no,
            merchant_order_no: &row.merchant_order_no,
            status: &row.status,
            amount: requested,
            actual_amount: money(0),
            currency: &row.currency,
            currency_code: &row.currency,
            cancelled_at: iso(Some(at)),
        }),
    };
    result.unwrap_or_default()
}

pub fn withdrawal_body(event: Event, row: &WithdrawalRow, at: i64) -> String {
    let time_field = match event {
        Event::WithdrawalApproved => "approved_at",
        Event::WithdrawalCompleted => "completed_at",
        Event::WithdrawalRejected => "rejected_at",
        _ => "failed_at",
    };
    serde_json::to_string(&WithdrawalChanged {
        event: event.name(),
        order_no: &row.order_no,
        merchant_order_no: &row.merchant_order_no,
        status: &row.status,
        amount: money(row.amount),
        currency: &row.currency,
        at: [(time_field, iso(Some(at)))].into_iter().collect(),
    })
    .unwrap_or_default()
}

/// Queues a deposit event's delivery inside the caller's transaction.
/// Returns whether a record was written (the order has a `callback_url`).
pub async fn enqueue_deposit(
    tx: &mut dyn Store,
    row: &DepositRow,
    event: Event,
    now: i64,
) -> StoreResult<bool> {
    let body = deposit_body(event, row, now);
    enqueue(
        tx,
        &row.merchant_id,
        "deposit",
        &row.order_no,
        row.callback_url.as_deref(),
        event,
        body,
        now,
    )
    .await
}

/// Queues a withdrawal event's delivery inside the caller's transaction.
pub async fn enqueue_withdrawal(
    tx: &mut dyn Store,
    row: &WithdrawalRow,
    event: Event,
    now: i64,
) -> StoreResult<bool> {
    let body = withdrawal_body(event, row, now);
    enqueue(
        tx,
        &row.merchant_id,
        "withdrawal",
        &row.order_no,
        row.callback_url.as_deref(),
        event,
        body,
        now,
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn enqueue(
    tx: &mut dyn Store,
    merchant_id: &str,
    order_kind: &str,
    order_no: &str,
    callback_url: Option<&str>,
    event: Event,
    body: String,
    now: i64,
) -> StoreResult<bool> {
    let Some(url) = callback_url else {
        return Ok(false);
    };
    tx.insert_callback_delivery(&CallbackDeliveryRow {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: merchant_id.to_string(),
        order_kind: order_kind.to_string(),
        order_no: order_no.to_string(),
        event: event.name().to_string(),
        callback_url: url.to_string(),
        body,
        status: WAITING_RETRY.to_string(),
        attempts: 0,
        next_attempt_at: Some(now),
        created_at: now,
        updated_at: now,
        signature: None,
        claim_token: None,
    })
    .await?;
    Ok(true)
}
