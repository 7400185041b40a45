//! Assembling and starting the service: configuration to a running HTTP
//! server, with the published spec served beside the API.

use crate::app::{platform_inbox, App};
use crate::channels::Channels;
use crate::clock::Clock;
use crate::config::{Config, OperatorConfig};
use crate::connections;
use crate::domain::routing::Profile;
use crate::http::gate::{Gate, Routes};
use crate::http::observe;
use crate::http::routes::{api_description, ops_description};
use crate::keys::KeyVault;
use crate::store::{Db, DbOptions};
use crate::telemetry::metrics;
use anyhow::{anyhow, Context, Result};
use dropshot::{ConfigDropshot, ServerBuilder};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Builds the shared state: master key, database (migrated), channels.
pub async fn build_app(mut config: Config, clock: Arc<dyn Clock>) -> Result<Arc<App>> {
    sandbox_defaults(&mut config)?;
    if config.profile == Profile::Production && !config.operators.is_empty() {
        // Bootstrap only: a shared token is nobody in particular, so the
        // trail names only its configured name.
        tracing::warn!(
            tokens = config.operators.len(),
            "operator tokens are configured: they act as admins and are meant for bootstrap only; \
             create operators (`payments operator create`) and remove them from the configuration"
        );
    }
    let mut vault = KeyVault::with_previous(&master_key(&config)?, &config.previous_master_keys)?;
    let wake: Arc<tokio::sync::Notify> = Default::default();
    let db = Db::open(
        &config.database_url,
        config.database_pool_size,
        DbOptions {
            direct_url: config.database_direct_url.clone(),
            migrate_url: config.database_migrate_url.clone(),
            pgbouncer: config.database_pgbouncer,
            pool_wait: Some(std::time::Duration::from_millis(
                config.database_pool_wait_ms,
            )),
        },
        wake.clone(),
        clock.clone(),
    )
    .await?;
    crate::app::master_keys::adopt_lookup_key(&db, &mut vault, clock.unix()).await?;
    metrics::install();
    metrics::build_info(
        config.profile.as_str(),
        option_env!("PAYMENTS_GIT_COMMIT").unwrap_or("unknown"),
    );
    let channels =
        Channels::from_config(&config.channels, &config.public_base_url, config.profile)?;
    let courier = crate::delivery::courier::Courier::new(&config)?;
    let admission = crate::app::admission::Admission::new(
        config.requests_in_flight,
        config
            .requests_in_flight
            .running_per_merchant_of(config.database_pool_size),
        std::time::Duration::from_millis(config.database_pool_wait_ms),
    );
    let password_checks = crate::app::passwords::Checks::new(
        config.password_checks_at_once,
        config.password_checks_waiting,
    );
    let completions = crate::app::group_commit::GroupCommit::new(db.clone());
    let deposit_inserts = crate::app::deposits::DepositInserts::new(db.clone());
    let app = Arc::new(App {
        config,
        db,
        clock,
        vault,
        channels,
        rate_leases: Default::default(),
        wake,
        courier: Box::new(courier),
        expiry: Default::default(),
        billing: Default::default(),
        beats: Default::default(),
        credentials: Default::default(),
        merchants: Default::default(),
        callback_rows: Default::default(),
        password_checks,
        lockouts: Default::default(),
        admission,
        router: Default::default(),
        completions,
        deposit_inserts,
    });
    // Routed by the tables in force from the first request on.
    app.router.refresh(&app).await?;
    Ok(app)
}

/// The master key: configured, or the sandbox's own from its data
/// directory; production has no default.
fn master_key(config: &Config) -> Result<String> {
    match (&config.master_key, config.profile) {
        (Some(k), _) => Ok(k.clone()),
        (None, Profile::Sandbox) => Ok(KeyVault::load_or_create(&config.data_dir)?),
        (None, Profile::Production) => {
            Err(anyhow!("the production profile needs PAYMENTS_MASTER_KEY"))
        }
    }
}

