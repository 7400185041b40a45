//! What every handler and worker shares.

use crate::channel::Channels;
use crate::clock::Clock;
use crate::config::Config;
use crate::db::Db;
use crate::keys::KeyVault;
use crate::ratelimit::RateLimiter;
use std::sync::Arc;

pub struct App {
    pub config: Config,
    pub db: Db,
    pub clock: Arc<dyn Clock>,
    pub vault: KeyVault,
    pub channels: Channels,
    pub rate_limiter: RateLimiter,
    /// Wakes the delivery workers: a callback was queued or the clock moved.
    pub wake: Arc<tokio::sync::Notify>,
    /// Sends callbacks.
    pub courier: crate::delivery::Courier,
}

impl App {
    pub fn now_unix(&self) -> i64 {
        self.clock.unix()
    }

    /// The time request timestamps are checked against: the real time,
    /// even where the sandbox's clock runs ahead for scheduling.
    pub fn wall_unix(&self) -> i64 {
        self.clock.unix() - self.clock.offset_seconds()
    }
}
