//! Withdrawal orders.

use crate::domain::status::WithdrawalStatus;
use crate::store::paging::ListFilter;
use crate::store::rows::*;
use crate::store::schema::*;
use crate::store::StoreResult;

use super::{by_order_key, first_or_none, insert_one, list_orders, write_move, OrderKey};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait WithdrawalQueries: Send {
    async fn insert_withdrawal(&mut self, row: &WithdrawalRow) -> StoreResult<()>;

    /// One withdrawal by the key given.
    async fn withdrawal_by(&mut self, key: OrderKey<'_>) -> StoreResult<Option<WithdrawalRow>>;

    /// Writes `change` to the withdrawal with id `id`, only while its status
    /// is one of `from`. Returns the row as written, or `None` when it had
    /// moved (or is gone).
    async fn transition_withdrawal(
        &mut self,
        id: &str,
        from: &[WithdrawalStatus],
        change: &WithdrawalMove,
    ) -> StoreResult<Option<WithdrawalRow>>;

    /// Order numbers of approved withdrawals not yet handed to a channel.
    async fn withdrawals_to_dispatch(&mut self, limit: i64) -> StoreResult<Vec<String>>;

    async fn list_withdrawals(&mut self, filter: &ListFilter) -> StoreResult<Vec<WithdrawalRow>>;
}

macro_rules! impl_withdrawals {
    ($conn:ty) => {
        #[async_trait]
        impl WithdrawalQueries for $conn {
            async fn insert_withdrawal(&mut self, row: &WithdrawalRow) -> StoreResult<()> {
                let inserted: StoreResult<()> =
                    insert_one!(self.c(), withdrawal_orders::table, row);
                inserted?;
                self.done.orders.push(row.written(true));
                Ok(())
            }

            async fn withdrawal_by(
                &mut self,
                key: OrderKey<'_>,
            ) -> StoreResult<Option<WithdrawalRow>> {
                let query = by_order_key!(withdrawal_orders, key);
                first_or_none!(self.c(), WithdrawalRow, query, "withdrawal_orders", key)
            }

            async fn transition_withdrawal(
                &mut self,
                id: &str,
                from: &[WithdrawalStatus],
                change: &WithdrawalMove,
            ) -> StoreResult<Option<WithdrawalRow>> {
                write_move!(self, withdrawal_orders, WithdrawalRow, id, from, change)
            }

            async fn withdrawals_to_dispatch(&mut self, limit: i64) -> StoreResult<Vec<String>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::status.eq(WithdrawalStatus::Approved))
                    .order(withdrawal_orders::approved_at.asc())
                    .limit(limit)
                    .select(withdrawal_orders::order_no)
                    .load(self.c())
                    .await?)
            }

            async fn list_withdrawals(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<WithdrawalRow>> {
                list_orders!(self.c(), withdrawal_orders, WithdrawalRow, filter)
            }
        }
    };
}

impl_withdrawals!(crate::store::Tx<'_, diesel_async::AsyncPgConnection>);
impl_withdrawals!(crate::store::Tx<'_, crate::store::SqliteConn>);
