//! A unit of work's handle (`Tx`): the connection it runs on and what it
//! has done that matters only once it commits (a callback made due, the
//! orders it wrote, a merchant written). The effects are a value the unit
//! carries and `Db` acts on after the commit, not ambient state: every
//! query runs through a `Tx`, so none can record an effect nowhere.

use super::dialect::Dialect;

/// What a unit of work has done, acted on after it ends.
#[derive(Debug, Default)]
pub struct Effects {
    /// It wrote a callback that is due: wake the delivery worker.
    pub(crate) callback_queued: bool,
    /// The orders it wrote: log and count them.
    pub(crate) orders: Vec<OrderWritten>,
    /// It wrote a merchant, an API key or a fee rate: what was read of
    /// them before may be stale.
    pub(crate) merchant_written: bool,
    /// It wrote a merchant event: wake the sequencer.
    pub(crate) event_recorded: bool,
    /// The id of the merchant or operator it created, the target of the
    /// action's audit row.
    pub(crate) created: Option<String>,
}

/// A connection inside one unit of work (`Db::run`, `Db::transaction`),
/// with the effects the unit has had so far.
pub struct Tx<'c, C> {
    conn: &'c mut C,
    began_ms: i64,
    pub(crate) done: Effects,
    /// Balances this transaction holds locked and changes in memory, when
    /// it coalesces them (`UnitOfWork::coalesce_balances`); `None` when
    /// every change is its own statement.
    pub(crate) balances: Option<BalanceBuffer>,
}

/// The balances a coalescing transaction has locked, as it has changed
/// them so far, by merchant and currency.
///
/// Why: many completions of one merchant in one transaction each moved the
/// same row by a statement of its own, so the row grew a chain of versions
/// within the transaction that every later statement walked (measured: most
/// of PostgreSQL's time in `heap_hot_search_buffer` and
/// `heap_page_prune_opt`). The first change of a row is still its own
/// conditional statement, which takes the row's lock until the commit, so
/// what this holds is exactly the row as the database would have it; the
/// rest are checked and applied here and written once, before the commit
/// (`flush_balances`), or before anything reads balances in between.
#[derive(Debug, Default)]
pub struct BalanceBuffer {
    pub(crate) rows: std::collections::HashMap<(String, String), Buffered>,
}

#[derive(Debug)]
pub(crate) struct Buffered {
    pub row: crate::rows::BalanceRow,
    /// Changed in memory since it was last written.
    pub dirty: bool,
}

impl BalanceBuffer {
    /// Applies a change to a held row as the conditional statement would:
    /// the row as changed, or `None` when either side would go below zero
    /// (and then nothing changes). `None` too when the row is not held.
    pub(crate) fn apply(
        &mut self,
        merchant_id: &str,
        currency: &str,
        available: i64,
        frozen: i64,
        now: i64,
    ) -> Option<Option<crate::rows::BalanceRow>> {
        let held = self
            .rows
            .get_mut(&(merchant_id.to_string(), currency.to_string()))?;
        let row = &mut held.row;
        let (Some(a), Some(f)) = (
            row.available.checked_add(available),
            row.frozen.checked_add(frozen),
        ) else {
            return Some(None);
        };
        if a < 0 || f < 0 {
            return Some(None);
        }
        row.available = a;
        row.frozen = f;
        row.version += 1;
        row.updated_at = row.updated_at.max(now);
        held.dirty = true;
        Some(Some(row.clone()))
    }

    pub(crate) fn holds(&self, merchant_id: &str, currency: &str) -> bool {
        self.rows
            .contains_key(&(merchant_id.to_string(), currency.to_string()))
    }

    pub(crate) fn hold(&mut self, row: crate::rows::BalanceRow) {
        self.rows.insert(
            (row.merchant_id.clone(), row.currency.clone()),
            Buffered { row, dirty: false },
        );
    }

    /// The rows changed since last written, marked written.
    pub(crate) fn take_dirty(&mut self) -> Vec<crate::rows::BalanceRow> {
        self.rows
            .values_mut()
            .filter(|b| b.dirty)
            .map(|b| {
                b.dirty = false;
                b.row.clone()
            })
            .collect()
    }
}

impl<'c, C> Tx<'c, C> {
    pub(super) fn new(conn: &'c mut C, began_ms: i64) -> Self {
        Tx {
            conn,
            began_ms,
            done: Effects::default(),
            balances: None,
        }
    }

    /// The connection, for a query.
    pub(crate) fn c(&mut self) -> &mut C {
        self.conn
    }

    pub(super) fn into_effects(self) -> Effects {
        self.done
    }
}

impl<C: Dialect> Dialect for Tx<'_, C> {
    const SNAPSHOT: Option<&'static str> = C::SNAPSHOT;
    const LOCK_MERCHANT: Option<&'static str> = C::LOCK_MERCHANT;
    const CLAIM_CALLBACKS: &'static str = C::CLAIM_CALLBACKS;
    const RATE_BUCKET: &'static str = C::RATE_BUCKET;
    const SEQUENCE_EVENTS: &'static str = C::SEQUENCE_EVENTS;
    const DAY_TOTALS: &'static str = C::DAY_TOTALS;
    const ANNOUNCE_CALLBACKS: Option<&'static str> = C::ANNOUNCE_CALLBACKS;
}

/// What a unit of work knows of itself.
pub trait UnitOfWork {
    /// When it began, in milliseconds on the injected clock: the time a
    /// callback record notes as its queueing, so that the delay to its
    /// first attempt is measured finer than the seconds the rows keep.
    fn began_ms(&self) -> i64;

    /// From here to its commit, the transaction changes each balance it
    /// touches by one statement and then in memory, written once before
    /// the commit: for a transaction that moves one balance many times
    /// (a group commit's batch). Checks and outcomes are the same.
    fn coalesce_balances(&mut self);
}

impl<C: Send> UnitOfWork for Tx<'_, C> {
    fn began_ms(&self) -> i64 {
        self.began_ms
    }

    fn coalesce_balances(&mut self) {
        self.balances.get_or_insert_with(BalanceBuffer::default);
    }
}

/// An order the store wrote: created, or moved to `status`.
#[derive(Debug)]
pub(crate) struct OrderWritten {
    pub kind: &'static str,
    pub order_no: String,
    pub merchant_order_no: String,
    pub merchant_id: String,
    pub currency: String,
    pub status: &'static str,
    pub created: bool,
}

impl OrderWritten {
    /// The order's line in the log and its counts, once committed. A new
    /// order born past its first state (an auto-approved withdrawal) also
    /// counts the move to it.
    pub(super) fn tell(self) {
        use crate::telemetry::metrics;
        let OrderWritten {
            kind,
            order_no,
            merchant_order_no,
            merchant_id,
            currency,
            status,
            created,
        } = self;
        if created {
            metrics::order_created(kind, &currency);
            if status != "pending" {
                metrics::order_state_changed(kind, &currency, status);
            }
            tracing::info!(
                kind,
                %order_no,
                %merchant_order_no,
                %merchant_id,
                %currency,
                status,
                "order created"
            );
        } else {
            metrics::order_state_changed(kind, &currency, status);
            tracing::info!(kind, %order_no, %merchant_id, %currency, status, "order state changed");
        }
    }
}
