//! Configuration: built-in defaults per profile, then an optional TOML file,
//! then environment variables. The sandbox runs with no file at all.

use anyhow::{bail, Context, Result};
use rust_decimal::Decimal;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Sandbox,
    Production,
}

impl FromStr for Profile {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "sandbox" => Ok(Profile::Sandbox),
            "production" => Ok(Profile::Production),
            other => bail!("unknown profile `{other}` (expected `sandbox` or `production`)"),
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Profile::Sandbox => "sandbox",
            Profile::Production => "production",
        })
    }
}

/// How deposits in a currency are collected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Route {
    /// The payer transfers to a receiving bank account with a remark.
    Account,
    /// The payer pays at a channel's payment page.
    Channel,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrencyConfig {
    /// Fraction digits an amount may have (2 for THB and BDT); at most 4.
    pub fraction_digits: u32,
    pub min_amount: Decimal,
    pub max_amount: Decimal,
}

/// `amount × percent / 100 + fixed`, at least `minimum`: a merchant's fee or
/// a channel's cost.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateConfig {
    #[serde(default)]
    pub percent: Decimal,
    #[serde(default)]
    pub fixed: Decimal,
    #[serde(default)]
    pub minimum: Decimal,
}

/// Rules per direction.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionRates {
    #[serde(default)]
    pub deposit: RateConfig,
    #[serde(default)]
    pub withdrawal: RateConfig,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    pub name: String,
    pub token: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitConfig {
    pub requests_per_minute: u32,
    pub burst: u32,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceivingAccountConfig {
    pub id: String,
    pub currency: String,
    pub name: String,
    pub account_no: String,
    pub account_holder: String,
    pub bank_code: String,
    pub bank_name: String,
    #[serde(default)]
    pub bank_branch: Option<String>,
    /// What the bank charges per deposit received.
    #[serde(default)]
    pub deposit_cost: RateConfig,
    /// Orders get a unique offset below one currency unit added to their
    /// amount, so that a transfer is matched by its amount alone.
    #[serde(default)]
    pub floating_amount: bool,
    /// The bank reports a match before the money is credited: a matched
    /// order waits in `matched` until an operator completes it.
    #[serde(default)]
    pub reports_match_first: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConfig {
    pub id: String,
    pub code: String,
    pub name: String,
    /// Only `simulator` exists so far.
    pub kind: String,
    pub currencies: Vec<String>,
    /// What the channel charges, per direction.
    #[serde(default)]
    pub costs: DirectionRates,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// Route per currency for every merchant.
    #[serde(default)]
    pub default: BTreeMap<String, Route>,
    /// Overrides per merchant code, per currency.
    #[serde(default)]
    pub merchants: BTreeMap<String, BTreeMap<String, Route>>,
}

/// How long a deposit awaits payment: per merchant code and currency, then
/// per currency, then `deposit_validity_seconds`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidityConfig {
    #[serde(default)]
    pub currencies: BTreeMap<String, i64>,
    #[serde(default)]
    pub merchants: BTreeMap<String, BTreeMap<String, i64>>,
}

/// Amounts a cashier page offers, as decimal strings: per currency, and
/// per merchant code and currency (the more specific wins).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenominationConfig {
    #[serde(default)]
    pub currencies: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub merchants: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub profile: Profile,
    pub bind: String,
    /// The address payers and merchants reach the service at; used in
    /// payment and cashier URLs.
    pub public_base_url: String,
    pub database_url: String,
    pub database_pool_size: usize,
    /// 32 bytes, base64; encrypts API keys at rest.
    pub master_key: Option<String>,
    /// Where the sandbox keeps its SQLite file and generated master key.
    pub data_dir: PathBuf,
    pub timestamp_skew_seconds: i64,
    pub deposit_validity_seconds: i64,
    pub validity: ValidityConfig,
    pub denominations: DenominationConfig,
    /// How long older API keys keep working after a new one is issued,
    /// unless the operator says otherwise.
    pub key_rotation_grace_seconds: i64,
    /// How often the expiry worker looks for due deposits (0: never, for
    /// tests that drive expiry themselves).
    pub expiry_interval_seconds: u64,
    pub request_body_max_bytes: usize,
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub log_level: String,
    pub currencies: BTreeMap<String, CurrencyConfig>,
    pub routing: RoutingConfig,
    pub receiving_accounts: Vec<ReceivingAccountConfig>,
    pub channels: Vec<ChannelConfig>,
    /// Fees of merchants without their own, per currency.
    pub default_fees: BTreeMap<String, DirectionRates>,
    /// Operator tokens; each names its operator.
    pub operators: Vec<OperatorConfig>,
    /// Every merchant's request rate unless set for the merchant.
    pub rate_limit: RateLimitConfig,
    /// Attempts, interval, stuck threshold and sweep period of callbacks.
    pub callback_schedule: crate::schedule::Schedule,
    /// Callback attempts in flight at once, per instance.
    pub callback_concurrency: usize,
    /// Whether this instance runs the delivery worker.
    pub callback_worker: bool,
    /// Deliver to loopback, private and link-local addresses (the sandbox
    /// does; production does not unless told).
    pub callback_allow_private_addresses: bool,
    /// Host names (or address literals) that may resolve to a non-public
    /// address even where those are refused: a test deployment's own
    /// receiver, say. Every other name is still checked.
    pub callback_allowed_private_hosts: Vec<String>,
    /// Extra CA certificates (PEM) trusted for callback receivers.
    pub callback_ca_bundle: Option<PathBuf>,
    /// The sandbox runs on a clock its API can advance.
    pub controllable_clock: bool,
}

