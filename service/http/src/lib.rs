//! The HTTP surface: each generated trait implemented over the domain.
//! Handlers authenticate, parse, call the domain and map domain values onto
//! the contract's types; they hold no business rules.

pub mod auth;
mod billing;
pub mod channel_notifications;
pub mod contract;
mod enums;
pub mod error;
pub mod gate;
pub mod health;
pub mod merchant;
pub mod observe;
pub mod operator;
pub mod pages;
pub mod platform_inbox;
mod reconciliation;
pub mod routes;
pub mod sandbox;

// The layers below, under the names every module of this crate uses for
// them (`crate::domain::…`): Cargo lets this crate name nothing above it.
use crate::enums::Spelled;
use payments_app as app;
use payments_channels as channels;
use payments_config::keys;
use payments_domain as domain;
use payments_domain::clock;
use payments_telemetry as telemetry;

use crate::app::deposits::Deposit;
use crate::app::merchants::Merchant;
use crate::app::withdrawals::Withdrawal;
use crate::domain::error::ApiError;
use merchant_api::merchant::types;
use payments_wire::server::BodyError;
use payments_wire::{DecimalString, SigningFields};
use sha2::{Digest, Sha256};
use std::str::FromStr;

pub(crate) fn body_error(e: BodyError) -> ApiError {
    match e.field {
        Some(field) => ApiError::InvalidField {
            field,
            message: e.message,
        },
        None => ApiError::InvalidBody(e.message),
    }
}

/// Identifies a create request by its signed fields, the amount normalized
/// so that `100.5` and `100.50` are one request.
pub(crate) fn fingerprint(fields: &SigningFields) -> String {
    let normalized: SigningFields = fields
        .iter()
        .map(|(k, v)| {
            let v = match (k, rust_decimal::Decimal::from_str(v)) {
                ("amount", Ok(d)) => d.normalize().to_string(),
                _ => v.to_string(),
            };
            (k.to_string(), v)
        })
        .collect();
    hex::encode(Sha256::digest(normalized.canonical().as_bytes()))
}

/// The same JSON shape under another spec's generated type (the operator
/// spec repeats the merchant spec's order schemas).
pub(crate) fn reshape<A: serde::Serialize, B: serde::de::DeserializeOwned>(
    value: &A,
) -> Result<B, ApiError> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| ApiError::Internal(format!("reshaping a response: {e}")))
}

/// A stored time as the contract shows it; one no date can show is the
/// row's fault, a 500, never 1970.
pub(crate) fn time(t: i64) -> Result<chrono::DateTime<chrono::Utc>, ApiError> {
    Ok(crate::clock::from_unix(t)?)
}

pub(crate) fn time_opt(t: Option<i64>) -> Result<Option<chrono::DateTime<chrono::Utc>>, ApiError> {
    t.map(time).transpose()
}

