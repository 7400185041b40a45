//! The TOML file: every key optional, each falling back to the profile's
//! defaults.

use super::*;
use anyhow::{bail, Context};

/// The file's shape: every key optional, falling back to the profile's
/// defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileConfig {
    pub(super) profile: Option<Profile>,
    bind: Option<String>,
    public_base_url: Option<String>,
    database_url: Option<String>,
    database_pool_size: Option<usize>,
    database_pool_wait_ms: Option<u64>,
    database_direct_url: Option<String>,
    database_migrate_url: Option<String>,
    database_pgbouncer: Option<bool>,
    roles: Option<Roles>,
    instance_id: Option<String>,
    #[serde(default, deserialize_with = "crate::secret::optional")]
    master_key: Option<String>,
    previous_master_keys: Option<Vec<String>>,
    data_dir: Option<PathBuf>,
    timestamp_skew_seconds: Option<i64>,
    deposit_validity_seconds: Option<i64>,
    validity: Option<ValidityConfig>,
    denominations: Option<DenominationConfig>,
    key_rotation_grace_seconds: Option<i64>,
    payout_inquire_after_seconds: Option<i64>,
    payout_in_doubt_after_seconds: Option<i64>,
    event_retention_days: Option<i64>,
    attempt_retention_days: Option<i64>,
    notification_retention_days: Option<i64>,
    session_retention_days: Option<i64>,
    expiry_interval_seconds: Option<u64>,
    request_body_max_bytes: Option<usize>,
    log_level: Option<String>,
    log_format: Option<crate::telemetry::logs::LogFormat>,
    metrics_bind: Option<String>,
    shutdown_grace_seconds: Option<u64>,
    currencies: Option<BTreeMap<String, CurrencyFile>>,
    routing: Option<RoutingConfig>,
    receiving_accounts: Option<Vec<ReceivingAccountConfig>>,
    channels: Option<Vec<ChannelConfig>>,
    default_fees: Option<BTreeMap<String, DirectionRates>>,
    operators: Option<Vec<OperatorConfig>>,
    platform_events_url: Option<String>,
    billing: Option<BillingConfig>,
    #[serde(default, deserialize_with = "crate::secret::optional")]
    platform_events_secret: Option<String>,
    owner_invitation_ttl_seconds: Option<i64>,
    rate_limit: Option<RateLimitConfig>,
    callback_max_attempts: Option<i32>,
    callback_retry_interval_seconds: Option<i64>,
    callback_concurrency: Option<usize>,
    callback_in_flight_per_merchant: Option<usize>,
    callback_in_flight_per_host: Option<usize>,
    trusted_proxies: Option<Vec<String>>,
    requests_in_flight: Option<InFlightConfig>,
    connections_at_once: Option<usize>,
    connections_reserved_per_surface: Option<usize>,
    connections_per_address: Option<usize>,
    approval_dispatch_wait_ms: Option<u64>,
    password_checks_at_once: Option<usize>,
    password_checks_waiting: Option<usize>,
    callback_worker: Option<bool>,
    start_channel_sim: Option<bool>,
    callback_allow_private_addresses: Option<bool>,
    callback_allowed_private_hosts: Option<Vec<String>>,
    callback_ca_bundle: Option<PathBuf>,
}

/// A currency's keys in the file: each one over the profile's value for
/// that currency, so that `[currencies.THB] dual_approval_threshold = 600000`
/// changes that one key and leaves THB's limits and every other currency as
/// they were. A currency the profile does not have needs all three of
/// `fraction_digits`, `min_amount` and `max_amount`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CurrencyFile {
    fraction_digits: Option<u32>,
    min_amount: Option<Decimal>,
    max_amount: Option<Decimal>,
    dual_approval_threshold: Option<Threshold>,
}

/// An amount, or `"none"` for no four-eyes in that currency: TOML has no
/// null, and leaving the key out keeps the profile's threshold.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Threshold {
    Amount(Decimal),
    Word(String),
}

