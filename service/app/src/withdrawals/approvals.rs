//! Approving a pending withdrawal, with four eyes from the currency's
//! `dual_approval_threshold` on: each approval is recorded, and the order
//! moves to `approved` only when it has as many different approvers as
//! it needs. The same approver twice is refused by the table's key, not
//! only by the check here.
//!
//! What an order needs is decided when it is created: two approvers at or
//! above the threshold, and two when it takes the day's sum of the
//! merchant's withdrawals to one beneficiary account past the threshold,
//! so that one payout split into many small ones still meets two people.
//! Neither the merchant's auto-approval nor a configuration token stands
//! in for one of them.

use super::{plan, write, Effect, Withdrawal};
use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::lifecycle::{self, WithdrawalEvent};
use crate::domain::people::approvals_needed;
use crate::domain::status::{CallbackStatus, WithdrawalStatus};
pub use crate::store::rows::ApprovalRow;
use crate::store::rows::{WithdrawalMove, WithdrawalRow};
use crate::store::{BeneficiaryKey, Store, StoreError, UniqueKey};
use crate::App;

/// How far back the withdrawals to one beneficiary are summed.
pub const SPLIT_WINDOW_SECONDS: i64 = 86_400;

/// More earlier withdrawals to one beneficiary in a day than this are not
/// read one by one: the order needs two approvers.
const SPLIT_ORDERS_READ: i64 = 10_000;

/// A currency's dual-approval threshold in stored units, where it has one.
pub fn threshold(app: &App, currency: &str) -> Result<Option<i64>, ApiError> {
    app.config.dual_approval_threshold(currency)
}

/// What an amount alone needs.
pub fn by_amount(amount: i64, threshold: Option<i64>) -> usize {
    approvals_needed(amount, threshold)
}

/// How many approvals a withdrawal needs: what it was created needing, and
/// never fewer than its amount needs under today's threshold.
pub fn needed(app: &App, order: &Withdrawal) -> Result<usize, ApiError> {
    let (amount, _) = order.frozen_units()?;
    let by_amount = approvals_needed(amount, threshold(app, &order.currency)?);
    Ok(by_amount.max(order.approvals_required))
}

/// Inside the creating transaction, with the merchant's balance locked:
/// a new order that takes the day's sum to its beneficiary account to the
/// threshold or past it needs two approvers, and so is not auto-approved.
pub(crate) async fn count_the_day(
    tx: &mut dyn Store,
    row: WithdrawalRow,
    threshold: Option<i64>,
) -> Result<WithdrawalRow, ApiError> {
    let Some(threshold) = threshold else {
        return Ok(row);
    };
    if row.approvals_required >= 2 {
        return Ok(row);
    }
    let to = BeneficiaryKey {
        merchant_id: &row.merchant_id,
        currency: &row.currency,
        bank_code: &row.beneficiary_bank_code,
        account: &row.beneficiary_account,
    };
    let earlier = tx
        .amounts_to_beneficiary(
            &to,
            row.created_at - SPLIT_WINDOW_SECONDS,
            SPLIT_ORDERS_READ,
        )
        .await?;
    let sum = earlier
        .iter()
        .fold(row.amount, |sum, amount| sum.saturating_add(*amount));
    let too_many = i64::try_from(earlier.len()).unwrap_or(i64::MAX) >= SPLIT_ORDERS_READ;
    if !too_many && approvals_needed(sum, Some(threshold)) < 2 {
        return Ok(row);
    }
    Ok(WithdrawalRow {
        approvals_required: 2,
        status: WithdrawalStatus::Pending,
        is_auto_approved: false,
        approved_at: None,
        approved_by: None,
        callback_status: CallbackStatus::None,
        ..row
    })
}

/// A withdrawal's approvals so far, first first.
pub async fn of(app: &App, order_no: &str) -> Result<Vec<ApprovalRow>, ApiError> {
    let key = order_no.to_string();
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.approvals_of(&key).await }))
        .await?)
}

