//! The dispatcher: hands approved payouts to their channels and finds out
//! what became of those whose outcome it did not learn.
//!
//! A payout is noted as sent (`payout_sent_at`, committed) before the call
//! is made (by the dispatch, or by the approving move itself when its
//! caller sends at once: `approvals::Then::Send`), so that after a timeout, a broken connection, a 5xx or a crash
//! of this process the order is known to be in doubt. An order in doubt is
//! never sent blind: the channel is asked first (`inquire_payout`), and only
//! when it has no record is the payout sent again, under the same order
//! number. Only the channel's word (a refusal, an inquiry answering failed,
//! a `payout.failed` notification) fails a payout; an order in doubt longer
//! than `payout_in_doubt_after_seconds` is set aside for an operator. A
//! payout under way (`processing`) that the channel has not reported on is
//! asked about every `payout_inquire_after_seconds`.

use super::payouts::{flag, plan_fail, plan_settle};
use super::{commit, find_any, plan, Effect, Withdrawal};
use crate::channels::{Channel, ChannelError, PayoutAsk, PayoutState};
use crate::domain::error::ApiError;
use crate::domain::lifecycle::{self, WithdrawalEvent};
use crate::domain::money::to_units;
use crate::domain::routing::table::{tried_in, RoutedDirection, Scope, Skip};
use crate::domain::status::WithdrawalStatus;
use crate::merchants::Merchant;
use crate::store::queries::routing::Reroute;
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
    dispatch_as_read(app, find_any(app, order_no).await?, None).await
}

