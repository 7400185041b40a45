//! What a change request will do, checked as the action would check it
//! and said in words with its amounts, before anyone decides it.

use super::Change;
use crate::bank;
use crate::callbacks::signing;
use crate::deposits;
use crate::domain::error::ApiError;
use crate::domain::fees::RateConfig;
use crate::domain::lifecycle::{self, DepositEvent};
use crate::domain::money::from_units;
use crate::domain::status::{AutoApprovalMode, DepositStatus};
use crate::domain::validate;
use crate::merchants::{self, AutoApproval};
use crate::withdrawals::{self, Resolution};
use crate::App;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// The auto-approval a request asks for, checked as the setting is.
pub(super) fn auto_approval(
    app: &App,
    mode: AutoApprovalMode,
    limits: &BTreeMap<String, Decimal>,
) -> Result<AutoApproval, ApiError> {
    Ok(match mode {
        AutoApprovalMode::Off => AutoApproval::Off,
        AutoApprovalMode::Always => AutoApproval::Always,
        AutoApprovalMode::UpTo => {
            merchants::auto_approval_up_to(app, limits.iter().map(|(c, d)| (c.clone(), *d)))?
        }
    })
}

/// An auto-approval setting in words.
fn said(setting: &AutoApproval) -> String {
    match setting {
        AutoApproval::Off => "never".into(),
        AutoApproval::Always => "always (never past a dual-approval threshold)".into(),
        AutoApproval::UpTo(limits) => {
            let each: Vec<String> = limits
                .iter()
                .map(|(c, units)| shown(c, from_units(*units)))
                .collect();
            format!("up to {}", each.join(", "))
        }
    }
}

fn rate_said(rate: &RateConfig) -> String {
    format!(
        "{}% + {} (at least {})",
        rate.percent.normalize(),
        rate.fixed.normalize(),
        rate.minimum.normalize()
    )
}

/// Checks a setting's change as the setting would, and says what it does.
async fn preview_setting(app: &App, change: &Change) -> Result<(String, Option<String>), ApiError> {
    let merchant = merchants::find(app, &change.target()).await?;
    let name = &merchant.name;
    let summary = match change {
        Change::SetMerchantFee {
            currency,
            direction,
            rate,
            ..
        } => {
            let rate = crate::fees::checked(app, currency, rate.clone())?;
            let now = crate::fees::merchant_rate(app, &merchant.id, currency, *direction).await?;
            format!(
                "Set {name}'s {currency} {} fee from {} to {}.",
                direction.as_str(),
                rate_said(&now),
                rate_said(&rate)
            )
        }
        Change::SetAutoApproval { mode, limits, .. } => {
            let setting = auto_approval(app, *mode, limits)?;
            format!(
                "Auto-approve {name}'s withdrawals {} (now {}).",
                said(&setting),
                said(&merchant.auto_approval)
            )
        }
        Change::SetReceivingAccount { account_id, .. } => {
            let account = app
                .config
                .receiving_account(account_id)
                .ok_or_else(|| ApiError::AccountNotFound(account_id.clone()))?;
            let now = merchant
                .receiving_accounts
                .get(&account.currency)
                .map_or("the configured default", String::as_str);
            format!(
                "Pay {name}'s {} deposits to account {account_id} (now {now}).",
                account.currency
            )
        }
        _ => return Err(ApiError::Internal("not a setting".into())),
    };
    Ok((summary, Some(merchant.id.clone())))
}

fn shown(currency: &str, amount: Decimal) -> String {
    format!("{currency} {}", amount.round_dp(4))
}

/// Checks the change as the action would, and says what it will do; the
/// merchant whose money it is, where one is known.
pub(super) async fn preview(
    app: &App,
    change: &Change,
) -> Result<(String, Option<String>), ApiError> {
    match change {
        Change::CompleteDeposit {
            order_no,
            actual_amount,
            remarks,
        } => preview_completion(app, order_no, *actual_amount, remarks.as_deref()).await,
        Change::IngestBankTransaction(t) => {
            let (account, amount, reference) = bank::check_new(app, t)?;
            Ok((
                format!(
                    "Record {} received on account {} (bank reference {reference}{}); a pending deposit it matches completes with it and credits its merchant.",
                    shown(&t.currency, from_units(amount)),
                    account.id,
                    t.remark.as_deref().map(|r| format!(", remark {r}")).unwrap_or_default(),
                ),
                None,
            ))
        }
        Change::MatchBankTransaction {
            transaction_id,
            order_no,
            remarks,
        } => {
            let (row, order) =
                bank::check_match(app, transaction_id, order_no, remarks.as_deref()).await?;
            let received = from_units(row.amount);
            Ok((
                format!(
                    "Match transfer {} of {} to deposit {order_no} of {} (difference {}); the deposit completes with what arrived and credits its merchant.",
                    row.bank_reference,
                    shown(&row.currency, received),
                    shown(&order.currency, order.amount),
                    shown(&row.currency, received - order.amount),
                ),
                Some(order.merchant_id),
            ))
        }
        Change::ResolveWithdrawal {
            order_no,
            resolution,
            ..
        } => preview_resolution(app, order_no, *resolution).await,
        Change::SetMerchantFee { .. }
        | Change::SetAutoApproval { .. }
        | Change::SetReceivingAccount { .. } => preview_setting(app, change).await,
        Change::CancelDeposit { order_no, .. } => preview_cancellation(app, order_no).await,
        Change::IssueApiKey { .. } | Change::IssueCallbackSecret { .. } => {
            preview_credential(app, change).await
        }
        Change::SetRouting(t) => preview_routing(app, t).await,
    }
}

