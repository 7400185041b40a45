//! Deposit orders.

use crate::domain::status::DepositStatus;
use crate::store::paging::{newest_after, ListFilter};
use crate::store::rows::*;
use crate::store::schema::*;
use crate::store::StoreResult;

use super::{first_or_none, insert_one};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait DepositQueries: Send {
    async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()>;

    async fn deposit_by_order_no(
        &mut self,
        merchant_id: &str,
        order_no: &str,
    ) -> StoreResult<Option<DepositRow>>;

    async fn deposit_by_order_no_any(&mut self, order_no: &str) -> StoreResult<Option<DepositRow>>;

    async fn deposit_by_merchant_order_no(
        &mut self,
        merchant_id: &str,
        merchant_order_no: &str,
    ) -> StoreResult<Option<DepositRow>>;

    async fn deposit_by_remark(&mut self, remark: &str) -> StoreResult<Option<DepositRow>>;

    async fn deposit_by_cashier_session(
        &mut self,
        session_id: &str,
    ) -> StoreResult<Option<DepositRow>>;

    async fn pending_deposit_by_match_amount(
        &mut self,
        account_id: &str,
        amount: i64,
    ) -> StoreResult<Option<DepositRow>>;

    /// Match amounts in `[from, to)` taken by orders awaiting payment on
    /// the account.
    async fn pending_match_amounts(
        &mut self,
        account_id: &str,
        from: i64,
        to: i64,
    ) -> StoreResult<Vec<i64>>;

    /// Writes `row` over the deposit with its id, only while the stored
    /// status is one of `from`. Returns whether it did.
    async fn transition_deposit(
        &mut self,
        from: &[DepositStatus],
        row: &DepositRow,
    ) -> StoreResult<bool>;

    /// Records the saved card a payer chose, once, while the order awaits
    /// payment. Returns whether it was recorded.
    async fn set_deposit_payer_card(
        &mut self,
        order_no: &str,
        bank_code: &str,
        last4: &str,
        now: i64,
    ) -> StoreResult<bool>;

    /// Order numbers of deposits awaiting payment past `expire_at`.
    async fn deposits_due_to_expire(&mut self, now: i64, limit: i64) -> StoreResult<Vec<String>>;

    /// The earliest `expire_at` of a deposit awaiting payment.
    async fn next_deposit_expiry(&mut self) -> StoreResult<Option<i64>>;

    /// Newest first, after `filter.after`.
    async fn list_deposits(&mut self, filter: &ListFilter) -> StoreResult<Vec<DepositRow>>;
}

