//! Background work that moves orders with time: expiry, and the dispatch
//! of approved withdrawals that could not be dispatched at approval. It reads the
//! injected clock for what is due; the interval only decides how often it
//! looks.

use crate::app::App;
use crate::deposit;
use std::sync::Arc;
use std::time::Duration;

/// Expires due deposits and dispatches waiting withdrawals every
/// `interval`, until the task is dropped.
pub async fn expiry_loop(app: Arc<App>, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if let Err(e) = deposit::expire_due(&app).await {
            // A database outage is retried on the next tick; nothing is
            // lost because the orders stay pending until expired.
            eprintln!("payments: expiring due deposits failed: {e}");
        }
        if let Err(e) = crate::withdrawal::dispatch_due(&app).await {
            eprintln!("payments: dispatching approved withdrawals failed: {e}");
        }
    }
}
