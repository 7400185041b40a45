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
use crate::actor::{Actor, Operator, Target};
use crate::domain::error::ApiError;
use crate::domain::lifecycle::{self, WithdrawalEvent};
use crate::domain::people::approvals_needed;
use crate::domain::routing::table::RoutedDirection;
use crate::domain::status::{CallbackStatus, WithdrawalStatus};
use crate::orders::Order;
pub use crate::store::rows::ApprovalRow;
use crate::store::rows::{WithdrawalMove, WithdrawalRow};
use crate::store::{BeneficiaryKey, OrderKey, Store, StoreError, UniqueKey};
use crate::App;
use std::collections::{BTreeMap, BTreeSet};

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
    needed_under(order, threshold(app, &order.currency)?)
}

fn needed_under(order: &Withdrawal, threshold: Option<i64>) -> Result<usize, ApiError> {
    let (amount, _) = order.frozen_units()?;
    Ok(approvals_needed(amount, threshold).max(order.approvals_required))
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
    /// The approving transaction noted the payout as sent to its channel
    /// (`approve_to_send`): the caller sends it now, with nothing to ask
    /// the channel first and nothing left to note.
    pub noted_sent: bool,
}

/// What the approving transaction does once the order is approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// Nothing more: the dispatch notes the payout as sent when it sends
    /// it (its worker picks up an approved order nobody sent at once).
    Keep,
    /// Its caller sends the payout as soon as this commits: noted as sent
    /// by the approving move itself, where nothing the dispatch checks
    /// before its own note could stop the send (`Approver::may_note`), so
    /// that the dispatch spends no commit of its own on the note. A crash
    /// between this commit and the send leaves the payout in doubt, which
    /// the dispatch worker resolves as it resolves any other: asked about
    /// `payout_inquire_after_seconds` later, sent again only when the
    /// channel has no record of it.
    Send,
}

/// Records `approver`'s approval; the order moves to `approved` (with its
/// callback) in the same transaction once it has the approvals it needs,
/// and stays `pending` before. The order is locked first, so two
/// approvers at once are counted one after the other; it is not read
/// before that (the lock answers it), which saves an approval a round
/// trip.
pub async fn approve(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
) -> Result<Recorded, ApiError> {
    approve_then(app, by, order_no, remarks, Then::Keep).await
}

/// `approve`, for a caller that sends the payout as soon as it commits
/// (`Then::Send`).
pub async fn approve_to_send(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
) -> Result<Recorded, ApiError> {
    approve_then(app, by, order_no, remarks, Then::Send).await
}

async fn approve_then(
    app: &App,
    by: &Actor,
    order_no: &str,
    remarks: Option<String>,
    then: Then,
) -> Result<Recorded, ApiError> {
    let now = app.now_unix();
    let approval = ApprovalRow {
        order_no: order_no.to_string(),
        approver_key: by.id(),
        approver_name: by.name().to_string(),
        remarks: remarks.clone(),
        approved_at: now,
        id: crate::ids::ordered(),
    };
    let approver = Approver {
        thresholds: thresholds(app)?,
        person: by.acting().map(|a| a.who.clone()),
        limited: match then {
            Then::Send => Some(
                app.router
                    .limited_channels(app, RoutedDirection::Withdrawal),
            ),
            Then::Keep => None,
        },
    };
    let audit = by.audit(Target::Order(order_no.to_string()), remarks.as_deref(), now);
    let (written, approvals) = app
        .db
        .transaction_audited::<_, Refused, _>(audit, move |tx| {
            Box::pin(async move {
                record(tx, approver, approval, remarks, now)
                    .await
                    .map_err(Refused::Api)
            })
        })
        .await
        .map_err(|refused| refused.answer(order_no))?;
    // A pending order was never sent: a note on the row as written is
    // this transaction's.
    let noted_sent =
        written.status == WithdrawalStatus::Approved && written.payout_sent_at.is_some();
    Ok(Recorded {
        order: Withdrawal::from_row(written)?,
        approvals,
        noted_sent,
    })
}

/// Why an approving transaction did not commit: its own refusal, or the
/// store's. The approval's row is written at the transaction's end
/// (`record`), so the table's key, broken by the same approver twice, is
/// broken there, as the store's error.
enum Refused {
    Api(ApiError),
    Store(StoreError),
}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Self {
        Refused::Store(e)
    }
}

impl Refused {
    fn answer(self, order_no: &str) -> ApiError {
        match self {
            Refused::Api(e) => e,
            Refused::Store(StoreError::Conflict {
                key: UniqueKey::WithdrawalApproval,
                ..
            }) => ApiError::AlreadyApproved(order_no.to_string()),
            Refused::Store(e) => e.into(),
        }
    }
}

/// What the approving transaction needs to know of the approver and the
/// configuration once it holds the order.
struct Approver {
    /// Each configured currency's dual-approval threshold.
    thresholds: BTreeMap<String, Option<i64>>,
    /// The operator approving, where one is.
    person: Option<Operator>,
    /// With `Then::Send`: the (currency, channel id) pairs some withdrawal
    /// routing table gives a daily limit, whose room the dispatch must
    /// reserve before it notes a payout as sent.
    limited: Option<BTreeSet<(String, String)>>,
}

fn thresholds(app: &App) -> Result<BTreeMap<String, Option<i64>>, ApiError> {
    app.config
        .currencies
        .keys()
        .map(|code| Ok((code.clone(), threshold(app, code)?)))
        .collect()
}

