//! `payments-channel-sim`: a payment channel outside the service that
//! speaks the adapter protocol (`openapi/channel.json`, the generated
//! `ChannelAdapterApi`) and posts signed notifications
//! (`openapi/channel-notifications.json`). It serves its own payment page
//! for channel deposits (`page`), settles payouts after a delay, keeps a
//! journal of everything it answered (`records`) so a restart loses
//! nothing, and injects faults on purpose (`faults`, changed at
//! `PUT /control/faults`). Tests, the conformance suite and the benchmarks
//! run the service against it as a separate process.

mod adapter;
pub mod cli;
mod control;
pub mod faults;
mod notify;
mod page;
mod records;

use anyhow::{bail, Context};
use faults::{Dice, Faults};
use records::Records;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How the simulator is started.
#[derive(Clone, Debug)]
pub struct Config {
    pub bind: SocketAddr,
    /// Shared with the service's channel configuration; at least 32 bytes.
    pub secret: Vec<u8>,
    /// Where payers reach the payment page; the bound address by default.
    pub public_url: Option<String>,
    /// Where the journal is kept; nothing survives a restart without it.
    pub data_dir: Option<PathBuf>,
    /// How long an accepted payout takes to be paid; `None`: it waits for
    /// `POST /control/payouts/{order_no}/settle` (or `/fail`).
    pub settle_after: Option<Duration>,
    pub faults: Faults,
    pub seed: u64,
    /// Notifications posted at once (at least one).
    pub notify_senders: usize,
}

/// What the simulator was asked and what its notifications did, for
/// `GET /control/stats`.
#[derive(Default)]
pub struct Counters {
    /// Signed payout calls that arrived, whatever their fate.
    pub payout_dispatches: AtomicU64,
    pub payout_inquiries: AtomicU64,
    pub sent: AtomicU64,
    pub acknowledged: AtomicU64,
    pub dropped: AtomicU64,
    pub duplicated: AtomicU64,
    pub delayed: AtomicU64,
    pub retried: AtomicU64,
    pub refused: AtomicU64,
}

pub struct Sim {
    secret: Vec<u8>,
    public_url: OnceLock<String>,
    settle_after: Option<Duration>,
    dice: Dice,
    /// Never held across an await.
    records: Mutex<Records>,
    http: reqwest::Client,
    counters: Counters,
    /// Settlements and notifications in flight: ended with the simulator,
    /// as a process's would be.
    tasks: Mutex<tokio::task::JoinSet<()>>,
    restart: tokio::sync::Notify,
    /// Notifications being posted at once, as a provider's notifier keeps
    /// a bounded pool of connections: a burst of payments queues here
    /// rather than opening one connection to the service per payment.
    senders: tokio::sync::Semaphore,
}

/// Notifications posted at once, unless started with another number.
pub const SENDERS: u16 = 32;

impl Sim {
    fn records(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn public_url(&self) -> &str {
        self.public_url
            .get()
            .map(String::as_str)
            .unwrap_or_default()
    }

    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        while tasks.try_join_next().is_some() {}
        tasks.spawn(task);
    }
}

/// A simulator serving requests.
pub struct Running {
    server: dropshot::HttpServer<Arc<Sim>>,
    sim: Arc<Sim>,
}

impl Running {
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.local_addr())
    }

    /// Resolves when `POST /control/restart` asks for a restart.
    pub async fn restart_requested(&self) {
        self.sim.restart.notified().await
    }

    /// Stops serving and drops every settlement and notification in flight.
    pub async fn close(self) -> anyhow::Result<()> {
        self.sim
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .abort_all();
        self.server
            .close()
            .await
            .map_err(|e| anyhow::anyhow!("closing the server: {e}"))
    }
}

/// Starts serving; what the journal holds is picked up where it stopped:
/// payouts not yet settled settle, notifications not yet acknowledged are
/// sent again (with the same `notification_id`).
pub async fn start(config: Config) -> anyhow::Result<Running> {
    if config.secret.len() < 32 {
        bail!(
            "the secret is {} bytes; it needs at least 32",
            config.secret.len()
        );
    }
    config
        .faults
        .check()
        .map_err(|e| anyhow::anyhow!("faults: {e}"))?;
    let records = Records::open(config.data_dir.as_deref())?;
    let sim = Arc::new(Sim {
        secret: config.secret.clone(),
        public_url: OnceLock::new(),
        settle_after: config.settle_after,
        dice: Dice::new(config.faults.clone(), config.seed),
        records: Mutex::new(records),
        senders: tokio::sync::Semaphore::new(config.notify_senders.max(1)),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .context("building the notification client")?,
        counters: Counters::default(),
        tasks: Mutex::new(tokio::task::JoinSet::new()),
        restart: tokio::sync::Notify::new(),
    });
    let mut api = dropshot::ApiDescription::new();
    merchant_api::channel::register::<adapter::SimAdapter>(&mut api)
        .map_err(|e| anyhow::anyhow!("registering the protocol: {e}"))?;
    page::register(&mut api)?;
    control::register(&mut api)?;
    let log = dropshot::ConfigLogging::StderrTerminal {
        level: dropshot::ConfigLoggingLevel::Error,
    }
    .to_logger("payments-channel-sim")
    .context("starting the server's log")?;
    let server = dropshot::ServerBuilder::new(api, sim.clone(), log)
        .config(dropshot::ConfigDropshot {
            bind_address: config.bind,
            ..Default::default()
        })
        .start()
        .map_err(|e| anyhow::anyhow!("listening on {}: {e}", config.bind))?;
    let url = format!("http://{}", server.local_addr());
    let _ = sim.public_url.set(
        config
            .public_url
            .clone()
            .unwrap_or(url)
            .trim_end_matches('/')
            .to_string(),
    );
    notify::resume(&sim);
    Ok(Running { server, sim })
}
