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

pub fn from_unix(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(seconds, 0).single().unwrap_or_default()
}
