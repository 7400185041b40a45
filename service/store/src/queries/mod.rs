//! Every query the service runs, one trait per aggregate. Each file's
//! macro stamps the same bodies onto both backends' connection types, so
//! diesel checks every query against PostgreSQL and SQLite at compile
//! time. A use case names the traits of the aggregates it touches.

pub mod arrays;
pub mod bank;
pub mod billing;
pub mod callbacks;
pub mod cashier;
pub mod changes;
pub mod deferred;
pub mod deposits;
pub mod events;
pub mod ledger;
pub mod merchants;
pub mod notifications;
pub mod owners;
pub mod people;
pub mod routing;
pub mod sessions;
pub mod vault;
pub mod withdrawals;

pub use bank::BankQueries;
pub use billing::BillingQueries;
pub use callbacks::CallbackQueries;
pub use cashier::CashierQueries;
pub use changes::ChangeQueries;
pub use deferred::DeferredQueries;
pub use deposits::DepositQueries;
pub use events::EventQueries;
pub use ledger::LedgerQueries;
pub use merchants::MerchantQueries;
pub use notifications::NotificationQueries;
pub use owners::OwnerQueries;
pub use people::PeopleQueries;
pub use routing::RoutingQueries;
pub use sessions::SessionQueries;
pub use vault::VaultQueries;
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

/// Deletes at most `$limit` rows of `$table` whose `$at` is before
/// `$before` (and match `$only`, if given), oldest first, by their
/// `id`s read in the same unit; how many. Retention's shape, written once.
macro_rules! forget_oldest {
    ($conn:expr, $table:ident, $at:ident, $before:expr, $limit:expr $(, $only:expr)?) => {{
        let oldest = $table::table
            .filter($table::$at.lt($before))
            $(.filter($only))?
            .order($table::$at.asc())
            .limit($limit)
            .select($table::id)
            .load::<String>($conn)
            .await?;
        if oldest.is_empty() {
            return Ok(0);
        }
        Ok(diesel::delete($table::table.filter($table::id.eq_any(&oldest)))
            .execute($conn)
            .await?)
    }};
}
use forget_oldest;

/// The first row a query finds, if any, read as `$row`; a value in it the
/// code cannot read is reported with `$table` and the key it was looked up
/// by (`$column` = `$key`, or a key that displays itself so).
macro_rules! first_or_none {
    ($conn:expr, $row:ty, $query:expr) => {
        Ok($query
            .select(crate::rows::columns::<$row>())
            .first($conn)
            .await
            .optional()?)
    };
    ($conn:expr, $row:ty, $query:expr, $table:literal, $column:literal = $key:expr) => {
        first_or_none!(
            $conn,
            $row,
            $query,
            $table,
            crate::error::Key($column, $key)
        )
    };
    ($conn:expr, $row:ty, $query:expr, $table:literal, $key:expr) => {{
        let found: crate::StoreResult<Option<$row>> = $query
            .select(crate::rows::columns::<$row>())
            .first($conn)
            .await
            .optional()
            .map_err(crate::StoreError::from);
        crate::InRow::in_row(found, $table, $key)
    }};
}
use first_or_none;

/// How one order (deposit or withdrawal) is looked up by its numbers; it
/// names the row in an error.
#[derive(Clone, Copy, Debug)]
pub enum OrderKey<'a> {
    /// One merchant's order by the service's number.
    OrderNo {
        merchant_id: &'a str,
        order_no: &'a str,
    },
    /// Any merchant's order by the service's number.
    AnyOrderNo(&'a str),
    /// One merchant's order by its own number.
    MerchantOrderNo {
        merchant_id: &'a str,
        merchant_order_no: &'a str,
    },
}

impl std::fmt::Display for OrderKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OrderKey::OrderNo { order_no, .. } | OrderKey::AnyOrderNo(order_no) => {
                write!(f, "order_no={order_no}")
            }
            OrderKey::MerchantOrderNo {
                merchant_order_no, ..
            } => write!(f, "merchant_order_no={merchant_order_no}"),
        }
    }
}

