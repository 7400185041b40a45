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
}

impl<'c, C> Tx<'c, C> {
    pub(super) fn new(conn: &'c mut C, began_ms: i64) -> Self {
        Tx {
            conn,
            began_ms,
            done: Effects::default(),
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
}

impl<C: Send> UnitOfWork for Tx<'_, C> {
    fn began_ms(&self) -> i64 {
        self.began_ms
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