/// What the sandbox makes for itself when it is not configured: an
/// operator's token, and a platform (its own inbox) with its secret, each
/// kept in the data directory across restarts.
fn sandbox_defaults(config: &mut Config) -> Result<()> {
    if config.profile != Profile::Sandbox {
        return Ok(());
    }
    if config.operators.is_empty() {
        config.operators.push(OperatorConfig {
            name: SANDBOX_OPERATOR.into(),
            token: load_or_create_secret(&config.data_dir, "operator.token", || {
                format!("op_test_{}", hex::encode(uuid::Uuid::new_v4().as_bytes()))
            })?,
        });
    }
    // A sandbox with no platform address posts its platform events to
    // itself (`app::platform_inbox`), so an owner can be invited on a first
    // run; the secret stays in the data directory like the operator's token.
    if config.platform_events_url.is_none() {
        config.platform_events_url = Some(platform_inbox::own_url(&config.public_base_url));
        config.platform_events_secret = Some(load_or_create_secret(
            &config.data_dir,
            "platform-events.secret",
            platform_inbox::new_secret,
        )?);
    }
    Ok(())
}

/// The operator the sandbox creates for itself when none is configured.
pub const SANDBOX_OPERATOR: &str = "sandbox-operator";

/// A random secret kept in the sandbox's data directory across restarts.
fn load_or_create_secret(
    dir: &std::path::Path,
    file: &str,
    new: impl FnOnce() -> String,
) -> Result<String> {
    let path = dir.join(file);
    if let Ok(existing) = std::fs::read_to_string(&path) {
        return Ok(existing.trim().to_string());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let secret = new();
    std::fs::write(&path, &secret).with_context(|| format!("writing {}", path.display()))?;
    Ok(secret)
}

pub struct Service {
    server: Option<dropshot::HttpServer<Arc<App>>>,
    /// `/metrics` (and health) on their own address, when configured.
    ops_server: Option<dropshot::HttpServer<Arc<App>>>,
    app: Arc<App>,
    local_addr: SocketAddr,
    workers: Vec<tokio::task::JoinHandle<()>>,
    /// The callback delivery worker, where this instance runs one.
    delivery: Option<crate::delivery::Worker>,
}

impl Drop for Service {
    fn drop(&mut self) {
        for worker in &self.workers {
            worker.abort();
        }
    }
}

impl Service {
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where `/metrics` is served when it has its own address.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.ops_server.as_ref().map(|s| s.local_addr())
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.local_addr())
    }

    /// How far the delivery worker got, where this instance runs one.
    pub fn delivery_progress(
        &self,
    ) -> Option<tokio::sync::watch::Receiver<crate::delivery::Progress>> {
        self.delivery.as_ref().map(|d| d.progress())
    }

    /// Stops within the configured grace (`shutdown_grace_seconds`).
    pub async fn stop(self) -> Result<()> {
        let grace = Duration::from_secs(self.app.config.shutdown_grace_seconds);
        self.shutdown(grace).await.map(|_| ())
    }

    /// Stops as SIGTERM asks: no new connection is accepted; requests and
    /// callback attempts under way get until `grace` to finish; whatever
    /// still runs then is cut off, and the claims of attempts cut off (or
    /// never started) are given back, so nothing is left SENDING.
    pub async fn shutdown(mut self, grace: Duration) -> Result<Stopped> {
        let deadline = tokio::time::Instant::now() + grace;
        // Expiry and dispatch commit each move in its own transaction:
        // stopping them between two loses nothing.
        for worker in self.workers.drain(..) {
            worker.abort();
        }
        let server = self.server.take();
        let closing = async move {
            match server {
                Some(server) => server.close().await.map_err(|e| anyhow!(e)),
                None => Ok(()),
            }
        };
        let mut delivery = self.delivery.take();
        let draining = async {
            match delivery.as_mut() {
                Some(worker) => worker.stop_by(deadline).await,
                None => false,
            }
        };
        let (closed, cut_off) = tokio::join!(tokio::time::timeout_at(deadline, closing), draining);
        let mut stopped = Stopped {
            attempts_cut_off: cut_off,
            ..Stopped::default()
        };
        if let Some(worker) = &delivery {
            stopped.claims_released = worker.release_claims(&self.app).await;
        }
        if let Some(ops) = self.ops_server.take() {
            let _ = ops.close().await;
        }
        match closed {
            Ok(result) => result?,
            Err(_) => stopped.requests_cut_off = true,
        }
        Ok(stopped)
    }

    /// Waits until the server stops (it runs until the process is told to
    /// stop).
    pub async fn wait(&mut self) -> Result<()> {
        match self.server.as_ref() {
            Some(server) => server.wait_for_shutdown().await.map_err(|e| anyhow!(e)),
            None => Ok(()),
        }
    }
}