/// The boxed query of an `OrderKey` on either order table (they share the
/// key columns' names).
macro_rules! by_order_key {
    ($table:ident, $key:expr) => {
        match $key {
            OrderKey::OrderNo {
                merchant_id,
                order_no,
            } => $table::table
                .filter($table::merchant_id.eq(merchant_id))
                .filter($table::order_no.eq(order_no))
                .into_boxed(),
            OrderKey::AnyOrderNo(order_no) => $table::table
                .filter($table::order_no.eq(order_no))
                .into_boxed(),
            OrderKey::MerchantOrderNo {
                merchant_id,
                merchant_order_no,
            } => $table::table
                .filter($table::merchant_id.eq(merchant_id))
                .filter($table::merchant_order_no.eq(merchant_order_no))
                .into_boxed(),
        }
    };
}
use by_order_key;

/// One page of either order table, newest first after `filter.after`,
/// narrowed to a merchant and a status when the filter says.
macro_rules! list_orders {
    ($conn:expr, $table:ident, $row:ty, $filter:expr) => {{
        let filter = $filter;
        let q = crate::queries::filtered_orders!($table, filter);
        let q = if filter.oldest_first {
            crate::paging::oldest_after!(q, $table, order_no, filter)
        } else {
            crate::paging::newest_after!(q, $table, order_no, filter)
        };
        Ok(q.select(crate::rows::columns::<$row>()).load($conn).await?)
    }};
}
/// An order table, boxed, with a listing's filters (not its cursor):
/// what a page of it and its count share.
macro_rules! filtered_orders {
    ($table:ident, $filter:expr) => {{
        let filter = $filter;
        let mut q = $table::table.into_boxed();
        if let Some(m) = &filter.merchant_id {
            q = q.filter($table::merchant_id.eq(m.clone()));
        }
        if let Some(st) = &filter.status {
            q = q.filter($table::status.eq(st.clone()));
        }
        if let Some(from) = filter.created_from {
            q = q.filter($table::created_at.ge(from));
        }
        if let Some(to) = filter.created_to {
            q = q.filter($table::created_at.lt(to));
        }
        if let Some(c) = &filter.currency {
            q = q.filter($table::currency.eq(c.clone()));
        }
        if let Some(units) = filter.min_amount {
            q = q.filter($table::amount.ge(units));
        }
        q
    }};
}
pub(crate) use filtered_orders;
use list_orders;

/// Writes a move (`DepositMove`, `WithdrawalMove`) to the order `$id` of
/// either table while its status is one of `$from`, in the unit of work
/// `$conn` (a `Tx`, which tells the move once committed); the row as
/// written, or `None` when it had moved.
macro_rules! write_move {
    ($conn:expr, $table:ident, $row:ty, $id:expr, $from:expr, $change:expr) => {{
        let written: Option<$row> = crate::prepared::KeepPrepared::prepared(
            diesel::update(
                $table::table
                    .filter($table::id.eq($id))
                    .filter($table::status.eq_any($from)),
            )
            .set($change)
            .returning(crate::rows::columns::<$row>()),
        )
        .get_result($conn.c())
        .await
        .optional()?;
        if let Some(row) = &written {
            $conn.done.orders.push(row.written(false));
        }
        Ok(written)
    }};
}
use write_move;

pub(crate) use crate::prepared::KeepPrepared;

/// Declares `Store`, every query trait at once, and gives it to whatever
/// has them all (both backends' connections).
macro_rules! all_queries {
    ($($queries:ident),+) => {
        /// A unit of work that can run every query: what `Db::run` and
        /// `Db::transaction` hand over (a `Tx` on either backend).
        pub trait Store: crate::UnitOfWork + $($queries +)+ {}

        impl<T: crate::UnitOfWork + $($queries +)+ ?Sized> Store for T {}
    };
}

all_queries!(
    MerchantQueries,
    DepositQueries,
    WithdrawalQueries,
    LedgerQueries,
    CallbackQueries,
    BankQueries,
    CashierQueries,
    NotificationQueries,
    EventQueries,
    PeopleQueries,
    OwnerQueries,
    BillingQueries,
    SessionQueries,
    VaultQueries,
    ChangeQueries,
    RoutingQueries,
    DeferredQueries
);
