//! Merchant events (the feed) and balance lines (the balance's history).

use crate::dialect::{self, Dialect};
use crate::queries::KeepPrepared;
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;

/// Which of a merchant's events a feed read wants.
#[derive(Clone, Debug)]
pub struct FeedFilter {
    pub merchant_id: String,
    /// Strictly after this position.
    pub after: i64,
    /// Only these event names; all when empty.
    pub events: Vec<String>,
    pub limit: i64,
}

/// Which of a merchant's balance lines a read wants, oldest first.
#[derive(Clone, Debug)]
pub struct LinesFilter {
    pub merchant_id: String,
    pub currency: String,
    /// Strictly after this balance version.
    pub after: i64,
    pub limit: i64,
}

#[async_trait]
pub trait EventQueries: Send {
    async fn insert_merchant_event(&mut self, row: &NewMerchantEventRow) -> StoreResult<()>;

    /// Places up to `limit` unplaced events after the last position handed
    /// out, holding the positions' lock until the transaction ends; how
    /// many it placed. Call inside a transaction.
    async fn sequence_events(&mut self, limit: i64) -> StoreResult<i64>;

    async fn merchant_feed(&mut self, filter: &FeedFilter) -> StoreResult<Vec<MerchantEventRow>>;

    /// The callback records of these ids (status and attempts).
    async fn deliveries_by_ids(&mut self, ids: &[String]) -> StoreResult<Vec<CallbackDeliveryRow>>;

    /// Deletes up to `limit` events created before `before`; how many.
    async fn forget_events_before(&mut self, before: i64, limit: i64) -> StoreResult<usize>;

    async fn insert_balance_transaction(&mut self, row: &BalanceTransactionRow) -> StoreResult<()>;

    /// One order's events and its balance lines, oldest first, at most
    /// `limit` of each: what its timeline shows.
    async fn order_history(
        &mut self,
        merchant_id: &str,
        order_no: &str,
        limit: i64,
    ) -> StoreResult<(Vec<MerchantEventRow>, Vec<BalanceTransactionRow>)>;

    async fn balance_lines(
        &mut self,
        filter: &LinesFilter,
    ) -> StoreResult<Vec<BalanceTransactionRow>>;

    /// The last line of a merchant's currency created before `before`.
    async fn last_line_before(
        &mut self,
        merchant_id: &str,
        currency: &str,
        before: i64,
    ) -> StoreResult<Option<BalanceTransactionRow>>;

    async fn day_totals(
        &mut self,
        merchant_id: &str,
        currency: &str,
        from: i64,
        to: i64,
    ) -> StoreResult<Vec<KindTotal>>;

    async fn line_sums(&mut self) -> StoreResult<Vec<LineSum>>;

    async fn line_days(&mut self) -> StoreResult<Vec<LineDay>>;

    async fn lines_back_in_time(&mut self) -> StoreResult<i64>;
}