/// The file's shape: every key optional, falling back to the profile's
/// defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    profile: Option<Profile>,
    bind: Option<String>,
    public_base_url: Option<String>,
    database_url: Option<String>,
    database_pool_size: Option<usize>,
    master_key: Option<String>,
    data_dir: Option<PathBuf>,
    timestamp_skew_seconds: Option<i64>,
    deposit_validity_seconds: Option<i64>,
    validity: Option<ValidityConfig>,
    denominations: Option<DenominationConfig>,
    key_rotation_grace_seconds: Option<i64>,
    expiry_interval_seconds: Option<u64>,
    request_body_max_bytes: Option<usize>,
    log_level: Option<String>,
    currencies: Option<BTreeMap<String, CurrencyConfig>>,
    routing: Option<RoutingConfig>,
    receiving_accounts: Option<Vec<ReceivingAccountConfig>>,
    channels: Option<Vec<ChannelConfig>>,
    default_fees: Option<BTreeMap<String, DirectionRates>>,
    operators: Option<Vec<OperatorConfig>>,
    rate_limit: Option<RateLimitConfig>,
    callback_max_attempts: Option<i32>,
    callback_retry_interval_seconds: Option<i64>,
    callback_concurrency: Option<usize>,
    callback_worker: Option<bool>,
    callback_allow_private_addresses: Option<bool>,
    callback_allowed_private_hosts: Option<Vec<String>>,
    callback_ca_bundle: Option<PathBuf>,
}

pub const ENV_PREFIX: &str = "PAYMENTS_";

