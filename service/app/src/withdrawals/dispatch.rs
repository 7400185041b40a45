//! The dispatcher: hands approved payouts to their channels and finds out
//! what became of those whose outcome it did not learn.
//!
//! A payout is noted as sent (`payout_sent_at`, committed) before the call
//! is made, so that after a timeout, a broken connection, a 5xx or a crash
//! of this process the order is known to be in doubt. An order in doubt is
//! never sent blind: the channel is asked first (`inquire_payout`), and only
//! when it has no record is the payout sent again, under the same order
//! number. Only the channel's word (a refusal, an inquiry answering failed,
//! a `payout.failed` notification) fails a payout; an order in doubt longer
//! than `payout_in_doubt_after_seconds` is set aside for an operator. A
//! payout under way (`processing`) that the channel has not reported on is
//! asked about every `payout_inquire_after_seconds`.

use super::payouts::{flag, plan_fail, plan_settle};
use super::{apply, commit, find_any, Effect, Withdrawal};
use crate::channels::{Channel, ChannelError, PayoutAsk, PayoutState};
use crate::domain::error::ApiError;
use crate::domain::lifecycle::{self, WithdrawalEvent};
use crate::domain::money::to_units;
use crate::domain::status::WithdrawalStatus;
use crate::store::rows::WithdrawalMove;
use crate::App;
use std::sync::Arc;

/// How many orders one pass takes of each kind.
const BATCH: i64 = 500;

fn channel_of(app: &App, current: &Withdrawal) -> Result<Arc<dyn Channel>, ApiError> {
    current
        .channel_id
        .as_deref()
        .and_then(|id| app.channels.get(id))
        .ok_or_else(|| {
            ApiError::Internal(format!("withdrawal {} has no channel", current.order_no))
        })
}

/// Hands an approved withdrawal to its channel: `approved` → `processing`,
/// with the channel's reference (no callback is sent for it). A refusal
/// fails it; an unknown outcome leaves it `approved`, in doubt, answered
/// here as `Unavailable`.
pub async fn dispatch(app: &App, order_no: &str) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    if current.status != WithdrawalStatus::Approved {
        return Err(lifecycle::refused(
            order_no,
            current.status,
            WithdrawalEvent::Dispatch,
        ));
    }
    let channel = channel_of(app, &current)?;
    match current.payout_sent_at {
        Some(_) => match channel.inquire_payout(order_no).await {
            Ok(Some(state)) => return take_word(app, &current, state).await,
            // It never arrived: sending it again under the same order
            // number is safe, unless its merchant is suspended meanwhile.
            Ok(None) => crate::suspension::refuse_if_suspended(app, &current.merchant_id).await?,
            Err(e) => return Err(in_doubt(app, &current, channel.code(), e).await),
        },
        None => {
            let (id, now) = (current.id.clone(), app.now_unix());
            let noted = app
                .db
                .run(move |s| Box::pin(async move { s.mark_payout_sent(&id, now).await }))
                .await?;
            if !noted {
                // Another dispatcher is sending it, it moved meanwhile, or
                // its merchant is suspended (held: the note's own condition,
                // so a suspension since it was listed holds it too).
                return Err(lifecycle::refused(
                    order_no,
                    current.status,
                    WithdrawalEvent::Dispatch,
                ));
            }
        }
    }
    send(app, &current, channel.as_ref()).await
}

async fn send(
    app: &App,
    current: &Withdrawal,
    channel: &dyn Channel,
) -> Result<Withdrawal, ApiError> {
    let ask = PayoutAsk {
        order_no: current.order_no.clone(),
        amount: current.amount,
        currency: current.currency.clone(),
        bank_code: current.beneficiary.bank_code.clone(),
        account_no: current.beneficiary.account.clone(),
        account_holder: current.beneficiary.name.clone(),
    };
    match channel.dispatch_payout(&ask).await {
        Ok(reference) => accepted(app, &current.order_no, reference).await,
        Err(ChannelError::Refused { reason }) => {
            commit(app, None, plan_fail(current, Some(reason), app.now_unix())?).await
        }
        Err(unknown) => Err(in_doubt(app, current, channel.code(), unknown).await),
    }
}

