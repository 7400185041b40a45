//! Withdrawal orders: creation (validated, fee computed, auto-approved by
//! the merchant's setting, amount and fee frozen in the same transaction),
//! idempotent resend, queries, and the moves operators and channels make.

use crate::app::callbacks;
use crate::app::fees;
use crate::app::ledger::{self, Entry};
use crate::app::merchants::Merchant;
use crate::app::orders;
use crate::app::App;
use crate::channels::ChannelError;
use crate::domain::error::ApiError;
use crate::domain::events::WithdrawalCallback;
use crate::domain::fees::Direction;
use crate::domain::lifecycle::{self, WithdrawalEvent};
use crate::domain::money::{from_units, to_units};
use crate::domain::status::{CallbackStatus, PayoutMethod, WithdrawalStatus};
use crate::store::rows::{WithdrawalMove, WithdrawalRow};
use crate::store::{OrderKey, Store, StoreError, StoreResult, UniqueKey};
use futures::future::BoxFuture;
use rust_decimal::Decimal;

/// Who approved an auto-approved withdrawal.
pub const AUTO_APPROVER: &str = "auto-approval";

/// A validated create request.
#[derive(Clone, Debug)]
pub struct NewWithdrawal {
    pub merchant_order_no: String,
    pub amount: Decimal,
    pub currency: String,
    pub beneficiary_name: String,
    pub beneficiary_account: String,
    pub beneficiary_bank_code: String,
    pub beneficiary_bank_branch: Option<String>,
    pub callback_url: Option<String>,
    pub extra_data: Option<String>,
    pub fingerprint: String,
}

/// A withdrawal order as the domain sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Withdrawal {
    pub row: WithdrawalRow,
    pub status: WithdrawalStatus,
}

impl Withdrawal {
    pub fn from_row(row: WithdrawalRow) -> Result<Withdrawal, ApiError> {
        Ok(Withdrawal {
            status: row.status,
            row,
        })
    }

    pub fn amount(&self) -> Decimal {
        from_units(self.row.amount)
    }
    pub fn fee(&self) -> Decimal {
        from_units(self.row.fee)
    }
    pub fn actual_amount(&self) -> Decimal {
        from_units(self.row.actual_amount)
    }
}

/// Creates a withdrawal, or returns the original on an identical resend.
pub async fn create(
    app: &App,
    merchant: &Merchant,
    req: NewWithdrawal,
) -> Result<Withdrawal, ApiError> {
    if let Some(existing) =
        orders::row_by_merchant_order_no::<Withdrawal>(app, &merchant.id, &req.merchant_order_no)
            .await?
    {
        return orders::resent_or_conflict(existing, &req.fingerprint, &req.merchant_order_no);
    }
    // The signer's merchant may be remembered from up to a second ago on
    // this instance (`app::credentials`); what freezes money and decides
    // approval must be what the operator last set, on whichever instance.
    let merchant = &crate::app::merchants::find(app, &merchant.id).await?;
    let row = new_row(app, merchant, &req).await?;
    let now = row.created_at;
    let entry = Entry::withdrawal_frozen((&row).into(), row.amount, row.fee);
    let insert = row.clone();
    let result = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move {
                tx.insert_withdrawal(&insert)
                    .await
                    .map_err(|e| conflict_or(e, &insert.merchant_order_no))?;
                ledger::post(tx, &entry, now).await?;
                if insert.is_auto_approved {
                    callbacks::enqueue_withdrawal(tx, &insert, WithdrawalCallback::Approved, now)
                        .await?;
                }
                Ok(())
            })
        })
        .await;
    match result {
        Ok(()) if row.is_auto_approved => {
            Ok(dispatch_or_keep(app, Withdrawal::from_row(row)?).await)
        }
        Ok(()) => Withdrawal::from_row(row),
        Err(ApiError::DuplicateMerchantOrderNo(_)) => {
            let existing = orders::row_by_merchant_order_no::<Withdrawal>(
                app,
                &merchant.id,
                &req.merchant_order_no,
            )
            .await?
            .ok_or_else(|| ApiError::Internal("conflict without a row".into()))?;
            orders::resent_or_conflict(existing, &req.fingerprint, &req.merchant_order_no)
        }
        Err(e) => Err(e),
    }
}

