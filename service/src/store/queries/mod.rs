//! Every query the service runs, one trait per aggregate. Each file's
//! macro stamps the same bodies onto both backends' connection types, so
//! diesel checks every query against PostgreSQL and SQLite at compile
//! time. A use case names the traits of the aggregates it touches.

pub mod bank;
pub mod callbacks;
pub mod cashier;
pub mod deposits;
pub mod ledger;
pub mod merchants;
pub mod withdrawals;

pub use bank::BankQueries;
pub use callbacks::CallbackQueries;
pub use cashier::CashierQueries;
pub use deposits::DepositQueries;
pub use ledger::LedgerQueries;
pub use merchants::MerchantQueries;
pub use withdrawals::WithdrawalQueries;

/// Inserts one row; the query bodies' most common shape, written once.
macro_rules! insert_one {
    ($conn:expr, $table:expr, $row:expr) => {{
        diesel::insert_into($table)
            .values($row)
            .execute($conn)
            .await?;
        Ok(())
    }};
}
use insert_one;

/// The first row a query finds, if any, read as `$row`; a value in it the
/// code cannot read is reported with `$table` and the key `$column` =
/// `$key` it was looked up by.
macro_rules! first_or_none {
    ($conn:expr, $row:ty, $query:expr) => {
        Ok($query
            .select(<$row>::as_select())
            .first($conn)
            .await
            .optional()?)
    };
    ($conn:expr, $row:ty, $query:expr, $table:literal, $column:literal = $key:expr) => {{
        let found: crate::store::StoreResult<Option<$row>> = $query
            .select(<$row>::as_select())
            .first($conn)
            .await
            .optional()
            .map_err(crate::store::StoreError::from);
        crate::store::InRow::in_row(found, $table, crate::store::error::Key($column, $key))
    }};
}
use first_or_none;

/// Declares `Store`, every query trait at once, and gives it to whatever
/// has them all (both backends' connections).
macro_rules! all_queries {
    ($($queries:ident),+) => {
        /// A connection or transaction that can run every query: what
        /// `Db::run` and `Db::transaction` hand to a unit of work.
        pub trait Store: $($queries +)+ {}

        impl<T: $($queries +)+ ?Sized> Store for T {}
    };
}

all_queries!(
    MerchantQueries,
    DepositQueries,
    WithdrawalQueries,
    LedgerQueries,
    CallbackQueries,
    BankQueries,
    CashierQueries
);
