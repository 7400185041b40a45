//! Operators, their tokens, withdrawal approvals and the audit trail.

use super::{first_or_none, insert_one, KeepPrepared};
use crate::domain::status::{AuditRole, WithdrawalStatus};
use crate::paging::ListFilter;
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Filters of the audit trail's listing, beside the page.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub operator_id: Option<String>,
    pub action: Option<String>,
    pub target_id: Option<String>,
    /// Operators' rows only, not owners' (the trail of operator 0.15.0
    /// and before, whose `role` names operators' roles alone).
    pub operators_only: bool,
}

/// The target kinds `GET /api/v1/operator/audit-events` names.
const OPERATOR_LISTING_KINDS: [&str; 5] = [
    "merchant",
    "operator",
    "order",
    "bank_transaction",
    "callback_delivery",
];

#[async_trait]
pub trait PeopleQueries: Send {
    async fn insert_operator(&mut self, row: &OperatorRow) -> StoreResult<()>;

    async fn operator_by_id(&mut self, id: &str) -> StoreResult<Option<OperatorRow>>;

    /// Records who made or raised the operator and who vouched for them
    /// (`None`: nobody yet).
    async fn set_vouching(
        &mut self,
        id: &str,
        made_by: Option<&str>,
        vouched_by: Option<&str>,
        at: i64,
    ) -> StoreResult<()>;

    async fn operators_page(&mut self, filter: &ListFilter) -> StoreResult<Vec<OperatorRow>>;

    /// Writes `change`; the operator as it now is, or `None` if there is none.
    async fn change_operator(
        &mut self,
        id: &str,
        change: &OperatorChange,
    ) -> StoreResult<Option<OperatorRow>>;

    /// Sets the password hash of the operator with this email; the
    /// operator, or `None` if there is none.
    async fn set_operator_password(
        &mut self,
        email: &str,
        password_hash: &str,
        at: i64,
    ) -> StoreResult<Option<OperatorRow>>;

    async fn insert_operator_token(&mut self, row: &OperatorTokenRow) -> StoreResult<()>;

    /// The token with this hash and its operator, revoked or not.
    async fn operator_token(
        &mut self,
        token_hash: &str,
    ) -> StoreResult<Option<(OperatorTokenRow, OperatorRow)>>;

    async fn operator_tokens_of(&mut self, operator_id: &str)
        -> StoreResult<Vec<OperatorTokenRow>>;

    /// Revokes the token at `at` unless it was already; the token as it
    /// now is, or `None` if the operator has no such token.
    async fn revoke_operator_token(
        &mut self,
        operator_id: &str,
        token_id: &str,
        at: i64,
    ) -> StoreResult<Option<OperatorTokenRow>>;

    /// Holds a pending withdrawal's row for an approval until the
    /// transaction ends (a row lock on PostgreSQL, the write lock on
    /// SQLite), counts that approval in `approvals_given`, which the
    /// transaction keeps true by inserting it, and answers the row as
    /// written, in the same statement, with whether its merchant's payouts
    /// are held (suspended, as `held_merchants` says) as that statement saw
    /// it; `None` when it is not pending. The count is the row's, read
    /// under its lock, so an approval committed by another approver while
    /// this one waited is in it.
    async fn lock_pending_withdrawal(
        &mut self,
        order_no: &str,
    ) -> StoreResult<Option<(WithdrawalRow, bool)>>;

    async fn insert_approval(&mut self, row: &ApprovalRow) -> StoreResult<()>;

    /// A withdrawal's approvals, first first.
    async fn approvals_of(&mut self, order_no: &str) -> StoreResult<Vec<ApprovalRow>>;

    async fn append_audit(&mut self, row: &AuditRow) -> StoreResult<()>;

    /// A merchant's own fee rates, for the audit trail's snapshots.
    async fn fees_of(&mut self, merchant_id: &str) -> StoreResult<Vec<FeeRow>>;

    async fn audit_page(
        &mut self,
        filter: &AuditFilter,
        page: &ListFilter,
    ) -> StoreResult<Vec<AuditRow>>;
}