/// What a shutdown had to cut off at its deadline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stopped {
    pub requests_cut_off: bool,
    pub attempts_cut_off: bool,
    /// Claims given back to WAITING_RETRY.
    pub claims_released: usize,
}

/// Connections that may wait to be accepted (std's listener takes 128;
/// the kernel caps this at `net.core.somaxconn`): a crowd that connects at
/// once waits there a moment to be answered, instead of having its
/// handshakes dropped and retried a second or more later.
const LISTEN_BACKLOG: i32 = 4096;

/// The server of the API (or, for an instance with only the workers
/// role, of its health and metrics), on `bind`.
fn api_server(app: &Arc<App>, metrics_on_api: bool) -> Result<dropshot::HttpServer<Arc<App>>> {
    let bind: SocketAddr = app
        .config
        .bind
        .parse()
        .with_context(|| format!("bind address `{}`", app.config.bind))?;
    let profile = app.config.profile;
    // dropshot's records (one per request) join the service's own log
    // stream and make the request metrics.
    // An instance with only the workers role serves its health and
    // metrics, no API.
    let served = || match app.config.roles.api {
        true => api_description(profile, metrics_on_api),
        false => ops_description(metrics_on_api),
    };
    let routes = Routes::new(served()?);
    let log = observe::logger(routes.clone());
    let config = ConfigDropshot {
        bind_address: bind,
        default_request_body_max_bytes: app.config.request_body_max_bytes,
        ..Default::default()
    };
    // Connections past the bound are answered 503 as they are accepted
    // (the patched dropshot in vendor/dropshot), so a crowd of them costs
    // what the bound allows, not what the crowd brings.
    let kept = app.config.connections_reserved_per_surface;
    let connections = dropshot::ConnectionLimit {
        permits: Arc::new(tokio::sync::Semaphore::new(
            app.config.connections_at_once - 3 * kept,
        )),
        refusal: Arc::new(observe::connection_refusal(app.config.connections_at_once)),
        reserve: (kept > 0).then(|| connections::surface_reserve(kept)),
        per_client: connections::per_address(&app.config),
    };
    ServerBuilder::new(served()?, app.clone(), log)
        .config(config)
        .version_policy(Gate::policy(routes))
        .connection_limit(connections)
        .listen_backlog(LISTEN_BACKLOG)
        .start()
        .map_err(|e| anyhow!("starting the HTTP server on {bind}: {e}"))
}

pub fn start(app: Arc<App>) -> Result<Service> {
    let metrics_on_api = app.config.metrics_bind.is_none();
    let server = api_server(&app, metrics_on_api)?;
    let ops_server = match &app.config.metrics_bind {
        Some(addr) => {
            let addr: SocketAddr = addr
                .parse()
                .with_context(|| format!("metrics bind address `{addr}`"))?;
            // Scrapes every few seconds would drown the log: this server's
            // own records are dropped.
            let quiet = slog::Logger::root(slog::Discard, slog::o!());
            let ops = ServerBuilder::new(ops_description(true)?, app.clone(), quiet)
                .config(ConfigDropshot {
                    bind_address: addr,
                    ..Default::default()
                })
                .start()
                .map_err(|e| anyhow!("starting the metrics server on {addr}: {e}"))?;
            Some(ops)
        }
        None => None,
    };
    let mut workers = Vec::new();
    if app.runs_expiry_worker() {
        let interval = Duration::from_secs(app.config.expiry_interval_seconds);
        workers.push(tokio::spawn(crate::jobs::expiry_loop(
            app.clone(),
            interval,
        )));
        workers.push(tokio::spawn(crate::jobs::billing_loop(app.clone())));
        workers.push(tokio::spawn(crate::jobs::retention_loop(app.clone())));
    }
    // Every instance places the events its own commits wrote at once.
    workers.push(tokio::spawn(crate::jobs::events_loop(app.clone())));
    // Every instance routes by the tables in force (read first in `build`).
    workers.push(tokio::spawn(crate::jobs::routing_loop(app.clone())));
    // Changes to merchants and keys made on other instances are heard at
    // once (`credentials`), and callbacks committed there wake this one's
    // worker.
    workers.extend(
        app.db
            .listen(app.runs_delivery_worker().then(|| app.wake.clone())),
    );
    let delivery = app
        .runs_delivery_worker()
        .then(|| crate::delivery::Worker::spawn(app.clone()));
    Ok(Service {
        local_addr: server.local_addr(),
        server: Some(server),
        ops_server,
        app,
        workers,
        delivery,
    })
}
