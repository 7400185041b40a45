//! Assembling and starting the service: configuration to a running HTTP
//! server, with the published spec served beside the API.

use crate::app::App;
use crate::channels::Channels;
use crate::clock::Clock;
use crate::config::{Config, OperatorConfig};
use crate::domain::routing::Profile;
use crate::http::merchant::MerchantApiImpl;
use crate::http::operator::OperatorApiImpl;
use crate::http::sandbox::SandboxApiImpl;
use crate::keys::KeyVault;
use crate::store::Db;
use anyhow::{anyhow, Context, Result};
use dropshot::{
    endpoint, ApiDescription, Body, ConfigDropshot, ConfigLogging, ConfigLoggingLevel, HttpError,
    RequestContext, ServerBuilder,
};
use std::net::SocketAddr;
use std::sync::Arc;

/// Builds the shared state: master key, database (migrated), channels.
pub async fn build_app(mut config: Config, clock: Arc<dyn Clock>) -> Result<Arc<App>> {
    if config.profile == Profile::Sandbox && config.operators.is_empty() {
        config.operators.push(OperatorConfig {
            name: SANDBOX_OPERATOR.into(),
            token: load_or_create_secret(&config.data_dir, "operator.token")?,
        });
    }
    let master_key = match (&config.master_key, config.profile) {
        (Some(k), _) => k.clone(),
        (None, Profile::Sandbox) => KeyVault::load_or_create(&config.data_dir)?,
        (None, Profile::Production) => {
            return Err(anyhow!("the production profile needs PAYMENTS_MASTER_KEY"))
        }
    };
    let vault = KeyVault::from_base64(&master_key)?;
    let wake: Arc<tokio::sync::Notify> = Default::default();
    let db = Db::connect(
        &config.database_url,
        config.database_pool_size,
        wake.clone(),
    )
    .await?;
    let channels = Channels::from_config(&config.channels, &config.public_base_url)?;
    let courier = crate::delivery::courier::Courier::new(&config)?;
    Ok(Arc::new(App {
        config,
        db,
        clock,
        vault,
        channels,
        rate_limiter: Default::default(),
        wake,
        courier: Box::new(courier),
        expiry: Default::default(),
    }))
}

/// The operator the sandbox creates for itself when none is configured.
pub const SANDBOX_OPERATOR: &str = "sandbox-operator";

/// A random secret kept in the sandbox's data directory across restarts.
fn load_or_create_secret(dir: &std::path::Path, file: &str) -> Result<String> {
    let path = dir.join(file);
    if let Ok(existing) = std::fs::read_to_string(&path) {
        return Ok(existing.trim().to_string());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let secret = format!("op_test_{}", hex::encode(uuid::Uuid::new_v4().as_bytes()));
    std::fs::write(&path, &secret).with_context(|| format!("writing {}", path.display()))?;
    Ok(secret)
}

/// Every API the profile serves on one server. The sandbox's simulation
/// API is not registered in production, so it answers 404 there.
pub fn api_description(profile: Profile) -> Result<ApiDescription<Arc<App>>> {
    let mut api = ApiDescription::new();
    merchant_api::merchant::register::<MerchantApiImpl>(&mut api)
        .map_err(|e| anyhow!("merchant API: {e}"))?;
    merchant_api::operator::register::<OperatorApiImpl>(&mut api)
        .map_err(|e| anyhow!("operator API: {e}"))?;
    if profile == Profile::Sandbox {
        merchant_api::sandbox::register::<SandboxApiImpl>(&mut api)
            .map_err(|e| anyhow!("sandbox API: {e}"))?;
        api.register(crate::http::pages::simulator::payment_page)
            .and_then(|()| api.register(crate::http::pages::simulator::payment_choice))
            .map_err(|e| anyhow!("simulator page: {e}"))?;
    }
    api.register(crate::http::pages::cashier::cashier_page)
        .and_then(|()| api.register(crate::http::pages::cashier::cashier_choice))
        .and_then(|()| api.register(crate::http::pages::cashier::cashier_status))
        .and_then(|()| api.register(crate::http::pages::cashier::cashier_asset))
        .map_err(|e| anyhow!("cashier page: {e}"))?;
    api.register(openapi_document)
        .map_err(|e| anyhow!("registering the spec endpoint: {e}"))?;
    Ok(api)
}

/// The published contract, exactly as checked in under openapi/.
#[endpoint {
    method = GET,
    path = "/api/v1/merchant/openapi.json",
    unpublished = true,
}]
async fn openapi_document(
    _rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    http::Response::builder()
        .status(http::StatusCode::OK)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(
            merchant_api::merchant::OPENAPI_DOCUMENT.to_string(),
        ))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

