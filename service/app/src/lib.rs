//! The use cases: deposits, withdrawals, cashier sessions, bank transfers,
//! merchants and their settings, balances, the ledger and the callback
//! outbox, each over the store, and `App`, what every handler and worker
//! shares. Nothing here knows HTTP requests or how callbacks leave.

pub mod actor;
pub mod admission;
pub mod api_keys;
pub mod audit;
pub mod balance_history;
pub mod balances;
pub mod bank;
pub mod billing;
pub mod callbacks;
pub mod cashier;
pub mod change_requests;
pub mod credentials;
pub mod deposits;
pub mod events;
pub mod fees;
pub mod group_commit;
pub mod ids;
pub mod ledger;
pub mod limits;
pub mod listings;
pub mod lockouts;
pub mod master_keys;
pub mod merchants;
pub mod notifications;
pub mod orders;
pub mod owners;
pub mod passwords;
pub mod payment_sync;
pub mod people;
pub mod platform_inbox;
pub mod retention;
pub mod reveals;
pub mod routing;
pub mod second_factor;
pub mod suspension;
pub mod timeline;
pub mod web_sessions;
pub mod withdrawals;

// The layers below, under the names every module of this crate uses for
// them (`crate::domain::…`): Cargo lets this crate name nothing above it.
use payments_channels as channels;
use payments_config as config;
use payments_config::keys;
use payments_domain as domain;
use payments_domain::clock;
use payments_domain::ratelimit;
use payments_store as store;
use payments_telemetry as telemetry;

use crate::channels::Channels;
use crate::clock::Clock;
use crate::config::Config;
use crate::keys::KeyVault;
use crate::ratelimit::Leases;
use crate::store::Db;
use std::sync::Arc;
use std::time::Duration;

pub struct App {
    pub config: Config,
    pub db: Db,
    pub clock: Arc<dyn Clock>,
    pub vault: KeyVault,
    pub channels: Channels,
    /// Request tokens this instance leased from the shared buckets.
    pub rate_leases: Leases,
    /// Wakes the delivery workers: a callback was queued or the clock moved.
    pub wake: Arc<tokio::sync::Notify>,
    /// Sends callbacks (`delivery::courier::Courier`).
    pub courier: Box<dyn CallbackPost>,
    /// Wakes the expiry worker at the next `expire_at`.
    pub expiry: crate::clock::Alarm,
    /// Wakes the billing schedule: the sandbox's clock moved, and a period
    /// may have ended (it otherwise looks once a real minute).
    pub billing: tokio::sync::Notify,
    /// Whether the worker loops still turn (readiness asks).
    pub beats: crate::telemetry::heartbeat::WorkerBeats,
    /// Keys that signed a request lately, and their merchants.
    pub credentials: credentials::Credentials,
    /// Merchants read lately by id, for the approval and dispatch paths.
    pub merchants: credentials::Remembered<merchants::Merchant>,
    /// Merchants' callback signing rows read lately, for the delivery
    /// worker's batches.
    pub callback_rows: credentials::Remembered<credentials::CallbackRows>,
    /// The bounded gate sign-in password checks pass.
    pub password_checks: passwords::Checks,
    /// Accounts and addresses past their sign-in failure limit, refused
    /// from memory until they can be under it again.
    pub lockouts: lockouts::Lockouts,
    /// Requests in flight, per surface, against their bounds.
    pub admission: admission::Admission,
    /// The routing tables in force and each channel's health.
    pub router: routing::Router,
    /// Channel completions, committed together per merchant and currency.
    pub completions: group_commit::GroupCommit<
        (String, String),
        crate::domain::status::NotificationOutcome,
        notifications::Failed,
    >,
    /// New deposit orders, inserted many by one statement.
    pub deposit_inserts: deposits::DepositInserts,
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
        self.billing.notify_one();
    }

    /// Whether this instance runs the callback delivery worker.
    pub fn runs_delivery_worker(&self) -> bool {
        self.config.roles.workers && self.config.callback_worker
    }

    /// Whether this instance runs the expiry (and dispatch) worker.
    pub fn runs_expiry_worker(&self) -> bool {
        self.config.roles.workers && self.config.expiry_interval_seconds > 0
    }

    /// The time request timestamps are checked against: the real time,
    /// even where the sandbox's clock runs ahead for scheduling.
    pub fn wall_unix(&self) -> i64 {
        self.clock.unix() - self.clock.offset_seconds()
    }
}

/// How a callback leaves the service: an HTTP client with the address
/// guard, implemented by `delivery::courier::Courier`. A port, so that the
/// state every layer shares does not depend on the delivery layer.
#[async_trait::async_trait]
pub trait CallbackPost: Send + Sync {
    /// Posts `body`; the receiver's status, or why there is none.
    async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &str,
        timeout: Duration,
    ) -> Result<u16, PostFailure>;
}

/// Why a callback got no answer: the reason operators read on the attempt,
/// and whether the receiver was too slow (the metrics tell timeouts apart).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostFailure {
    pub reason: String,
    pub timed_out: bool,
}

impl From<String> for PostFailure {
    fn from(reason: String) -> Self {
        PostFailure {
            reason,
            timed_out: false,
        }
    }
}
