//! The callbacks each order sends, defined once: the event, its name and
//! its body exactly as the seed gives it. `lifecycle` says which move sends
//! which; every match here is exhaustive, so a new event cannot go without
//! a body, and the tests parse each body as the contract's own type.

use crate::money::from_units;
use crate::status::{DepositStatus, WithdrawalStatus};
use payments_wire::DecimalString;
use serde::Serialize;

/// What a deposit's callback body says about the order.
#[derive(Clone, Copy, Debug)]
pub struct DepositFacts<'a> {
    pub order_no: &'a str,
    pub merchant_order_no: &'a str,
    pub currency: &'a str,
    pub status: DepositStatus,
    /// Minor units.
    pub requested_amount: i64,
    pub actual_amount: i64,
    pub matched_at: Option<i64>,
    pub completed_at: Option<i64>,
}

/// What a withdrawal's callback body says about the order.
#[derive(Clone, Copy, Debug)]
pub struct WithdrawalFacts<'a> {
    pub order_no: &'a str,
    pub merchant_order_no: &'a str,
    pub currency: &'a str,
    pub status: WithdrawalStatus,
    /// Minor units.
    pub amount: i64,
}

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

/// Why a body could not be written: a time no date can show, or JSON
/// that would not serialize. Either means the order's row is not one this
/// code wrote, so it is an error, never an empty body.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error(transparent)]
    Time(#[from] crate::clock::OutOfRange),
    #[error("callback body: {0}")]
    Json(#[from] serde_json::Error),
}

fn iso(t: Option<i64>) -> Result<Option<String>, BodyError> {
    t.map(|t| {
        crate::clock::from_unix(t)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .map_err(BodyError::from)
    })
    .transpose()
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
pub fn deposit_body(
    event: DepositCallback,
    row: &DepositFacts<'_>,
    at: i64,
) -> Result<String, BodyError> {
    let requested = money(row.requested_amount);
    let result = match event {
        DepositCallback::Matched | DepositCallback::Completed => {
            serde_json::to_string(&DepositSettled {
                event: event.name(),
                order_no: row.order_no,
                merchant_order_no: row.merchant_order_no,
                amount: requested,
                actual_amount: money(row.actual_amount),
                currency: row.currency,
                status: row.status.as_str(),
                matched_at: iso(row.matched_at)?,
                completed_at: iso(row.completed_at)?,
            })
        }
        DepositCallback::Expired => serde_json::to_string(&DepositExpired {
            event: event.name(),
            order_no: row.order_no,
            merchant_order_no: row.merchant_order_no,
            amount: requested,
            actual_amount: money(0),
            currency: row.currency,
            status: row.status.as_str(),
            expired_at: iso(Some(at))?,
        }),
        DepositCallback::Cancelled => serde_json::to_string(&DepositCancelled {
            event: event.name(),
            order_no: row.order_no,
            merchant_order_no: row.merchant_order_no,
            status: row.status.as_str(),
            amount: requested,
            actual_amount: money(0),
            currency: row.currency,
            currency_code: row.currency,
            cancelled_at: iso(Some(at))?,
        }),
    };
    Ok(result?)
}

pub fn withdrawal_body(
    event: WithdrawalCallback,
    row: &WithdrawalFacts<'_>,
    at: i64,
) -> Result<String, BodyError> {
    let time_field = event.time_field();
    serde_json::to_string(&WithdrawalChanged {
        event: event.name(),
        order_no: row.order_no,
        merchant_order_no: row.merchant_order_no,
        status: row.status.as_str(),
        amount: money(row.amount),
        currency: row.currency,
        at: [(time_field, iso(Some(at))?)].into_iter().collect(),
    })
    .map_err(BodyError::from)
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

    fn deposit(status: DepositStatus) -> DepositFacts<'static> {
        DepositFacts {
            order_no: "D20270115ABCDEFGHJKLM",
            merchant_order_no: "ORDER-1",
            currency: "THB",
            status,
            requested_amount: 1_000_000,
            actual_amount: 995_000,
            matched_at: Some(1_800_000_000),
            completed_at: (status == DepositStatus::Completed).then_some(1_800_000_060),
        }
    }

    #[test]
    fn every_deposit_body_is_its_contract_type() {
        for event in DepositCallback::ALL {
            let body = match event {
                DepositCallback::Matched => {
                    deposit_body(event, &deposit(DepositStatus::Matched), 1)
                }
                DepositCallback::Completed => {
                    deposit_body(event, &deposit(DepositStatus::Completed), 1)
                }
                DepositCallback::Expired => {
                    deposit_body(event, &deposit(DepositStatus::Expired), 1)
                }
                DepositCallback::Cancelled => {
                    deposit_body(event, &deposit(DepositStatus::Cancelled), 1)
                }
            }
            .expect("a body");
            match event {
                DepositCallback::Matched => is_contract::<types::DepositMatchedEvent>(&body),
                DepositCallback::Completed => is_contract::<types::DepositCompletedEvent>(&body),
                DepositCallback::Expired => is_contract::<types::DepositExpiredEvent>(&body),
                DepositCallback::Cancelled => is_contract::<types::DepositCancelledEvent>(&body),
            }
        }
    }

    #[test]
    fn a_time_no_date_can_show_is_an_error_not_an_empty_body() {
        let mut facts = deposit(DepositStatus::Completed);
        facts.completed_at = Some(i64::MAX);
        assert!(matches!(
            deposit_body(DepositCallback::Completed, &facts, 1),
            Err(BodyError::Time(_))
        ));
    }

    #[test]
    fn every_withdrawal_body_is_its_contract_type() {
        for event in WithdrawalCallback::ALL {
            let status = match event {
                WithdrawalCallback::Approved => WithdrawalStatus::Approved,
                WithdrawalCallback::Completed => WithdrawalStatus::Completed,
                WithdrawalCallback::Rejected => WithdrawalStatus::Rejected,
                WithdrawalCallback::Failed => WithdrawalStatus::Failed,
            };
            let row = WithdrawalFacts {
                order_no: "W20270115ABCDEFGHJKLM",
                merchant_order_no: "PAYOUT-1",
                currency: "THB",
                status,
                amount: 1_000_000,
            };
            let body = withdrawal_body(event, &row, 1_800_000_000).expect("a body");
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