/// The channel has the payout: `processing`, with its reference.
async fn accepted(app: &App, order_no: &str, reference: String) -> Result<Withdrawal, ApiError> {
    apply(
        app,
        None,
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

/// What the channel answered an inquiry, applied to the order.
async fn take_word(
    app: &App,
    current: &Withdrawal,
    state: PayoutState,
) -> Result<Withdrawal, ApiError> {
    match state {
        PayoutState::Accepted { reference } if current.status == WithdrawalStatus::Approved => {
            accepted(app, &current.order_no, reference).await
        }
        PayoutState::Accepted { .. } => Ok(current.clone()),
        PayoutState::Completed { reference, cost } => {
            let cost = cost.and_then(to_units);
            commit(app, None, plan_settle(app, current, Some(reference), cost)?).await
        }
        PayoutState::Failed { reason } => {
            commit(app, None, plan_fail(current, Some(reason), app.now_unix())?).await
        }
    }
}

/// No answer to trust about a payout that may have been paid: it stays as
/// it is, and once it has been in doubt for `payout_in_doubt_after_seconds`
/// it is set aside for an operator. What the caller hears.
async fn in_doubt(app: &App, current: &Withdrawal, code: &str, why: ChannelError) -> ApiError {
    let now = app.now_unix();
    let since = current.payout_sent_at.map_or(now, |t| t.timestamp());
    let detail = format!("channel {code}, payout {}: {why}", current.order_no);
    if now - since >= app.config.payout_in_doubt_after_seconds && !current.needs_manual_intervention
    {
        let reason = format!(
            "in doubt: sent to channel {code} at {} and no answer to trust since ({why})",
            crate::clock::from_unix(since)
                .map(|t| t.to_rfc3339())
                .unwrap_or_else(|_| since.to_string())
        );
        match set_aside(app, current, reason, now).await {
            Ok(()) => {
                tracing::warn!(order_no = %current.order_no, "payout set aside for an operator: {detail}")
            }
            Err(e) => return e,
        }
    }
    ApiError::Unavailable(detail)
}

/// `flag` in a transaction of its own.
async fn set_aside(
    app: &App,
    order: &Withdrawal,
    reason: String,
    now: i64,
) -> Result<(), ApiError> {
    let order = order.clone();
    app.db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move { flag(tx, &order, reason, now).await })
        })
        .await
}

/// Dispatches right after approval. The approval has committed either way:
/// if the dispatch cannot happen now, the dispatch worker finds the order
/// still `approved` and tries again, so the caller hears of the approval.
pub(super) async fn dispatch_or_keep(app: &App, approved: Withdrawal) -> Withdrawal {
    let _ = dispatch(app, &approved.order_no).await;
    approved
}

/// Dispatches every approved withdrawal still waiting: never sent (after a
/// crash between approval and dispatch), or sent without an answer at
/// least `payout_inquire_after_seconds` ago. Each move is a conditional
/// update, so two workers never move one order twice, and every call is
/// keyed by the order number, so the channel acts on it once.
pub async fn dispatch_due(app: &App) -> Result<usize, ApiError> {
    let sent_before = app.now_unix() - app.config.payout_inquire_after_seconds;
    let due = app
        .db
        .run(move |s| Box::pin(async move { s.withdrawals_to_dispatch(BATCH, sent_before).await }))
        .await?;
    let mut dispatched = 0;
    for order_no in due {
        match dispatch(app, &order_no).await {
            Ok(order) => {
                dispatched += 1;
                if let (Some(approved), Some(processed)) = (order.approved_at, order.processed_at) {
                    let lag = (processed - approved).num_seconds();
                    crate::telemetry::metrics::worker_lag("dispatch", lag);
                }
            }
            // Suspended since it was listed: held until reactivation.
            Err(ApiError::InvalidStateTransition { .. } | ApiError::MerchantDisabled) => {}
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

/// Asks the channels about payouts under way they have not reported on
/// for `payout_inquire_after_seconds`, and applies what they say: paid,
/// failed, or still under way (asked again later). A channel with no
/// record of a payout it accepted contradicts itself: the order is set
/// aside for an operator. How many orders moved.
pub async fn inquire_due(app: &App) -> Result<usize, ApiError> {
    let now = app.now_unix();
    let before = now - app.config.payout_inquire_after_seconds;
    let due = app
        .db
        .run(move |s| Box::pin(async move { s.payouts_to_inquire(BATCH, before).await }))
        .await?;
    let mut moved = 0;
    for order_no in due {
        let current = find_any(app, &order_no).await?;
        let channel = channel_of(app, &current)?;
        let answer = channel.inquire_payout(&order_no).await;
        let id = current.id.clone();
        app.db
            .run(move |s| Box::pin(async move { s.mark_payout_inquired(&id, now).await }))
            .await?;
        let outcome = match answer {
            Ok(Some(PayoutState::Accepted { .. })) => continue,
            Ok(Some(state)) => take_word(app, &current, state).await.map(|_| ()),
            Ok(None) if !current.needs_manual_intervention => {
                let reason = format!(
                    "channel {} accepted this payout and now has no record of it",
                    channel.code()
                );
                set_aside(app, &current, reason, now).await
            }
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(order_no = %order_no, "payout inquiry unanswered: {e}");
                continue;
            }
        };
        match outcome {
            Ok(()) => moved += 1,
            Err(ApiError::InvalidStateTransition { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(moved)
}

/// Per configured channel code: how many payouts are in doubt (sent, no
/// answer to trust) and how long the oldest has been, in seconds (0 when
/// none): what `/metrics` and the alert read. Every configured channel is
/// listed, so its gauge falls back to 0.
pub async fn payouts_in_doubt(app: &App) -> Result<Vec<(String, i64, i64)>, ApiError> {
    let found = app
        .db
        .run(|s| Box::pin(async move { s.payouts_in_doubt().await }))
        .await?;
    let now = app.now_unix();
    Ok(app
        .channels
        .all()
        .map(|c| {
            let (count, oldest) = found
                .iter()
                .find(|(id, _, _)| id.as_deref() == Some(c.id()))
                .map_or((0, None), |(_, n, oldest)| (*n, *oldest));
            (
                c.code().to_string(),
                count,
                oldest.map_or(0, |t| (now - t).max(0)),
            )
        })
        .collect())
}