/// The order as created: its fee and estimated cost, frozen amount, and
/// whether the merchant's setting approves it at once.
async fn new_row(
    app: &App,
    merchant: &Merchant,
    req: &NewWithdrawal,
) -> Result<WithdrawalRow, ApiError> {
    let currency = app.config.currency(&req.currency)?;
    let rate = fees::rate_for(app, merchant, &req.currency, Direction::Withdrawal).await?;
    let fee = crate::domain::fees::apply(&rate, req.amount, currency.fraction_digits);
    let channel = app.channels.for_currency(&req.currency);
    let cost = channel.as_ref().map(|c| {
        crate::domain::fees::apply(&c.costs().withdrawal, req.amount, currency.fraction_digits)
    });
    let units =
        |d: Decimal| to_units(d).ok_or_else(|| ApiError::invalid_field("amount", "is too large"));
    let (amount, fee_units) = (units(req.amount)?, units(fee)?);
    let now = app.now_unix();
    let auto = merchant.auto_approval.approves(&req.currency, amount);
    let order_no = crate::app::deposits::new_order_no('W', app.clock.now());
    Ok(WithdrawalRow {
        id: uuid::Uuid::new_v4().to_string(),
        order_no: order_no.clone(),
        merchant_id: merchant.id.clone(),
        merchant_order_no: req.merchant_order_no.clone(),
        request_fingerprint: req.fingerprint.clone(),
        status: if auto {
            WithdrawalStatus::Approved
        } else {
            WithdrawalStatus::Pending
        },
        currency: req.currency.clone(),
        amount,
        fee: fee_units,
        actual_amount: 0,
        beneficiary_name: req.beneficiary_name.clone(),
        beneficiary_account: req.beneficiary_account.clone(),
        beneficiary_bank_code: req.beneficiary_bank_code.clone(),
        beneficiary_bank_name: None,
        beneficiary_bank_branch: req.beneficiary_bank_branch.clone(),
        payout_method: PayoutMethod::BankTransfer,
        is_auto_approved: auto,
        approved_at: auto.then_some(now),
        approved_by: auto.then(|| AUTO_APPROVER.to_string()),
        approval_remarks: None,
        processed_at: None,
        completed_at: None,
        rejected_at: None,
        failed_at: None,
        bank_reference: None,
        callback_url: req.callback_url.clone(),
        callback_status: if auto && req.callback_url.is_some() {
            CallbackStatus::Pending
        } else {
            CallbackStatus::None
        },
        callback_count: 0,
        needs_manual_intervention: false,
        manual_reason: None,
        channel_id: channel.as_ref().map(|c| c.id().to_string()),
        channel_order_no: None,
        estimated_channel_cost: cost.map(units).transpose()?,
        estimated_profit: cost.map(|c| units(fee - c)).transpose()?,
        actual_channel_cost: None,
        actual_profit: None,
        extra_data: req.extra_data.clone(),
        created_at: now,
        updated_at: now,
    })
}

/// A unique-constraint refusal on the merchant's order number is a race
/// with a resend; anything else is what it is.
fn conflict_or(e: StoreError, merchant_order_no: &str) -> ApiError {
    match e {
        StoreError::Conflict {
            key: UniqueKey::WithdrawalMerchantOrderNo,
            ..
        } => ApiError::DuplicateMerchantOrderNo(merchant_order_no.to_string()),
        other => other.into(),
    }
}

crate::app::orders::finders!(Withdrawal);

impl crate::app::orders::Order for Withdrawal {
    type Row = WithdrawalRow;
    const KIND: &'static str = "withdrawal";

    fn from_row(row: WithdrawalRow) -> Result<Withdrawal, ApiError> {
        Withdrawal::from_row(row)
    }
    fn fingerprint(row: &WithdrawalRow) -> &str {
        &row.request_fingerprint
    }
    fn by_key<'c>(
        s: &'c mut dyn Store,
        key: OrderKey<'c>,
    ) -> BoxFuture<'c, StoreResult<Option<WithdrawalRow>>> {
        s.withdrawal_by(key)
    }
}

