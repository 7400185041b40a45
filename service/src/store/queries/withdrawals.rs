//! Withdrawal orders.

use crate::domain::status::WithdrawalStatus;
use crate::store::paging::{newest_after, ListFilter};
use crate::store::rows::*;
use crate::store::schema::*;
use crate::store::StoreResult;

use super::{first_or_none, insert_one};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait WithdrawalQueries: Send {
    async fn insert_withdrawal(&mut self, row: &WithdrawalRow) -> StoreResult<()>;

    async fn withdrawal_by_order_no(
        &mut self,
        merchant_id: &str,
        order_no: &str,
    ) -> StoreResult<Option<WithdrawalRow>>;

    async fn withdrawal_by_order_no_any(
        &mut self,
        order_no: &str,
    ) -> StoreResult<Option<WithdrawalRow>>;

    async fn withdrawal_by_merchant_order_no(
        &mut self,
        merchant_id: &str,
        merchant_order_no: &str,
    ) -> StoreResult<Option<WithdrawalRow>>;

    /// Like `transition_deposit`, for withdrawals.
    async fn transition_withdrawal(
        &mut self,
        from: &[WithdrawalStatus],
        row: &WithdrawalRow,
    ) -> StoreResult<bool>;

    /// Order numbers of approved withdrawals not yet handed to a channel.
    async fn withdrawals_to_dispatch(&mut self, limit: i64) -> StoreResult<Vec<String>>;

    async fn list_withdrawals(&mut self, filter: &ListFilter) -> StoreResult<Vec<WithdrawalRow>>;
}

macro_rules! impl_withdrawals {
    ($conn:ty) => {
        #[async_trait]
        impl WithdrawalQueries for $conn {
            async fn insert_withdrawal(&mut self, row: &WithdrawalRow) -> StoreResult<()> {
                let inserted: StoreResult<()> = insert_one!(self, withdrawal_orders::table, row);
                inserted?;
                crate::store::order_written(row.written(true));
                Ok(())
            }

            async fn withdrawal_by_order_no(
                &mut self,
                merchant_id: &str,
                order_no: &str,
            ) -> StoreResult<Option<WithdrawalRow>> {
                first_or_none!(
                    self,
                    WithdrawalRow,
                    withdrawal_orders::table
                        .filter(withdrawal_orders::merchant_id.eq(merchant_id))
                        .filter(withdrawal_orders::order_no.eq(order_no)),
                    "withdrawal_orders",
                    "order_no" = order_no
                )
            }

            async fn withdrawal_by_order_no_any(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Option<WithdrawalRow>> {
                first_or_none!(
                    self,
                    WithdrawalRow,
                    withdrawal_orders::table.filter(withdrawal_orders::order_no.eq(order_no)),
                    "withdrawal_orders",
                    "order_no" = order_no
                )
            }

            async fn withdrawal_by_merchant_order_no(
                &mut self,
                merchant_id: &str,
                merchant_order_no: &str,
            ) -> StoreResult<Option<WithdrawalRow>> {
                first_or_none!(
                    self,
                    WithdrawalRow,
                    withdrawal_orders::table
                        .filter(withdrawal_orders::merchant_id.eq(merchant_id))
                        .filter(withdrawal_orders::merchant_order_no.eq(merchant_order_no)),
                    "withdrawal_orders",
                    "merchant_order_no" = merchant_order_no
                )
            }

            async fn transition_withdrawal(
                &mut self,
                from: &[WithdrawalStatus],
                row: &WithdrawalRow,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    withdrawal_orders::table
                        .filter(withdrawal_orders::id.eq(&row.id))
                        .filter(withdrawal_orders::status.eq_any(from)),
                )
                .set(row)
                .execute(self)
                .await?;
                if n == 1 {
                    crate::store::order_written(row.written(false));
                }
                Ok(n == 1)
            }

            async fn withdrawals_to_dispatch(&mut self, limit: i64) -> StoreResult<Vec<String>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::status.eq(WithdrawalStatus::Approved))
                    .order(withdrawal_orders::approved_at.asc())
                    .limit(limit)
                    .select(withdrawal_orders::order_no)
                    .load(self)
                    .await?)
            }

            async fn list_withdrawals(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<WithdrawalRow>> {
                let mut q = withdrawal_orders::table.into_boxed();
                if let Some(m) = &filter.merchant_id {
                    q = q.filter(withdrawal_orders::merchant_id.eq(m.clone()));
                }
                if let Some(st) = &filter.status {
                    q = q.filter(withdrawal_orders::status.eq(st.clone()));
                }
                Ok(newest_after!(q, withdrawal_orders, order_no, filter)
                    .select(WithdrawalRow::as_select())
                    .load(self)
                    .await?)
            }
        }
    };
}

impl_withdrawals!(diesel_async::AsyncPgConnection);
impl_withdrawals!(crate::store::SqliteConn);
