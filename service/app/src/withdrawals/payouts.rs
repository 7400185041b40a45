//! A payout's end at its channel: paid (settled, with the channel's cost)
//! or failed (its funds released), and an order set aside for an operator.

use super::{commit, find_any, plan, Effect, Planned, Withdrawal};
use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::lifecycle::WithdrawalEvent;
use crate::domain::money::to_units;
use crate::store::rows::WithdrawalMove;
use crate::store::Store;
use crate::App;

/// The channel paid the beneficiary.
pub async fn settle(
    app: &App,
    order_no: &str,
    bank_reference: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    let planned = plan_settle(app, &current, bank_reference, None)?;
    commit(app, None, planned).await
}

/// Plans the settlement of `current`: its channel cost is what the channel
/// said (`cost`, units) or else its configured rate on the amount.
pub(crate) fn plan_settle(
    app: &App,
    current: &Withdrawal,
    bank_reference: Option<String>,
    cost: Option<i64>,
) -> Result<Planned, ApiError> {
    // An order in a currency no longer configured is refused, not rounded
    // to a guessed number of digits.
    let digits = app.config.currency(&current.currency)?.fraction_digits;
    let cost_units = match cost {
        Some(units) => Some(units),
        None => current
            .channel_id
            .as_deref()
            .and_then(|id| app.channels.get(id))
            .map(|c| crate::domain::fees::apply(&c.costs().withdrawal, current.amount, digits))
            .and_then(to_units),
    };
    let (amount, fee) = current.frozen_units()?;
    let profit_units = cost_units.and_then(|c| fee.checked_sub(c));
    let reference = bank_reference.unwrap_or_else(|| format!("SIM-{}", current.order_no));
    plan(
        current,
        WithdrawalEvent::Settle,
        move |change, order| WithdrawalMove {
            actual_amount: Some(amount),
            completed_at: Some(change.updated_at),
            processed_at: Some(order.processed_unix().unwrap_or(change.updated_at)),
            bank_reference: Some(reference),
            actual_channel_cost: cost_units,
            actual_profit: profit_units,
            ..change
        },
        Effect::Complete,
        app.now_unix(),
    )
}

/// The channel could not pay the beneficiary.
pub async fn fail(
    app: &App,
    order_no: &str,
    reason: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    commit(app, None, plan_fail(&current, reason, app.now_unix())?).await
}

/// Plans the failure of `current`: its frozen amount and fee are released.
pub(crate) fn plan_fail(
    current: &Withdrawal,
    reason: Option<String>,
    now: i64,
) -> Result<Planned, ApiError> {
    plan(
        current,
        WithdrawalEvent::Fail,
        move |change, order| WithdrawalMove {
            failed_at: Some(change.updated_at),
            processed_at: Some(order.processed_unix().unwrap_or(change.updated_at)),
            manual_reason: reason,
            ..change
        },
        Effect::Release("withdrawal_failed"),
        now,
    )
}

/// Inside `tx`: sets the withdrawal aside for an operator
/// (`needs_manual_intervention`, with `reason`), its status unchanged.
pub(crate) async fn flag(
    tx: &mut dyn Store,
    order: &Withdrawal,
    reason: String,
    now: i64,
) -> Result<(), ApiError> {
    let change = WithdrawalMove {
        needs_manual_intervention: Some(true),
        manual_reason: Some(reason),
        ..WithdrawalMove::to(order.status, now)
    };
    tx.transition_withdrawal(&order.id, &[order.status], &change)
        .await?;
    Ok(())
}

/// What an operator learned became of a payout set aside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    Completed,
    Failed,
}

/// An operator settles a withdrawal set aside for them
/// (`needs_manual_intervention`, `approved` or `processing`) by the
/// channel's records: paid or not. The channel is not called; the flag is
/// cleared and `manual_reason` says who decided and why.
pub async fn resolve(
    app: &App,
    by: &Actor,
    order_no: &str,
    resolution: Resolution,
    remarks: String,
    bank_reference: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let operator = by.name();
    let current = find_any(app, order_no).await?;
    if !current.needs_manual_intervention {
        return Err(crate::domain::lifecycle::refused(
            order_no,
            format!("{} (not set aside)", current.status),
            "resolve",
        ));
    }
    let why = match resolution {
        Resolution::Completed => "completed",
        Resolution::Failed => "failed",
    };
    let reason = format!("resolved as {why} by {operator}: {remarks}");
    let mut planned = match resolution {
        Resolution::Completed => {
            let reference = bank_reference.or_else(|| current.channel_order_no.clone());
            plan_settle(app, &current, reference, None)?
        }
        Resolution::Failed => plan_fail(&current, Some(reason.clone()), app.now_unix())?,
    };
    planned.change.needs_manual_intervention = Some(false);
    planned.change.manual_reason = Some(reason);
    let audit = by.audit(
        Target::Order(order_no.to_string()),
        Some(&remarks),
        app.now_unix(),
    );
    commit(app, audit, planned).await
}
