//! Environment variables (`PAYMENTS_*`), the last word over the file.

use super::*;
use anyhow::Context;

pub(super) fn var(name: &str) -> Option<String> {
    std::env::var(format!("{ENV_PREFIX}{name}"))
        .ok()
        .filter(|v| !v.is_empty())
}

/// `PAYMENTS_PROFILE`, when set.
pub(super) fn profile() -> Result<Option<Profile>> {
    var("PROFILE")
        .map(|p| p.parse().map_err(anyhow::Error::msg))
        .transpose()
}

/// The variables that may hold a secret, each also readable from a file
/// (`PAYMENTS_X_FILE`, `secret::from_env`).
fn apply_secrets(c: &mut Config) -> Result<()> {
    use crate::secret::from_env;
    if let Some(v) = from_env("DATABASE_URL")? {
        c.database_url = v;
    }
    if let Some(v) = from_env("DATABASE_DIRECT_URL")? {
        c.database_direct_url = Some(v);
    }
    if let Some(v) = from_env("DATABASE_MIGRATE_URL")? {
        c.database_migrate_url = Some(v);
    }
    if let Some(v) = from_env("MASTER_KEY")? {
        c.master_key = Some(v);
    }
    if let Some(v) = from_env("PREVIOUS_MASTER_KEYS")? {
        c.previous_master_keys = v
            .split([',', '\n'])
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect();
    }
    if let Some(v) = from_env("PLATFORM_EVENTS_SECRET")? {
        c.platform_events_secret = Some(v);
    }
    Ok(())
}

/// Every variable that is set, over `c`.
pub(super) fn apply(c: &mut Config) -> Result<()> {
    if let Some(v) = var("BIND") {
        c.bind = v;
    }
    if let Some(v) = var("PUBLIC_BASE_URL") {
        c.public_base_url = v;
    }
    apply_secrets(c)?;
    if let Some(v) = var("LOG_LEVEL") {
        c.log_level = v;
    }
    if let Some(v) = var("DATABASE_PGBOUNCER") {
        c.database_pgbouncer = matches!(v.as_str(), "1" | "true" | "yes");
    }
    if let Some(v) = var("INSTANCE_ID") {
        c.instance_id = v;
    }
    if let Some(v) = var("ROLES") {
        c.roles = v
            .parse()
            .map_err(anyhow::Error::msg)
            .context("PAYMENTS_ROLES")?;
    }
    if let Some(v) = var("LOG_FORMAT") {
        c.log_format = v
            .parse()
            .map_err(anyhow::Error::msg)
            .context("PAYMENTS_LOG_FORMAT")?;
    }
    if let Some(v) = var("METRICS_BIND") {
        c.metrics_bind = Some(v);
    }
    if let Some(v) = var("SHUTDOWN_GRACE_SECONDS") {
        c.shutdown_grace_seconds = v.parse().context("PAYMENTS_SHUTDOWN_GRACE_SECONDS")?;
    }
    if let Some(v) = var("START_CHANNEL_SIM") {
        c.start_channel_sim = v
            .parse()
            .context("PAYMENTS_START_CHANNEL_SIM is true or false")?;
    }
    if let Some(v) = var("DATA_DIR") {
        c.data_dir = PathBuf::from(v);
    }
    if let Some(v) = var("PLATFORM_EVENTS_URL") {
        c.platform_events_url = Some(v);
    }
    if let Some(v) = var("CALLBACK_CA_BUNDLE") {
        c.callback_ca_bundle = Some(PathBuf::from(v));
    }
    if let Some(v) = var("DATABASE_POOL_WAIT_MS") {
        c.database_pool_wait_ms = v.parse().context("PAYMENTS_DATABASE_POOL_WAIT_MS")?;
    }
    if let Some(v) = var("CONNECTIONS_AT_ONCE") {
        c.connections_at_once = v.parse().context("PAYMENTS_CONNECTIONS_AT_ONCE")?;
    }
    if let Some(v) = var("CONNECTIONS_PER_ADDRESS") {
        c.connections_per_address = v.parse().context("PAYMENTS_CONNECTIONS_PER_ADDRESS")?;
    }
    if let Some(v) = var("CONNECTIONS_RESERVED_PER_SURFACE") {
        c.connections_reserved_per_surface = v
            .parse()
            .context("PAYMENTS_CONNECTIONS_RESERVED_PER_SURFACE")?;
    }
    if let Some(v) = var("TRUSTED_PROXIES") {
        c.trusted_proxies = super::file::proxies(v.split(','))?;
    }
    if let Some(v) = var("CALLBACK_ALLOWED_PRIVATE_HOSTS") {
        c.callback_allowed_private_hosts = v
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(String::from)
            .collect();
    }
    if let Some(v) = var("TIMESTAMP_SKEW_SECONDS") {
        c.timestamp_skew_seconds = v.parse().context("PAYMENTS_TIMESTAMP_SKEW_SECONDS")?;
    }
    Ok(())
}
