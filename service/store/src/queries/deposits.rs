//! Deposit orders.

use crate::domain::status::DepositStatus;
use crate::paging::ListFilter;
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;

use super::{by_order_key, first_or_none, insert_one, list_orders, write_move, OrderKey};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait DepositQueries: Send {
    async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()>;

    /// Many new orders by one statement: all of them, or none when one
    /// is refused (a unique key, its merchant gone).
    async fn insert_deposits(&mut self, rows: &[DepositRow]) -> StoreResult<()>;

    /// One deposit by the key given.
    async fn deposit_by(&mut self, key: DepositKey<'_>) -> StoreResult<Option<DepositRow>>;

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

    /// Writes `change` to the deposit with id `id`, only while its status
    /// is one of `from`. Returns the row as written, or `None` when it had
    /// moved (or is gone).
    async fn transition_deposit(
        &mut self,
        id: &str,
        from: &[DepositStatus],
        change: &DepositMove,
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

    /// Order numbers of deposits awaiting payment past `expire_at`.
    async fn deposits_due_to_expire(&mut self, now: i64, limit: i64) -> StoreResult<Vec<String>>;

    /// The earliest `expire_at` of a deposit awaiting payment.
    async fn next_deposit_expiry(&mut self) -> StoreResult<Option<i64>>;

    /// Channel deposits awaiting payment (pending or matched) created at or
    /// before `created_before`, oldest first, after the `(created_at,
    /// order_no)` cursor: what the service asks channels about. Each is
    /// `(order_no, created_at, expire_at)`.
    async fn channel_deposits_awaiting(
        &mut self,
        created_before: i64,
        after: Option<(i64, String)>,
        limit: i64,
    ) -> StoreResult<Vec<(String, i64, i64)>>;

    /// Newest first, after `filter.after`.
    async fn list_deposits(&mut self, filter: &ListFilter) -> StoreResult<Vec<DepositRow>>;
}

/// How one deposit is looked up; it names the row in an error.
#[derive(Clone, Copy, Debug)]
pub enum DepositKey<'a> {
    Order(OrderKey<'a>),
    /// The remark an account order's payer writes on the transfer.
    Remark(&'a str),
    /// The order a cashier session created.
    CashierSession(&'a str),
}

impl<'a> From<OrderKey<'a>> for DepositKey<'a> {
    fn from(key: OrderKey<'a>) -> Self {
        DepositKey::Order(key)
    }
}

impl std::fmt::Display for DepositKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DepositKey::Order(key) => key.fmt(f),
            DepositKey::Remark(remark) => write!(f, "expected_remark={remark}"),
            DepositKey::CashierSession(id) => write!(f, "cashier_session_id={id}"),
        }
    }
}

/// Many deposit rows inserted all or none, as each backend can.
#[async_trait]
trait InsertMany {
    async fn insert_deposits(&mut self, rows: &[DepositRow]) -> diesel::QueryResult<()>;
}

#[async_trait]
impl InsertMany for diesel_async::AsyncPgConnection {
    /// One statement with a row of values per order. Diesel prepares and
    /// keeps a statement only for a number of rows known when compiling
    /// (an array); one built for any number is parsed and planned on
    /// every call, which cost the database more than the commits the
    /// batch saved. The batches come in these sizes (`deposits::inserts`).
    async fn insert_deposits(&mut self, rows: &[DepositRow]) -> diesel::QueryResult<()> {
        macro_rules! sized {
            ($($n:literal)*) => {
                match rows.len() {
                    $($n => {
                        let rows: &[DepositRow; $n] = rows.try_into().map_err(|_| {
                            diesel::result::Error::QueryBuilderError("batch size".into())
                        })?;
                        diesel::insert_into(deposit_orders::table)
                            .values(rows)
                            .execute(self)
                            .await
                    })*
                    _ => diesel::insert_into(deposit_orders::table)
                        .values(rows)
                        .execute(self)
                        .await,
                }
            };
        }
        sized!(1 2 4 8 16 32 64).map(drop)
    }
}