pub(crate) fn deposit_order(
    app: &crate::app::App,
    merchant: &Merchant,
    order: &Deposit,
) -> types::DepositOrder {
    let channel = order
        .channel_id
        .as_deref()
        .and_then(|id| app.channels.get(id));
    let dec = |d: rust_decimal::Decimal| DecimalString(d);
    types::DepositOrder {
        id: order.id.clone(),
        order_no: order.order_no.clone(),
        merchant_order_no: order.merchant_order_no.clone(),
        merchant_id: order.merchant_id.clone(),
        account_id: order.account_id.clone(),
        requested_amount: dec(order.requested_amount),
        amount: dec(order.amount),
        fee: dec(order.fee),
        currency_code: order.currency.clone(),
        expected_remark: order.expected_remark.clone(),
        status: order.status.spelled(),
        expire_at: order.expire_at,
        matched_at: order.matched_at,
        completed_at: order.completed_at,
        actual_amount: dec(order.actual_amount),
        callback_url: order.callback_url.clone(),
        callback_status: order.callback_status.spelled(),
        callback_count: order.callback_count,
        created_at: order.created_at,
        updated_at: order.updated_at,
        user_id: order.user_id.clone(),
        order_type: order.order_type.spelled(),
        cashier_session_id: order.cashier_session_id.clone(),
        payer_bank_code: order.payer_bank_code.clone(),
        payer_account_last4: order.payer_account_last4.clone(),
        channel_id: order.channel_id.clone(),
        channel_order_no: order.channel_order_no.clone(),
        payment_url: order.payment_url.clone(),
        estimated_channel_cost: order.estimated_channel_cost.map(dec),
        estimated_profit: order.estimated_profit.map(dec),
        actual_channel_cost: order.actual_channel_cost.map(dec),
        actual_profit: order.actual_profit.map(dec),
        payment_snapshot: order.payment_snapshot.clone(),
        merchant: types::MerchantSummary {
            id: merchant.id.clone(),
            merchant_code: merchant.code.clone(),
            name: merchant.name.clone(),
        },
        account: order.account.as_ref().map(|a| types::ReceivingAccount {
            id: a.id.clone(),
            account_no: a.account_no.clone(),
            name: a.name.clone(),
            bank_code: a.bank_code.clone(),
            bank_name: a.bank_name.clone(),
            account_holder: a.account_holder.clone(),
        }),
        channel: channel.map(|c| types::ChannelSummary {
            id: c.id().to_string(),
            channel_code: c.code().to_string(),
            channel_name: c.name().to_string(),
        }),
    }
}

pub(crate) fn withdrawal_order(
    merchant: &Merchant,
    order: &Withdrawal,
) -> Result<types::WithdrawalOrder, ApiError> {
    let dec = DecimalString;
    let beneficiary = &order.beneficiary;
    Ok(types::WithdrawalOrder {
        id: order.id.clone(),
        order_no: order.order_no.clone(),
        merchant_order_no: order.merchant_order_no.clone(),
        merchant_id: order.merchant_id.clone(),
        account_id: None,
        amount: dec(order.amount),
        fee: dec(order.fee),
        actual_amount: dec(order.actual_amount),
        currency_code: order.currency.clone(),
        beneficiary_name: beneficiary.name.clone(),
        beneficiary_account: beneficiary.account.clone(),
        beneficiary_bank_code: beneficiary.bank_code.clone(),
        beneficiary_bank_name: beneficiary.bank_name.clone(),
        beneficiary_bank_branch: beneficiary.bank_branch.clone(),
        payout_method: order.payout_method.spelled(),
        status: order.status.spelled(),
        is_auto_approved: order.is_auto_approved,
        approved_at: order.approved_at,
        approved_by: order.approved_by.clone(),
        approval_remarks: order.approval_remarks.clone(),
        processed_at: order.processed_at,
        completed_at: order.completed_at,
        bank_reference: order.bank_reference.clone(),
        callback_url: order.callback_url.clone(),
        callback_status: order.callback_status.spelled(),
        callback_count: order.callback_count,
        created_at: order.created_at,
        updated_at: order.updated_at,
        needs_manual_intervention: order.needs_manual_intervention,
        manual_reason: order.manual_reason.clone(),
        channel_id: order.channel_id.clone(),
        channel_name: None,
        channel_order_no: order.channel_order_no.clone(),
        estimated_channel_cost: order.estimated_channel_cost.map(dec),
        estimated_profit: order.estimated_profit.map(dec),
        actual_channel_cost: order.actual_channel_cost.map(dec),
        actual_profit: order.actual_profit.map(dec),
        merchant: types::MerchantSummary {
            id: merchant.id.clone(),
            merchant_code: merchant.code.clone(),
            name: merchant.name.clone(),
        },
        // An order decided before the decider's id was kept shows the name
        // in both fields, as it always had.
        approver: order
            .approved_by
            .as_ref()
            .filter(|name| name.as_str() != crate::app::withdrawals::AUTO_APPROVER)
            .map(|name| types::Approver {
                id: order.approver_id.clone().unwrap_or_else(|| name.clone()),
                name: name.clone(),
            }),
    })
}
