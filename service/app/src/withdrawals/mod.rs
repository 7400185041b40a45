//! Withdrawal orders: creation (validated, fee computed, auto-approved by
//! the merchant's setting, amount and fee frozen in the same transaction),
//! idempotent resend, queries, and the moves operators make; what the
//! channels do with a payout is `dispatch` (sending it, and finding out
//! what became of it) and `payouts` (its end).

pub mod approvals;
mod dispatch;
mod payouts;

use dispatch::dispatch_or_keep;
pub use dispatch::{dispatch, dispatch_due, inquire_due, payouts_in_doubt};
pub use payouts::{fail, resolve, settle, Resolution};
pub(crate) use payouts::{flag, plan_fail, plan_settle};

use crate::actor::{Actor, Target};
use crate::callbacks;
use crate::domain::error::ApiError;
use crate::domain::events::WithdrawalCallback;
use crate::domain::fees::Direction;
use crate::domain::lifecycle::{self, WithdrawalEvent};
use crate::domain::money::{from_units, to_units};
use crate::domain::routing::table::{Decision, RoutedDirection, Scope};
use crate::domain::status::{CallbackStatus, PayoutMethod, WithdrawalStatus};
use crate::fees;
use crate::ledger::{self, Entry};
use crate::merchants::Merchant;
use crate::orders;
use crate::store::audit::PendingAudit;
use crate::store::rows::{WithdrawalMove, WithdrawalRow};
use crate::store::{OrderKey, Store, StoreError, StoreResult, UniqueKey};
use crate::App;
use chrono::{DateTime, Utc};
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
    /// What the merchant may add, all optional.
    pub details: WithdrawalDetails,
    pub fingerprint: String,
}

/// A withdrawal request's optional fields. A new optional field is a field
/// here: the request handler reads it (it names every field of the
/// generated request), the order stores it, and a withdrawal made without
/// it (a test's) has none.
#[derive(Clone, Debug, Default)]
pub struct WithdrawalDetails {
    pub beneficiary_bank_branch: Option<String>,
    pub callback_url: Option<String>,
    pub extra_data: Option<String>,
}

/// Who a withdrawal pays, as the merchant named them.
#[derive(Clone, Debug, PartialEq)]
pub struct Beneficiary {
    pub name: String,
    pub account: String,
    pub bank_code: String,
    pub bank_name: Option<String>,
    pub bank_branch: Option<String>,
}

/// A withdrawal order as the domain sees it: amounts as decimals, times as
/// times, read strictly from its row (`from_row`), never the row itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Withdrawal {
    pub id: String,
    pub order_no: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub status: WithdrawalStatus,
    pub currency: String,
    pub amount: Decimal,
    pub fee: Decimal,
    pub actual_amount: Decimal,
    pub beneficiary: Beneficiary,
    pub payout_method: PayoutMethod,
    pub is_auto_approved: bool,
    pub approved_at: Option<DateTime<Utc>>,
    /// Who decided it: rejected it, or gave the approval that approved it
    /// (`AUTO_APPROVER` for the merchant's setting). Orders decided before
    /// migration 000028 hold every approver's name, joined.
    pub approved_by: Option<String>,
    /// The operator id of `approved_by`, where it is a person.
    pub approver_id: Option<String>,
    pub approval_remarks: Option<String>,
    pub processed_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub rejected_at: Option<DateTime<Utc>>,
    pub failed_at: Option<DateTime<Utc>>,
    pub bank_reference: Option<String>,
    pub callback_url: Option<String>,
    pub callback_status: CallbackStatus,
    pub callback_count: i64,
    pub needs_manual_intervention: bool,
    pub manual_reason: Option<String>,
    pub channel_id: Option<String>,
    pub channel_order_no: Option<String>,
    pub estimated_channel_cost: Option<Decimal>,
    pub estimated_profit: Option<Decimal>,
    pub actual_channel_cost: Option<Decimal>,
    pub actual_profit: Option<Decimal>,
    pub extra_data: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When it was handed to its channel: from then on its outcome is the
    /// channel's to tell (`dispatch`).
    pub payout_sent_at: Option<DateTime<Utc>>,
    pub payout_inquired_at: Option<DateTime<Utc>>,
    /// How many different approvers it needs, as decided at creation
    /// (`approvals::needed` also counts the currency's threshold now).
    pub approvals_required: usize,
    /// Why its payout goes to its channel, under the `routing_` keys
    /// (`domain::routing::table::Decision`); empty for orders before it
    /// was recorded.
    pub routing: std::collections::BTreeMap<String, String>,
}

