//! A payout at its channel: dispatch after approval, the channel's word
//! (accepted, paid, failed) and what the service does when it has none.

use super::{apply, commit, find_any, plan, Effect, Planned, Withdrawal};
use crate::app::App;
use crate::channels::ChannelError;
use crate::domain::error::ApiError;
use crate::domain::lifecycle::WithdrawalEvent;
use crate::domain::money::to_units;
use crate::store::rows::{WithdrawalMove, WithdrawalRow};
use crate::store::Store;

/// The channel paid the beneficiary.
pub async fn settle(
    app: &App,
    order_no: &str,
    bank_reference: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    let planned = plan_settle(app, &current, bank_reference, None)?;
    commit(app, planned).await
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
    let digits = app.config.currency(&current.row.currency)?.fraction_digits;
    let cost_units = match cost {
        Some(units) => Some(units),
        None => current
            .row
            .channel_id
            .as_deref()
            .and_then(|id| app.channels.get(id))
            .map(|c| crate::domain::fees::apply(&c.costs().withdrawal, current.amount(), digits))
            .and_then(to_units),
    };
    let profit_units = cost_units.and_then(|c| current.row.fee.checked_sub(c));
    let reference = bank_reference.unwrap_or_else(|| format!("SIM-{}", current.row.order_no));
    plan(
        current,
        WithdrawalEvent::Settle,
        move |change, row| WithdrawalMove {
            actual_amount: Some(row.amount),
            completed_at: Some(change.updated_at),
            processed_at: row.processed_at.or(Some(change.updated_at)),
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
    commit(app, plan_fail(&current, reason, app.now_unix())?).await
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
        move |change, row| WithdrawalMove {
            failed_at: Some(change.updated_at),
            processed_at: row.processed_at.or(Some(change.updated_at)),
            manual_reason: reason,
            ..change
        },
        Effect::Release("withdrawal_failed"),
        now,
    )
}

/// Hands an approved withdrawal to its channel: `approved` → `processing`,
/// with the channel's reference. No callback is sent for it. A refusal is
/// the channel's own word and fails the order (its funds released); an
/// unknown outcome leaves it `approved`, so the next dispatch asks again
/// under the same order number, which the channel answers once.
pub async fn dispatch(app: &App, order_no: &str) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    let channel = current
        .row
        .channel_id
        .as_deref()
        .and_then(|id| app.channels.get(id))
        .ok_or_else(|| ApiError::Internal(format!("withdrawal {order_no} has no channel")))?;
    let row = &current.row;
    let ask = crate::channels::PayoutAsk {
        order_no: row.order_no.clone(),
        amount: crate::domain::money::from_units(row.amount),
        currency: row.currency.clone(),
        bank_code: row.beneficiary_bank_code.clone(),
        account_no: row.beneficiary_account.clone(),
        account_holder: row.beneficiary_name.clone(),
    };
    match channel.dispatch_payout(&ask).await {
        Ok(reference) => {
            apply(
                app,
                order_no,
                WithdrawalEvent::Dispatch,
                move |change, _| WithdrawalMove {
                    processed_at: Some(change.updated_at),
                    channel_order_no: Some(reference),
                    ..change
                },
                Effect::None,
            )
            .await
        }
        Err(ChannelError::Refused { reason }) => fail(app, order_no, Some(reason)).await,
        Err(unknown @ ChannelError::Unknown { .. }) => Err(ApiError::Unavailable(format!(
            "channel {}, payout {order_no}: {unknown}",
            channel.code()
        ))),
    }
}

/// Dispatches right after approval. The approval has committed either way:
/// if the dispatch cannot happen now, the dispatch worker finds the order
/// still `approved` and tries again, so the caller hears of the approval.
pub(super) async fn dispatch_or_keep(app: &App, approved: Withdrawal) -> Withdrawal {
    let _ = dispatch(app, &approved.row.order_no).await;
    approved
}

/// Dispatches every approved withdrawal still waiting (after a crash or a
/// channel outage). Each dispatch is a conditional update, so two workers
/// never dispatch one order twice.
pub async fn dispatch_due(app: &App) -> Result<usize, ApiError> {
    let due = app
        .db
        .run(|s| Box::pin(async move { s.withdrawals_to_dispatch(500).await }))
        .await?;
    let mut dispatched = 0;
    for order_no in due {
        match dispatch(app, &order_no).await {
            Ok(order) => {
                dispatched += 1;
                if let (Some(approved), Some(processed)) =
                    (order.row.approved_at, order.row.processed_at)
                {
                    crate::telemetry::metrics::worker_lag("dispatch", processed - approved);
                }
            }
            Err(ApiError::InvalidStateTransition { .. }) => {}
            // One channel that cannot answer does not hold up the others'
            // payouts; this one stays approved and is asked again.
            Err(ApiError::Unavailable(why)) => {
                tracing::warn!(order_no = %order_no, "payout not dispatched: {why}");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(dispatched)
}

/// Inside `tx`: sets the withdrawal aside for an operator
/// (`needs_manual_intervention`, with `reason`), its status unchanged.
pub(crate) async fn flag(
    tx: &mut dyn Store,
    row: &WithdrawalRow,
    reason: String,
    now: i64,
) -> Result<(), ApiError> {
    let change = WithdrawalMove {
        needs_manual_intervention: Some(true),
        manual_reason: Some(reason),
        ..WithdrawalMove::to(row.status, now)
    };
    tx.transition_withdrawal(&row.id, &[row.status], &change)
        .await?;
    Ok(())
}