/// The file's currencies over the profile's.
fn merge_currencies(
    into: &mut BTreeMap<String, CurrencyConfig>,
    file: BTreeMap<String, CurrencyFile>,
) -> Result<()> {
    for (code, f) in file {
        let base = into.get(&code).cloned();
        let missing = |key: &str| {
            anyhow::anyhow!(
                "currency {code}: {key} is missing (a currency the profile does not have needs fraction_digits, min_amount and max_amount)"
            )
        };
        let threshold = match f.dual_approval_threshold {
            None => base.as_ref().and_then(|b| b.dual_approval_threshold),
            Some(Threshold::Amount(t)) => Some(t),
            Some(Threshold::Word(w)) if w == "none" => None,
            Some(Threshold::Word(w)) => bail!(
                "currency {code}: dual_approval_threshold must be an amount or \"none\", not {w:?}"
            ),
        };
        let merged = CurrencyConfig {
            fraction_digits: f
                .fraction_digits
                .or(base.as_ref().map(|b| b.fraction_digits))
                .ok_or_else(|| missing("fraction_digits"))?,
            min_amount: f
                .min_amount
                .or(base.as_ref().map(|b| b.min_amount))
                .ok_or_else(|| missing("min_amount"))?,
            max_amount: f
                .max_amount
                .or(base.as_ref().map(|b| b.max_amount))
                .ok_or_else(|| missing("max_amount"))?,
            dual_approval_threshold: threshold,
        };
        into.insert(code, merged);
    }
    Ok(())
}

/// Reads and parses the file, or an empty one when there is none.
pub(super) fn read(path: Option<&Path>) -> Result<FileConfig> {
    let Some(path) = path else {
        return Ok(FileConfig::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading config file {}", path.display()))?;
    toml::from_str::<FileConfig>(&text)
        .with_context(|| format!("parsing config file {}", path.display()))
}

/// Every key the file sets, over `c`.
pub(super) fn apply(c: &mut Config, f: FileConfig) -> Result<()> {
    macro_rules! take {
        ($($field:ident),*) => { $( if let Some(v) = f.$field { c.$field = v; } )* };
    }
    take!(
        bind,
        public_base_url,
        database_url,
        database_pool_size,
        database_pool_wait_ms,
        database_pgbouncer,
        roles,
        instance_id,
        previous_master_keys,
        data_dir,
        timestamp_skew_seconds,
        deposit_validity_seconds,
        validity,
        denominations,
        billing,
        key_rotation_grace_seconds,
        payout_inquire_after_seconds,
        payout_in_doubt_after_seconds,
        event_retention_days,
        attempt_retention_days,
        notification_retention_days,
        session_retention_days,
        expiry_interval_seconds,
        request_body_max_bytes,
        log_level,
        log_format,
        shutdown_grace_seconds,
        routing,
        receiving_accounts,
        channels,
        default_fees,
        operators,
        owner_invitation_ttl_seconds,
        rate_limit,
        callback_concurrency,
        callback_in_flight_per_merchant,
        callback_in_flight_per_host,
        requests_in_flight,
        connections_at_once,
        connections_reserved_per_surface,
        connections_per_address,
        approval_dispatch_wait_ms,
        password_checks_at_once,
        password_checks_waiting,
        callback_worker,
        start_channel_sim,
        callback_allow_private_addresses,
        callback_allowed_private_hosts
    );
    schedule(
        c,
        f.callback_max_attempts,
        f.callback_retry_interval_seconds,
    );
    if let Some(list) = f.trusted_proxies {
        c.trusted_proxies = proxies(list.iter().map(String::as_str))?;
    }
    // Settings that are optional in `Config` too: set only when given.
    macro_rules! take_given {
        ($($field:ident),*) => { $( if f.$field.is_some() { c.$field = f.$field; } )* };
    }
    take_given!(
        callback_ca_bundle,
        database_direct_url,
        database_migrate_url,
        metrics_bind,
        platform_events_url,
        platform_events_secret,
        master_key
    );
    if let Some(currencies) = f.currencies {
        merge_currencies(&mut c.currencies, currencies)?;
    }
    Ok(())
}

/// The file's callback schedule keys, each over the profile's.
fn schedule(c: &mut Config, max_attempts: Option<i32>, retry_interval_seconds: Option<i64>) {
    if let Some(v) = max_attempts {
        c.callback_schedule.max_attempts = v;
    }
    if let Some(v) = retry_interval_seconds {
        c.callback_schedule.retry_interval_seconds = v;
    }
}

/// Addresses or CIDR blocks: an address alone is a block of one.
pub(super) fn proxies<'a>(list: impl Iterator<Item = &'a str>) -> Result<Vec<ipnet::IpNet>> {
    list.map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<ipnet::IpNet>()
                .or_else(|_| p.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    anyhow::anyhow!(
                        "trusted_proxies: `{p}` is not an address or a CIDR block (10.0.0.0/8)"
                    )
                })
        })
        .collect()
}