impl Config {
    /// Defaults of a profile: enough for the sandbox to run as it is.
    pub fn defaults(profile: Profile) -> Config {
        let data_dir = PathBuf::from(".sandbox");
        let dec = |s: &str| Decimal::from_str(s).unwrap_or_default();
        let mut currencies = BTreeMap::new();
        for code in ["THB", "BDT"] {
            currencies.insert(
                code.to_string(),
                CurrencyConfig {
                    fraction_digits: 2,
                    min_amount: dec("1"),
                    max_amount: dec("1000000"),
                },
            );
        }
        let mut routing = RoutingConfig::default();
        routing.default.insert("THB".into(), Route::Account);
        routing.default.insert("BDT".into(), Route::Channel);
        Config {
            profile,
            bind: "127.0.0.1:8080".into(),
            public_base_url: "http://127.0.0.1:8080".into(),
            database_url: match profile {
                Profile::Sandbox => format!("sqlite://{}", data_dir.join("payments.db").display()),
                Profile::Production => String::new(),
            },
            database_pool_size: 16,
            master_key: None,
            data_dir,
            timestamp_skew_seconds: 300,
            deposit_validity_seconds: 30 * 60,
            validity: ValidityConfig::default(),
            denominations: DenominationConfig {
                currencies: BTreeMap::from([
                    (
                        "THB".into(),
                        ["100", "300", "500", "1000", "2000", "5000"]
                            .map(String::from)
                            .to_vec(),
                    ),
                    (
                        "BDT".into(),
                        ["500", "1000", "2000", "5000"].map(String::from).to_vec(),
                    ),
                ]),
                merchants: BTreeMap::new(),
            },
            key_rotation_grace_seconds: 24 * 60 * 60,
            expiry_interval_seconds: 15,
            request_body_max_bytes: 64 * 1024,
            log_level: "info".into(),
            currencies,
            routing,
            // The first is every THB merchant's unless an operator assigns
            // another; the other two show the other ways banks behave.
            receiving_accounts: vec![
                ReceivingAccountConfig {
                    id: "acct-thb-1".into(),
                    currency: "THB".into(),
                    name: "Sandbox collection account".into(),
                    account_no: "1234567890".into(),
                    account_holder: "Sandbox Payments Co., Ltd.".into(),
                    bank_code: "KBANK".into(),
                    bank_name: "Kasikornbank".into(),
                    bank_branch: Some("Silom".into()),
                    deposit_cost: RateConfig::default(),
                    floating_amount: false,
                    reports_match_first: false,
                },
                ReceivingAccountConfig {
                    id: "acct-thb-float".into(),
                    currency: "THB".into(),
                    name: "Sandbox account matched by amount".into(),
                    account_no: "2234567890".into(),
                    account_holder: "Sandbox Payments Co., Ltd.".into(),
                    bank_code: "SCB".into(),
                    bank_name: "Siam Commercial Bank".into(),
                    bank_branch: None,
                    deposit_cost: RateConfig::default(),
                    floating_amount: true,
                    reports_match_first: false,
                },
                ReceivingAccountConfig {
                    id: "acct-thb-confirm".into(),
                    currency: "THB".into(),
                    name: "Sandbox account that reports a match first".into(),
                    account_no: "3234567890".into(),
                    account_holder: "Sandbox Payments Co., Ltd.".into(),
                    bank_code: "BBL".into(),
                    bank_name: "Bangkok Bank".into(),
                    bank_branch: None,
                    deposit_cost: RateConfig::default(),
                    floating_amount: false,
                    reports_match_first: true,
                },
            ],
            channels: vec![ChannelConfig {
                id: "chan-sim-1".into(),
                code: "SIMULATOR".into(),
                name: "Sandbox simulator".into(),
                kind: "simulator".into(),
                currencies: vec!["THB".into(), "BDT".into()],
                costs: DirectionRates {
                    deposit: RateConfig {
                        percent: dec("0.5"),
                        ..Default::default()
                    },
                    withdrawal: RateConfig {
                        fixed: dec("2"),
                        ..Default::default()
                    },
                },
            }],
            default_fees: BTreeMap::new(),
            operators: Vec::new(),
            rate_limit: RateLimitConfig {
                requests_per_minute: 60_000,
                burst: 2000,
            },
            callback_schedule: crate::schedule::Schedule::default(),
            callback_concurrency: 64,
            callback_worker: true,
            callback_allow_private_addresses: profile == Profile::Sandbox,
            callback_allowed_private_hosts: Vec::new(),
            callback_ca_bundle: None,
            controllable_clock: profile == Profile::Sandbox,
        }
    }

