//! Balances and the double-entry journal.

use crate::dialect::{self, Dialect};
use crate::queries::events::EventQueries;
use crate::queries::KeepPrepared;
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

    /// Moves a balance by its line's changes and bumps its version, unless
    /// either side would go below zero, and writes the line with the
    /// version, the balance after and the time filled in: false when it
    /// would go below zero (nothing written). The balance's `updated_at`
    /// never goes back: a change that waited for the row behind one
    /// stamped later keeps the later time. In a coalescing transaction a
    /// credit is written at the end (`flush_balances`).
    async fn move_balance(&mut self, line: BalanceTransactionRow, now: i64) -> StoreResult<bool>;

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

    /// Writes what a coalescing transaction kept of its balances
    /// (`UnitOfWork::coalesce_balances`); nothing otherwise. The unit of
    /// work calls it before it commits.
    async fn flush_balances(&mut self) -> StoreResult<()>;
}

macro_rules! impl_ledger {
    ($conn:ty) => {
        #[async_trait]
        impl LedgerQueries for $conn {
            async fn ensure_balance(&mut self, row: &BalanceRow) -> StoreResult<()> {
                if let Some(buffer) = self.balances.as_mut() {
                    // Looked for only if its credits find no row (almost
                    // never: once per merchant and currency): a read here
                    // was a round trip for every coalescing transaction.
                    buffer
                        .zero_rows
                        .entry((row.merchant_id.clone(), row.currency.clone()))
                        .or_insert_with(|| row.clone());
                    return Ok(());
                }
                // Read first: an insert's unique check waits for whoever
                // holds the row (a batch of completions moving it) to
                // commit, which put every batch of one merchant behind
                // the one before; a read never waits (issue 56).
                let exists: bool = diesel::select(diesel::dsl::exists(
                    balances::table
                        .filter(balances::merchant_id.eq(&row.merchant_id))
                        .filter(balances::currency.eq(&row.currency)),
                ))
                .get_result(self.c())
                .await?;
                if exists {
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

            async fn move_balance(
                &mut self,
                mut line: BalanceTransactionRow,
                now: i64,
            ) -> StoreResult<bool> {
                if let Some(buffer) = self.balances.as_mut() {
                    match buffer.wait(line, now) {
                        None => return Ok(true),
                        Some(back) => line = back,
                    }
                    if buffer.is_waiting(&line) {
                        // Money going out of a balance with credits
                        // waiting: they are written first, and the row
                        // held.
                        self.flush_balances().await?;
                    }
                    if let Some(moved) =
                        self.balances.as_mut().and_then(|b| b.apply(&mut line, now))
                    {
                        if moved {
                            self.insert_balance_transaction(&line).await?;
                        }
                        return Ok(moved);
                    }
                }
                let Some(row) = self
                    .move_row(
                        &line.merchant_id,
                        &line.currency,
                        line.available_change,
                        line.frozen_change,
                        1,
                        now,
                    )
                    .await?
                else {
                    return Ok(false);
                };
                crate::unit::fill(&mut line, &row);
                self.insert_balance_transaction(&line).await?;
                // A coalescing transaction now holds the row's lock (on
                // SQLite, the database's) to its end: later changes are
                // made on this copy.
                if let Some(buffer) = self.balances.as_mut() {
                    buffer.hold(row);
                }
                Ok(true)
            }

            async fn flush_balances(&mut self) -> StoreResult<()> {
                let Some(buffer) = self.balances.as_mut() else {
                    return Ok(());
                };
                let (waited, changed) = buffer.take();
                for w in waited {
                    let moved = self.move_waited(&w).await?;
                    let Some(row) = moved else {
                        // Credits never take a side below zero: the row is
                        // not there.
                        return Err(crate::StoreError::Corrupt {
                            table: Some("balances"),
                            row: Some(format!("{} {}", w.merchant_id, w.currency)),
                            detail: "no balance to write its credits to".into(),
                        });
                    };
                    if let Some(buffer) = self.balances.as_mut() {
                        buffer.hold(row);
                    }
                }
                for row in changed {
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
                    .prepared()
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
                if let Some(deferred) = self.deferred.as_mut() {
                    deferred.entries.push(entry.clone());
                    deferred.postings.extend_from_slice(rows);
                    return Ok(());
                }
                diesel::insert_into(journal_entries::table)
                    .values(entry)
                    .execute(self.c())
                    .await?;
                // The entry's postings together, not one statement each:
                // a completion sends a round trip fewer (issue 56).
                self.insert_postings(rows).await
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

        impl $conn {
            /// A coalescing transaction's credits to one balance, summed,
            /// moved with their lines written (`flush_balances`,
            /// `credit_with_lines`). When the row is not there and the
            /// transaction asked for it (`ensure_balance`), it is made,
            /// and the credits move it.
            async fn move_waited(
                &mut self,
                w: &crate::unit::Waited,
            ) -> StoreResult<Option<BalanceRow>> {
                let key = (w.merchant_id.clone(), w.currency.clone());
                let zero = self
                    .balances
                    .as_mut()
                    .and_then(|b| b.zero_rows.remove(&key));
                let moved = self.credit_with_lines(w).await?;
                let (None, Some(zero)) = (&moved, zero) else {
                    return Ok(moved);
                };
                diesel::insert_into(balances::table)
                    .values(&zero)
                    .on_conflict((balances::merchant_id, balances::currency))
                    .do_nothing()
                    .execute(self.c())
                    .await?;
                self.credit_with_lines(w).await
            }

            /// The balance moved by one conditional statement, as changed,
            /// or none when either side would go below zero; `versions`
            /// changes' worth of versions on.
            async fn move_row(
                &mut self,
                merchant_id: &str,
                currency: &str,
                available: i64,
                frozen: i64,
                versions: i64,
                now: i64,
            ) -> StoreResult<Option<BalanceRow>> {
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
                    balances::version.eq(balances::version + versions),
                    balances::updated_at.eq(diesel::dsl::sql::<diesel::sql_types::BigInt>(
                        "CASE WHEN updated_at > ",
                    )
                    .bind::<diesel::sql_types::BigInt, _>(now)
                    .sql(" THEN updated_at ELSE ")
                    .bind::<diesel::sql_types::BigInt, _>(now)
                    .sql(" END")),
                ))
                .returning(crate::rows::columns::<BalanceRow>())
                .prepared()
                .get_result(self.c())
                .await
                .optional()?;
                Ok(n)
            }
        }
    };
}

impl_ledger!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_ledger!(crate::Tx<'_, crate::SqliteConn>);

/// Rows written together (an entry's postings; a balance's credits with
/// their lines): one statement on PostgreSQL; one each on SQLite, whose
/// diesel backend has no multi-row insert for them, and where a statement
/// costs no round trip.
#[async_trait]
trait InsertTogether {
    async fn insert_postings(&mut self, rows: &[PostingRow]) -> StoreResult<()>;

    /// One balance's waiting credits: the row moved by their sum and
    /// `versions` on, unless a side would go below zero (none then), and
    /// their lines written with the versions and the balances after them.
    async fn credit_with_lines(
        &mut self,
        w: &crate::unit::Waited,
    ) -> StoreResult<Option<BalanceRow>>;
}

#[async_trait]
impl InsertTogether for crate::Tx<'_, diesel_async::AsyncPgConnection> {
    /// One statement (`dialect::CREDIT_WITH_LINES`), where the update and
    /// the lines' insert were two: the update locks the merchant's balance
    /// row until the commit, and every other batch of that merchant waits
    /// for it, so each round trip between the two was spent by all of
    /// them (issue 56).
    async fn credit_with_lines(
        &mut self,
        w: &crate::unit::Waited,
    ) -> StoreResult<Option<BalanceRow>> {
        use diesel::sql_types::{Array, BigInt, Text};
        let lines = &w.lines;
        let texts =
            |f: fn(&BalanceTransactionRow) -> String| lines.iter().map(f).collect::<Vec<_>>();
        let numbers =
            |f: fn(&BalanceTransactionRow) -> i64| lines.iter().map(f).collect::<Vec<_>>();
        Ok(diesel::sql_query(dialect::CREDIT_WITH_LINES)
            .bind::<Text, _>(&w.merchant_id)
            .bind::<Text, _>(&w.currency)
            .bind::<BigInt, _>(w.available)
            .bind::<BigInt, _>(w.frozen)
            .bind::<BigInt, _>(lines.len() as i64)
            .bind::<BigInt, _>(w.now)
            .bind::<Array<Text>, _>(texts(|l| l.id.clone()))
            .bind::<Array<Text>, _>(texts(|l| l.kind.clone()))
            .bind::<Array<Text>, _>(texts(|l| l.order_no.clone()))
            .bind::<Array<Text>, _>(texts(|l| l.merchant_order_no.clone()))
            .bind::<Array<BigInt>, _>(numbers(|l| l.available_change))
            .bind::<Array<BigInt>, _>(numbers(|l| l.frozen_change))
            .bind::<Array<BigInt>, _>(numbers(|l| l.fee))
            .prepared()
            .get_result::<BalanceRow>(self.c())
            .await
            .optional()?)
    }

    async fn insert_postings(&mut self, rows: &[PostingRow]) -> StoreResult<()> {
        if !rows.is_empty() {
            // Kept by its text, one per number of postings: an entry's
            // kind fixes how many it has (a handful), no caller chooses.
            diesel::insert_into(postings::table)
                .values(rows)
                .prepared()
                .execute(self.c())
                .await?;
        }
        Ok(())
    }
}

#[async_trait]
impl InsertTogether for crate::Tx<'_, crate::SqliteConn> {
    /// The update, then each line: SQLite has one writer and its
    /// statements cost no round trip.
    async fn credit_with_lines(
        &mut self,
        w: &crate::unit::Waited,
    ) -> StoreResult<Option<BalanceRow>> {
        let moved = self
            .move_row(
                &w.merchant_id,
                &w.currency,
                w.available,
                w.frozen,
                w.lines.len() as i64,
                w.now,
            )
            .await?;
        if let Some(row) = &moved {
            for line in w.lines_after(row) {
                self.insert_balance_transaction(&line).await?;
            }
        }
        Ok(moved)
    }

    async fn insert_postings(&mut self, rows: &[PostingRow]) -> StoreResult<()> {
        for row in rows {
            diesel::insert_into(postings::table)
                .values(row)
                .execute(self.c())
                .await?;
        }
        Ok(())
    }
}
