//! A deposit's moves after creation: completion (with its ledger entry),
//! a match before the money is credited, cancellation and expiry, each
//! with its callback record in the move's transaction; and expiry at
//! `expire_at`, whichever path reaches a lapsed order first.

use super::{find_any, Deposit};
use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::fees::Direction;
use crate::domain::four_eyes;
use crate::domain::lifecycle::{self, DepositEvent};
use crate::domain::money::to_units;
use crate::domain::routing::Route;
use crate::domain::status::{CallbackStatus, DepositStatus};
use crate::ledger::{self, Entry};
use crate::store::audit::PendingAudit;
use crate::store::rows::{DepositMove, DepositRow};
use crate::store::{OrderKey, Store};
use crate::{callbacks, fees, App};
use rust_decimal::Decimal;

/// What completing a deposit writes, worked out before the transaction
/// (fees and costs come from configuration and the merchant's rates).
#[derive(Clone, Debug)]
pub struct Completion {
    actual: i64,
    fee: i64,
    cost: Option<i64>,
    profit: Option<i64>,
}

impl Completion {
    /// What the channel says it charged, in place of the configured rate's
    /// estimate.
    pub fn with_channel_cost(self, cost: i64) -> Completion {
        Completion {
            cost: Some(cost),
            profit: self.fee.checked_sub(cost),
            ..self
        }
    }

    /// What arrived and the merchant's fee on it, in units.
    pub fn paid_and_fee(&self) -> (i64, i64) {
        (self.actual, self.fee)
    }
}

/// The payment arrived in full (`paid` is `None`) or as `paid`. The fee
/// and the channel cost are computed on what arrived.
pub async fn plan_completion(
    app: &App,
    current: &Deposit,
    paid: Option<Decimal>,
) -> Result<Completion, ApiError> {
    lifecycle::deposit_next(current.status, DepositEvent::Complete).ok_or_else(|| {
        lifecycle::refused(
            &current.order_no,
            current.status.as_str(),
            DepositEvent::Complete,
        )
    })?;
    let currency = app.config.currency(&current.currency)?;
    let actual = match paid {
        Some(p) => crate::domain::validate::paid_amount("amount", p, currency.fraction_digits)?,
        // A matched deposit completes with what the match said arrived.
        None if current.status == DepositStatus::Matched
            && current.actual_amount > Decimal::ZERO =>
        {
            current.actual_amount
        }
        None => current.amount,
    };
    // The merchant's rates as remembered (forgotten on any write to them):
    // one merchant's completions, hundreds a second, read them once.
    let merchant = crate::credentials::merchant(app, &current.merchant_id).await?;
    let rate = fees::rate_for(app, &merchant, &current.currency, Direction::Deposit).await?;
    let fee = crate::domain::fees::apply(&rate, actual, currency.fraction_digits);
    let cost = match current.route {
        Route::Account => current
            .account_id
            .as_deref()
            .and_then(|id| app.config.receiving_account(id))
            .map(|a| crate::domain::fees::apply(&a.deposit_cost, actual, currency.fraction_digits)),
        Route::Channel => current
            .channel_id
            .as_deref()
            .and_then(|id| app.channels.get(id))
            .map(|c| {
                crate::domain::fees::apply(&c.costs().deposit, actual, currency.fraction_digits)
            }),
    };
    let units =
        |d: Decimal| to_units(d).ok_or_else(|| ApiError::invalid_field("amount", "is too large"));
    Ok(Completion {
        actual: units(actual)?,
        fee: units(fee)?,
        cost: cost.and_then(to_units),
        profit: cost.and_then(|c| to_units(fee - c)),
    })
}

/// What a move inside a transaction came to.
#[derive(Debug)]
pub enum Moved {
    /// The move was made.
    Done(DepositRow),
    /// The order was still pending at its `expire_at`: it was expired
    /// instead, with its callback, and the move is refused once that is
    /// committed.
    Lapsed(DepositRow),
}

impl Moved {
    /// After the commit: the moved order, or the refusal a lapsed order
    /// answers (409, as for any order already expired).
    pub fn into_result(self, event: DepositEvent) -> Result<DepositRow, ApiError> {
        match self {
            Moved::Done(row) => Ok(row),
            Moved::Lapsed(row) => Err(lifecycle::refused(&row.order_no, row.status, event)),
        }
    }
}

