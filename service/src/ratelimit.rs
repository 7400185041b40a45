//! Per-merchant rate limiting: a token bucket per merchant and service
//! instance, refilled continuously from the injected clock. Tokens are kept
//! in thousandths so the arithmetic stays in integers.

use std::collections::HashMap;
use std::sync::Mutex;

const MILLI: i64 = 1000;

struct Bucket {
    tokens: i64,
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
        per_second: u32,
        burst: u32,
        now_ms: i64,
    ) -> Result<(), u64> {
        let capacity = i64::from(burst) * MILLI;
        let rate = i64::from(per_second.max(1));
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(merchant_id.to_string()).or_insert(Bucket {
            tokens: capacity,
            at_ms: now_ms,
        });
        let elapsed = (now_ms - bucket.at_ms).max(0);
        // `rate` tokens per second is `rate` thousandths per millisecond.
        bucket.tokens = (bucket.tokens + elapsed.saturating_mul(rate)).min(capacity);
        bucket.at_ms = now_ms;
        if bucket.tokens >= MILLI {
            bucket.tokens -= MILLI;
            return Ok(());
        }
        let missing_ms = (MILLI - bucket.tokens + rate - 1) / rate;
        Err(((missing_ms + 999) / 1000).max(1) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refill() {
        let limiter = RateLimiter::default();
        for _ in 0..3 {
            assert!(limiter.take("m", 1, 3, 0).is_ok());
        }
        assert_eq!(limiter.take("m", 1, 3, 0), Err(1));
        assert_eq!(limiter.take("m", 1, 3, 999), Err(1));
        assert!(limiter.take("m", 1, 3, 1000).is_ok());
        assert!(limiter.take("other", 1, 3, 1000).is_ok());
    }
}