/// A routing table to set, checked as setting it would be, with the table
/// in force now beside it.
async fn preview_routing(
    app: &App,
    t: &crate::routing::NewTable,
) -> Result<(String, Option<String>), ApiError> {
    let merchant = crate::routing::check_new(app, t).await?;
    let whose = merchant
        .as_ref()
        .map_or("every merchant's".to_string(), |name| {
            format!("{name}'s own")
        });
    let scope = crate::domain::routing::table::Scope {
        currency: t.currency.clone(),
        direction: t.direction,
        merchant_id: t.merchant_id.clone(),
    };
    let now = app.router.table(app, &scope, None);
    let was = crate::routing::NewTable {
        candidates: now.candidates.clone(),
        ..t.clone()
    };
    Ok((
        format!(
            "Route {whose} {} {}s to: {} (now {}: {}).",
            t.currency,
            t.direction.as_str(),
            t.said(),
            now.table_source(),
            was.said()
        ),
        t.merchant_id.clone(),
    ))
}

/// A span of seconds in words, for a summary.
fn lasting(seconds: i64) -> String {
    match seconds {
        0 => "at once".into(),
        s if s % 86_400 == 0 => format!("in {} day(s)", s / 86_400),
        s if s % 3_600 == 0 => format!("in {} hour(s)", s / 3_600),
        s => format!("in {s} seconds"),
    }
}

async fn preview_cancellation(
    app: &App,
    order_no: &str,
) -> Result<(String, Option<String>), ApiError> {
    let current = deposits::find_any(app, order_no).await?;
    if lifecycle::deposit_next(current.status, DepositEvent::Cancel).is_none() {
        return Err(lifecycle::refused(
            order_no,
            current.status,
            DepositEvent::Cancel,
        ));
    }
    let held = match (&current.channel_order_no, current.status) {
        (_, DepositStatus::Matched) => format!(
            "a payment of {} was matched to it",
            shown(&current.currency, current.actual_amount)
        ),
        (Some(theirs), _) => format!("channel order {theirs}"),
        (None, _) => "no channel holds it".into(),
    };
    Ok((
        format!(
            "Cancel deposit {order_no} of {} ({}; {held}): the merchant is told it is cancelled, and money reported for it after this is kept for an operator, not credited.",
            shown(&current.currency, current.amount),
            current.status,
        ),
        Some(current.merchant_id),
    ))
}

/// A merchant's new API key or callback secret: who receives it, and when
/// the ones before it stop working.
async fn preview_credential(
    app: &App,
    change: &Change,
) -> Result<(String, Option<String>), ApiError> {
    let merchant = merchants::find(app, &change.target()).await?;
    let name = &merchant.name;
    let summary = match change {
        Change::IssueApiKey { grace_seconds, .. } => {
            let grace = merchants::key_grace(app, *grace_seconds)?;
            format!(
                "Issue a new API key for {name}; its keys before it stop working {}. The approver receives the key, once.",
                lasting(grace)
            )
        }
        Change::IssueCallbackSecret {
            overlap_seconds, ..
        } => {
            let overlap = signing::rotation_overlap(*overlap_seconds)?;
            format!(
                "Issue a new callback signing secret for {name}; the secrets before it stop signing {}. The approver receives the secret, once.",
                lasting(overlap)
            )
        }
        _ => return Err(ApiError::Internal("not a credential".into())),
    };
    Ok((summary, Some(merchant.id.clone())))
}

async fn preview_completion(
    app: &App,
    order_no: &str,
    actual_amount: Option<Decimal>,
    remarks: Option<&str>,
) -> Result<(String, Option<String>), ApiError> {
    let current = deposits::find_any(app, order_no).await?;
    let plan = deposits::plan_completion(app, &current, actual_amount).await?;
    let (paid, fee) = plan.paid_and_fee();
    let (paid, fee) = (from_units(paid), from_units(fee));
    if actual_amount.is_some() {
        validate::reason_for_difference(&current.currency, current.amount, paid, remarks)?;
    }
    let c = &current.currency;
    Ok((
        format!(
            "Complete deposit {order_no}: ordered {}, paid {} (difference {}); credits the merchant {} after a fee of {}.",
            shown(c, current.amount),
            shown(c, paid),
            shown(c, paid - current.amount),
            shown(c, paid - fee),
            shown(c, fee),
        ),
        Some(current.merchant_id),
    ))
}

async fn preview_resolution(
    app: &App,
    order_no: &str,
    resolution: Resolution,
) -> Result<(String, Option<String>), ApiError> {
    let current = withdrawals::find_any(app, order_no).await?;
    if !current.needs_manual_intervention {
        return Err(crate::domain::lifecycle::refused(
            order_no,
            format!("{} (not set aside)", current.status),
            "resolve",
        ));
    }
    let amount = format!(
        "{} and its fee of {}",
        shown(&current.currency, current.amount),
        shown(&current.currency, current.fee)
    );
    let theirs = current.channel_order_no.as_deref().unwrap_or("none given");
    let what = match resolution {
        Resolution::Completed => {
            format!("as paid: the merchant is debited {amount} for good")
        }
        Resolution::Failed => {
            format!("as not paid: {amount} return to the merchant's available balance")
        }
    };
    Ok((
        format!("Resolve payout {order_no} (channel order {theirs}) {what}."),
        Some(current.merchant_id),
    ))
}
