//! Time is injected: the system clock in production, a clock tests and the
//! sandbox can move, so schedules and expiry are tested exactly.

use chrono::{DateTime, TimeZone, Utc};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;

    /// Unix seconds, the unit the database stores.
    fn unix(&self) -> i64 {
        self.now().timestamp()
    }

    /// Moves the clock forward, where it can be moved (the sandbox's).
    /// Returns whether it moved.
    fn advance_by(&self, _seconds: i64) -> bool {
        false
    }

    /// How far the clock runs ahead of the system clock.
    fn offset_seconds(&self) -> i64 {
        0
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until told to move.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn at(unix_seconds: i64) -> Self {
        ManualClock(Arc::new(AtomicI64::new(unix_seconds)))
    }

    pub fn advance(&self, seconds: i64) {
        self.0.fetch_add(seconds, Ordering::SeqCst);
    }

    pub fn set(&self, unix_seconds: i64) {
        self.0.store(unix_seconds, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        from_unix(self.0.load(Ordering::SeqCst))
    }
}

/// The sandbox's clock: the system clock plus an offset that only grows,
/// so that tests of a deployed sandbox can make 30 s retries or a 5-minute
/// sweep happen in a moment.
#[derive(Debug, Clone, Default)]
pub struct OffsetClock(Arc<AtomicI64>);

impl Clock for OffsetClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::seconds(self.0.load(Ordering::SeqCst))
    }

    fn advance_by(&self, seconds: i64) -> bool {
        if seconds <= 0 {
            return false;
        }
        self.0.fetch_add(seconds, Ordering::SeqCst);
        true
    }

    fn offset_seconds(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

pub fn from_unix(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(seconds, 0).single().unwrap_or_default()
}