    /// Loads the configuration: the profile comes from the environment
    /// (`PAYMENTS_PROFILE`) or the file, defaulting to the sandbox.
    pub fn load(file: Option<&Path>) -> Result<Config> {
        let file_config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading config file {}", path.display()))?;
                toml::from_str::<FileConfig>(&text)
                    .with_context(|| format!("parsing config file {}", path.display()))?
            }
            None => FileConfig::default(),
        };
        let profile = match env("PROFILE") {
            Some(p) => p.parse()?,
            None => file_config.profile.unwrap_or(Profile::Sandbox),
        };
        let mut c = Config::defaults(profile);
        let defaults = Config::defaults(profile);
        let f = file_config;
        macro_rules! take {
            ($($field:ident),*) => { $( if let Some(v) = f.$field { c.$field = v; } )* };
        }
        take!(
            bind,
            public_base_url,
            database_url,
            database_pool_size,
            data_dir,
            timestamp_skew_seconds,
            deposit_validity_seconds,
            validity,
            denominations,
            key_rotation_grace_seconds,
            expiry_interval_seconds,
            request_body_max_bytes,
            log_level,
            currencies,
            routing,
            receiving_accounts,
            channels,
            default_fees,
            operators,
            rate_limit,
            callback_concurrency,
            callback_worker,
            callback_allow_private_addresses,
            callback_allowed_private_hosts
        );
        if let Some(v) = f.callback_max_attempts {
            c.callback_schedule.max_attempts = v;
        }
        if let Some(v) = f.callback_retry_interval_seconds {
            c.callback_schedule.retry_interval_seconds = v;
        }
        if f.callback_ca_bundle.is_some() {
            c.callback_ca_bundle = f.callback_ca_bundle;
        }
        if f.master_key.is_some() {
            c.master_key = f.master_key;
        }
        if let Some(v) = env("BIND") {
            c.bind = v;
        }
        if let Some(v) = env("PUBLIC_BASE_URL") {
            c.public_base_url = v;
        }
        if let Some(v) = env("DATABASE_URL") {
            c.database_url = v;
        }
        if let Some(v) = env("MASTER_KEY") {
            c.master_key = Some(v);
        }
        if let Some(v) = env("LOG_LEVEL") {
            c.log_level = v;
        }
        if let Some(v) = env("DATA_DIR") {
            c.data_dir = PathBuf::from(v);
        }
        if let Some(v) = env("CALLBACK_CA_BUNDLE") {
            c.callback_ca_bundle = Some(PathBuf::from(v));
        }
        if let Some(v) = env("CALLBACK_ALLOWED_PRIVATE_HOSTS") {
            c.callback_allowed_private_hosts = v
                .split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(String::from)
                .collect();
        }
        if let Some(v) = env("TIMESTAMP_SKEW_SECONDS") {
            c.timestamp_skew_seconds = v.parse().context("PAYMENTS_TIMESTAMP_SKEW_SECONDS")?;
        }
        // Defaults that follow other settings unless set themselves: the
        // sandbox's database lives in its data directory, and the public
        // address is the bound one.
        if c.database_url == defaults.database_url && profile == Profile::Sandbox {
            c.database_url = format!("sqlite://{}", c.data_dir.join("payments.db").display());
        }
        if c.public_base_url == defaults.public_base_url && c.bind != defaults.bind {
            c.public_base_url = format!("http://{}", c.bind);
        }
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<()> {
        if self.profile == Profile::Production {
            if self.database_url.is_empty() {
                bail!("the production profile needs a PostgreSQL URL: set PAYMENTS_DATABASE_URL or database_url");
            }
            if !self.database_url.starts_with("postgres://")
                && !self.database_url.starts_with("postgresql://")
            {
                bail!(
                    "the production profile runs only on PostgreSQL, not on `{}`",
                    redact_url(&self.database_url)
                );
            }
            if self.master_key.is_none() {
                bail!("the production profile needs a master key: set PAYMENTS_MASTER_KEY (32 bytes, base64)");
            }
        }
        for (code, cur) in &self.currencies {
            if cur.fraction_digits > 4 {
                bail!("currency {code}: fraction_digits is at most 4");
            }
            if cur.min_amount <= Decimal::ZERO || cur.min_amount > cur.max_amount {
                bail!("currency {code}: need 0 < min_amount <= max_amount");
            }
        }
        let validities = std::iter::once(&self.deposit_validity_seconds)
            .chain(self.validity.currencies.values())
            .chain(self.validity.merchants.values().flat_map(|m| m.values()));
        for v in validities {
            if !(60..=7 * 24 * 3600).contains(v) {
                bail!("a deposit validity of {v} seconds is outside 60 to 604800");
            }
        }
        let lists = self
            .denominations
            .currencies
            .iter()
            .chain(self.denominations.merchants.values().flat_map(|m| m.iter()));
        for (currency, list) in lists {
            for amount in list {
                match Decimal::from_str(amount) {
                    Ok(a) if a > Decimal::ZERO => {}
                    _ => bail!("denomination `{amount}` of {currency} is not a positive decimal"),
                }
            }
        }
        let s = &self.callback_schedule;
        if !(1..=20).contains(&s.max_attempts) || !(1..=3600).contains(&s.retry_interval_seconds) {
            bail!("callback_max_attempts must be 1 to 20 and callback_retry_interval_seconds 1 to 3600");
        }
        if !(0..=30 * 24 * 3600).contains(&self.key_rotation_grace_seconds) {
            bail!("key_rotation_grace_seconds is outside 0 to 2592000");
        }
        let mut ids = std::collections::BTreeSet::new();
        for account in &self.receiving_accounts {
            if !ids.insert(&account.id) {
                bail!("receiving account id {} appears twice", account.id);
            }
            if !self.currencies.contains_key(&account.currency) {
                bail!(
                    "receiving account {} uses currency {}, which is not configured",
                    account.id,
                    account.currency
                );
            }
        }
        for route in self
            .routing
            .default
            .keys()
            .chain(self.routing.merchants.values().flat_map(|m| m.keys()))
        {
            if !self.currencies.contains_key(route) {
                bail!("routing names currency {route}, which is not configured");
            }
        }
        Ok(())
    }

    /// Seconds a new deposit of this merchant in this currency awaits
    /// payment.
    pub fn validity_for(&self, merchant_code: &str, currency: &str) -> i64 {
        self.validity
            .merchants
            .get(merchant_code)
            .and_then(|m| m.get(currency))
            .or_else(|| self.validity.currencies.get(currency))
            .copied()
            .unwrap_or(self.deposit_validity_seconds)
    }

    /// The amounts a cashier page offers this merchant's payers in this
    /// currency, smallest first (checked to parse by `validate`).
    pub fn denominations_for(&self, merchant_code: &str, currency: &str) -> Vec<Decimal> {
        let mut amounts: Vec<Decimal> = self
            .denominations
            .merchants
            .get(merchant_code)
            .and_then(|m| m.get(currency))
            .or_else(|| self.denominations.currencies.get(currency))
            .map(|list| {
                list.iter()
                    .filter_map(|a| Decimal::from_str(a).ok())
                    .collect()
            })
            .unwrap_or_default();
        amounts.sort();
        amounts.dedup();
        amounts
    }

    pub fn receiving_account(&self, id: &str) -> Option<&ReceivingAccountConfig> {
        self.receiving_accounts.iter().find(|a| a.id == id)
    }

    pub fn route_for(&self, merchant_code: &str, currency: &str) -> Option<Route> {
        self.routing
            .merchants
            .get(merchant_code)
            .and_then(|m| m.get(currency))
            .or_else(|| self.routing.default.get(currency))
            .copied()
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(format!("{ENV_PREFIX}{name}"))
        .ok()
        .filter(|v| !v.is_empty())
}

/// A database URL with any password removed, for messages and logs.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.find(':') {
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme + 3],
                    &creds[..colon],
                    &url[at..]
                ),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_refuses_sqlite() {
        let mut c = Config::defaults(Profile::Production);
        c.master_key = Some("x".into());
        c.database_url = "sqlite://x.db".into();
        let err = c.validate().unwrap_err().to_string();
        assert!(err.contains("only on PostgreSQL"), "{err}");
    }

    #[test]
    fn validity_is_most_specific_first() {
        let mut c = Config::defaults(Profile::Sandbox);
        c.validity.currencies.insert("THB".into(), 900);
        c.validity
            .merchants
            .insert("m1".into(), [("THB".to_string(), 600)].into());
        assert_eq!(c.validity_for("m1", "THB"), 600);
        assert_eq!(c.validity_for("m2", "THB"), 900);
        assert_eq!(c.validity_for("m1", "BDT"), 1800);
        c.validity.currencies.insert("BDT".into(), 5);
        assert!(c.validate().unwrap_err().to_string().contains("validity"));
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
    }
}
