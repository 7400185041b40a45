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
}

impl App {
    pub fn now_unix(&self) -> i64 {
        self.clock.unix()
    }
}
