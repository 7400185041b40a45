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
    /// Rows it writes only at its end, when it defers them
    /// (`UnitOfWork::defer_inserts`); `None` when each is written at once.
    pub(crate) deferred: Option<crate::queries::deferred::Deferred>,
}

/// The balances a coalescing transaction moves, by merchant and currency.
///
/// Why: many completions of one merchant in one transaction each moved the
/// same row by a statement of its own, so the row grew a chain of versions
/// within the transaction that every later statement walked (measured: most
/// of PostgreSQL's time in `heap_hot_search_buffer` and
/// `heap_page_prune_opt`), and the row stayed locked from the first
/// completion to the commit, so one merchant's batches ran one at a time.
/// Credits (no side going down) are summed here and their lines wait: the
/// row is moved once, by one conditional statement, at the end
/// (`flush_balances`), which is when it is locked, and the lines get their
/// versions and balances after from what that statement returns. A change
/// that takes money away needs the row as it is: what waits is written
/// first, the row is then held locked, and that change and the later ones
/// are checked and applied to the held copy, exactly as the database
/// would, and written at the end.
#[derive(Debug, Default)]
pub struct BalanceBuffer {
    /// In key order, so that a transaction moving several balances locks
    /// them in one order.
    pub(crate) rows: std::collections::BTreeMap<(String, String), Balance>,
    /// The zero rows of balances asked for (`ensure_balance`) and not
    /// looked for: one that turns out missing when its credits are written
    /// is inserted then. A debit needs no row made first: on a missing row
    /// it is refused, as on a zero one.
    pub(crate) zero_rows: std::collections::BTreeMap<(String, String), crate::rows::BalanceRow>,
}

#[derive(Debug)]
pub(crate) enum Balance {
    /// Credits not yet written: their sums, the latest time, their lines.
    Waiting {
        available: i64,
        frozen: i64,
        now: i64,
        lines: Vec<crate::rows::BalanceTransactionRow>,
    },
    /// Locked by a statement of this transaction: changed in memory since.
    Held {
        row: crate::rows::BalanceRow,
        dirty: bool,
    },
}

impl BalanceBuffer {
    fn key(line: &crate::rows::BalanceTransactionRow) -> (String, String) {
        (line.merchant_id.clone(), line.currency.clone())
    }

    /// Keeps a credit to be written with the others, or gives the line
    /// back when it must be applied to the row now (it takes money away,
    /// or the row is already held).
    pub(crate) fn wait(
        &mut self,
        line: crate::rows::BalanceTransactionRow,
        now: i64,
    ) -> Option<crate::rows::BalanceTransactionRow> {
        if line.available_change < 0 || line.frozen_change < 0 {
            return Some(line);
        }
        match self
            .rows
            .entry(Self::key(&line))
            .or_insert(Balance::Waiting {
                available: 0,
                frozen: 0,
                now,
                lines: Vec::new(),
            }) {
            Balance::Waiting {
                available,
                frozen,
                now: latest,
                lines,
            } => {
                let (Some(a), Some(f)) = (
                    available.checked_add(line.available_change),
                    frozen.checked_add(line.frozen_change),
                ) else {
                    return Some(line);
                };
                (*available, *frozen, *latest) = (a, f, (*latest).max(now));
                lines.push(line);
                None
            }
            Balance::Held { .. } => Some(line),
        }
    }

    /// Whether the line's balance is waiting to be written.
    pub(crate) fn is_waiting(&self, line: &crate::rows::BalanceTransactionRow) -> bool {
        matches!(
            self.rows.get(&Self::key(line)),
            Some(Balance::Waiting { .. })
        )
    }

    /// Applies a change to a held row as the conditional statement would,
    /// filling in its line: false when either side would go below zero
    /// (and then nothing changes). `None` when the row is not held.
    pub(crate) fn apply(
        &mut self,
        line: &mut crate::rows::BalanceTransactionRow,
        now: i64,
    ) -> Option<bool> {
        let Some(Balance::Held { row, dirty }) = self.rows.get_mut(&Self::key(line)) else {
            return None;
        };
        let (Some(a), Some(f)) = (
            row.available.checked_add(line.available_change),
            row.frozen.checked_add(line.frozen_change),
        ) else {
            return Some(false);
        };
        if a < 0 || f < 0 {
            return Some(false);
        }
        row.available = a;
        row.frozen = f;
        row.version += 1;
        row.updated_at = row.updated_at.max(now);
        *dirty = true;
        fill(line, row);
        Some(true)
    }