/// What a move does besides changing the status.
enum Effect {
    None,
    Release(&'static str),
    Complete,
}

/// Applies `event` to the withdrawal: the move `change` makes of it (its
/// columns, given the order as read), its ledger entry and its callback
/// record commit together, and a withdrawal that moved meanwhile is
/// refused.
async fn apply(
    app: &App,
    order_no: &str,
    event: WithdrawalEvent,
    change: impl FnOnce(WithdrawalMove, &WithdrawalRow) -> WithdrawalMove,
    effect: Effect,
) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    let next = lifecycle::withdrawal_next(current.status, event)
        .ok_or_else(|| lifecycle::refused(order_no, current.status, event))?;
    let now = app.now_unix();
    let row = &current.row;
    let mut change = change(WithdrawalMove::to(next, now), row);
    let callback_event = lifecycle::withdrawal_callback(event);
    if callback_event.is_some() && row.callback_url.is_some() {
        change.callback_status = Some(CallbackStatus::Pending);
    }
    let entry = match effect {
        Effect::None => None,
        Effect::Release(kind) => Some(Entry::withdrawal_released(
            row.into(),
            kind,
            row.amount,
            row.fee,
        )),
        Effect::Complete => Some(Entry::withdrawal_completed(row.into(), row.amount, row.fee)),
    };
    let sources = lifecycle::withdrawal_sources(event);
    let (id, order) = (row.id.clone(), order_no.to_string());
    let written = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move {
                let Some(written) = tx.transition_withdrawal(&id, &sources, &change).await? else {
                    // Moved (or gone) since it was read: the refusal names
                    // the state it is in now.
                    return Err(
                        match tx.withdrawal_by(OrderKey::AnyOrderNo(&order)).await? {
                            Some(now) => lifecycle::refused(&order, now.status, event),
                            None => ApiError::OrderNotFound {
                                kind: "withdrawal",
                                reference: order.clone(),
                            },
                        },
                    );
                };
                if let Some(entry) = entry {
                    ledger::post(tx, &entry, now).await?;
                }
                if let Some(callback_event) = callback_event {
                    callbacks::enqueue_withdrawal(tx, &written, callback_event, now).await?;
                }
                Ok(written)
            })
        })
        .await?;
    Withdrawal::from_row(written)
}

/// An operator approves a pending withdrawal; it is then dispatched to its
/// channel at once.
pub async fn approve(
    app: &App,
    order_no: &str,
    operator: &str,
    remarks: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let approved = record_approval(app, order_no, operator, remarks).await?;
    Ok(dispatch_or_keep(app, approved).await)
}

/// The approval alone: `pending` → `approved`, with its callback record.
/// A crash between this and the dispatch leaves the order `approved`, which
/// the dispatch worker picks up.
pub async fn record_approval(
    app: &App,
    order_no: &str,
    operator: &str,
    remarks: Option<String>,
) -> Result<Withdrawal, ApiError> {
    decide(app, order_no, Decision::Approve, operator, remarks).await
}

pub async fn reject(
    app: &App,
    order_no: &str,
    operator: &str,
    remarks: Option<String>,
) -> Result<Withdrawal, ApiError> {
    decide(app, order_no, Decision::Reject, operator, remarks).await
}

/// An operator's decision on a pending withdrawal.
#[derive(Clone, Copy)]
enum Decision {
    Approve,
    Reject,
}

/// Records `decision` with who made it, when and why: approved, or
/// rejected with the frozen funds released.
async fn decide(
    app: &App,
    order_no: &str,
    decision: Decision,
    operator: &str,
    remarks: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let (event, effect) = match decision {
        Decision::Approve => (WithdrawalEvent::Approve, Effect::None),
        Decision::Reject => (
            WithdrawalEvent::Reject,
            Effect::Release("withdrawal_rejected"),
        ),
    };
    let operator = operator.to_string();
    apply(
        app,
        order_no,
        event,
        move |change, _| {
            let at = Some(change.updated_at);
            let (approved_at, rejected_at) = match decision {
                Decision::Approve => (at, None),
                Decision::Reject => (None, at),
            };
            WithdrawalMove {
                approved_at,
                rejected_at,
                approved_by: Some(operator),
                approval_remarks: remarks,
                ..change
            }
        },
        effect,
    )
    .await
}

/// The channel paid the beneficiary.
pub async fn settle(
    app: &App,
    order_no: &str,
    bank_reference: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    // An order in a currency no longer configured is refused, not rounded
    // to a guessed number of digits.
    let digits = app.config.currency(&current.row.currency)?.fraction_digits;
    let cost = current
        .row
        .channel_id
        .as_deref()
        .and_then(|id| app.channels.get(id))
        .map(|c| crate::domain::fees::apply(&c.costs().withdrawal, current.amount(), digits));
    let cost_units = cost.and_then(to_units);
    let profit_units = cost.and_then(|c| to_units(current.fee() - c));
    let reference = bank_reference.unwrap_or_else(|| format!("SIM-{}", current.row.order_no));
    apply(
        app,
        order_no,
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
    )
    .await
}

/// The channel could not pay the beneficiary.
pub async fn fail(
    app: &App,
    order_no: &str,
    reason: Option<String>,
) -> Result<Withdrawal, ApiError> {
    apply(
        app,
        order_no,
        WithdrawalEvent::Fail,
        move |change, row| WithdrawalMove {
            failed_at: Some(change.updated_at),
            processed_at: row.processed_at.or(Some(change.updated_at)),
            manual_reason: reason,
            ..change
        },
        Effect::Release("withdrawal_failed"),
    )
    .await
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
async fn dispatch_or_keep(app: &App, approved: Withdrawal) -> Withdrawal {
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
