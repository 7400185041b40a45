//! Every query the service runs, written once. `impl_store!` stamps the same
//! bodies onto each backend's connection type, so diesel checks every query
//! against both PostgreSQL and SQLite at compile time.

use super::rows::*;
use super::schema::*;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::RunQueryDsl;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint refused the write; carries the constraint or
    /// message so the caller can tell which.
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("database error: {0}")]
    Other(String),
}

impl From<DieselError> for StoreError {
    fn from(e: DieselError) -> Self {
        match e {
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                StoreError::Conflict(info.constraint_name().unwrap_or(info.message()).to_string())
            }
            DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, info) => {
                StoreError::Unavailable(info.message().to_string())
            }
            DieselError::BrokenTransactionManager => StoreError::Unavailable(e.to_string()),
            // The driver reports a socket cut mid-query without a SQLSTATE:
            // the database went away, which is a 503, not a bug.
            other if connection_lost(&other.to_string()) => {
                StoreError::Unavailable(other.to_string())
            }
            other => StoreError::Other(other.to_string()),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Whether a driver error without a SQLSTATE says the connection is gone.
fn connection_lost(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "connection closed",
        "connection reset",
        "broken pipe",
        "communicating with the server",
        "unexpected eof",
        "server closed the connection",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

#[async_trait]
pub trait Store: Send {
    async fn insert_merchant(&mut self, row: &MerchantRow) -> StoreResult<()>;
    async fn merchant_by_id(&mut self, id: &str) -> StoreResult<Option<MerchantRow>>;
    async fn merchant_by_code(&mut self, code: &str) -> StoreResult<Option<MerchantRow>>;

    async fn insert_api_key(&mut self, row: &ApiKeyRow) -> StoreResult<()>;
    /// The key with this hash, its merchant and the merchant's own fee
    /// rates, in one round trip: every signed request starts here.
    async fn api_key_with_merchant(
        &mut self,
        key_hash: &str,
    ) -> StoreResult<Option<(ApiKeyRow, MerchantRow, Vec<FeeRow>)>>;
    async fn api_keys_of(&mut self, merchant_id: &str) -> StoreResult<Vec<ApiKeyRow>>;

    async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()>;
    async fn deposit_by_order_no(
        &mut self,
        merchant_id: &str,
        order_no: &str,
    ) -> StoreResult<Option<DepositRow>>;
    async fn deposit_by_merchant_order_no(
        &mut self,
        merchant_id: &str,
        merchant_order_no: &str,
    ) -> StoreResult<Option<DepositRow>>;

    /// Creates the balance row unless one exists for its merchant and
    /// currency.
    async fn ensure_balance(&mut self, row: &BalanceRow) -> StoreResult<()>;
    async fn balances_of(&mut self, merchant_id: &str) -> StoreResult<Vec<BalanceRow>>;

    /// Writes `row` over the deposit with its id, only while the stored
    /// status is one of `from`. Returns whether it did.
    async fn transition_deposit(&mut self, from: &[&str], row: &DepositRow) -> StoreResult<bool>;
    async fn deposit_by_order_no_any(&mut self, order_no: &str) -> StoreResult<Option<DepositRow>>;

    async fn insert_withdrawal(&mut self, row: &WithdrawalRow) -> StoreResult<()>;
    async fn withdrawal_by_order_no(
        &mut self,
        merchant_id: &str,
        order_no: &str,
    ) -> StoreResult<Option<WithdrawalRow>>;
    async fn withdrawal_by_merchant_order_no(
        &mut self,
        merchant_id: &str,
        merchant_order_no: &str,
    ) -> StoreResult<Option<WithdrawalRow>>;
    async fn withdrawal_by_order_no_any(
        &mut self,
        order_no: &str,
    ) -> StoreResult<Option<WithdrawalRow>>;
    /// Like `transition_deposit`, for withdrawals.
    async fn transition_withdrawal(
        &mut self,
        from: &[&str],
        row: &WithdrawalRow,
    ) -> StoreResult<bool>;

    async fn insert_journal_entry(
        &mut self,
        entry: &JournalEntryRow,
        postings: &[PostingRow],
    ) -> StoreResult<()>;
    /// Adds the deltas to a balance and bumps its version, unless either
    /// side would go below zero. Returns whether it did.
    async fn apply_balance_delta(
        &mut self,
        merchant_id: &str,
        currency: &str,
        available: i64,
        frozen: i64,
        now: i64,
    ) -> StoreResult<bool>;
    /// Makes the rest of the current transaction read one snapshot, so that
    /// a check over several tables sees them as of one moment.
    async fn read_one_snapshot(&mut self) -> StoreResult<()>;
    async fn account_sums(&mut self) -> StoreResult<Vec<AccountSum>>;
    async fn unbalanced_entries(&mut self) -> StoreResult<Vec<EntrySum>>;
    async fn count_journal_entries(&mut self) -> StoreResult<i64>;
    async fn all_balances(&mut self) -> StoreResult<Vec<BalanceRow>>;

    async fn upsert_fee(&mut self, row: &FeeRow) -> StoreResult<()>;
    async fn fee(
        &mut self,
        merchant_id: &str,
        currency: &str,
        direction: &str,
    ) -> StoreResult<Option<FeeRow>>;
    async fn set_auto_approval(
        &mut self,
        merchant_id: &str,
        mode: &str,
        limits: &str,
        now: i64,
    ) -> StoreResult<bool>;
    async fn set_rate_limit(
        &mut self,
        merchant_id: &str,
        per_minute: i32,
        burst: i32,
        now: i64,
    ) -> StoreResult<bool>;

    /// Order numbers of approved withdrawals not yet handed to a channel.
    async fn withdrawals_to_dispatch(&mut self, limit: i64) -> StoreResult<Vec<String>>;
    /// Order numbers of deposits awaiting payment past `expire_at`.
    async fn deposits_due_to_expire(&mut self, now: i64, limit: i64) -> StoreResult<Vec<String>>;
    /// The earliest `expire_at` of a deposit awaiting payment.
    async fn next_deposit_expiry(&mut self) -> StoreResult<Option<i64>>;
    async fn insert_callback_delivery(&mut self, row: &CallbackDeliveryRow) -> StoreResult<()>;
    async fn callback_deliveries_of(
        &mut self,
        order_no: &str,
    ) -> StoreResult<Vec<CallbackDeliveryRow>>;

    /// Newest first, after `filter.after`.
    async fn list_deposits(&mut self, filter: &ListFilter) -> StoreResult<Vec<DepositRow>>;
    async fn list_withdrawals(&mut self, filter: &ListFilter) -> StoreResult<Vec<WithdrawalRow>>;
    async fn deposit_by_remark(&mut self, remark: &str) -> StoreResult<Option<DepositRow>>;
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

    async fn insert_bank_transaction(&mut self, row: &BankTransactionRow) -> StoreResult<()>;
    async fn bank_transaction_by_reference(
        &mut self,
        account_id: &str,
        bank_reference: &str,
    ) -> StoreResult<Option<BankTransactionRow>>;
    async fn bank_transaction_by_id(&mut self, id: &str)
        -> StoreResult<Option<BankTransactionRow>>;
    /// Marks an unmatched transaction matched to `order_no`. Returns
    /// whether it was still unmatched.
    async fn mark_bank_transaction_matched(
        &mut self,
        id: &str,
        order_no: &str,
        now: i64,
    ) -> StoreResult<bool>;
    async fn list_bank_transactions(
        &mut self,
        filter: &ListFilter,
    ) -> StoreResult<Vec<BankTransactionRow>>;

    async fn insert_cashier_session(&mut self, row: &CashierSessionRow) -> StoreResult<()>;
    async fn cashier_session_by_token_hash(
        &mut self,
        token_hash: &str,
    ) -> StoreResult<Option<CashierSessionRow>>;
    async fn cashier_session_by_id(&mut self, id: &str) -> StoreResult<Option<CashierSessionRow>>;
    async fn cashier_session_by_merchant_order_no(
        &mut self,
        merchant_id: &str,
        merchant_order_no: &str,
    ) -> StoreResult<Option<CashierSessionRow>>;
    async fn deposit_by_cashier_session(
        &mut self,
        session_id: &str,
    ) -> StoreResult<Option<DepositRow>>;
    /// Records the saved card a payer chose, once, while the order awaits
    /// payment. Returns whether it was recorded.
    async fn set_deposit_payer_card(
        &mut self,
        order_no: &str,
        bank_code: &str,
        last4: &str,
        now: i64,
    ) -> StoreResult<bool>;

    /// Gives every key of the merchant without an expiry this one.
    async fn expire_api_keys(&mut self, merchant_id: &str, expires_at: i64) -> StoreResult<usize>;
    async fn set_callback_timeout(
        &mut self,
        merchant_id: &str,
        seconds: i32,
        now: i64,
    ) -> StoreResult<bool>;
    async fn set_receiving_accounts(
        &mut self,
        merchant_id: &str,
        accounts: &str,
        now: i64,
    ) -> StoreResult<bool>;
    /// Holds the merchant's row until the transaction ends, so that a
    /// read-modify-write of its settings is not lost to a concurrent one.
    async fn lock_merchant(&mut self, merchant_id: &str) -> StoreResult<()>;

    /// Moves up to `limit` deliveries due by `now` from WAITING_RETRY to
    /// SENDING and returns them. Concurrent claimers never get the same
    /// row: PostgreSQL skips rows another claimer holds, SQLite has one
    /// writer.
    async fn claim_due_callbacks(
        &mut self,
        now: i64,
        limit: i64,
    ) -> StoreResult<Vec<CallbackDeliveryRow>>;
    /// The earliest `next_attempt_at` of a delivery waiting for an attempt.
    async fn next_callback_due(&mut self) -> StoreResult<Option<i64>>;
    /// Writes an attempt's outcome onto a delivery still SENDING. Returns
    /// whether it was (a sweep may have reclaimed it meanwhile).
    async fn finish_callback_attempt(
        &mut self,
        delivery: &CallbackDeliveryRow,
        attempt: &CallbackAttemptRow,
    ) -> StoreResult<bool>;
    /// The order's summary for merchants: `callback_status`, and one more
    /// attempt in `callback_count`.
    async fn note_order_callback(
        &mut self,
        order_kind: &str,
        order_no: &str,
        status: &str,
        now: i64,
    ) -> StoreResult<()>;
    /// Returns deliveries SENDING since `before` or earlier to WAITING_RETRY,
    /// due `now`.
    async fn sweep_stuck_callbacks(&mut self, before: i64, now: i64) -> StoreResult<usize>;
    /// Resets a delivery not being sent to its first attempt, due `now`.
    async fn reset_callback(&mut self, id: &str, now: i64) -> StoreResult<bool>;
    async fn callback_delivery_by_id(
        &mut self,
        id: &str,
    ) -> StoreResult<Option<CallbackDeliveryRow>>;
    async fn callback_attempts_of(
        &mut self,
        delivery_id: &str,
    ) -> StoreResult<Vec<CallbackAttemptRow>>;
    async fn list_callback_deliveries(
        &mut self,
        filter: &ListFilter,
    ) -> StoreResult<Vec<CallbackDeliveryRow>>;
}

/// What the two SQL dialects say differently.
trait Dialect {
    /// Statement that gives the current transaction one snapshot, if it
    /// does not have one already.
    const SNAPSHOT: Option<&'static str>;
    /// Statement that locks one merchant row (`$1`: its id), where row
    /// locks exist.
    const LOCK_MERCHANT: Option<&'static str>;
    /// Claims due deliveries (`$1`/`?`: now, then the limit).
    const CLAIM_CALLBACKS: &'static str;
}

impl Dialect for diesel_async::AsyncPgConnection {
    // READ COMMITTED takes a new snapshot per statement.
    const SNAPSHOT: Option<&'static str> =
        Some("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    const LOCK_MERCHANT: Option<&'static str> =
        Some("SELECT id FROM merchants WHERE id = $1 FOR UPDATE");
    const CLAIM_CALLBACKS: &'static str =
        "UPDATE callback_deliveries SET status = 'SENDING', updated_at = $1, \
         claim_token = md5(random()::text || clock_timestamp()::text) \
         WHERE id IN (SELECT id FROM callback_deliveries \
         WHERE status = 'WAITING_RETRY' AND next_attempt_at <= $1 \
         ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING *";
}

impl Dialect for super::SqliteConn {
    // A SQLite transaction reads one snapshot from its first read on.
    const SNAPSHOT: Option<&'static str> = None;
    // A SQLite write transaction excludes every other writer already.
    const LOCK_MERCHANT: Option<&'static str> = None;
    const CLAIM_CALLBACKS: &'static str =
        "UPDATE callback_deliveries SET status = 'SENDING', updated_at = ?1, \
         claim_token = lower(hex(randomblob(16))) \
         WHERE id IN (SELECT id FROM callback_deliveries \
         WHERE status = 'WAITING_RETRY' AND next_attempt_at <= ?1 \
         ORDER BY next_attempt_at LIMIT ?2) RETURNING *";
}

macro_rules! impl_store {
    ($conn:ty) => {
        #[async_trait]
        impl Store for $conn {
            async fn insert_merchant(&mut self, row: &MerchantRow) -> StoreResult<()> {
                diesel::insert_into(merchants::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn merchant_by_id(&mut self, id: &str) -> StoreResult<Option<MerchantRow>> {
                Ok(merchants::table
                    .filter(merchants::id.eq(id))
                    .select(MerchantRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn merchant_by_code(&mut self, code: &str) -> StoreResult<Option<MerchantRow>> {
                Ok(merchants::table
                    .filter(merchants::code.eq(code))
                    .select(MerchantRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn insert_api_key(&mut self, row: &ApiKeyRow) -> StoreResult<()> {
                diesel::insert_into(api_keys::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn api_key_with_merchant(
                &mut self,
                key_hash: &str,
            ) -> StoreResult<Option<(ApiKeyRow, MerchantRow, Vec<FeeRow>)>> {
                let rows: Vec<(ApiKeyRow, MerchantRow, Option<FeeRow>)> = api_keys::table
                    .inner_join(merchants::table.left_join(merchant_fees::table))
                    .filter(api_keys::key_hash.eq(key_hash))
                    .select((
                        ApiKeyRow::as_select(),
                        MerchantRow::as_select(),
                        Option::<FeeRow>::as_select(),
                    ))
                    .load(self)
                    .await?;
                let mut rows = rows.into_iter();
                Ok(rows.next().map(|(key, merchant, first)| {
                    let fees = first
                        .into_iter()
                        .chain(rows.filter_map(|(_, _, fee)| fee))
                        .collect();
                    (key, merchant, fees)
                }))
            }

            async fn api_keys_of(&mut self, merchant_id: &str) -> StoreResult<Vec<ApiKeyRow>> {
                Ok(api_keys::table
                    .filter(api_keys::merchant_id.eq(merchant_id))
                    .order(api_keys::created_at.desc())
                    .select(ApiKeyRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()> {
                diesel::insert_into(deposit_orders::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn deposit_by_order_no(
                &mut self,
                merchant_id: &str,
                order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::merchant_id.eq(merchant_id))
                    .filter(deposit_orders::order_no.eq(order_no))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn deposit_by_merchant_order_no(
                &mut self,
                merchant_id: &str,
                merchant_order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::merchant_id.eq(merchant_id))
                    .filter(deposit_orders::merchant_order_no.eq(merchant_order_no))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn ensure_balance(&mut self, row: &BalanceRow) -> StoreResult<()> {
                diesel::insert_into(balances::table)
                    .values(row)
                    .on_conflict((balances::merchant_id, balances::currency))
                    .do_nothing()
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn balances_of(&mut self, merchant_id: &str) -> StoreResult<Vec<BalanceRow>> {
                Ok(balances::table
                    .filter(balances::merchant_id.eq(merchant_id))
                    .order(balances::currency.asc())
                    .select(BalanceRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn transition_deposit(
                &mut self,
                from: &[&str],
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
                Ok(n == 1)
            }

            async fn deposit_by_order_no_any(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::order_no.eq(order_no))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn insert_withdrawal(&mut self, row: &WithdrawalRow) -> StoreResult<()> {
                diesel::insert_into(withdrawal_orders::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn withdrawal_by_order_no(
                &mut self,
                merchant_id: &str,
                order_no: &str,
            ) -> StoreResult<Option<WithdrawalRow>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::merchant_id.eq(merchant_id))
                    .filter(withdrawal_orders::order_no.eq(order_no))
                    .select(WithdrawalRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn withdrawal_by_merchant_order_no(
                &mut self,
                merchant_id: &str,
                merchant_order_no: &str,
            ) -> StoreResult<Option<WithdrawalRow>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::merchant_id.eq(merchant_id))
                    .filter(withdrawal_orders::merchant_order_no.eq(merchant_order_no))
                    .select(WithdrawalRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn withdrawal_by_order_no_any(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Option<WithdrawalRow>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::order_no.eq(order_no))
                    .select(WithdrawalRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn transition_withdrawal(
                &mut self,
                from: &[&str],
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
                Ok(n == 1)
            }

            async fn insert_journal_entry(
                &mut self,
                entry: &JournalEntryRow,
                rows: &[PostingRow],
            ) -> StoreResult<()> {
                diesel::insert_into(journal_entries::table)
                    .values(entry)
                    .execute(self)
                    .await?;
                for row in rows {
                    diesel::insert_into(postings::table)
                        .values(row)
                        .execute(self)
                        .await?;
                }
                Ok(())
            }

            async fn apply_balance_delta(
                &mut self,
                merchant_id: &str,
                currency: &str,
                available: i64,
                frozen: i64,
                now: i64,
            ) -> StoreResult<bool> {
                // One conditional statement: the row lock it takes is what
                // keeps concurrent withdrawals from overdrawing.
                let n = diesel::update(
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
                    balances::updated_at.eq(now),
                ))
                .execute(self)
                .await?;
                Ok(n == 1)
            }

            async fn account_sums(&mut self) -> StoreResult<Vec<AccountSum>> {
                Ok(diesel::sql_query(
                    "SELECT account, currency, CAST(SUM(amount) AS BIGINT) AS total \
                     FROM postings GROUP BY account, currency",
                )
                .load(self)
                .await?)
            }

            async fn unbalanced_entries(&mut self) -> StoreResult<Vec<EntrySum>> {
                Ok(diesel::sql_query(
                    "SELECT entry_id, CAST(SUM(amount) AS BIGINT) AS total \
                     FROM postings GROUP BY entry_id HAVING SUM(amount) <> 0",
                )
                .load(self)
                .await?)
            }

            async fn count_journal_entries(&mut self) -> StoreResult<i64> {
                Ok(journal_entries::table.count().get_result(self).await?)
            }

            async fn all_balances(&mut self) -> StoreResult<Vec<BalanceRow>> {
                Ok(balances::table
                    .select(BalanceRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn upsert_fee(&mut self, row: &FeeRow) -> StoreResult<()> {
                diesel::insert_into(merchant_fees::table)
                    .values(row)
                    .on_conflict((
                        merchant_fees::merchant_id,
                        merchant_fees::currency,
                        merchant_fees::direction,
                    ))
                    .do_update()
                    .set(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn fee(
                &mut self,
                merchant_id: &str,
                currency: &str,
                direction: &str,
            ) -> StoreResult<Option<FeeRow>> {
                Ok(merchant_fees::table
                    .filter(merchant_fees::merchant_id.eq(merchant_id))
                    .filter(merchant_fees::currency.eq(currency))
                    .filter(merchant_fees::direction.eq(direction))
                    .select(FeeRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn set_auto_approval(
                &mut self,
                merchant_id: &str,
                mode: &str,
                limits: &str,
                now: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(merchants::table.filter(merchants::id.eq(merchant_id)))
                    .set((
                        merchants::auto_approval.eq(mode),
                        merchants::auto_approval_limits.eq(limits),
                        merchants::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                Ok(n == 1)
            }

            async fn set_rate_limit(
                &mut self,
                merchant_id: &str,
                per_minute: i32,
                burst: i32,
                now: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(merchants::table.filter(merchants::id.eq(merchant_id)))
                    .set((
                        merchants::rate_limit_per_minute.eq(Some(per_minute)),
                        merchants::rate_limit_burst.eq(Some(burst)),
                        merchants::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                Ok(n == 1)
            }

            async fn insert_callback_delivery(
                &mut self,
                row: &CallbackDeliveryRow,
            ) -> StoreResult<()> {
                diesel::insert_into(callback_deliveries::table)
                    .values(row)
                    .execute(self)
                    .await?;
                super::callback_queued();
                Ok(())
            }

            async fn callback_deliveries_of(
                &mut self,
                order_no: &str,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::order_no.eq(order_no))
                    .order(callback_deliveries::created_at.asc())
                    .select(CallbackDeliveryRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn deposits_due_to_expire(
                &mut self,
                now: i64,
                limit: i64,
            ) -> StoreResult<Vec<String>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::status.eq("pending"))
                    .filter(deposit_orders::expire_at.le(now))
                    .order(deposit_orders::expire_at.asc())
                    .limit(limit)
                    .select(deposit_orders::order_no)
                    .load(self)
                    .await?)
            }

            async fn next_deposit_expiry(&mut self) -> StoreResult<Option<i64>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::status.eq("pending"))
                    .select(diesel::dsl::min(deposit_orders::expire_at))
                    .first(self)
                    .await?)
            }

            async fn withdrawals_to_dispatch(&mut self, limit: i64) -> StoreResult<Vec<String>> {
                Ok(withdrawal_orders::table
                    .filter(withdrawal_orders::status.eq("approved"))
                    .order(withdrawal_orders::approved_at.asc())
                    .limit(limit)
                    .select(withdrawal_orders::order_no)
                    .load(self)
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
                if let Some(c) = &filter.after {
                    q = q.filter(
                        deposit_orders::created_at
                            .lt(c.created_at)
                            .or(deposit_orders::created_at
                                .eq(c.created_at)
                                .and(deposit_orders::order_no.lt(c.key.clone()))),
                    );
                }
                Ok(q.order((
                    deposit_orders::created_at.desc(),
                    deposit_orders::order_no.desc(),
                ))
                .limit(filter.limit)
                .select(DepositRow::as_select())
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
                if let Some(c) = &filter.after {
                    q = q.filter(
                        withdrawal_orders::created_at.lt(c.created_at).or(
                            withdrawal_orders::created_at
                                .eq(c.created_at)
                                .and(withdrawal_orders::order_no.lt(c.key.clone())),
                        ),
                    );
                }
                Ok(q.order((
                    withdrawal_orders::created_at.desc(),
                    withdrawal_orders::order_no.desc(),
                ))
                .limit(filter.limit)
                .select(WithdrawalRow::as_select())
                .load(self)
                .await?)
            }

            async fn deposit_by_remark(&mut self, remark: &str) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::expected_remark.eq(remark))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn pending_deposit_by_match_amount(
                &mut self,
                account_id: &str,
                amount: i64,
            ) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::account_id.eq(account_id))
                    .filter(deposit_orders::match_amount.eq(amount))
                    .filter(deposit_orders::status.eq("pending"))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn pending_match_amounts(
                &mut self,
                account_id: &str,
                from: i64,
                to: i64,
            ) -> StoreResult<Vec<i64>> {
                let taken: Vec<Option<i64>> = deposit_orders::table
                    .filter(deposit_orders::account_id.eq(account_id))
                    .filter(deposit_orders::status.eq("pending"))
                    .filter(deposit_orders::match_amount.ge(from))
                    .filter(deposit_orders::match_amount.lt(to))
                    .select(deposit_orders::match_amount)
                    .load(self)
                    .await?;
                Ok(taken.into_iter().flatten().collect())
            }

            async fn insert_cashier_session(&mut self, row: &CashierSessionRow) -> StoreResult<()> {
                diesel::insert_into(cashier_sessions::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn cashier_session_by_token_hash(
                &mut self,
                token_hash: &str,
            ) -> StoreResult<Option<CashierSessionRow>> {
                Ok(cashier_sessions::table
                    .filter(cashier_sessions::token_hash.eq(token_hash))
                    .select(CashierSessionRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn cashier_session_by_id(
                &mut self,
                id: &str,
            ) -> StoreResult<Option<CashierSessionRow>> {
                Ok(cashier_sessions::table
                    .filter(cashier_sessions::id.eq(id))
                    .select(CashierSessionRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn cashier_session_by_merchant_order_no(
                &mut self,
                merchant_id: &str,
                merchant_order_no: &str,
            ) -> StoreResult<Option<CashierSessionRow>> {
                Ok(cashier_sessions::table
                    .filter(cashier_sessions::merchant_id.eq(merchant_id))
                    .filter(cashier_sessions::merchant_order_no.eq(merchant_order_no))
                    .select(CashierSessionRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn deposit_by_cashier_session(
                &mut self,
                session_id: &str,
            ) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::cashier_session_id.eq(session_id))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
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
                        .filter(deposit_orders::status.eq("pending"))
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

            async fn insert_bank_transaction(
                &mut self,
                row: &BankTransactionRow,
            ) -> StoreResult<()> {
                diesel::insert_into(bank_transactions::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn bank_transaction_by_reference(
                &mut self,
                account_id: &str,
                bank_reference: &str,
            ) -> StoreResult<Option<BankTransactionRow>> {
                Ok(bank_transactions::table
                    .filter(bank_transactions::account_id.eq(account_id))
                    .filter(bank_transactions::bank_reference.eq(bank_reference))
                    .select(BankTransactionRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn bank_transaction_by_id(
                &mut self,
                id: &str,
            ) -> StoreResult<Option<BankTransactionRow>> {
                Ok(bank_transactions::table
                    .filter(bank_transactions::id.eq(id))
                    .select(BankTransactionRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn mark_bank_transaction_matched(
                &mut self,
                id: &str,
                order_no: &str,
                now: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    bank_transactions::table
                        .filter(bank_transactions::id.eq(id))
                        .filter(bank_transactions::status.eq("unmatched")),
                )
                .set((
                    bank_transactions::status.eq("matched"),
                    bank_transactions::order_no.eq(Some(order_no)),
                    bank_transactions::matched_at.eq(Some(now)),
                    bank_transactions::updated_at.eq(now),
                ))
                .execute(self)
                .await?;
                Ok(n == 1)
            }

            async fn list_bank_transactions(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<BankTransactionRow>> {
                let mut q = bank_transactions::table.into_boxed();
                if let Some(st) = &filter.status {
                    q = q.filter(bank_transactions::status.eq(st.clone()));
                }
                if let Some(a) = &filter.account_id {
                    q = q.filter(bank_transactions::account_id.eq(a.clone()));
                }
                if let Some(c) = &filter.after {
                    q = q.filter(
                        bank_transactions::created_at.lt(c.created_at).or(
                            bank_transactions::created_at
                                .eq(c.created_at)
                                .and(bank_transactions::id.lt(c.key.clone())),
                        ),
                    );
                }
                Ok(q.order((
                    bank_transactions::created_at.desc(),
                    bank_transactions::id.desc(),
                ))
                .limit(filter.limit)
                .select(BankTransactionRow::as_select())
                .load(self)
                .await?)
            }

            async fn expire_api_keys(
                &mut self,
                merchant_id: &str,
                expires_at: i64,
            ) -> StoreResult<usize> {
                Ok(diesel::update(
                    api_keys::table
                        .filter(api_keys::merchant_id.eq(merchant_id))
                        .filter(api_keys::expires_at.is_null()),
                )
                .set(api_keys::expires_at.eq(Some(expires_at)))
                .execute(self)
                .await?)
            }

            async fn set_callback_timeout(
                &mut self,
                merchant_id: &str,
                seconds: i32,
                now: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(merchants::table.filter(merchants::id.eq(merchant_id)))
                    .set((
                        merchants::callback_timeout_seconds.eq(seconds),
                        merchants::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                Ok(n == 1)
            }

            async fn set_receiving_accounts(
                &mut self,
                merchant_id: &str,
                accounts: &str,
                now: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(merchants::table.filter(merchants::id.eq(merchant_id)))
                    .set((
                        merchants::receiving_accounts.eq(accounts),
                        merchants::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                Ok(n == 1)
            }

            async fn lock_merchant(&mut self, merchant_id: &str) -> StoreResult<()> {
                if let Some(sql) = <$conn as Dialect>::LOCK_MERCHANT {
                    diesel::sql_query(sql)
                        .bind::<diesel::sql_types::Text, _>(merchant_id)
                        .execute(self)
                        .await?;
                }
                Ok(())
            }

            async fn claim_due_callbacks(
                &mut self,
                now: i64,
                limit: i64,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                Ok(diesel::sql_query(<$conn as Dialect>::CLAIM_CALLBACKS)
                    .bind::<diesel::sql_types::BigInt, _>(now)
                    .bind::<diesel::sql_types::BigInt, _>(limit)
                    .load(self)
                    .await?)
            }

            async fn next_callback_due(&mut self) -> StoreResult<Option<i64>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::status.eq("WAITING_RETRY"))
                    .select(diesel::dsl::min(callback_deliveries::next_attempt_at))
                    .first::<Option<i64>>(self)
                    .await?)
            }

            async fn finish_callback_attempt(
                &mut self,
                delivery: &CallbackDeliveryRow,
                attempt: &CallbackAttemptRow,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::id.eq(&delivery.id))
                        .filter(callback_deliveries::status.eq("SENDING"))
                        .filter(callback_deliveries::claim_token.eq(&delivery.claim_token)),
                )
                .set((
                    callback_deliveries::status.eq(&delivery.status),
                    callback_deliveries::attempts.eq(delivery.attempts),
                    callback_deliveries::next_attempt_at.eq(delivery.next_attempt_at),
                    callback_deliveries::signature.eq(&delivery.signature),
                    callback_deliveries::updated_at.eq(delivery.updated_at),
                ))
                .execute(self)
                .await?;
                if n == 1 {
                    diesel::insert_into(callback_attempts::table)
                        .values(attempt)
                        .execute(self)
                        .await?;
                }
                Ok(n == 1)
            }

            async fn note_order_callback(
                &mut self,
                order_kind: &str,
                order_no: &str,
                status: &str,
                now: i64,
            ) -> StoreResult<()> {
                if order_kind == "withdrawal" {
                    diesel::update(
                        withdrawal_orders::table.filter(withdrawal_orders::order_no.eq(order_no)),
                    )
                    .set((
                        withdrawal_orders::callback_status.eq(status),
                        withdrawal_orders::callback_count.eq(withdrawal_orders::callback_count + 1),
                        withdrawal_orders::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                } else {
                    diesel::update(
                        deposit_orders::table.filter(deposit_orders::order_no.eq(order_no)),
                    )
                    .set((
                        deposit_orders::callback_status.eq(status),
                        deposit_orders::callback_count.eq(deposit_orders::callback_count + 1),
                        deposit_orders::updated_at.eq(now),
                    ))
                    .execute(self)
                    .await?;
                }
                Ok(())
            }

            async fn sweep_stuck_callbacks(&mut self, before: i64, now: i64) -> StoreResult<usize> {
                Ok(diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::status.eq("SENDING"))
                        .filter(callback_deliveries::updated_at.le(before)),
                )
                .set((
                    callback_deliveries::status.eq("WAITING_RETRY"),
                    callback_deliveries::next_attempt_at.eq(Some(now)),
                    callback_deliveries::updated_at.eq(now),
                ))
                .execute(self)
                .await?)
            }

            async fn reset_callback(&mut self, id: &str, now: i64) -> StoreResult<bool> {
                let n = diesel::update(
                    callback_deliveries::table
                        .filter(callback_deliveries::id.eq(id))
                        .filter(callback_deliveries::status.ne("SENDING")),
                )
                .set((
                    callback_deliveries::status.eq("WAITING_RETRY"),
                    callback_deliveries::attempts.eq(0),
                    callback_deliveries::next_attempt_at.eq(Some(now)),
                    callback_deliveries::updated_at.eq(now),
                ))
                .execute(self)
                .await?;
                if n == 1 {
                    super::callback_queued();
                }
                Ok(n == 1)
            }

            async fn callback_delivery_by_id(
                &mut self,
                id: &str,
            ) -> StoreResult<Option<CallbackDeliveryRow>> {
                Ok(callback_deliveries::table
                    .filter(callback_deliveries::id.eq(id))
                    .select(CallbackDeliveryRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn callback_attempts_of(
                &mut self,
                delivery_id: &str,
            ) -> StoreResult<Vec<CallbackAttemptRow>> {
                Ok(callback_attempts::table
                    .filter(callback_attempts::delivery_id.eq(delivery_id))
                    .order((
                        callback_attempts::started_at.asc(),
                        callback_attempts::attempt.asc(),
                    ))
                    .select(CallbackAttemptRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn list_callback_deliveries(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<CallbackDeliveryRow>> {
                let mut q = callback_deliveries::table.into_boxed();
                if let Some(o) = &filter.order_no {
                    q = q.filter(callback_deliveries::order_no.eq(o.clone()));
                }
                if let Some(st) = &filter.status {
                    q = q.filter(callback_deliveries::status.eq(st.clone()));
                }
                if let Some(c) = &filter.after {
                    q = q.filter(
                        callback_deliveries::created_at.lt(c.created_at).or(
                            callback_deliveries::created_at
                                .eq(c.created_at)
                                .and(callback_deliveries::id.lt(c.key.clone())),
                        ),
                    );
                }
                Ok(q.order((
                    callback_deliveries::created_at.desc(),
                    callback_deliveries::id.desc(),
                ))
                .limit(filter.limit)
                .select(CallbackDeliveryRow::as_select())
                .load(self)
                .await?)
            }

            async fn read_one_snapshot(&mut self) -> StoreResult<()> {
                if let Some(sql) = <$conn as Dialect>::SNAPSHOT {
                    diesel::sql_query(sql).execute(self).await?;
                }
                Ok(())
            }
        }
    };
}

impl_store!(diesel_async::AsyncPgConnection);
impl_store!(super::SqliteConn);
