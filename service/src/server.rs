//! Assembling and starting the service: configuration to a running HTTP
//! server, with the published spec served beside the API.

use crate::api::MerchantApiImpl;
use crate::app::App;
use crate::channel::Channels;
use crate::clock::Clock;
use crate::config::{Config, Profile};
use crate::db::Db;
use crate::keys::KeyVault;
use anyhow::{anyhow, Context, Result};
use dropshot::{
    endpoint, ApiDescription, Body, ConfigDropshot, ConfigLogging, ConfigLoggingLevel, HttpError,
    RequestContext, ServerBuilder,
};
use std::net::SocketAddr;
use std::sync::Arc;

/// Builds the shared state: master key, database (migrated), channels.
pub async fn build_app(config: Config, clock: Arc<dyn Clock>) -> Result<Arc<App>> {
    let master_key = match (&config.master_key, config.profile) {
        (Some(k), _) => k.clone(),
        (None, Profile::Sandbox) => KeyVault::load_or_create(&config.data_dir)?,
        (None, Profile::Production) => {
            return Err(anyhow!("the production profile needs PAYMENTS_MASTER_KEY"))
        }
    };
    let vault = KeyVault::from_base64(&master_key)?;
    let db = Db::connect(&config.database_url, config.database_pool_size).await?;
    let channels = Channels::from_config(&config.channels, &config.public_base_url)?;
    Ok(Arc::new(App {
        config,
        db,
        clock,
        vault,
        channels,
    }))
}

pub fn api_description() -> Result<ApiDescription<Arc<App>>> {
    let mut api = merchant_api::merchant::merchant_api_mod::api_description::<MerchantApiImpl>()
        .map_err(|e| anyhow!("merchant API description: {e}"))?;
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
    server: dropshot::HttpServer<Arc<App>>,
}

impl Service {
    pub fn app(&self) -> &Arc<App> {
        self.server.app_private()
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.local_addr())
    }

    pub async fn stop(self) -> Result<()> {
        self.server.close().await.map_err(|e| anyhow!(e))
    }

    /// Waits until the server stops (it runs until the process is told to
    /// stop).
    pub async fn wait(self) -> Result<()> {
        self.server.await.map_err(|e| anyhow!(e))
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
    let server = ServerBuilder::new(api_description()?, app, log)
        .config(config)
        .start()
        .map_err(|e| anyhow!("starting the HTTP server on {bind}: {e}"))?;
    Ok(Service { server })
}
