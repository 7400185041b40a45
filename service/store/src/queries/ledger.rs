//! Balances and the double-entry journal.

use crate::dialect::{self, Dialect};
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait LedgerQueries: Send {
    /// Creates the balance row unless one exists for its merchant and
    /// currency.
    async fn ensure_balance(&mut self, row: &BalanceRow) -> StoreResult<()>;

    async fn balances_of(&mut self, merchant_id: &str) -> StoreResult<Vec<BalanceRow>>;

    async fn all_balances(&mut self) -> StoreResult<Vec<BalanceRow>>;

    /// Adds the deltas to a balance and bumps its version, unless either
    /// side would go below zero. Returns the balance as changed, or none.
    /// Its `updated_at` never goes back: a change that waited for the row
    /// behind one stamped later keeps the later time.
    async fn apply_balance_delta(
        &mut self,
        merchant_id: &str,
        currency: &str,
        available: i64,
        frozen: i64,
        now: i64,
    ) -> StoreResult<Option<BalanceRow>>;

    async fn insert_journal_entry(
        &mut self,
        entry: &JournalEntryRow,
        postings: &[PostingRow],
    ) -> StoreResult<()>;

    /// Makes the rest of the current transaction read one snapshot, so that
    /// a check over several tables sees them as of one moment.
    async fn read_one_snapshot(&mut self) -> StoreResult<()>;

    async fn account_sums(&mut self) -> StoreResult<Vec<AccountSum>>;

    async fn unbalanced_entries(&mut self) -> StoreResult<Vec<EntrySum>>;

    async fn count_journal_entries(&mut self) -> StoreResult<i64>;

    /// Writes the balances a coalescing transaction changed in memory
    /// (`UnitOfWork::coalesce_balances`); nothing otherwise. The unit of
    /// work calls it before it commits.
    async fn flush_balances(&mut self) -> StoreResult<()>;
}

macro_rules! impl_ledger {
    ($conn:ty) => {
        #[async_trait]
        impl LedgerQueries for $conn {
            async fn ensure_balance(&mut self, row: &BalanceRow) -> StoreResult<()> {
                if self
                    .balances
                    .as_ref()
                    .is_some_and(|b| b.holds(&row.merchant_id, &row.currency))
                {
                    return Ok(());
                }
                diesel::insert_into(balances::table)
                    .values(row)
                    .on_conflict((balances::merchant_id, balances::currency))
                    .do_nothing()
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn balances_of(&mut self, merchant_id: &str) -> StoreResult<Vec<BalanceRow>> {
                self.flush_balances().await?;
                Ok(balances::table
                    .filter(balances::merchant_id.eq(merchant_id))
                    .order(balances::currency.asc())
                    .select(crate::rows::columns::<BalanceRow>())
                    .load(self.c())
                    .await?)
            }

            async fn all_balances(&mut self) -> StoreResult<Vec<BalanceRow>> {
                self.flush_balances().await?;
                Ok(balances::table
                    .select(crate::rows::columns::<BalanceRow>())
                    .load(self.c())
                    .await?)
            }

            async fn apply_balance_delta(
                &mut self,
                merchant_id: &str,
                currency: &str,
                available: i64,
                frozen: i64,
                now: i64,
            ) -> StoreResult<Option<BalanceRow>> {
                if let Some(applied) = self
                    .balances
                    .as_mut()
                    .and_then(|b| b.apply(merchant_id, currency, available, frozen, now))
                {
                    return Ok(applied);
                }
                // One conditional statement: the row lock it takes is what
                // keeps concurrent withdrawals from overdrawing.
                let n: Option<BalanceRow> = diesel::update(
                    balances::table
                        .filter(balances::merchant_id.eq(merchant_id))
                        .filter(balances::currency.eq(currency))
                        .filter((balances::available + available).ge(0))
                        .filter((balances::frozen + frozen).ge(0)),
                )
                .set((
                    balances::available.eq(balances::available + available),
                    balances::frozen.eq(balances::frozen + frozen),
                    balances::version.eq(balances::version + 1),
                    balances::updated_at.eq(diesel::dsl::sql::<diesel::sql_types::BigInt>(
                        "CASE WHEN updated_at > ",
                    )
                    .bind::<diesel::sql_types::BigInt, _>(now)
                    .sql(" THEN updated_at ELSE ")
                    .bind::<diesel::sql_types::BigInt, _>(now)
                    .sql(" END")),
                ))
                .returning(crate::rows::columns::<BalanceRow>())
                .get_result(self.c())
                .await
                .optional()?;
                // A coalescing transaction now holds the row's lock (on
                // SQLite, the database's) to its end: later changes are
                // made on this copy.
                if let (Some(buffer), Some(row)) = (self.balances.as_mut(), n.as_ref()) {
                    buffer.hold(row.clone());
                }
                Ok(n)
            }

            async fn flush_balances(&mut self) -> StoreResult<()> {
                let Some(buffer) = self.balances.as_mut() else {
                    return Ok(());
                };
                for row in buffer.take_dirty() {
                    diesel::update(
                        balances::table
                            .filter(balances::merchant_id.eq(&row.merchant_id))
                            .filter(balances::currency.eq(&row.currency)),
                    )
                    .set((
                        balances::available.eq(row.available),
                        balances::frozen.eq(row.frozen),
                        balances::version.eq(row.version),
                        balances::updated_at.eq(row.updated_at),
                    ))
                    .execute(self.c())
                    .await?;
                }
                Ok(())
            }

            async fn insert_journal_entry(
                &mut self,
                entry: &JournalEntryRow,
                rows: &[PostingRow],
            ) -> StoreResult<()> {
                diesel::insert_into(journal_entries::table)
                    .values(entry)
                    .execute(self.c())
                    .await?;
                for row in rows {
                    diesel::insert_into(postings::table)
                        .values(row)
                        .execute(self.c())
                        .await?;
                }
                Ok(())
            }

            async fn read_one_snapshot(&mut self) -> StoreResult<()> {
                if let Some(sql) = <$conn as Dialect>::SNAPSHOT {
                    diesel::sql_query(sql).execute(self.c()).await?;
                }
                Ok(())
            }

            async fn account_sums(&mut self) -> StoreResult<Vec<AccountSum>> {
                self.flush_balances().await?;
                Ok(diesel::sql_query(dialect::ACCOUNT_SUMS)
                    .load(self.c())
                    .await?)
            }

            async fn unbalanced_entries(&mut self) -> StoreResult<Vec<EntrySum>> {
                Ok(diesel::sql_query(dialect::UNBALANCED_ENTRIES)
                    .load(self.c())
                    .await?)
            }

            async fn count_journal_entries(&mut self) -> StoreResult<i64> {
                Ok(journal_entries::table.count().get_result(self.c()).await?)
            }
        }
    };
}

impl_ledger!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_ledger!(crate::Tx<'_, crate::SqliteConn>);
