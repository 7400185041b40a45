//! Every endpoint the service serves, as one description per server.
//! Registering a generated trait instantiates dropshot's glue for each of
//! its handlers; doing it here, beside the handlers, keeps that work in
//! this crate's incremental build instead of redoing it in the binary's
//! crate after every handler edit.

use crate::app::App;
use crate::domain::routing::Profile;
use crate::merchant::MerchantApiImpl;
use crate::operator::OperatorApiImpl;
use crate::sandbox::SandboxApiImpl;
use anyhow::{anyhow, Result};
use dropshot::ApiDescription;
use std::sync::Arc;

/// Every API the profile serves on one server. The sandbox's simulation
/// API is not registered in production, so it answers 404 there. Health
/// and, unless it has its own address (`metrics_on_api`), the metrics are
/// served here too.
pub fn api_description(profile: Profile, metrics_on_api: bool) -> Result<ApiDescription<Arc<App>>> {
    let mut api = ops_description(metrics_on_api)?;
    merchant_api::merchant::register::<MerchantApiImpl>(&mut api)
        .map_err(|e| anyhow!("merchant API: {e}"))?;
    merchant_api::channel_notifications::register::<
        crate::channel_notifications::ChannelNotificationsApiImpl,
    >(&mut api)
    .map_err(|e| anyhow!("registering the channel notifications API: {e}"))?;
    merchant_api::operator::register::<OperatorApiImpl>(&mut api)
        .map_err(|e| anyhow!("operator API: {e}"))?;
    if profile == Profile::Sandbox {
        merchant_api::sandbox::register::<SandboxApiImpl>(&mut api)
            .map_err(|e| anyhow!("sandbox API: {e}"))?;
        api.register(crate::pages::simulator::payment_page)
            .and_then(|()| api.register(crate::pages::simulator::payment_choice))
            .map_err(|e| anyhow!("simulator page: {e}"))?;
        api.register(crate::platform_inbox::receive_platform_event)
            .map_err(|e| anyhow!("platform events inbox: {e}"))?;
    }
    api.register(crate::pages::cashier::cashier_page)
        .and_then(|()| api.register(crate::pages::cashier::cashier_choice))
        .and_then(|()| api.register(crate::pages::cashier::cashier_status))
        .and_then(|()| api.register(crate::pages::cashier::cashier_asset))
        .map_err(|e| anyhow!("cashier page: {e}"))?;
    crate::pages::console::register(&mut api).map_err(|e| anyhow!("console: {e}"))?;
    crate::pages::portal::register(&mut api).map_err(|e| anyhow!("portal: {e}"))?;
    api.register(crate::pages::home::home)
        .map_err(|e| anyhow!("home page: {e}"))?;
    api.register(crate::contract::current)
        .and_then(|()| api.register(crate::contract::version))
        .and_then(|()| api.register(crate::contract::webhooks))
        .and_then(|()| api.register(crate::pages::docs::docs_page))
        .and_then(|()| api.register(crate::pages::docs::docs_script))
        .map_err(|e| anyhow!("registering the spec endpoints: {e}"))?;
    Ok(api)
}

/// Health, and the metrics when `with_metrics`.
pub fn ops_description(with_metrics: bool) -> Result<ApiDescription<Arc<App>>> {
    use crate::health;
    let mut api = ApiDescription::new();
    api.register(health::healthz)
        .and_then(|()| api.register(health::readyz))
        .map_err(|e| anyhow!("health endpoints: {e}"))?;
    if with_metrics {
        api.register(health::scrape)
            .map_err(|e| anyhow!("metrics endpoint: {e}"))?;
    }
    Ok(api)
}
