//! Deposit orders: what one is, and finding it. Creation (account or
//! channel, by the merchant's routing, idempotent resend) is `create`,
//! its insert many orders to a statement `inserts`;
//! every move after it (completion, match, cancellation, expiry) is
//! `moves`.

mod create;
mod inserts;
mod moves;

pub use create::{create, create_linked, new_order_no, REMARK_LENGTH};
pub use inserts::DepositInserts;
pub use moves::*;

use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::domain::routing::Route;
use crate::domain::status::{CallbackStatus, DepositStatus};
use crate::store::error::Key;
use crate::store::rows::DepositRow;
use crate::store::{OrderKey, Store, StoreError, StoreResult};
use crate::App;
use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

pub use crate::domain::status::OrderType;

/// The receiving account an account order's payer was shown, as the
/// order's own `payment_snapshot` recorded it at creation: a later change
/// of the configured account never changes what an order says.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownAccount {
    pub id: String,
    pub name: String,
    pub account_no: String,
    pub account_holder: String,
    pub bank_code: String,
    pub bank_name: String,
    pub bank_branch: Option<String>,
    /// As configured when the order was made (checked then).
    pub promptpay_id: Option<String>,
}

impl ShownAccount {
    /// The snapshot's keys this reads (and `create` writes).
    fn from_snapshot(
        row: &DepositRow,
        snapshot: &BTreeMap<String, String>,
    ) -> Result<Option<ShownAccount>, ApiError> {
        let (Route::Account, Some(id)) = (row.route, row.account_id.clone()) else {
            return Ok(None);
        };
        let field = |key: &str| {
            snapshot
                .get(key)
                .cloned()
                .ok_or_else(|| corrupt(row, format!("column payment_snapshot has no `{key}`")))
        };
        Ok(Some(ShownAccount {
            // Orders created before the account's name was recorded with
            // them (migration 000010) have only its id to go by.
            name: row.account_name.clone().unwrap_or_else(|| id.clone()),
            account_no: field("account_no")?,
            account_holder: field("account_holder")?,
            bank_code: field("bank_code")?,
            bank_name: field("bank_name")?,
            bank_branch: snapshot.get("bank_branch").cloned(),
            promptpay_id: snapshot.get("promptpay_id").cloned(),
            id,
        }))
    }
}

/// A value of the deposit's row the code cannot read.
fn corrupt(row: &DepositRow, detail: String) -> ApiError {
    StoreError::corrupt("deposit_orders", Key("order_no", &row.order_no), detail).into()
}

/// A validated create request.
#[derive(Clone, Debug)]
pub struct NewDeposit {
    pub merchant_order_no: String,
    pub amount: Decimal,
    pub currency: String,
    pub callback_url: Option<String>,
    /// The merchant's page the payer is sent back to when the payment is over.
    pub return_url: Option<String>,
    pub extra_data: Option<String>,
    pub user_id: Option<String>,
    /// What the merchant says about the payer, all optional.
    pub payer: Payer,
    /// Identifies the request body, so that a resend is told from a reuse.
    pub fingerprint: String,
}

/// The payer's optional details a deposit request may carry. A new
/// optional detail is a field here: the request handler reads it (it
/// names every field of the generated request), the order stores it, and
/// a deposit made without a request (a cashier session's) has none.
#[derive(Clone, Debug, Default)]
pub struct Payer {
    pub account_holder: Option<String>,
    pub mobile: Option<String>,
    pub email: Option<String>,
    pub bank_code: Option<String>,
    pub account_no: Option<String>,
}