impl Withdrawal {
    pub fn from_row(row: WithdrawalRow) -> Result<Withdrawal, ApiError> {
        let time = crate::clock::from_unix;
        let at = |t: Option<i64>| t.map(time).transpose();
        Ok(Withdrawal {
            status: row.status,
            amount: from_units(row.amount),
            fee: from_units(row.fee),
            actual_amount: from_units(row.actual_amount),
            estimated_channel_cost: row.estimated_channel_cost.map(from_units),
            estimated_profit: row.estimated_profit.map(from_units),
            actual_channel_cost: row.actual_channel_cost.map(from_units),
            actual_profit: row.actual_profit.map(from_units),
            approved_at: at(row.approved_at)?,
            processed_at: at(row.processed_at)?,
            completed_at: at(row.completed_at)?,
            rejected_at: at(row.rejected_at)?,
            failed_at: at(row.failed_at)?,
            payout_sent_at: at(row.payout_sent_at)?,
            payout_inquired_at: at(row.payout_inquired_at)?,
            created_at: time(row.created_at)?,
            updated_at: time(row.updated_at)?,
            callback_count: i64::from(row.callback_count),
            approvals_required: usize::try_from(row.approvals_required.max(1)).unwrap_or(1),
            routing: match row.routing.as_deref() {
                Some(text) => serde_json::from_str(text).map_err(|e| {
                    ApiError::Internal(format!(
                        "withdrawal {}: stored routing unreadable: {e}",
                        row.order_no
                    ))
                })?,
                None => Default::default(),
            },
            beneficiary: Beneficiary {
                name: row.beneficiary_name,
                account: row.beneficiary_account,
                bank_code: row.beneficiary_bank_code,
                bank_name: row.beneficiary_bank_name,
                bank_branch: row.beneficiary_bank_branch,
            },
            id: row.id,
            order_no: row.order_no,
            merchant_id: row.merchant_id,
            merchant_order_no: row.merchant_order_no,
            currency: row.currency,
            payout_method: row.payout_method,
            is_auto_approved: row.is_auto_approved,
            approved_by: row.approved_by,
            approver_id: row.approver_id,
            approval_remarks: row.approval_remarks,
            bank_reference: row.bank_reference,
            callback_url: row.callback_url,
            callback_status: row.callback_status,
            needs_manual_intervention: row.needs_manual_intervention,
            manual_reason: row.manual_reason,
            channel_id: row.channel_id,
            channel_order_no: row.channel_order_no,
            extra_data: row.extra_data,
        })
    }

    /// When its channel took it, as stored.
    pub(crate) fn processed_unix(&self) -> Option<i64> {
        self.processed_at.map(|t| t.timestamp())
    }