/// Inside `tx`: expiry is decided at `expire_at`, not when a worker next
/// looks. A pending order whose time has run out is expired here by
/// whichever path reaches it first (a payment, a match, a bank report, an
/// operator), with its callback, so that no late transfer completes an
/// order the merchant has already written off. `None` when it has not run
/// out.
pub async fn lapse(
    tx: &mut dyn Store,
    row: &DepositRow,
    now: i64,
) -> Result<Option<DepositRow>, ApiError> {
    if row.status != DepositStatus::Pending || row.expire_at > now {
        return Ok(None);
    }
    let expired = transition(tx, row.clone(), DepositEvent::Expire, |c| c, now).await?;
    Ok(Some(expired))
}

/// `lapse` for an order known by its number.
pub async fn lapse_if_due(
    tx: &mut dyn Store,
    order_no: &str,
    now: i64,
) -> Result<Option<DepositRow>, ApiError> {
    let row = load(tx, order_no).await?;
    lapse(tx, &row, now).await
}

/// The refusal of a move that lost a race: another transaction moved the
/// order first, so the answer names the state it is in now, not the one
/// read before.
async fn refused_as_now(
    tx: &mut dyn Store,
    order_no: &str,
    read: DepositStatus,
    event: DepositEvent,
) -> ApiError {
    match tx.deposit_by(OrderKey::AnyOrderNo(order_no).into()).await {
        Ok(Some(now)) => lifecycle::refused(order_no, now.status, event),
        _ => lifecycle::refused(order_no, read, event),
    }
}

async fn load(tx: &mut dyn Store, order_no: &str) -> Result<DepositRow, ApiError> {
    tx.deposit_by(OrderKey::AnyOrderNo(order_no).into())
        .await?
        .ok_or_else(|| ApiError::OrderNotFound {
            kind: "deposit",
            reference: order_no.to_string(),
        })
}

/// Completes the deposit inside `tx`: the order, its ledger entry (the
/// merchant is credited `actual_amount − fee`) and its callback record.
/// Refused if the order moved to a state completion does not apply to;
/// expired instead if its time ran out.
pub async fn apply_completion(
    tx: &mut dyn Store,
    order_no: &str,
    plan: &Completion,
    now: i64,
) -> Result<Moved, ApiError> {
    let row = load(tx, order_no).await?;
    complete_read(tx, row, plan, now).await
}

/// `apply_completion` from the order as read before the transaction (a
/// channel's completion, which read it to plan): its lapse and its move
/// are each an update conditional on the states they leave, so an order
/// moved since is refused (`InvalidStateTransition`, and the notification
/// is taken again from a fresh read), never moved twice.
pub async fn complete_read(
    tx: &mut dyn Store,
    row: DepositRow,
    plan: &Completion,
    now: i64,
) -> Result<Moved, ApiError> {
    if let Some(expired) = lapse(tx, &row, now).await? {
        return Ok(Moved::Lapsed(expired));
    }
    let completed = transition(
        tx,
        row,
        DepositEvent::Complete,
        |change| DepositMove {
            actual_amount: Some(plan.actual),
            fee: Some(plan.fee),
            actual_channel_cost: plan.cost,
            actual_profit: plan.profit,
            completed_at: Some(change.updated_at),
            ..change
        },
        now,
    )
    .await?;
    let entry = Entry::deposit_completed((&completed).into(), plan.actual, plan.fee);
    ledger::post(tx, &entry, now).await?;
    Ok(Moved::Done(completed))
}

/// The payment arrived: the order completes and the merchant is credited,
/// in one transaction.
pub async fn complete(
    app: &App,
    by: &Actor,
    order_no: &str,
    paid: Option<Decimal>,
    remarks: Option<&str>,
) -> Result<Deposit, ApiError> {
    let current = find_any(app, order_no).await?;
    let plan = plan_completion(app, &current, paid).await?;
    // A person's word for another amount needs a reason; the payer's or a
    // channel's (the sandbox's simulator) is what arrived.
    if let (Some(_), Some(paid)) = (by.acting(), paid) {
        crate::domain::validate::reason_for_difference(
            &current.currency,
            current.amount,
            paid,
            remarks,
        )?;
    }
    let now = app.now_unix();
    let order = order_no.to_string();
    let audit = by.audit(Target::Order(order.clone()), remarks, now);
    let moved = app
        .db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move { apply_completion(tx, &order, &plan, now).await })
        })
        .await?;
    Deposit::from_row(moved.into_result(DepositEvent::Complete)?)
}

