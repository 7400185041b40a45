//! Withdrawal orders.

use crate::domain::status::WithdrawalStatus;
use crate::paging::ListFilter;
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;

use super::merchants::held_merchants;
use super::{
    by_order_key, filtered_orders, first_or_none, insert_one, list_orders, write_move,
    KeepPrepared, OrderKey,
};
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

    /// Order numbers of approved withdrawals not yet handed to a channel:
    /// never sent, or sent at or before `sent_before` without an answer;
    /// a suspended merchant's are held.
    async fn withdrawals_to_dispatch(
        &mut self,
        limit: i64,
        sent_before: i64,
    ) -> StoreResult<Vec<String>>;

    /// Notes that the payout of approved withdrawal `id` is being sent, if
    /// it never was and its merchant is not suspended: whether this call
    /// noted it.
    async fn mark_payout_sent(&mut self, id: &str, now: i64) -> StoreResult<bool>;

    /// Order numbers of payouts under way (`processing`) the service last
    /// heard of or asked about at or before `before`.
    async fn payouts_to_inquire(&mut self, limit: i64, before: i64) -> StoreResult<Vec<String>>;

    /// Notes that the service asked the channel about payout `id`.
    async fn mark_payout_inquired(&mut self, id: &str, now: i64) -> StoreResult<()>;

    /// Per channel id: how many approved withdrawals were sent without an
    /// answer, and when the oldest of them was sent.
    async fn payouts_in_doubt(&mut self) -> StoreResult<Vec<(Option<String>, i64, Option<i64>)>>;

    async fn list_withdrawals(&mut self, filter: &ListFilter) -> StoreResult<Vec<WithdrawalRow>>;

    /// How many withdrawals `filter` matches, every page together.
    async fn count_withdrawals(&mut self, filter: &ListFilter) -> StoreResult<i64>;

    /// The amounts of a merchant's withdrawals in `currency` to one
    /// beneficiary account created at or after `since` and not rejected or
    /// failed, at most `limit` of them.
    async fn amounts_to_beneficiary(
        &mut self,
        to: &BeneficiaryKey<'_>,
        since: i64,
        limit: i64,
    ) -> StoreResult<Vec<i64>>;
}

/// One merchant's beneficiary account in one currency.
pub struct BeneficiaryKey<'a> {
    pub merchant_id: &'a str,
    pub currency: &'a str,
    pub bank_code: &'a str,
    pub account: &'a str,
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

            async fn withdrawals_to_dispatch(
                &mut self,
                limit: i64,
                sent_before: i64,
            ) -> StoreResult<Vec<String>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::status.eq(WithdrawalStatus::Approved))
                    .filter(
                        withdrawal_orders::payout_sent_at
                            .is_null()
                            .or(withdrawal_orders::payout_sent_at.le(sent_before)),
                    )
                    .filter(diesel::dsl::not(
                        withdrawal_orders::merchant_id.eq_any(held_merchants()),
                    ))
                    .order(withdrawal_orders::approved_at.asc())
                    .limit(limit)
                    .select(withdrawal_orders::order_no)
                    .load(self.c())
                    .await?)
            }

            async fn mark_payout_sent(&mut self, id: &str, now: i64) -> StoreResult<bool> {
                let changed = diesel::update(
                    withdrawal_orders::table
                        .filter(withdrawal_orders::id.eq(id))
                        .filter(withdrawal_orders::status.eq(WithdrawalStatus::Approved))
                        .filter(withdrawal_orders::payout_sent_at.is_null())
                        .filter(diesel::dsl::not(
                            withdrawal_orders::merchant_id.eq_any(held_merchants()),
                        )),
                )
                .set(withdrawal_orders::payout_sent_at.eq(now))
                .prepared()
                .execute(self.c())
                .await?;
                Ok(changed == 1)
            }

            async fn payouts_to_inquire(
                &mut self,
                limit: i64,
                before: i64,
            ) -> StoreResult<Vec<String>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::status.eq(WithdrawalStatus::Processing))
                    .filter(
                        withdrawal_orders::payout_inquired_at.le(before).or(
                            withdrawal_orders::payout_inquired_at
                                .is_null()
                                .and(withdrawal_orders::processed_at.le(before)),
                        ),
                    )
                    .order(withdrawal_orders::processed_at.asc())
                    .limit(limit)
                    .select(withdrawal_orders::order_no)
                    .load(self.c())
                    .await?)
            }

            async fn mark_payout_inquired(&mut self, id: &str, now: i64) -> StoreResult<()> {
                diesel::update(withdrawal_orders::table.filter(withdrawal_orders::id.eq(id)))
                    .set(withdrawal_orders::payout_inquired_at.eq(now))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn payouts_in_doubt(
                &mut self,
            ) -> StoreResult<Vec<(Option<String>, i64, Option<i64>)>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::status.eq(WithdrawalStatus::Approved))
                    .filter(withdrawal_orders::payout_sent_at.is_not_null())
                    .group_by(withdrawal_orders::channel_id)
                    .select((
                        withdrawal_orders::channel_id,
                        diesel::dsl::count_star(),
                        diesel::dsl::min(withdrawal_orders::payout_sent_at),
                    ))
                    .load(self.c())
                    .await?)
            }

            async fn list_withdrawals(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<WithdrawalRow>> {
                list_orders!(self.c(), withdrawal_orders, WithdrawalRow, filter)
            }

            async fn count_withdrawals(&mut self, filter: &ListFilter) -> StoreResult<i64> {
                Ok(filtered_orders!(withdrawal_orders, filter)
                    .count()
                    .get_result(self.c())
                    .await?)
            }

            async fn amounts_to_beneficiary(
                &mut self,
                to: &BeneficiaryKey<'_>,
                since: i64,
                limit: i64,
            ) -> StoreResult<Vec<i64>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::merchant_id.eq(to.merchant_id))
                    .filter(withdrawal_orders::beneficiary_account.eq(to.account))
                    .filter(withdrawal_orders::created_at.ge(since))
                    .filter(withdrawal_orders::currency.eq(to.currency))
                    .filter(withdrawal_orders::beneficiary_bank_code.eq(to.bank_code))
                    .filter(
                        withdrawal_orders::status
                            .ne_all([WithdrawalStatus::Rejected, WithdrawalStatus::Failed]),
                    )
                    .select(withdrawal_orders::amount)
                    .limit(limit)
                    .load(self.c())
                    .await?)
            }
        }
    };
}

impl_withdrawals!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_withdrawals!(crate::Tx<'_, crate::SqliteConn>);