macro_rules! impl_people {
    ($conn:ty) => {
        #[async_trait]
        impl PeopleQueries for $conn {
            async fn insert_operator(&mut self, row: &OperatorRow) -> StoreResult<()> {
                self.done.created = Some(row.id.clone());
                insert_one!(self.c(), operators::table, row)
            }

            async fn set_vouching(
                &mut self,
                id: &str,
                made_by: Option<&str>,
                vouched_by: Option<&str>,
                at: i64,
            ) -> StoreResult<()> {
                diesel::update(operators::table.filter(operators::id.eq(id)))
                    .set((
                        operators::made_by.eq(made_by),
                        operators::vouched_by.eq(vouched_by),
                        operators::vouched_at.eq(vouched_by.map(|_| at)),
                    ))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn operator_by_id(&mut self, id: &str) -> StoreResult<Option<OperatorRow>> {
                first_or_none!(
                    self.c(),
                    OperatorRow,
                    operators::table.filter(operators::id.eq(id)),
                    "operators",
                    "id" = id
                )
            }

            async fn operators_page(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<OperatorRow>> {
                let q = operators::table.into_boxed();
                Ok(crate::paging::newest_after!(q, operators, id, filter)
                    .select(crate::rows::columns::<OperatorRow>())
                    .load(self.c())
                    .await?)
            }

            async fn change_operator(
                &mut self,
                id: &str,
                change: &OperatorChange,
            ) -> StoreResult<Option<OperatorRow>> {
                Ok(
                    diesel::update(operators::table.filter(operators::id.eq(id)))
                        .set(change)
                        .returning(crate::rows::columns::<OperatorRow>())
                        .get_result(self.c())
                        .await
                        .optional()?,
                )
            }

            async fn set_operator_password(
                &mut self,
                email: &str,
                password_hash: &str,
                at: i64,
            ) -> StoreResult<Option<OperatorRow>> {
                let row: Option<OperatorRow> =
                    diesel::update(operators::table.filter(operators::email.eq(email)))
                        .set((
                            operators::password_hash.eq(Some(password_hash)),
                            operators::updated_at.eq(at),
                        ))
                        .returning(crate::rows::columns::<OperatorRow>())
                        .get_result(self.c())
                        .await
                        .optional()?;
                if let Some(r) = &row {
                    self.done.created = Some(r.id.clone());
                }
                Ok(row)
            }

            async fn insert_operator_token(&mut self, row: &OperatorTokenRow) -> StoreResult<()> {
                insert_one!(self.c(), operator_tokens::table, row)
            }

            async fn operator_token(
                &mut self,
                token_hash: &str,
            ) -> StoreResult<Option<(OperatorTokenRow, OperatorRow)>> {
                Ok(operator_tokens::table
                    .inner_join(operators::table)
                    .filter(operator_tokens::token_hash.eq(token_hash))
                    .select((
                        crate::rows::columns::<OperatorTokenRow>(),
                        crate::rows::columns::<OperatorRow>(),
                    ))
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn operator_tokens_of(
                &mut self,
                operator_id: &str,
            ) -> StoreResult<Vec<OperatorTokenRow>> {
                Ok(operator_tokens::table
                    .filter(operator_tokens::operator_id.eq(operator_id))
                    .order((
                        operator_tokens::created_at.desc(),
                        operator_tokens::id.desc(),
                    ))
                    .select(crate::rows::columns::<OperatorTokenRow>())
                    .load(self.c())
                    .await?)
            }

            async fn revoke_operator_token(
                &mut self,
                operator_id: &str,
                token_id: &str,
                at: i64,
            ) -> StoreResult<Option<OperatorTokenRow>> {
                let mine = operator_tokens::table
                    .filter(operator_tokens::id.eq(token_id))
                    .filter(operator_tokens::operator_id.eq(operator_id));
                diesel::update(mine.filter(operator_tokens::revoked_at.is_null()))
                    .set(operator_tokens::revoked_at.eq(Some(at)))
                    .execute(self.c())
                    .await?;
                Ok(mine
                    .select(crate::rows::columns::<OperatorTokenRow>())
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn lock_pending_withdrawal(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Option<(WithdrawalRow, bool)>> {
                Ok(diesel::update(
                    withdrawal_orders::table
                        .filter(withdrawal_orders::order_no.eq(order_no))
                        .filter(withdrawal_orders::status.eq(WithdrawalStatus::Pending)),
                )
                .set(withdrawal_orders::approvals_given.eq(withdrawal_orders::approvals_given + 1))
                .returning((
                    crate::rows::columns::<WithdrawalRow>(),
                    withdrawal_orders::merchant_id.eq_any(super::merchants::held_merchants()),
                ))
                .prepared()
                .get_result(self.c())
                .await
                .optional()?)
            }

            async fn insert_approval(&mut self, row: &ApprovalRow) -> StoreResult<()> {
                if let Some(deferred) = self.deferred.as_mut() {
                    deferred.approvals.push(row.clone());
                    return Ok(());
                }
                insert_one!(self.c(), withdrawal_approvals::table, row)
            }

            async fn approvals_of(&mut self, order_no: &str) -> StoreResult<Vec<ApprovalRow>> {
                Ok(withdrawal_approvals::table
                    .filter(withdrawal_approvals::order_no.eq(order_no))
                    .order((
                        withdrawal_approvals::approved_at.asc(),
                        withdrawal_approvals::id.asc(),
                    ))
                    .select(crate::rows::columns::<ApprovalRow>())
                    .load(self.c())
                    .await?)
            }

            async fn append_audit(&mut self, row: &AuditRow) -> StoreResult<()> {
                if let Some(deferred) = self.deferred.as_mut() {
                    deferred.audits.push(row.clone());
                    return Ok(());
                }
                insert_one!(self.c(), audit_events::table, row)
            }

            async fn fees_of(&mut self, merchant_id: &str) -> StoreResult<Vec<FeeRow>> {
                Ok(merchant_fees::table
                    .filter(merchant_fees::merchant_id.eq(merchant_id))
                    .order((
                        merchant_fees::currency.asc(),
                        merchant_fees::direction.asc(),
                    ))
                    .select(crate::rows::columns::<FeeRow>())
                    .load(self.c())
                    .await?)
            }

            async fn audit_page(
                &mut self,
                filter: &AuditFilter,
                page: &ListFilter,
            ) -> StoreResult<Vec<AuditRow>> {
                let mut q = audit_events::table.into_boxed();
                if let Some(o) = &filter.operator_id {
                    q = q.filter(audit_events::operator_id.eq(o.clone()));
                }
                if let Some(a) = &filter.action {
                    q = q.filter(audit_events::action.eq(a.clone()));
                }
                if let Some(t) = &filter.target_id {
                    q = q.filter(audit_events::target_id.eq(t.clone()));
                }
                if filter.operators_only {
                    // The listing of 0.15.0 names five kinds of target; a
                    // routing table's rows (0.18.0) are the full trail's.
                    q = q
                        .filter(audit_events::role.ne(AuditRole::Owner))
                        .filter(audit_events::target_type.eq_any(OPERATOR_LISTING_KINDS));
                }
                Ok(crate::paging::newest_after!(q, audit_events, id, page)
                    .select(crate::rows::columns::<AuditRow>())
                    .load(self.c())
                    .await?)
            }
        }
    };
}

impl_people!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_people!(crate::Tx<'_, crate::SqliteConn>);