macro_rules! impl_deposits {
    ($conn:ty) => {
        #[async_trait]
        impl DepositQueries for $conn {
            async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()> {
                let inserted: StoreResult<()> = insert_one!(self, deposit_orders::table, row);
                inserted?;
                crate::store::order_written(row.written(true));
                Ok(())
            }

            async fn deposit_by_order_no(
                &mut self,
                merchant_id: &str,
                order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                first_or_none!(
                    self,
                    DepositRow,
                    deposit_orders::table
                        .filter(deposit_orders::merchant_id.eq(merchant_id))
                        .filter(deposit_orders::order_no.eq(order_no)),
                    "deposit_orders",
                    "order_no" = order_no
                )
            }

            async fn deposit_by_order_no_any(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                first_or_none!(
                    self,
                    DepositRow,
                    deposit_orders::table.filter(deposit_orders::order_no.eq(order_no)),
                    "deposit_orders",
                    "order_no" = order_no
                )
            }

            async fn deposit_by_merchant_order_no(
                &mut self,
                merchant_id: &str,
                merchant_order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                first_or_none!(
                    self,
                    DepositRow,
                    deposit_orders::table
                        .filter(deposit_orders::merchant_id.eq(merchant_id))
                        .filter(deposit_orders::merchant_order_no.eq(merchant_order_no)),
                    "deposit_orders",
                    "merchant_order_no" = merchant_order_no
                )
            }

            async fn deposit_by_remark(&mut self, remark: &str) -> StoreResult<Option<DepositRow>> {
                first_or_none!(
                    self,
                    DepositRow,
                    deposit_orders::table.filter(deposit_orders::expected_remark.eq(remark)),
                    "deposit_orders",
                    "expected_remark" = remark
                )
            }

            async fn deposit_by_cashier_session(
                &mut self,
                session_id: &str,
            ) -> StoreResult<Option<DepositRow>> {
                first_or_none!(
                    self,
                    DepositRow,
                    deposit_orders::table.filter(deposit_orders::cashier_session_id.eq(session_id)),
                    "deposit_orders",
                    "cashier_session_id" = session_id
                )
            }

            async fn pending_deposit_by_match_amount(
                &mut self,
                account_id: &str,
                amount: i64,
            ) -> StoreResult<Option<DepositRow>> {
                first_or_none!(
                    self,
                    DepositRow,
                    deposit_orders::table
                        .filter(deposit_orders::account_id.eq(account_id))
                        .filter(deposit_orders::match_amount.eq(amount))
                        .filter(deposit_orders::status.eq(DepositStatus::Pending)),
                    "deposit_orders",
                    "match_amount" = &amount
                )
            }

            async fn pending_match_amounts(
                &mut self,
                account_id: &str,
                from: i64,
                to: i64,
            ) -> StoreResult<Vec<i64>> {
                let taken: Vec<Option<i64>> = deposit_orders::table
                    .filter(deposit_orders::account_id.eq(account_id))
                    .filter(deposit_orders::status.eq(DepositStatus::Pending))
                    .filter(deposit_orders::match_amount.ge(from))
                    .filter(deposit_orders::match_amount.lt(to))
                    .select(deposit_orders::match_amount)
                    .load(self)
                    .await?;
                Ok(taken.into_iter().flatten().collect())
            }

            async fn transition_deposit(
                &mut self,
                from: &[DepositStatus],
                row: &DepositRow,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    deposit_orders::table
                        .filter(deposit_orders::id.eq(&row.id))
                        .filter(deposit_orders::status.eq_any(from)),
                )
                .set(row)
                .execute(self)
                .await?;
                if n == 1 {
                    crate::store::order_written(row.written(false));
                }
                Ok(n == 1)
            }

            async fn set_deposit_payer_card(
                &mut self,
                order_no: &str,
                bank_code: &str,
                last4: &str,
                now: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    deposit_orders::table
                        .filter(deposit_orders::order_no.eq(order_no))
                        .filter(deposit_orders::status.eq(DepositStatus::Pending))
                        .filter(deposit_orders::payer_bank_code.is_null()),
                )
                .set((
                    deposit_orders::payer_bank_code.eq(bank_code),
                    deposit_orders::payer_account_last4.eq(last4),
                    deposit_orders::updated_at.eq(now),
                ))
                .execute(self)
                .await?;
                Ok(n == 1)
            }

            async fn deposits_due_to_expire(
                &mut self,
                now: i64,
                limit: i64,
            ) -> StoreResult<Vec<String>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::status.eq(DepositStatus::Pending))
                    .filter(deposit_orders::expire_at.le(now))
                    .order(deposit_orders::expire_at.asc())
                    .limit(limit)
                    .select(deposit_orders::order_no)
                    .load(self)
                    .await?)
            }

            async fn next_deposit_expiry(&mut self) -> StoreResult<Option<i64>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::status.eq(DepositStatus::Pending))
                    .select(diesel::dsl::min(deposit_orders::expire_at))
                    .first(self)
                    .await?)
            }

            async fn list_deposits(&mut self, filter: &ListFilter) -> StoreResult<Vec<DepositRow>> {
                let mut q = deposit_orders::table.into_boxed();
                if let Some(m) = &filter.merchant_id {
                    q = q.filter(deposit_orders::merchant_id.eq(m.clone()));
                }
                if let Some(st) = &filter.status {
                    q = q.filter(deposit_orders::status.eq(st.clone()));
                }
                Ok(newest_after!(q, deposit_orders, order_no, filter)
                    .select(DepositRow::as_select())
                    .load(self)
                    .await?)
            }
        }
    };
}

impl_deposits!(diesel_async::AsyncPgConnection);
impl_deposits!(crate::store::SqliteConn);
