//! Per-merchant rate limiting, shared by every instance on one database.
//!
//! The budget is a token bucket kept in the database (one row per
//! merchant), refilled continuously from the injected clock. One token is
//! 60 000 units, so a rate of `r` per minute refills exactly `r` units per
//! millisecond and the arithmetic stays in integers.
//!
//! An instance does not ask the database for every request: it takes a
//! small lease of tokens (a tenth of the burst, at most 100, at least 1)
//! and spends it locally for up to a second. Every token spent was taken
//! from the shared bucket, so all instances together never admit more
//! than the bucket allows over time; the error is that tokens leased by
//! one instance are spent up to a second later, and leases that expire
//! unspent are lost. With `N` instances, a window may admit up to `N ×
//! lease` requests beyond the limit and refuse up to as many below it.
//! A small limit (burst below 20) has a lease of 1: it is exact.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub const TOKEN: i64 = 60_000;

/// How long leased tokens may be spent.
pub const LEASE_MS: i64 = 1_000;

/// A bucket's state at a moment: `units` available as of `at_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub units: i64,
    pub at_ms: i64,
}

impl Bucket {
    /// A bucket never used: full.
    pub fn full(burst: u32, now_ms: i64) -> Bucket {
        Bucket {
            units: capacity(burst),
            at_ms: now_ms,
        }
    }

    /// Refills to `now_ms`, then takes up to `want` whole tokens. Returns
    /// how many it took (at least 1), or how many whole seconds to wait
    /// for one.
    pub fn take(
        &mut self,
        want: i64,
        per_minute: u32,
        burst: u32,
        now_ms: i64,
    ) -> Result<i64, u64> {
        let rate = i64::from(per_minute.max(1));
        let elapsed = (now_ms - self.at_ms).max(0);
        self.units = (self.units + elapsed.saturating_mul(rate)).min(capacity(burst));
        self.at_ms = self.at_ms.max(now_ms);
        let whole = self.units / TOKEN;
        if whole >= 1 {
            let taken = whole.min(want.max(1));
            self.units -= taken * TOKEN;
            return Ok(taken);
        }
        let wait_ms = (TOKEN - self.units + rate - 1) / rate;
        Err(((wait_ms + 999) / 1000).max(1) as u64)
    }
}

fn capacity(burst: u32) -> i64 {
    i64::from(burst.max(1)) * TOKEN
}

/// How many tokens an instance takes from the shared bucket at once.
pub fn lease_size(burst: u32) -> i64 {
    (i64::from(burst) / 10).clamp(1, 100)
}

/// Tokens this instance took from shared buckets and has not spent.
#[derive(Default)]
pub struct Leases {
    held: Mutex<HashMap<String, Lease>>,
    /// One refill at a time per merchant: requests that find the lease
    /// spent wait for the one asking the database, instead of each taking
    /// (and overwriting) a lease of its own, which would lose tokens and
    /// hold more than one lease per instance.
    refills: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

struct Lease {
    tokens: i64,
    until_ms: i64,
}

impl Leases {
    /// Spends one leased token of `merchant_id`, if one is left and the
    /// lease has not run out.
    pub fn spend(&self, merchant_id: &str, now_ms: i64) -> bool {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        match held.get_mut(merchant_id) {
            Some(lease) if lease.tokens > 0 && now_ms < lease.until_ms => {
                lease.tokens -= 1;
                true
            }
            _ => false,
        }
    }

    /// The gate a request holds while it refills `merchant_id`'s lease.
    pub fn refill_gate(&self, merchant_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut gates = self.refills.lock().unwrap_or_else(|p| p.into_inner());
        gates.entry(merchant_id.to_string()).or_default().clone()
    }

    /// Keeps `tokens` taken from the shared bucket at `now_ms`.
    pub fn keep(&self, merchant_id: &str, tokens: i64, now_ms: i64) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.insert(
            merchant_id.to_string(),
            Lease {
                tokens: tokens.max(0),
                until_ms: now_ms + LEASE_MS,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refill() {
        let mut b = Bucket::full(3, 0);
        assert_eq!(b.take(1, 60, 3, 0), Ok(1));
        assert_eq!(b.take(5, 60, 3, 0), Ok(2));
        assert_eq!(b.take(1, 60, 3, 0), Err(1));
        assert_eq!(b.take(1, 60, 3, 999), Err(1));
        assert_eq!(b.take(1, 60, 3, 1000), Ok(1));
    }

    #[test]
    fn one_a_minute_waits_a_minute() {
        let mut b = Bucket::full(1, 0);
        assert_eq!(b.take(1, 1, 1, 0), Ok(1));
        assert_eq!(b.take(1, 1, 1, 0), Err(60));
        assert_eq!(b.take(1, 1, 1, 30_000), Err(30));
        assert_eq!(b.take(1, 1, 1, 60_000), Ok(1));
    }

    #[test]
    fn a_clock_read_late_never_refills_backwards() {
        let mut b = Bucket::full(2, 1_000);
        assert_eq!(b.take(2, 60, 2, 1_000), Ok(2));
        // Another instance's clock is a little behind: no refill, no harm.
        assert_eq!(b.take(1, 60, 2, 900), Err(1));
        assert_eq!(b.at_ms, 1_000);
    }

    #[test]
    fn leases_are_spent_within_their_second_only() {
        let leases = Leases::default();
        assert!(!leases.spend("m", 0));
        leases.keep("m", 2, 0);
        assert!(leases.spend("m", 10));
        assert!(leases.spend("m", 999));
        assert!(!leases.spend("m", 999));
        leases.keep("m", 5, 1_000);
        assert!(!leases.spend("m", 2_000));
        assert_eq!(lease_size(3), 1);
        assert_eq!(lease_size(2_000), 100);
        assert_eq!(lease_size(50), 5);
    }
}
