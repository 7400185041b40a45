//! Admitting a merchant's request under its rate limit, with the budget
//! shared by every instance on the database (`ratelimit` says how, and
//! what the error bound is).

use crate::domain::error::ApiError;
use crate::ratelimit::{lease_size, Bucket};
use crate::store::rows::RateBucketRow;
use crate::App;

/// Admits one request of `merchant_id`, or refuses it with how long to
/// wait.
pub async fn admit(
    app: &App,
    merchant_id: &str,
    per_minute: u32,
    burst: u32,
) -> Result<(), ApiError> {
    let now_ms = app.clock.now().timestamp_millis();
    if app.rate_leases.spend(merchant_id, now_ms) {
        return Ok(());
    }
    let gate = app.rate_leases.refill_gate(merchant_id);
    let _refilling = gate.lock().await;
    // Whoever held the gate before may have refilled the lease.
    if app.rate_leases.spend(merchant_id, now_ms) {
        return Ok(());
    }
    let want = lease_size(burst);
    let fresh = RateBucketRow {
        merchant_id: merchant_id.to_string(),
        units: Bucket::full(burst, now_ms).units,
        at_ms: now_ms,
    };
    let taken = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move {
                let row = tx.rate_bucket(&fresh).await?;
                let mut bucket = Bucket {
                    units: row.units,
                    at_ms: row.at_ms,
                };
                let taken = bucket.take(want, per_minute, burst, now_ms);
                tx.save_rate_bucket(&RateBucketRow {
                    units: bucket.units,
                    at_ms: bucket.at_ms,
                    ..row
                })
                .await?;
                Ok(taken)
            })
        })
        .await?;
    match taken {
        Ok(tokens) => {
            app.rate_leases.keep(merchant_id, tokens - 1, now_ms);
            Ok(())
        }
        Err(retry_after) => Err(ApiError::RateLimited { retry_after }),
    }
}