    /// The row as a statement of this transaction left it, held from now
    /// to the end.
    pub(crate) fn hold(&mut self, row: crate::rows::BalanceRow) {
        self.rows.insert(
            (row.merchant_id.clone(), row.currency.clone()),
            Balance::Held { row, dirty: false },
        );
    }

    /// The balances to write, in key order: credits waiting (the key, the
    /// sums, the latest time, the lines) and held rows changed since
    /// written. Both are forgotten here; the writer holds what it wrote.
    pub(crate) fn take(&mut self) -> (Vec<Waited>, Vec<crate::rows::BalanceRow>) {
        let mut waited = Vec::new();
        let mut changed = Vec::new();
        for ((merchant_id, currency), balance) in std::mem::take(&mut self.rows) {
            match balance {
                Balance::Waiting {
                    available,
                    frozen,
                    now,
                    lines,
                } => waited.push(Waited {
                    merchant_id,
                    currency,
                    available,
                    frozen,
                    now,
                    lines,
                }),
                Balance::Held { row, dirty } => {
                    if dirty {
                        changed.push(row.clone());
                    }
                    self.hold(row);
                }
            }
        }
        (waited, changed)
    }
}

/// Credits of one balance written together.
pub(crate) struct Waited {
    pub merchant_id: String,
    pub currency: String,
    pub available: i64,
    pub frozen: i64,
    pub now: i64,
    pub lines: Vec<crate::rows::BalanceTransactionRow>,
}

impl Waited {
    /// The lines, given the row as the one statement left it: versions in
    /// turn up to the row's, each with the balance after it, all at the
    /// row's time.
    pub(crate) fn lines_after(
        &self,
        row: &crate::rows::BalanceRow,
    ) -> Vec<crate::rows::BalanceTransactionRow> {
        let n = self.lines.len() as i64;
        let mut available = row.available - self.available;
        let mut frozen = row.frozen - self.frozen;
        let mut version = row.version - n;
        self.lines
            .iter()
            .cloned()
            .map(|mut line| {
                available += line.available_change;
                frozen += line.frozen_change;
                version += 1;
                line.version = version;
                line.available_after = available;
                line.frozen_after = frozen;
                line.created_at = row.updated_at;
                line
            })
            .collect()
    }
}

/// A line's version, balance after and time, from the balance as changed.
/// The balance's time, not the change's: it never goes back along the
/// versions, so a day's lines are one run of them.
pub(crate) fn fill(line: &mut crate::rows::BalanceTransactionRow, row: &crate::rows::BalanceRow) {
    line.version = row.version;
    line.available_after = row.available;
    line.frozen_after = row.frozen;
    line.created_at = row.updated_at;
}

impl<'c, C> Tx<'c, C> {
    pub(super) fn new(conn: &'c mut C, began_ms: i64) -> Self {
        Tx {
            conn,
            began_ms,
            done: Effects::default(),
            balances: None,
            deferred: None,
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
    const SEQUENCE_PLAN: Option<&'static str> = C::SEQUENCE_PLAN;
    const PLAN_ONCE: Option<&'static str> = C::PLAN_ONCE;
    const DAY_TOTALS: &'static str = C::DAY_TOTALS;
    const ANNOUNCE_CALLBACKS: Option<&'static str> = C::ANNOUNCE_CALLBACKS;
}

/// What a unit of work knows of itself.
pub trait UnitOfWork {
    /// When it began, in milliseconds on the injected clock: the time a
    /// callback record notes as its queueing, so that the delay to its
    /// first attempt is measured finer than the seconds the rows keep.
    fn began_ms(&self) -> i64;

    /// From here to its commit, the transaction sums the credits of each
    /// balance and writes them by one statement before the commit, and
    /// applies later changes of a row it had to read to its copy
    /// (`BalanceBuffer`): for a transaction that moves one balance many
    /// times (a group commit's batch). Checks and outcomes are the same.
    fn coalesce_balances(&mut self);

    /// From here to its commit, the rows the transaction inserts into the
    /// journal, the events, the callback records and the channels'
    /// notifications are held and written before the commit, one statement
    /// per table (`queries::deferred`): for a transaction of many units
    /// that never read those tables back (a group commit's batch). A unique
    /// key a row breaks is then broken at the end, failing the transaction
    /// as it would have failed before.
    fn defer_inserts(&mut self);
}

impl<C: Send> UnitOfWork for Tx<'_, C> {
    fn began_ms(&self) -> i64 {
        self.began_ms
    }

    fn coalesce_balances(&mut self) {
        self.balances.get_or_insert_with(BalanceBuffer::default);
    }

    fn defer_inserts(&mut self) {
        self.deferred.get_or_insert_with(Default::default);
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