/// An approval as recorded: the order as it was written (or locked, while
/// it still waits for another approver) and its approvals, this one last,
/// as the transaction saw them, so that nobody reads either again to
/// answer.
#[derive(Debug)]
pub struct Recorded {
    pub order: Withdrawal,
    pub approvals: Vec<ApprovalRow>,
}

/// Records `approver`'s approval; the order moves to `approved` (with its
/// callback) in the same transaction once it has the approvals it needs,
/// and stays `pending` before. The order is locked first, so two
/// approvers at once are counted one after the other.
pub async fn approve(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
) -> Result<Recorded, ApiError> {
    let current = super::find_any(app, order_no).await?;
    let needed = needed(app, &current)?;
    if needed >= 2 && by.acting().is_some_and(|a| a.who.id.is_none()) {
        return Err(ApiError::NotAPerson(current.order_no));
    }
    // Two identities one admin made alone are not two people.
    if let (true, Some(acting)) = (needed >= 2, by.acting()) {
        crate::people::counts(app, &acting.who).await?;
    }
    let now = app.now_unix();
    let id = current.id.clone();
    let approval = ApprovalRow {
        order_no: current.order_no.clone(),
        approver_key: by.id(),
        approver_name: by.name().to_string(),
        remarks: remarks.clone(),
        approved_at: now,
        id: crate::ids::ordered(),
    };
    let status = current.status;
    let audit = by.audit(
        Target::Order(current.order_no.clone()),
        remarks.as_deref(),
        now,
    );
    let (written, approvals) = app
        .db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move { record(tx, &id, status, approval, needed, remarks, now).await })
        })
        .await?;
    Ok(Recorded {
        order: Withdrawal::from_row(written)?,
        approvals,
    })
}

/// Inside the transaction: the order locked, the approval recorded, and
/// the move made when it completes the approvals the order needs; the
/// order as it then is, and its approvals.
async fn record(
    tx: &mut dyn Store,
    id: &str,
    status: WithdrawalStatus,
    approval: ApprovalRow,
    needed: usize,
    remarks: Option<String>,
    now: i64,
) -> Result<(WithdrawalRow, Vec<ApprovalRow>), ApiError> {
    let order_no = approval.order_no.clone();
    // Locked as it is: an approval changes nothing on the row, so what the
    // lock answered is what the plan below starts from.
    let Some(locked) = tx.lock_pending_withdrawal(id).await? else {
        let now_status = tx
            .withdrawal_by(crate::store::OrderKey::AnyOrderNo(&order_no))
            .await?
            .map_or(status, |r| r.status);
        return Err(lifecycle::refused(
            &order_no,
            now_status,
            WithdrawalEvent::Approve,
        ));
    };
    let mut approvals = tx.approvals_of(&order_no).await?;
    if approvals
        .iter()
        .any(|a| a.approver_key == approval.approver_key)
    {
        return Err(ApiError::AlreadyApproved(order_no));
    }
    tx.insert_approval(&approval).await.map_err(|e| match e {
        StoreError::Conflict {
            key: UniqueKey::WithdrawalApproval,
            ..
        } => ApiError::AlreadyApproved(order_no.clone()),
        other => other.into(),
    })?;
    let (decider, decider_id) = (
        approval.approver_name.clone(),
        approval.approver_key.clone(),
    );
    approvals.push(approval);
    if approvals.len() < needed {
        return Ok((locked, approvals));
    }
    // The order names who decided it, the approval that approved it; every
    // approval stays in `withdrawal_approvals`.
    let order = Withdrawal::from_row(locked)?;
    let planned = plan(
        &order,
        WithdrawalEvent::Approve,
        move |change, _| WithdrawalMove {
            approved_at: Some(change.updated_at),
            approved_by: Some(decider),
            approver_id: Some(decider_id),
            approval_remarks: remarks,
            ..change
        },
        Effect::None,
        now,
    )?;
    Ok((write(tx, planned).await?, approvals))
}
