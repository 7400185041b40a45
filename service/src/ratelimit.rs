//! Per-merchant rate limiting: a token bucket per merchant and service
//! instance, refilled continuously from the injected clock. One token is
//! 60 000 units, so a rate of `r` per minute refills exactly `r` units per
//! millisecond and the arithmetic stays in integers.

use std::collections::HashMap;
use std::sync::Mutex;

const TOKEN: i64 = 60_000;

struct Bucket {
    units: i64,
    at_ms: i64,
}

#[derive(Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    /// Takes one token for `merchant_id`, or says how many whole seconds
    /// to wait for one.
    pub fn take(
        &self,
        merchant_id: &str,
        per_minute: u32,
        burst: u32,
        now_ms: i64,
    ) -> Result<(), u64> {
        let capacity = i64::from(burst.max(1)) * TOKEN;
        let rate = i64::from(per_minute.max(1));
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(merchant_id.to_string()).or_insert(Bucket {
            units: capacity,
            at_ms: now_ms,
        });
        let elapsed = (now_ms - bucket.at_ms).max(0);
        bucket.units = (bucket.units + elapsed.saturating_mul(rate)).min(capacity);
        bucket.at_ms = now_ms;
        if bucket.units >= TOKEN {
            bucket.units -= TOKEN;
            return Ok(());
        }
        let wait_ms = (TOKEN - bucket.units + rate - 1) / rate;
        Err(((wait_ms + 999) / 1000).max(1) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refill() {
        let limiter = RateLimiter::default();
        for _ in 0..3 {
            assert!(limiter.take("m", 60, 3, 0).is_ok());
        }
        assert_eq!(limiter.take("m", 60, 3, 0), Err(1));
        assert_eq!(limiter.take("m", 60, 3, 999), Err(1));
        assert!(limiter.take("m", 60, 3, 1000).is_ok());
        assert!(limiter.take("other", 60, 3, 1000).is_ok());
    }

    #[test]
    fn one_a_minute_waits_a_minute() {
        let limiter = RateLimiter::default();
        assert!(limiter.take("m", 1, 1, 0).is_ok());
        assert_eq!(limiter.take("m", 1, 1, 0), Err(60));
        assert_eq!(limiter.take("m", 1, 1, 30_000), Err(30));
        assert!(limiter.take("m", 1, 1, 60_000).is_ok());
    }
}