/// `dispatch`, from the order as its caller has just read or written it
/// (the approval that approved it), not read again, and its merchant when
/// the caller has read that too (the routing table is the merchant's).
/// Nothing is decided on either alone: every move below is a conditional
/// update that holds only while the order still is as it was read.
pub async fn dispatch_as_read(
    app: &App,
    current: Withdrawal,
    merchant: Option<Merchant>,
) -> Result<Withdrawal, ApiError> {
    let order_no = current.order_no.as_str();
    if current.status != WithdrawalStatus::Approved {
        return Err(lifecycle::refused(
            order_no,
            current.status,
            WithdrawalEvent::Dispatch,
        ));
    }
    if current.channel_id.is_none() {
        // Every candidate was disabled or resting when it was created.
        return match fall_through(app, &current, None, "", false).await? {
            Some((moved, next)) => send(app, &moved, next).await,
            None => Err(no_channel_now(&current)),
        };
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
            if !room_today(app, &current, merchant, channel.code()).await? {
                let why = "at its daily limit";
                return match fall_through(app, &current, Some(channel.code()), why, false).await? {
                    Some((moved, next)) => send(app, &moved, next).await,
                    None => Err(no_channel_now(&current)),
                };
            }
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
    send(app, &current, channel).await
}

/// Sends a payout its approving transaction noted as sent
/// (`approvals::Then::Send`): nothing to ask the channel first, as nobody
/// sent it before that note, and no room to reserve, as that transaction
/// notes only a channel with no daily limit.
pub async fn send_noted(app: &App, current: Withdrawal) -> Result<Withdrawal, ApiError> {
    let channel = channel_of(app, &current)?;
    send(app, &current, channel).await
}

/// Sends the payout to `channel`. A refusal, the channel's word that it
/// did not take the payout, hands it to the next candidate the routing
/// table has for it (`fall_through`), and fails it only when none is left;
/// an unknown outcome never does: the payout stays with this channel until
/// an inquiry rules it out.
async fn send(
    app: &App,
    current: &Withdrawal,
    channel: Arc<dyn Channel>,
) -> Result<Withdrawal, ApiError> {
    let ask = PayoutAsk {
        order_no: current.order_no.clone(),
        amount: current.amount,
        currency: current.currency.clone(),
        bank_code: current.beneficiary.bank_code.clone(),
        account_no: current.beneficiary.account.clone(),
        account_holder: current.beneficiary.name.clone(),
    };
    let answer = channel.dispatch_payout(&ask).await;
    app.router.record(app, channel.code(), answer.is_err());
    match answer {
        Ok(reference) => accepted(app, current, reference).await,
        Err(ChannelError::Refused { reason }) => {
            let why = format!("refused: {reason}");
            match fall_through(app, current, Some(channel.code()), &why, true).await? {
                Some((moved, next)) => Box::pin(send(app, &moved, next)).await,
                None => commit(app, None, plan_fail(current, Some(reason), app.now_unix())?).await,
            }
        }
        Err(unknown) => Err(in_doubt(app, current, channel.code(), unknown).await),
    }
}

/// The scope a withdrawal is routed in.
fn scope_of(current: &Withdrawal) -> Scope {
    Scope {
        currency: current.currency.clone(),
        direction: RoutedDirection::Withdrawal,
        merchant_id: Some(current.merchant_id.clone()),
    }
}

/// Hands a payout that `from` did not take (`why`: refused, or at its
/// daily limit) to the next candidate that can take it, noted as sent
/// there in the same update that moves it (only while it is still
/// approved and still at `from`): the moved order and its new channel, or
/// `None` when no candidate is left. `sent`: it was sent to `from` (and
/// refused there); otherwise nobody has sent it, and the move holds only
/// while nobody has.
async fn fall_through(
    app: &App,
    current: &Withdrawal,
    from: Option<&str>,
    why: &str,
    sent: bool,
) -> Result<Option<(Withdrawal, Arc<dyn Channel>)>, ApiError> {
    let mut tried = tried_in(&current.routing);
    if let Some(from) = from.filter(|f| !tried.iter().any(|c| c == f)) {
        tried.push(from.to_string());
    }
    let merchant = crate::merchants::find(app, &current.merchant_id).await?;
    let scope = scope_of(current);
    let Ok((table, plan)) = app
        .router
        .plan(app, &scope, &merchant.code, current.amount, &tried)
    else {
        return Ok(None);
    };
    let mut fell_from: Vec<(String, String)> = earlier_falls(&current.routing);
    if let Some(from) = from {
        fell_from.push((from.to_string(), why.to_string()));
    }
    // Refused: it holds the note of its send to `from`, moved with it. At
    // the daily limit or never routed: nobody sent it, and the move says so.
    let unsent_only = !sent;
    let mut full = Vec::new();
    for code in &plan.order {
        let Some(next) = app.channels.by_code(code) else {
            continue;
        };
        let candidate = table.candidates.iter().find(|c| &c.channel == code);
        if let Some(c) = candidate {
            if !app.router.reserve(app, c, &scope, current.amount).await? {
                full.push((code.clone(), Skip::OverDailyLimit));
                continue;
            }
        }
        let decision =
            crate::routing::decision(&table, &plan, code, fell_from.clone(), full.clone());
        let moved = hand_over(app, current, next.as_ref(), &decision, unsent_only).await?;
        if !moved {
            if let Some(c) = candidate {
                app.router.release(app, c, &scope, current.amount).await;
            }
            // Another dispatcher moved it, or it is no longer approved.
            return Err(lifecycle::refused(
                &current.order_no,
                current.status,
                WithdrawalEvent::Dispatch,
            ));
        }
        if !why.is_empty() {
            tracing::info!(order_no = %current.order_no, to = %code, "payout handed to the next channel: {why}");
        }
        return Ok(Some((find_any(app, &current.order_no).await?, next)));
    }
    Ok(None)
}

/// Whether the payout's channel has room for it today (its daily limit,
/// if the table gives it one), taken if so.
async fn room_today(
    app: &App,
    current: &Withdrawal,
    merchant: Option<Merchant>,
    code: &str,
) -> Result<bool, ApiError> {
    let merchant = match merchant {
        Some(merchant) => merchant,
        None => crate::merchants::find(app, &current.merchant_id).await?,
    };
    let scope = scope_of(current);
    let table = app.router.table(app, &scope, Some(&merchant.code));
    match table.candidates.iter().find(|c| c.channel == code) {
        Some(c) => app.router.reserve(app, c, &scope, current.amount).await,
        None => Ok(true),
    }
}

/// No channel can take the payout now: it stays approved and is tried
/// again on the next pass.
fn no_channel_now(current: &Withdrawal) -> ApiError {
    ApiError::Unavailable(format!(
        "payout {}: no channel can take it now (each is disabled or at its daily limit)",
        current.order_no
    ))
}

/// Moves the order to `next` with its routing record and the cost there,
/// noted as sent (one conditional update); whether it moved.
async fn hand_over(
    app: &App,
    current: &Withdrawal,
    next: &dyn Channel,
    decision: &crate::domain::routing::table::Decision,
    unsent_only: bool,
) -> Result<bool, ApiError> {
    let record =
        serde_json::to_string(&decision.to_map()).map_err(|e| ApiError::Internal(e.to_string()))?;
    let digits = app.config.currency(&current.currency)?.fraction_digits;
    let cost = crate::domain::fees::apply(&next.costs().withdrawal, current.amount, digits);
    let (cost, profit) = (to_units(cost), to_units(current.fee - cost));
    // The order keeps channels by id; the table names them by code.
    let (id, from, to, now) = (
        current.id.clone(),
        current.channel_id.clone(),
        next.id().to_string(),
        app.now_unix(),
    );
    Ok(app
        .db
        .run(move |s| {
            Box::pin(async move {
                s.reroute_payout(&Reroute {
                    id: &id,
                    from_channel: from.as_deref(),
                    unsent_only,
                    to_channel: &to,
                    routing: &record,
                    estimated_channel_cost: cost,
                    estimated_profit: profit,
                    at: now,
                })
                .await
            })
        })
        .await?)
}

/// The channels a withdrawal already fell through from, with why, as its
/// record says.
fn earlier_falls(record: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    record
        .get(crate::domain::routing::table::KEY_FELL_FROM)
        .map(|words| {
            words
                .split("; ")
                .filter_map(|w| w.split_once(": "))
                .map(|(c, why)| (c.to_string(), why.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The channel has the payout: `processing`, with its reference. Planned
/// from the order as sent (`approved`), not read again: the move holds
/// only while it is still approved.
async fn accepted(
    app: &App,
    current: &Withdrawal,
    reference: String,
) -> Result<Withdrawal, ApiError> {
    let planned = plan(
        current,
        WithdrawalEvent::Dispatch,
        move |change, _| WithdrawalMove {
            processed_at: Some(change.updated_at),
            channel_order_no: Some(reference),
            ..change
        },
        Effect::None,
        app.now_unix(),
    )?;
    commit(app, None, planned).await
}

/// What the channel answered an inquiry, applied to the order.
async fn take_word(
    app: &App,
    current: &Withdrawal,
    state: PayoutState,
) -> Result<Withdrawal, ApiError> {
    match state {
        PayoutState::Accepted { reference } if current.status == WithdrawalStatus::Approved => {
            accepted(app, current, reference).await
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
    let _ = dispatch_as_read(app, approved.clone(), None).await;
    approved
}

/// `dispatch_or_keep` for an order its approval may have noted as sent
/// (`noted`).
pub(super) async fn send_or_keep(app: &App, approved: Withdrawal, noted: bool) -> Withdrawal {
    if noted {
        let _ = send_noted(app, approved.clone()).await;
        return approved;
    }
    dispatch_or_keep(app, approved).await
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