impl Approver {
    /// Whether the approving move may note `order`'s payout as sent
    /// (`Then::Send`): its caller sends it at once, it has its channel,
    /// that channel has no daily limit to reserve room in first, and its
    /// merchant's payouts are not held (`held`, as the lock saw it, the
    /// condition the dispatch's own note puts on the database). Otherwise
    /// the dispatch decides and notes, as it does for any approved order.
    fn may_note(&self, order: &Withdrawal, held: bool) -> bool {
        let (Some(limited), Some(channel)) = (&self.limited, &order.channel_id) else {
            return false;
        };
        !held && !limited.contains(&(order.currency.clone(), channel.clone()))
    }

    /// How many approvals `order` needs (as `needed` says), refused where
    /// this approver cannot be one of two.
    async fn needed(&self, tx: &mut dyn Store, order: &Withdrawal) -> Result<usize, ApiError> {
        let threshold = *self
            .thresholds
            .get(&order.currency)
            .ok_or_else(|| ApiError::UnsupportedCurrency(order.currency.clone()))?;
        let needed = needed_under(order, threshold)?;
        match &self.person {
            Some(who) if needed >= 2 && who.id.is_none() => {
                Err(ApiError::NotAPerson(order.order_no.clone()))
            }
            // Two identities one admin made alone are not two people.
            Some(Operator {
                id: Some(id), name, ..
            }) if needed >= 2 => match tx.operator_by_id(id).await? {
                Some(row) if row.vouched() => Ok(needed),
                Some(_) => Err(ApiError::NotVouched(name.clone())),
                None => Err(ApiError::OperatorNotFound(id.clone())),
            },
            _ => Ok(needed),
        }
    }
}

/// Inside the transaction: the order locked, the approval recorded, and
/// the move made when it completes the approvals the order needs; the
/// order as it then is, and its approvals.
async fn record(
    tx: &mut dyn Store,
    approver: Approver,
    approval: ApprovalRow,
    remarks: Option<String>,
    now: i64,
) -> Result<(WithdrawalRow, Vec<ApprovalRow>), ApiError> {
    // The approval, the order's event and the audit row are the last rows
    // it writes and nothing reads them back before the commit: held and
    // written together at its end, on PostgreSQL one round trip for the
    // three (`store::queries::deferred`).
    tx.defer_inserts();
    let order_no = approval.order_no.clone();
    // Locked with this approval counted: what the lock answered is what
    // the plan below starts from.
    let Some((locked, held)) = tx.lock_pending_withdrawal(&order_no).await? else {
        return Err(
            match tx.withdrawal_by(OrderKey::AnyOrderNo(&order_no)).await? {
                Some(row) => lifecycle::refused(&order_no, row.status, WithdrawalEvent::Approve),
                None => ApiError::OrderNotFound {
                    kind: Withdrawal::KIND,
                    reference: order_no,
                },
            },
        );
    };
    let order = Withdrawal::from_row(locked.clone())?;
    let needed = approver.needed(tx, &order).await?;
    // Earlier approvals are read only where the count, this one in it,
    // says there are some: not for the first, the common approval.
    let mut approvals = match locked.approvals_given {
        ..=1 => Vec::new(),
        _ => tx.approvals_of(&order_no).await?,
    };
    if approvals
        .iter()
        .any(|a| a.approver_key == approval.approver_key)
    {
        return Err(ApiError::AlreadyApproved(order_no));
    }
    // Held: the key it may break is answered by `Refused::answer`.
    tx.insert_approval(&approval).await?;
    let (decider, decider_id) = (
        approval.approver_name.clone(),
        approval.approver_key.clone(),
    );
    approvals.push(approval);
    if approvals.len() < needed {
        return Ok((locked, approvals));
    }
    let noted = approver.may_note(&order, held);
    // The order names who decided it, the approval that approved it; every
    // approval stays in `withdrawal_approvals`.
    let planned = plan(
        &order,
        WithdrawalEvent::Approve,
        move |change, _| WithdrawalMove {
            approved_at: Some(change.updated_at),
            approved_by: Some(decider),
            approver_id: Some(decider_id),
            approval_remarks: remarks,
            payout_sent_at: noted.then_some(change.updated_at),
            ..change
        },
        Effect::None,
        now,
    )?;
    Ok((write(tx, planned).await?, approvals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::result::{DatabaseErrorKind, Error as DieselError};

    fn broken(key: UniqueKey) -> StoreError {
        StoreError::Conflict {
            key,
            source: DieselError::DatabaseError(
                DatabaseErrorKind::UniqueViolation,
                Box::new("duplicate key".to_string()),
            ),
        }
    }

    #[test]
    fn the_approvals_key_broken_at_the_end_is_the_same_approver_twice() {
        let answer = Refused::from(broken(UniqueKey::WithdrawalApproval)).answer("W1");
        assert!(
            matches!(&answer, ApiError::AlreadyApproved(no) if no == "W1"),
            "{answer:?}"
        );
        let other = Refused::from(broken(UniqueKey::Other)).answer("W1");
        assert!(!matches!(other, ApiError::AlreadyApproved(_)), "{other:?}");
        let own = Refused::Api(ApiError::NotAPerson("W1".into())).answer("W1");
        assert!(matches!(own, ApiError::NotAPerson(_)), "{own:?}");
    }
}
