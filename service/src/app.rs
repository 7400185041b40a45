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
    pub courier: crate::courier::Courier,
    /// Wakes the expiry worker at the next `expire_at`.
    pub expiry: crate::clock::Alarm,
}

impl App {
    pub fn now_unix(&self) -> i64 {
        self.clock.unix()
    }

    /// The clock moved forward (the sandbox's, or a test's): whatever
    /// became due is done now, not at the next look.
    pub fn clock_moved(&self) {
        self.wake.notify_one();
        self.expiry.ring();
    }

    /// The time request timestamps are checked against: the real time,
    /// even where the sandbox's clock runs ahead for scheduling.
    pub fn wall_unix(&self) -> i64 {
        self.clock.unix() - self.clock.offset_seconds()
    }
}