#[async_trait]
impl InsertMany for crate::SqliteConn {
    /// Diesel writes SQLite's many-row insert only for its own synchronous
    /// connection, not through diesel-async's wrapper: one statement per
    /// row, in a transaction (a savepoint inside one already open), so
    /// that they still stand or fall together. SQLite has one writer, and
    /// the rows cost one commit whatever the statements.
    async fn insert_deposits(&mut self, rows: &[DepositRow]) -> diesel::QueryResult<()> {
        use diesel_async::AsyncConnection;
        self.transaction(async |c: &mut crate::SqliteConn| {
            for row in rows {
                diesel::insert_into(deposit_orders::table)
                    .values(row)
                    .execute(c)
                    .await?;
            }
            Ok(())
        })
        .await
    }
}

macro_rules! impl_deposits {
    ($conn:ty) => {
        #[async_trait]
        impl DepositQueries for $conn {
            async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()> {
                let inserted: StoreResult<()> = insert_one!(self.c(), deposit_orders::table, row);
                inserted?;
                self.done.orders.push(row.written(true));
                Ok(())
            }

            async fn insert_deposits(&mut self, rows: &[DepositRow]) -> StoreResult<()> {
                InsertMany::insert_deposits(self.c(), rows).await?;
                self.done
                    .orders
                    .extend(rows.iter().map(|row| row.written(true)));
                Ok(())
            }

            async fn deposit_by(&mut self, key: DepositKey<'_>) -> StoreResult<Option<DepositRow>> {
                let query = match key {
                    DepositKey::Order(order) => by_order_key!(deposit_orders, order),
                    DepositKey::Remark(remark) => deposit_orders::table
                        .filter(deposit_orders::expected_remark.eq(remark))
                        .into_boxed(),
                    DepositKey::CashierSession(id) => deposit_orders::table
                        .filter(deposit_orders::cashier_session_id.eq(id))
                        .into_boxed(),
                };
                first_or_none!(self.c(), DepositRow, query, "deposit_orders", key)
            }

            async fn pending_deposit_by_match_amount(
                &mut self,
                account_id: &str,
                amount: i64,
            ) -> StoreResult<Option<DepositRow>> {
                first_or_none!(
                    self.c(),
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
                    .load(self.c())
                    .await?;
                Ok(taken.into_iter().flatten().collect())
            }

            async fn transition_deposit(
                &mut self,
                id: &str,
                from: &[DepositStatus],
                change: &DepositMove,
            ) -> StoreResult<Option<DepositRow>> {
                write_move!(self, deposit_orders, DepositRow, id, from, change)
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
                .execute(self.c())
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
                    .load(self.c())
                    .await?)
            }

            async fn channel_deposits_awaiting(
                &mut self,
                created_before: i64,
                after: Option<(i64, String)>,
                limit: i64,
            ) -> StoreResult<Vec<(String, i64, i64)>> {
                let mut query = deposit_orders::table
                    .filter(
                        deposit_orders::status
                            .eq_any([DepositStatus::Pending, DepositStatus::Matched]),
                    )
                    .filter(deposit_orders::route.eq(crate::domain::routing::Route::Channel))
                    .filter(deposit_orders::created_at.le(created_before))
                    .into_boxed();
                if let Some((at, order_no)) = after {
                    query = query.filter(
                        deposit_orders::created_at
                            .gt(at)
                            .or(deposit_orders::created_at
                                .eq(at)
                                .and(deposit_orders::order_no.gt(order_no))),
                    );
                }
                Ok(query
                    .order((
                        deposit_orders::created_at.asc(),
                        deposit_orders::order_no.asc(),
                    ))
                    .limit(limit)
                    .select((
                        deposit_orders::order_no,
                        deposit_orders::created_at,
                        deposit_orders::expire_at,
                    ))
                    .load(self.c())
                    .await?)
            }

            async fn next_deposit_expiry(&mut self) -> StoreResult<Option<i64>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::status.eq(DepositStatus::Pending))
                    .select(diesel::dsl::min(deposit_orders::expire_at))
                    .first(self.c())
                    .await?)
            }

            async fn list_deposits(&mut self, filter: &ListFilter) -> StoreResult<Vec<DepositRow>> {
                list_orders!(self.c(), deposit_orders, DepositRow, filter)
            }
        }
    };
}

impl_deposits!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_deposits!(crate::Tx<'_, crate::SqliteConn>);
