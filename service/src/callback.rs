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

/// The callbacks a deposit sends, one per move of the seed's event table
/// (`lifecycle` says which move sends which). Each has one body below;
/// the matches are exhaustive, so a new event cannot go without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepositCallback {
    Matched,
    Completed,
    Expired,
    Cancelled,
}

/// The callbacks a withdrawal sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WithdrawalCallback {
    Approved,
    Completed,
    Rejected,
    Failed,
}

impl DepositCallback {
    pub const ALL: [DepositCallback; 4] = [
        DepositCallback::Matched,
        DepositCallback::Completed,
        DepositCallback::Expired,
        DepositCallback::Cancelled,
    ];

    /// The `event` field, as the seed names it.
    pub fn name(self) -> &'static str {
        match self {
            DepositCallback::Matched => "deposit.matched",
            DepositCallback::Completed => "deposit.completed",
            DepositCallback::Expired => "deposit.expired",
            DepositCallback::Cancelled => "deposit.cancelled",
        }
    }
}

impl WithdrawalCallback {
    pub const ALL: [WithdrawalCallback; 4] = [
        WithdrawalCallback::Approved,
        WithdrawalCallback::Completed,
        WithdrawalCallback::Rejected,
        WithdrawalCallback::Failed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WithdrawalCallback::Approved => "withdrawal.approved",
            WithdrawalCallback::Completed => "withdrawal.completed",
            WithdrawalCallback::Rejected => "withdrawal.rejected",
            WithdrawalCallback::Failed => "withdrawal.failed",
        }
    }

    /// The time field the event carries, named for the event.
    fn time_field(self) -> &'static str {
        match self {
            WithdrawalCallback::Approved => "approved_at",
            WithdrawalCallback::Completed => "completed_at",
            WithdrawalCallback::Rejected => "rejected_at",
            WithdrawalCallback::Failed => "failed_at",
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
pub fn deposit_body(event: DepositCallback, row: &DepositRow, at: i64) -> String {
    let requested = money(row.requested_amount);
    let result = match event {
        DepositCallback::Matched | DepositCallback::Completed => {
            serde_json::to_string(&DepositSettled {
                event: event.name(),
                order_no: &row.order_no,
                merchant_order_no: &row.merchant_order_no,
                amount: requested,
                actual_amount: money(row.actual_amount),
                currency: &row.currency,
                status: &row.status,
                matched_at: iso(row.matched_at),
                completed_at: iso(row.completed_at),
            })
        }
        DepositCallback::Expired => serde_json::to_string(&DepositExpired {
            event: event.name(),
            order_no: &row.order_no,
            merchant_order_no: &row.merchant_order_no,
            amount: requested,
            actual_amount: money(0),
            currency: &row.currency,
            status: &row.status,
            expired_at: iso(Some(at)),
        }),
        DepositCallback::Cancelled => serde_json::to_string(&DepositCancelled {
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

pub fn withdrawal_body(event: WithdrawalCallback, row: &WithdrawalRow, at: i64) -> String {
    let time_field = event.time_field();
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
    event: DepositCallback,
    now: i64,
) -> StoreResult<bool> {
    let body = deposit_body(event, row, now);
    enqueue(
        tx,
        &row.merchant_id,
        "deposit",
        &row.order_no,
        row.callback_url.as_deref(),
        event.name(),
        body,
        now,
    )
    .await
}

/// Queues a withdrawal event's delivery inside the caller's transaction.
pub async fn enqueue_withdrawal(
    tx: &mut dyn Store,
    row: &WithdrawalRow,
    event: WithdrawalCallback,
    now: i64,
) -> StoreResult<bool> {
    let body = withdrawal_body(event, row, now);
    enqueue(
        tx,
        &row.merchant_id,
        "withdrawal",
        &row.order_no,
        row.callback_url.as_deref(),
        event.name(),
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
    event: &str,
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
        event: event.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use merchant_api::merchant::types;
    use serde::de::DeserializeOwned;

    /// The body parses as the contract's type of its event and writes back
    /// to the same JSON: no field missing, none the contract does not name.
    fn is_contract<T: DeserializeOwned + Serialize>(body: &str) {
        let sent: serde_json::Value = serde_json::from_str(body).unwrap();
        let typed: T = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("{body} is not {}: {e}", std::any::type_name::<T>()));
        assert_eq!(serde_json::to_value(typed).unwrap(), sent, "{body}");
    }

    fn deposit(status: &str) -> DepositRow {
        DepositRow {
            order_no: "D20270115ABCDEFGHJKLM".into(),
            merchant_order_no: "ORDER-1".into(),
            currency: "THB".into(),
            status: status.into(),
            requested_amount: 1_000_000,
            actual_amount: 995_000,
            matched_at: Some(1_800_000_000),
            completed_at: (status == "completed").then_some(1_800_000_060),
            ..Default::default()
        }
    }

    #[test]
    fn every_deposit_body_is_its_contract_type() {
        for event in DepositCallback::ALL {
            let body = match event {
                DepositCallback::Matched => deposit_body(event, &deposit("matched"), 1),
                DepositCallback::Completed => deposit_body(event, &deposit("completed"), 1),
                DepositCallback::Expired => deposit_body(event, &deposit("expired"), 1),
                DepositCallback::Cancelled => deposit_body(event, &deposit("cancelled"), 1),
            };
            match event {
                DepositCallback::Matched => is_contract::<types::DepositMatchedEvent>(&body),
                DepositCallback::Completed => is_contract::<types::DepositCompletedEvent>(&body),
                DepositCallback::Expired => is_contract::<types::DepositExpiredEvent>(&body),
                DepositCallback::Cancelled => is_contract::<types::DepositCancelledEvent>(&body),
            }
        }
    }

    #[test]
    fn every_withdrawal_body_is_its_contract_type() {
        for event in WithdrawalCallback::ALL {
            let status = match event {
                WithdrawalCallback::Approved => "approved",
                WithdrawalCallback::Completed => "completed",
                WithdrawalCallback::Rejected => "rejected",
                WithdrawalCallback::Failed => "failed",
            };
            let row = WithdrawalRow {
                order_no: "W20270115ABCDEFGHJKLM".into(),
                merchant_order_no: "PAYOUT-1".into(),
                currency: "THB".into(),
                status: status.into(),
                amount: 1_000_000,
                ..Default::default()
            };
            let body = withdrawal_body(event, &row, 1_800_000_000);
            match event {
                WithdrawalCallback::Approved => {
                    is_contract::<types::WithdrawalApprovedEvent>(&body)
                }
                WithdrawalCallback::Completed => {
                    is_contract::<types::WithdrawalCompletedEvent>(&body)
                }
                WithdrawalCallback::Rejected => {
                    is_contract::<types::WithdrawalRejectedEvent>(&body)
                }
                WithdrawalCallback::Failed => is_contract::<types::WithdrawalFailedEvent>(&body),
            }
        }
    }
}