/// The amount a match records as received, in stored units.
pub fn received_units(current: &Deposit, received: Option<Decimal>) -> Result<i64, ApiError> {
    match received {
        Some(r) => to_units(r).ok_or_else(|| ApiError::invalid_field("amount", "is too large")),
        None => to_units(current.amount)
            .ok_or_else(|| ApiError::Internal("stored amount out of range".into())),
    }
}

/// Inside `tx`: a bank transaction or channel report matched the deposit
/// before it is credited; `received` (units) is what arrived.
pub async fn apply_match(
    tx: &mut dyn Store,
    order_no: &str,
    received: i64,
    now: i64,
) -> Result<Moved, ApiError> {
    apply_move(
        tx,
        order_no,
        DepositEvent::Match,
        move |change| DepositMove {
            matched_at: Some(change.updated_at),
            actual_amount: Some(received),
            ..change
        },
        now,
    )
    .await
}

/// The channel declined the payer's payment: the order is cancelled, with
/// its callback, in the notification's transaction.
pub async fn apply_decline(
    tx: &mut dyn Store,
    order_no: &str,
    now: i64,
) -> Result<Moved, ApiError> {
    apply_move(tx, order_no, DepositEvent::Cancel, |change| change, now).await
}

/// A bank transaction or channel report matched the deposit before it is
/// credited (channels that report a match first). `received` is what
/// arrived, when known.
pub async fn record_match(
    app: &App,
    order_no: &str,
    received: Option<Decimal>,
) -> Result<Deposit, ApiError> {
    let current = find_any(app, order_no).await?;
    let received = received_units(&current, received)?;
    let now = app.now_unix();
    let order = order_no.to_string();
    let moved = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move { apply_match(tx, &order, received, now).await })
        })
        .await?;
    Deposit::from_row(moved.into_result(DepositEvent::Match)?)
}

/// An operator cancelled the deposit, or its channel declined the payment.
pub async fn cancel(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<&str>,
) -> Result<Deposit, ApiError> {
    // One person cancels alone only while no money can be held for the
    // order; after that only an approved change request does. Checked on
    // the row the move reads, so a match landing meanwhile is seen.
    let alone = by.acting().is_some_and(|a| a.approves.is_none());
    let audit = by.audit(Target::Order(order_no.to_string()), remarks, app.now_unix());
    let allowed = move |row: &DepositRow| {
        let matched = row.status == DepositStatus::Matched;
        if alone && four_eyes::cancel_needs_two(row.channel_order_no.is_some(), matched) {
            return Err(ApiError::SecondPersonRequired(
                "cancelling a deposit a channel accepted or a payment was matched to",
            ));
        }
        Ok(())
    };
    move_deposit(app, audit, order_no, DepositEvent::Cancel, allowed, |c| c).await
}

/// The deposit's time ran out before a payment was matched.
pub async fn expire(app: &App, order_no: &str) -> Result<Deposit, ApiError> {
    move_deposit(app, None, order_no, DepositEvent::Expire, |_| Ok(()), |c| c).await
}

/// Moves a deposit without money changing hands, in its own transaction,
/// if `allowed` lets it as the row is read there.
async fn move_deposit(
    app: &App,
    audit: Option<PendingAudit>,
    order_no: &str,
    event: DepositEvent,
    allowed: impl FnOnce(&DepositRow) -> Result<(), ApiError> + Send + 'static,
    change: impl FnOnce(DepositMove) -> DepositMove + Send + 'static,
) -> Result<Deposit, ApiError> {
    let now = app.now_unix();
    let order = order_no.to_string();
    let moved = app
        .db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move {
                let row = load(tx, &order).await?;
                allowed(&row)?;
                apply_loaded(tx, row, event, change, now).await
            })
        })
        .await?;
    Deposit::from_row(moved.into_result(event)?)
}