pub struct Service {
    server: Option<dropshot::HttpServer<Arc<App>>>,
    app: Arc<App>,
    local_addr: SocketAddr,
    workers: Vec<tokio::task::JoinHandle<()>>,
    /// Tells the delivery worker to stop claiming and finish what it sent.
    stop: tokio::sync::watch::Sender<bool>,
    delivery: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Service {
    fn drop(&mut self) {
        for worker in &self.workers {
            worker.abort();
        }
        if let Some(delivery) = &self.delivery {
            delivery.abort();
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

    pub fn base_url(&self) -> String {
        format!("http://{}", self.local_addr())
    }

    /// Stops serving, lets the callback attempts under way finish (each
    /// is bounded by its timeout), then returns.
    pub async fn stop(mut self) -> Result<()> {
        let closed = match self.server.take() {
            Some(server) => server.close().await.map_err(|e| anyhow!(e)),
            None => Ok(()),
        };
        let _ = self.stop.send(true);
        if let Some(delivery) = self.delivery.take() {
            let _ = delivery.await;
        }
        closed
    }

    /// Waits until the server stops (it runs until the process is told to
    /// stop).
    pub async fn wait(mut self) -> Result<()> {
        match self.server.take() {
            Some(server) => server.await.map_err(|e| anyhow!(e)),
            None => Ok(()),
        }
    }
}

pub fn start(app: Arc<App>) -> Result<Service> {
    let bind: SocketAddr = app
        .config
        .bind
        .parse()
        .with_context(|| format!("bind address `{}`", app.config.bind))?;
    let level = match app.config.log_level.as_str() {
        "error" => ConfigLoggingLevel::Error,
        "warn" => ConfigLoggingLevel::Warn,
        "debug" => ConfigLoggingLevel::Debug,
        "trace" => ConfigLoggingLevel::Trace,
        _ => ConfigLoggingLevel::Info,
    };
    let log = ConfigLogging::StderrTerminal { level }
        .to_logger("payments")
        .map_err(|e| anyhow!("logger: {e}"))?;
    let config = ConfigDropshot {
        bind_address: bind,
        default_request_body_max_bytes: app.config.request_body_max_bytes,
        ..Default::default()
    };
    let server = ServerBuilder::new(api_description(app.config.profile)?, app.clone(), log)
        .config(config)
        .version_policy(crate::http::gate::Gate::policy(api_description(
            app.config.profile,
        )?))
        .start()
        .map_err(|e| anyhow!("starting the HTTP server on {bind}: {e}"))?;
    let workers = if app.config.expiry_interval_seconds > 0 {
        let interval = std::time::Duration::from_secs(app.config.expiry_interval_seconds);
        vec![tokio::spawn(crate::jobs::expiry_loop(
            app.clone(),
            interval,
        ))]
    } else {
        Vec::new()
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let delivery = app
        .config
        .callback_worker
        .then(|| tokio::spawn(crate::delivery::worker(app.clone(), stopped)));
    Ok(Service {
        local_addr: server.local_addr(),
        server: Some(server),
        app,
        workers,
        stop,
        delivery,
    })
}