    /// The amount and the fee in stored units, as frozen at creation (read
    /// from units, so they convert back exactly).
    pub(crate) fn frozen_units(&self) -> Result<(i64, i64), ApiError> {
        let units = |d: Decimal| {
            to_units(d).ok_or_else(|| {
                ApiError::Internal(format!("withdrawal {}: amount out of range", self.order_no))
            })
        };
        Ok((units(self.amount)?, units(self.fee)?))
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
    let merchant = &crate::merchants::find(app, &merchant.id).await?;
    let row = new_row(app, merchant, &req).await?;
    let now = row.created_at;
    let entry = Entry::withdrawal_frozen((&row).into(), row.amount, row.fee);
    let threshold = approvals::threshold(app, &row.currency)?;
    let result = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move {
                // Freezing first locks the merchant's balance in this
                // currency, so that creations for it are counted against
                // the day's sum to a beneficiary one after another.
                ledger::post(tx, &entry, now).await?;
                let row = approvals::count_the_day(tx, row, threshold).await?;
                tx.insert_withdrawal(&row)
                    .await
                    .map_err(|e| conflict_or(e, &row.merchant_order_no))?;
                if row.is_auto_approved {
                    callbacks::enqueue_withdrawal(tx, &row, WithdrawalCallback::Approved, now)
                        .await?;
                }
                Ok(row)
            })
        })
        .await;
    match result {
        Ok(row) if row.is_auto_approved => {
            Ok(dispatch_or_keep(app, Withdrawal::from_row(row)?).await)
        }
        Ok(row) => Withdrawal::from_row(row),
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

/// The channel a payout goes to.
type Routed = std::sync::Arc<dyn crate::channels::Channel>;

/// Where the payout will go, by the routing table in force, and why (the
/// order's routing record). An amount no candidate takes is refused now;
/// with every candidate disabled or at its daily limit the order waits
/// without one, and is routed when it is dispatched.
fn route(
    app: &App,
    merchant: &Merchant,
    currency: &str,
    amount: Decimal,
) -> Result<(Option<Routed>, Option<String>), ApiError> {
    Ok(match decide(app, merchant, currency, amount)? {
        Some((channel, decision)) => {
            let record = serde_json::to_string(&decision.to_map())
                .map_err(|e| ApiError::Internal(e.to_string()))?;
            (Some(channel), Some(record))
        }
        None => (None, None),
    })
}

fn decide(
    app: &App,
    merchant: &Merchant,
    currency: &str,
    amount: Decimal,
) -> Result<Option<(Routed, Decision)>, ApiError> {
    let scope = Scope {
        currency: currency.to_string(),
        direction: RoutedDirection::Withdrawal,
        merchant_id: Some(merchant.id.clone()),
    };
    match app.router.plan(app, &scope, &merchant.code, amount, &[]) {
        Ok((table, plan)) => {
            let code = &plan.order[0];
            let channel = app.channels.by_code(code).ok_or_else(|| {
                ApiError::Internal(format!(
                    "routing names channel {code}, which is not configured"
                ))
            })?;
            let decision = crate::routing::decision(&table, &plan, code, Vec::new(), Vec::new());
            Ok(Some((channel, decision)))
        }
        Err(e @ ApiError::NoChannelForAmount { .. }) => Err(e),
        Err(_) => Ok(None),
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
    let (channel, routing) = route(app, merchant, &req.currency, req.amount)?;
    let cost = channel.as_ref().map(|c| {
        crate::domain::fees::apply(&c.costs().withdrawal, req.amount, currency.fraction_digits)
    });
    let units =
        |d: Decimal| to_units(d).ok_or_else(|| ApiError::invalid_field("amount", "is too large"));
    let (amount, fee_units) = (units(req.amount)?, units(fee)?);
    let now = app.now_unix();
    // Auto-approval never stands in for a second person: an order that
    // needs two approvers waits for them whatever the merchant's setting.
    let approvals_required =
        approvals::by_amount(amount, approvals::threshold(app, &req.currency)?);
    let auto = approvals_required == 1 && merchant.auto_approval.approves(&req.currency, amount);
    let order_no = crate::deposits::new_order_no('W', app.clock.now());
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
        beneficiary_bank_branch: req.details.beneficiary_bank_branch.clone(),
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
        callback_url: req.details.callback_url.clone(),
        callback_status: if auto && req.details.callback_url.is_some() {
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
        extra_data: req.details.extra_data.clone(),
        created_at: now,
        updated_at: now,
        payout_sent_at: None,
        payout_inquired_at: None,
        approvals_required: i32::try_from(approvals_required).unwrap_or(2),
        approver_id: None,
        routing,
        approvals_given: 0,
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

crate::orders::finders!(Withdrawal);

impl crate::orders::Order for Withdrawal {
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
pub(crate) enum Effect {
    None,
    Release(&'static str),
    Complete,
}

/// A move worked out from the order as read: what `write` commits.
pub(crate) struct Planned {
    id: String,
    order_no: String,
    event: WithdrawalEvent,
    sources: Vec<WithdrawalStatus>,
    change: WithdrawalMove,
    entry: Option<Entry>,
    callback_event: Option<WithdrawalCallback>,
    now: i64,
}

/// Plans `event` on `current`: the move `change` makes of it (its columns,
/// given the order as read), its ledger entry and its callback; refused
/// here if the order's state does not take the event.
pub(crate) fn plan(
    current: &Withdrawal,
    event: WithdrawalEvent,
    change: impl FnOnce(WithdrawalMove, &Withdrawal) -> WithdrawalMove,
    effect: Effect,
    now: i64,
) -> Result<Planned, ApiError> {
    let next = lifecycle::withdrawal_next(current.status, event)
        .ok_or_else(|| lifecycle::refused(&current.order_no, current.status, event))?;
    let mut change = change(WithdrawalMove::to(next, now), current);
    let callback_event = lifecycle::withdrawal_callback(event);
    if callback_event.is_some() && current.callback_url.is_some() {
        change.callback_status = Some(CallbackStatus::Pending);
    }
    let (amount, fee) = current.frozen_units()?;
    let entry = match effect {
        Effect::None => None,
        Effect::Release(kind) => Some(Entry::withdrawal_released(
            current.into(),
            kind,
            amount,
            fee,
        )),
        Effect::Complete => Some(Entry::withdrawal_completed(current.into(), amount, fee)),
    };
    Ok(Planned {
        id: current.id.clone(),
        order_no: current.order_no.clone(),
        event,
        sources: lifecycle::withdrawal_sources(event),
        change,
        entry,
        callback_event,
        now,
    })
}

impl<'a> From<&'a Withdrawal> for ledger::EntryFor<'a> {
    fn from(order: &'a Withdrawal) -> Self {
        ledger::EntryFor {
            merchant_id: &order.merchant_id,
            currency: &order.currency,
            order_no: &order.order_no,
            merchant_order_no: &order.merchant_order_no,
        }
    }
}

/// Inside `tx`: the planned move, its ledger entry and its callback record.
/// A withdrawal that moved since it was read is refused, naming the state
/// it is in now.
pub(crate) async fn write(tx: &mut dyn Store, planned: Planned) -> Result<WithdrawalRow, ApiError> {
    let Planned {
        id,
        order_no,
        event,
        sources,
        change,
        entry,
        callback_event,
        now,
    } = planned;
    let Some(written) = tx.transition_withdrawal(&id, &sources, &change).await? else {
        return Err(
            match tx.withdrawal_by(OrderKey::AnyOrderNo(&order_no)).await? {
                Some(now) => lifecycle::refused(&order_no, now.status, event),
                None => ApiError::OrderNotFound {
                    kind: "withdrawal",
                    reference: order_no.clone(),
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
}

/// Applies `event` to the withdrawal in one transaction (`plan`, `write`).
pub(crate) async fn apply(
    app: &App,
    audit: Option<PendingAudit>,
    order_no: &str,
    event: WithdrawalEvent,
    change: impl FnOnce(WithdrawalMove, &Withdrawal) -> WithdrawalMove,
    effect: Effect,
) -> Result<Withdrawal, ApiError> {
    let current = find_any(app, order_no).await?;
    commit(
        app,
        audit,
        plan(&current, event, change, effect, app.now_unix())?,
    )
    .await
}

/// Writes a planned move in a transaction of its own, the action's audit
/// row with it when an operator takes it. A move that is its one
/// conditional update (no ledger entry, no callback, no audit row) needs no
/// transaction around it: it is atomic alone, and BEGIN and COMMIT were a
/// third of a dispatch's round trips.
pub(crate) async fn commit(
    app: &App,
    audit: Option<PendingAudit>,
    planned: Planned,
) -> Result<Withdrawal, ApiError> {
    let alone = audit.is_none() && planned.entry.is_none() && planned.callback_event.is_none();
    let written = if alone {
        app.db
            .without_transaction::<_, ApiError, _>(move |tx| {
                Box::pin(async move { write(tx, planned).await })
            })
            .await?
    } else {
        app.db
            .transaction_audited::<_, ApiError, _>(audit, move |tx| {
                Box::pin(async move { write(tx, planned).await })
            })
            .await?
    };
    Withdrawal::from_row(written)
}

/// An operator approves a pending withdrawal; it is then dispatched to its
/// channel at once (noted as sent by the approval itself where it can be,
/// `approvals::Then::Send`).
/// At or above its currency's dual-approval threshold it needs a second,
/// different approver first (`approvals`): until then it stays pending.
pub async fn approve(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let recorded = approvals::approve_to_send(app, by, order_no, remarks).await?;
    if recorded.order.status != WithdrawalStatus::Approved {
        return Ok(recorded.order);
    }
    Ok(dispatch::send_or_keep(app, recorded.order, recorded.noted_sent).await)
}

/// An operator's approval as the operator API and the console take it: the
/// approval, then its dispatch in a task of its own, waited for at most
/// `approval_dispatch_wait_ms`, answered `approved` either way. A hung
/// channel does not hold the operator: past the wait the dispatch goes on
/// in its task (its outcome, if it never comes, is inquired about by the
/// dispatch worker, as for any call whose outcome is unknown). The
/// approval notes the payout as sent where it can (`approvals::Then::Send`),
/// so that the dispatch commits only the channel's answer.
pub async fn approve_waiting_at_most(
    app: &std::sync::Arc<App>,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
) -> Result<Answered, ApiError> {
    let recorded = approvals::approve_to_send(app, by, order_no, remarks).await?;
    // For both the answer and the dispatch's routing table, which need only
    // what a merchant is called: remembered, as a signer's merchant is
    // (`credentials`). Whether its payouts are held is the dispatch's
    // own condition on the database.
    let merchant = crate::credentials::merchant(app, &recorded.order.merchant_id).await?;
    if recorded.order.status != WithdrawalStatus::Approved {
        return Ok(Answered { recorded, merchant });
    }
    let wait = std::time::Duration::from_millis(app.config.approval_dispatch_wait_ms);
    let dispatching = tokio::spawn({
        let (app, approved, of) = (app.clone(), recorded.order.clone(), merchant.clone());
        let noted = recorded.noted_sent;
        async move {
            match noted {
                true => dispatch::send_noted(&app, approved).await,
                false => dispatch::dispatch_as_read(&app, approved, Some(of)).await,
            }
        }
    });
    // The answer is the approval, as it always was (the contract's
    // `approved`); the wait only lets a quick channel take the payout
    // before it. Dropping the handle on a timeout leaves the task running.
    let _ = tokio::time::timeout(wait, dispatching).await;
    Ok(Answered { recorded, merchant })
}

/// An operator's approval as answered: as recorded, with the order's
/// merchant.
#[derive(Debug)]
pub struct Answered {
    pub recorded: approvals::Recorded,
    pub merchant: Merchant,
}

/// The approval alone: `pending` → `approved` (once it has the approvals
/// it needs), with its callback record. A crash between this and the
/// dispatch leaves the order `approved`, which the dispatch worker picks
/// up.
pub async fn record_approval(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
) -> Result<Withdrawal, ApiError> {
    Ok(approvals::approve(app, by, order_no, remarks).await?.order)
}

pub async fn reject(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
) -> Result<Withdrawal, ApiError> {
    let (operator, operator_id) = (by.name().to_string(), by.id());
    let audit = by.audit(
        Target::Order(order_no.to_string()),
        remarks.as_deref(),
        app.now_unix(),
    );
    // Rejected with the frozen funds released; who and why stay on the
    // order (one rejection ends it, whatever the amount).
    apply(
        app,
        audit,
        order_no,
        WithdrawalEvent::Reject,
        move |change, _| WithdrawalMove {
            rejected_at: Some(change.updated_at),
            approved_by: Some(operator),
            approver_id: Some(operator_id),
            approval_remarks: remarks,
            ..change
        },
        Effect::Release("withdrawal_rejected"),
    )
    .await
}