/// Inside `tx`: the status change and its callback record, refused if the
/// deposit is in a state the event does not apply to (or moved meanwhile),
/// and expired instead if its time ran out first.
async fn apply_move(
    tx: &mut dyn Store,
    order_no: &str,
    event: DepositEvent,
    change: impl FnOnce(DepositMove) -> DepositMove + Send,
    now: i64,
) -> Result<Moved, ApiError> {
    let row = load(tx, order_no).await?;
    apply_loaded(tx, row, event, change, now).await
}

/// `apply_move` on a row already read in `tx`.
async fn apply_loaded(
    tx: &mut dyn Store,
    row: DepositRow,
    event: DepositEvent,
    change: impl FnOnce(DepositMove) -> DepositMove + Send,
    now: i64,
) -> Result<Moved, ApiError> {
    if event != DepositEvent::Expire {
        if let Some(expired) = lapse(tx, &row, now).await? {
            return Ok(Moved::Lapsed(expired));
        }
    }
    Ok(Moved::Done(transition(tx, row, event, change, now).await?))
}

/// Inside `tx`: moves `row` by `event` along the lifecycle table, writing
/// the columns `change` sets, with the move's callback record. Returns the
/// order as written.
async fn transition(
    tx: &mut dyn Store,
    row: DepositRow,
    event: DepositEvent,
    change: impl FnOnce(DepositMove) -> DepositMove + Send,
    now: i64,
) -> Result<DepositRow, ApiError> {
    let next = lifecycle::deposit_next(row.status, event)
        .ok_or_else(|| lifecycle::refused(&row.order_no, row.status, event))?;
    let mut change = change(DepositMove::to(next, now));
    if row.callback_url.is_some() {
        change.callback_status = Some(CallbackStatus::Pending);
    }
    let sources = lifecycle::deposit_sources(event);
    let Some(written) = tx.transition_deposit(&row.id, &sources, &change).await? else {
        return Err(refused_as_now(tx, &row.order_no, row.status, event).await);
    };
    callbacks::enqueue_deposit(tx, &written, lifecycle::deposit_callback(event), now).await?;
    Ok(written)
}

/// Expires every deposit still awaiting payment past its `expire_at`.
/// Safe to run in several workers at once: each expiry is a conditional
/// update, so an order another worker expired first is skipped.
pub async fn expire_due(app: &App) -> Result<usize, ApiError> {
    Ok(expire_due_if(app, |_| async { Ok(true) }).await?.0)
}

/// `expire_due`, expiring each order only if `may_expire` says so (the
/// expiry worker asks a channel deposit's channel first): the others are
/// kept awaiting payment. How many expired, and how many were kept.
pub async fn expire_due_if<F, Fut>(app: &App, mut may_expire: F) -> Result<(usize, usize), ApiError>
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = Result<bool, ApiError>>,
{
    const BATCH: i64 = 500;
    let now = app.now_unix();
    let mut expired = 0;
    let mut kept = std::collections::HashSet::new();
    loop {
        let due = app
            .db
            .run(move |s| Box::pin(async move { s.deposits_due_to_expire(now, BATCH).await }))
            .await?;
        let full = due.len() as i64 == BATCH;
        let mut moved = 0;
        for order_no in due {
            if kept.contains(&order_no) {
                continue;
            }
            if !may_expire(order_no.clone()).await? {
                kept.insert(order_no);
                continue;
            }
            moved += 1;
            match expire(app, &order_no).await {
                Ok(order) => {
                    expired += 1;
                    crate::telemetry::metrics::worker_lag(
                        "expiry",
                        now - order.expire_at.timestamp(),
                    );
                }
                Err(ApiError::InvalidStateTransition { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        // A batch that moved nothing (all kept) would be read again as is.
        if !full || moved == 0 {
            return Ok((expired, kept.len()));
        }
    }
}

/// The earliest `expire_at` among deposits awaiting payment, when the
/// expiry worker must look next.
pub async fn next_expiry(app: &App) -> Result<Option<i64>, ApiError> {
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.next_deposit_expiry().await }))
        .await?)
}