macro_rules! impl_events {
    ($conn:ty) => {
        #[async_trait]
        impl EventQueries for $conn {
            async fn insert_merchant_event(
                &mut self,
                row: &NewMerchantEventRow,
            ) -> StoreResult<()> {
                self.done.event_recorded = true;
                if let Some(deferred) = self.deferred.as_mut() {
                    deferred.events.push(row.clone());
                    return Ok(());
                }
                diesel::insert_into(merchant_events::table)
                    .values(row)
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn sequence_events(&mut self, limit: i64) -> StoreResult<i64> {
                // The update takes the row's lock first (a write lock on
                // SQLite): a second pass waits here until this one commits,
                // and then reads the last position this one handed out.
                let last: i64 = diesel::update(event_positions::table.find(1))
                    .set(event_positions::last.eq(event_positions::last))
                    .returning(event_positions::last)
                    .prepared()
                    .get_result(self.c())
                    .await?;
                if let Some(plan) = <$conn as Dialect>::SEQUENCE_PLAN {
                    diesel_async::SimpleAsyncConnection::batch_execute(self.c(), plan).await?;
                }
                let placed = diesel::sql_query(<$conn as Dialect>::SEQUENCE_EVENTS)
                    .bind::<BigInt, _>(last)
                    .bind::<BigInt, _>(limit)
                    .prepared()
                    .execute(self.c())
                    .await?;
                let placed = i64::try_from(placed).unwrap_or(i64::MAX);
                if placed > 0 {
                    diesel::update(event_positions::table.find(1))
                        .set(event_positions::last.eq(last + placed))
                        .prepared()
                        .execute(self.c())
                        .await?;
                }
                Ok(placed)
            }

            async fn merchant_feed(
                &mut self,
                filter: &FeedFilter,
            ) -> StoreResult<Vec<MerchantEventRow>> {
                let mut q = merchant_events::table
                    .filter(merchant_events::merchant_id.eq(filter.merchant_id.clone()))
                    .filter(merchant_events::position.gt(filter.after))
                    .into_boxed();
                if !filter.events.is_empty() {
                    q = q.filter(merchant_events::event.eq_any(filter.events.clone()));
                }
                Ok(q.order(merchant_events::position.asc())
                    .limit(filter.limit)
                    .select(crate::rows::columns::<MerchantEventRow>())
                    .load(self.c())
                    .await?)
            }

            async fn deliveries_by_ids(
                &mut self,
                ids: &[String],
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::id.eq_any(ids.to_vec()))
                    .select(crate::rows::columns::<CallbackDeliveryRow>())
                    .load(self.c())
                    .await?)
            }

            async fn forget_events_before(
                &mut self,
                before: i64,
                limit: i64,
            ) -> StoreResult<usize> {
                let oldest = merchant_events::table
                    .filter(merchant_events::created_at.lt(before))
                    .filter(merchant_events::position.is_not_null())
                    .order(merchant_events::seq.asc())
                    .limit(limit)
                    .select(merchant_events::seq)
                    .load::<i64>(self.c())
                    .await?;
                if oldest.is_empty() {
                    return Ok(0);
                }
                Ok(diesel::delete(
                    merchant_events::table.filter(merchant_events::seq.eq_any(oldest)),
                )
                .execute(self.c())
                .await?)
            }

            async fn insert_balance_transaction(
                &mut self,
                row: &BalanceTransactionRow,
            ) -> StoreResult<()> {
                diesel::insert_into(balance_transactions::table)
                    .values(row)
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn order_history(
                &mut self,
                merchant_id: &str,
                order_no: &str,
                limit: i64,
            ) -> StoreResult<(Vec<MerchantEventRow>, Vec<BalanceTransactionRow>)> {
                let events = merchant_events::table
                    .filter(merchant_events::merchant_id.eq(merchant_id))
                    .filter(merchant_events::order_no.eq(order_no))
                    .order(merchant_events::seq.asc())
                    .limit(limit)
                    .select(crate::rows::columns::<MerchantEventRow>())
                    .load(self.c())
                    .await?;
                let lines = balance_transactions::table
                    .filter(balance_transactions::merchant_id.eq(merchant_id))
                    .filter(balance_transactions::order_no.eq(order_no))
                    .order(balance_transactions::version.asc())
                    .limit(limit)
                    .select(crate::rows::columns::<BalanceTransactionRow>())
                    .load(self.c())
                    .await?;
                Ok((events, lines))
            }

            async fn balance_lines(
                &mut self,
                filter: &LinesFilter,
            ) -> StoreResult<Vec<BalanceTransactionRow>> {
                Ok(balance_transactions::table
                    .filter(balance_transactions::merchant_id.eq(filter.merchant_id.clone()))
                    .filter(balance_transactions::currency.eq(filter.currency.clone()))
                    .filter(balance_transactions::version.gt(filter.after))
                    .order(balance_transactions::version.asc())
                    .limit(filter.limit)
                    .select(crate::rows::columns::<BalanceTransactionRow>())
                    .load(self.c())
                    .await?)
            }

            async fn last_line_before(
                &mut self,
                merchant_id: &str,
                currency: &str,
                before: i64,
            ) -> StoreResult<Option<BalanceTransactionRow>> {
                Ok(balance_transactions::table
                    .filter(balance_transactions::merchant_id.eq(merchant_id))
                    .filter(balance_transactions::currency.eq(currency))
                    .filter(balance_transactions::created_at.lt(before))
                    .order(balance_transactions::version.desc())
                    .select(crate::rows::columns::<BalanceTransactionRow>())
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn day_totals(
                &mut self,
                merchant_id: &str,
                currency: &str,
                from: i64,
                to: i64,
            ) -> StoreResult<Vec<KindTotal>> {
                Ok(diesel::sql_query(<$conn as Dialect>::DAY_TOTALS)
                    .bind::<Text, _>(merchant_id)
                    .bind::<Text, _>(currency)
                    .bind::<BigInt, _>(from)
                    .bind::<BigInt, _>(to)
                    .load(self.c())
                    .await?)
            }

            async fn line_sums(&mut self) -> StoreResult<Vec<LineSum>> {
                Ok(diesel::sql_query(dialect::LINE_SUMS).load(self.c()).await?)
            }

            async fn line_days(&mut self) -> StoreResult<Vec<LineDay>> {
                Ok(diesel::sql_query(dialect::LINE_DAYS).load(self.c()).await?)
            }

            async fn lines_back_in_time(&mut self) -> StoreResult<i64> {
                let counted: Counted = diesel::sql_query(dialect::LINES_BACK_IN_TIME)
                    .get_result(self.c())
                    .await?;
                Ok(counted.n)
            }
        }
    };
}

impl_events!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_events!(crate::Tx<'_, crate::SqliteConn>);