/// A deposit order as the domain sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Deposit {
    pub id: String,
    pub order_no: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub order_type: OrderType,
    pub route: Route,
    pub status: DepositStatus,
    pub currency: String,
    pub requested_amount: Decimal,
    pub amount: Decimal,
    pub fee: Decimal,
    pub actual_amount: Decimal,
    pub expected_remark: Option<String>,
    pub account_id: Option<String>,
    pub channel_id: Option<String>,
    pub channel_order_no: Option<String>,
    pub payment_url: Option<String>,
    pub payment_snapshot: BTreeMap<String, String>,
    /// An account order's receiving account, as its payer was shown it.
    pub account: Option<ShownAccount>,
    pub callback_url: Option<String>,
    pub return_url: Option<String>,
    pub callback_status: CallbackStatus,
    pub callback_count: i64,
    pub user_id: Option<String>,
    pub cashier_session_id: Option<String>,
    pub payer_bank_code: Option<String>,
    pub payer_account_last4: Option<String>,
    pub estimated_channel_cost: Option<Decimal>,
    pub estimated_profit: Option<Decimal>,
    pub actual_channel_cost: Option<Decimal>,
    pub actual_profit: Option<Decimal>,
    pub expire_at: DateTime<Utc>,
    pub matched_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Deposit {
    pub fn from_row(row: DepositRow) -> Result<Deposit, ApiError> {
        let time = crate::clock::from_unix;
        let payment_snapshot: BTreeMap<String, String> =
            serde_json::from_str(&row.payment_snapshot).map_err(|e| {
                corrupt(
                    &row,
                    format!("column payment_snapshot is not a valid snapshot: {e}"),
                )
            })?;
        Ok(Deposit {
            account: ShownAccount::from_snapshot(&row, &payment_snapshot)?,
            order_type: row.order_type,
            route: row.route,
            status: row.status,
            payment_snapshot,
            requested_amount: from_units(row.requested_amount),
            amount: from_units(row.amount),
            fee: from_units(row.fee),
            actual_amount: from_units(row.actual_amount),
            estimated_channel_cost: row.estimated_channel_cost.map(from_units),
            estimated_profit: row.estimated_profit.map(from_units),
            actual_channel_cost: row.actual_channel_cost.map(from_units),
            actual_profit: row.actual_profit.map(from_units),
            expire_at: time(row.expire_at)?,
            matched_at: row.matched_at.map(time).transpose()?,
            completed_at: row.completed_at.map(time).transpose()?,
            created_at: time(row.created_at)?,
            updated_at: time(row.updated_at)?,
            callback_count: i64::from(row.callback_count),
            id: row.id,
            order_no: row.order_no,
            merchant_id: row.merchant_id,
            merchant_order_no: row.merchant_order_no,
            currency: row.currency,
            expected_remark: row.expected_remark,
            account_id: row.account_id,
            channel_id: row.channel_id,
            channel_order_no: row.channel_order_no,
            payment_url: row.payment_url,
            callback_url: row.callback_url,
            return_url: row.return_url,
            callback_status: row.callback_status,
            user_id: row.user_id,
            cashier_session_id: row.cashier_session_id,
            payer_bank_code: row.payer_bank_code,
            payer_account_last4: row.payer_account_last4,
        })
    }
}

crate::orders::finders!(Deposit);

impl crate::orders::Order for Deposit {
    type Row = DepositRow;
    const KIND: &'static str = "deposit";

    fn from_row(row: DepositRow) -> Result<Deposit, ApiError> {
        Deposit::from_row(row)
    }
    fn fingerprint(row: &DepositRow) -> &str {
        &row.request_fingerprint
    }
    fn by_key<'c>(
        s: &'c mut dyn Store,
        key: OrderKey<'c>,
    ) -> BoxFuture<'c, StoreResult<Option<DepositRow>>> {
        s.deposit_by(key.into())
    }
}

/// What ties a deposit to the cashier session that created it.
#[derive(Clone, Debug)]
pub struct CashierLink {
    pub session_id: String,
    /// The order expires with its session.
    pub expire_at: i64,
    /// The last four digits of the saved card the payer chose (its bank
    /// code travels in `NewDeposit::payer`).
    pub payer_account_last4: Option<String>,
}
