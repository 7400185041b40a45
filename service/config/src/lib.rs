//! Configuration: built-in defaults per profile (`defaults`), then an
//! optional TOML file (`file`), then environment variables (`env`),
//! checked as a whole (`validate`). The sandbox runs with no file at all.
//! Start-up reads it into `App`; the lookups below answer the use cases'
//! per-merchant and per-currency questions from it.

mod defaults;
mod env;
mod file;
pub mod keys;
mod secret;
mod validate;

// The layers below, under the names every module of this crate uses for
// them (`crate::domain::…`): Cargo lets this crate name nothing above it.
use payments_domain as domain;
use payments_telemetry as telemetry;

use anyhow::Result;
use rust_decimal::Decimal;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::domain::error::ApiError;
use crate::domain::fees::{DirectionRates, RateConfig};
use crate::domain::money::CurrencyConfig;
use crate::domain::routing::{Profile, Route};

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    pub name: String,
    /// Inline, or `{ file = … }` / `{ env = … }` (`secret`).
    #[serde(deserialize_with = "secret::required")]
    pub token: String,
}

impl std::fmt::Debug for OperatorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is never printed.
        f.debug_struct("OperatorConfig")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
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
    /// The account's PromptPay ID (THB only): the cashier page shows a QR
    /// code for it. Checked at start-up: a Thai mobile number or a 13-digit
    /// tax number with a valid check digit.
    #[serde(default)]
    pub promptpay_id: Option<String>,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConfig {
    pub id: String,
    pub code: String,
    pub name: String,
    /// `simulator` (the sandbox's, in process) or `http` (an adapter
    /// speaking `openapi/channel.json`).
    pub kind: String,
    pub currencies: Vec<String>,
    /// What the channel charges, per direction.
    #[serde(default)]
    pub costs: DirectionRates,
    /// `http`: the adapter's base URL.
    #[serde(default)]
    pub base_url: Option<String>,
    /// `http`: the secret both sides sign with (at least 32 bytes);
    /// inline, or `{ file = … }` / `{ env = … }` (`secret`).
    #[serde(default, deserialize_with = "secret::optional")]
    pub secret: Option<String>,
    /// `http`: how long one call may take before its outcome is unknown
    /// (100 to 60000 ms; 10000 if not set).
    #[serde(default)]
    pub request_timeout_ms: Option<u64>,
    /// `http`: the adapter runs inside the operator's own network (beside
    /// the service, on the same host): production then lets its base_url
    /// be `http://` and its address private. Otherwise production calls
    /// adapters over https at public addresses only.
    #[serde(default)]
    pub private_network: bool,
}

impl std::fmt::Debug for ChannelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret is never printed.
        f.debug_struct("ChannelConfig")
            .field("id", &self.id)
            .field("code", &self.code)
            .field("kind", &self.kind)
            .field("currencies", &self.currencies)
            .field("base_url", &self.base_url)
            .field("request_timeout_ms", &self.request_timeout_ms)
            .field("private_network", &self.private_network)
            .finish_non_exhaustive()
    }
}

/// Requests in flight at once, per surface (`app::admission`): the
/// payment API (merchants, channels, the sandbox), the operator API, and
/// the pages (cashier, console, portal, documents).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct InFlightConfig {
    pub payments: usize,
    pub operators: usize,
    pub pages: usize,
    /// Of the payment API's, at most this many of one merchant (once its
    /// signature is checked): one merchant's flood keeps to its share of
    /// the database's connections, and the others' requests go on.
    pub per_merchant: usize,
    /// Of one merchant's requests in flight, at most this many run at once
    /// (half of `database_pool_size` unless set); the rest wait their turn,
    /// up to `database_pool_wait_ms`. So one merchant's crowd never holds
    /// every database connection, and another merchant's request finds one
    /// free instead of queueing behind the crowd.
    pub running_per_merchant: Option<usize>,
}

impl InFlightConfig {
    /// One merchant's requests running at once, on a database pool of
    /// `pool` connections: as configured, or half the pool (at least one).
    pub fn running_per_merchant_of(&self, pool: usize) -> usize {
        self.running_per_merchant.unwrap_or((pool / 2).max(1))
    }
}

impl Default for InFlightConfig {
    fn default() -> Self {
        InFlightConfig {
            payments: 512,
            operators: 64,
            pages: 128,
            per_merchant: 64,
            running_per_merchant: None,
        }
    }
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
    /// Which channels a channel deposit or a payout may go to, per currency
    /// and direction (and a merchant's own, by its code): the candidates
    /// in the order they are tried. A table the operators set through the
    /// operator API takes the place of the one configured here; with
    /// neither, every channel that lists the currency, by id, the first
    /// taking the orders and the others its fallbacks.
    #[serde(default)]
    pub tables: Vec<RoutingTableConfig>,
    /// When a channel failing its calls rests, and for how long.
    #[serde(default)]
    pub health: crate::domain::routing::health::HealthConfig,
}

/// One configured routing table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingTableConfig {
    pub currency: String,
    pub direction: crate::domain::routing::table::RoutedDirection,
    /// A merchant's code: this table is that merchant's own.
    #[serde(default)]
    pub merchant: Option<String>,
    pub candidates: Vec<crate::domain::routing::table::Candidate>,
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

/// What a billing statement says of who issues it, whom it bills and the
/// tax on its fees. Nothing here is hard-coded for a country: Thailand's
/// VAT or Bangladesh's is a rate configured per currency.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BillingConfig {
    /// The platform, as the statement's issuer; unset, the document says
    /// the issuer is not configured.
    pub issuer: Option<PartyConfig>,
    /// Each merchant's legal details, by merchant code; a merchant not
    /// named is billed by its name alone.
    #[serde(default)]
    pub merchants: BTreeMap<String, PartyConfig>,
    /// Tax charged on the fees, per currency (`[billing.tax.THB]`).
    #[serde(default)]
    pub tax: BTreeMap<String, TaxConfig>,
}

/// A legal person as a statement names it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartyConfig {
    pub legal_name: String,
    /// The postal address, one line an entry.
    #[serde(default)]
    pub address: Vec<String>,
    pub tax_number: Option<String>,
}

/// A tax on fees: its name as the statement prints it (`VAT`) and its rate
/// in percent, a decimal string (`"7"`), never a float.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaxConfig {
    pub name: String,
    pub rate_percent: Decimal,
}

/// What an instance runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roles {
    pub api: bool,
    pub workers: bool,
}

impl Default for Roles {
    fn default() -> Self {
        Roles {
            api: true,
            workers: true,
        }
    }
}

impl std::str::FromStr for Roles {
    type Err = String;

    /// `api`, `workers`, or `api,workers`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut roles = Roles {
            api: false,
            workers: false,
        };
        for role in s.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            match role {
                "api" => roles.api = true,
                "workers" => roles.workers = true,
                other => {
                    return Err(format!(
                        "unknown role `{other}` (expected api, workers or api,workers)"
                    ))
                }
            }
        }
        if !roles.api && !roles.workers {
            return Err("an instance needs a role: api, workers or api,workers".into());
        }
        Ok(roles)
    }
}

impl<'de> Deserialize<'de> for Roles {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = Vec::<String>::deserialize(d)?;
        list.join(",").parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    pub profile: Profile,
    pub bind: String,
    /// The address payers and merchants reach the service at; used in
    /// payment and cashier URLs.
    pub public_base_url: String,
    pub database_url: String,
    /// A connection straight to PostgreSQL, not through a pooler: for
    /// migrations and for LISTEN, which a transaction pooler cannot carry.
    /// Unset, `database_url` is used for both.
    pub database_direct_url: Option<String>,
    /// PostgreSQL as the role that owns the tables, for migrations only:
    /// set, the service migrates as it and runs as `database_url`'s role,
    /// which then holds grants and never `UPDATE`, `DELETE` or `TRUNCATE`
    /// on the audit trail, the journal or the approvals (docs/production.md).
    pub database_migrate_url: Option<String>,
    /// `database_url` goes through PgBouncer in transaction pooling mode
    /// (before 1.21): no statement is kept prepared across transactions,
    /// and every unit of work runs in a transaction.
    pub database_pgbouncer: bool,
    pub database_pool_size: usize,
    /// How long a request waits for a free database connection before it
    /// is answered 503 with `Retry-After` (100 to 60000 ms).
    pub database_pool_wait_ms: u64,
    /// What this instance runs: the API, the workers (delivery, expiry,
    /// dispatch), or both.
    pub roles: Roles,
    /// This instance's name among those on the database, unique among
    /// live ones and the same across its restarts (a pod's name): its
    /// callback claims carry it, so that after a crash it gives back what
    /// it held at once. A random name per start when unset.
    pub instance_id: String,
    /// 32 bytes, base64; encrypts API keys at rest.
    pub master_key: Option<String>,
    /// Earlier master keys, newest first: they still decrypt (never
    /// encrypt) while `payments keys rotate` reseals everything under
    /// `master_key`; then they can go.
    pub previous_master_keys: Vec<String>,
    /// Where the sandbox keeps its SQLite file and generated master key.
    pub data_dir: PathBuf,
    pub timestamp_skew_seconds: i64,
    pub deposit_validity_seconds: i64,
    pub validity: ValidityConfig,
    pub denominations: DenominationConfig,
    /// How long older API keys keep working after a new one is issued,
    /// unless the operator says otherwise.
    pub key_rotation_grace_seconds: i64,
    /// How long a payout may sit at its channel (`processing`) without a
    /// word before the service asks the channel about it, and again after
    /// each answer that says it is still under way.
    pub payout_inquire_after_seconds: i64,
    /// How long a payout sent without an answer to trust may stay in doubt
    /// before it is set aside for an operator (`needs_manual_intervention`).
    pub payout_in_doubt_after_seconds: i64,
    /// How many days a merchant's events stay in its feed.
    pub event_retention_days: i64,
    /// Callback attempts' detail is kept this long (the deliveries stay).
    pub attempt_retention_days: i64,
    /// Channel notifications that moved an order or changed nothing are
    /// kept this long; those waiting for an operator stay.
    pub notification_retention_days: i64,
    /// Web sessions last used this long ago are deleted (each ended long
    /// before: none outlives 12 hours).
    pub session_retention_days: i64,
    /// How often the expiry worker looks for due deposits (0: never, for
    /// tests that drive expiry themselves).
    pub expiry_interval_seconds: u64,
    pub request_body_max_bytes: usize,
    /// `error`, `warn`, `info`, `debug` or `trace`, or a `RUST_LOG`-style
    /// filter (`info,payments=debug`: every crate of the service).
    pub log_level: String,
    /// One JSON object per line (production's default) or text (the
    /// sandbox's).
    pub log_format: crate::telemetry::logs::LogFormat,
    /// Where `/metrics` is served apart from the API (`127.0.0.1:9090`);
    /// unset, it is served on the API's address.
    pub metrics_bind: Option<String>,
    /// How long a stopping instance lets requests and callback attempts
    /// under way finish before it cuts them off.
    pub shutdown_grace_seconds: u64,
    pub currencies: BTreeMap<String, CurrencyConfig>,
    pub routing: RoutingConfig,
    pub receiving_accounts: Vec<ReceivingAccountConfig>,
    pub channels: Vec<ChannelConfig>,
    /// Fees of merchants without their own, per currency.
    pub default_fees: BTreeMap<String, DirectionRates>,
    /// Operator tokens; each names its operator.
    pub operators: Vec<OperatorConfig>,
    /// The platform-managed address the platform-level events
    /// (`tenant_owner_invite`) are posted to; never a merchant's. Unset,
    /// owners cannot be invited (the link would reach no one).
    pub platform_events_url: Option<String>,
    /// Issuer, bill-to and tax of billing statements.
    pub billing: BillingConfig,
    /// The platform events' own signing secret (Standard Webhooks,
    /// `whsec_` and base64); required with `platform_events_url`.
    pub platform_events_secret: Option<String>,
    /// How long an owner invitation can be accepted.
    pub owner_invitation_ttl_seconds: i64,
    /// Every merchant's request rate unless set for the merchant.
    pub rate_limit: RateLimitConfig,
    /// Attempts, interval, stuck threshold and sweep period of callbacks.
    pub callback_schedule: crate::domain::schedule::Schedule,
    /// Callback attempts in flight at once, per instance.
    pub callback_concurrency: usize,
    /// Of those, at most this many to one merchant's receivers, and at
    /// most this many to one receiver host (whoever's): a receiver that
    /// holds each request for its whole timeout holds this many places,
    /// and the rest go on for everyone else.
    pub callback_in_flight_per_merchant: usize,
    pub callback_in_flight_per_host: usize,
    /// The operator's own proxies and load balancers (addresses or CIDR
    /// blocks): from them, the client's address is read from
    /// `X-Forwarded-For` (`domain::address::client_address`); from
    /// anyone else the header is ignored.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// How long an operator's approval waits for the channel to take the
    /// payout before it answers (`approved`, the dispatch going on).
    pub approval_dispatch_wait_ms: u64,
    /// Requests handled at once per surface; past it, 503 at once.
    pub requests_in_flight: InFlightConfig,
    /// Connections the API's server holds open at once, per instance; one
    /// past it is answered 503 at once and closed, unread: a crowd of
    /// connections costs a bounded amount of memory.
    pub connections_at_once: usize,
    /// Of `connections_at_once`, this many kept for each surface (the
    /// payment API, the operator API, the pages): a connection past the
    /// shared rest is served if the surface its first request names has
    /// one of its own free. A crowd on one surface that holds every shared
    /// connection leaves the others theirs.
    pub connections_reserved_per_surface: usize,
    /// Of `connections_at_once`, at most this many from one address (not
    /// counting `trusted_proxies`); 0 for no such bound. One host's crowd
    /// then holds its share, not every connection.
    pub connections_per_address: usize,
    /// Sign-in password checks (Argon2id, 19 MiB each) running at once,
    /// per instance…
    pub password_checks_at_once: usize,
    /// …and waiting for one of those places; a sign-in past both is
    /// refused at once (429), so a crowd of sign-ins costs a bounded amount
    /// of memory.
    pub password_checks_waiting: usize,
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
    /// Sandbox only: start `payments channel-sim` as a child process and
    /// point the simulator's channel at it (kind `http`), so the adapter
    /// protocol runs out of process with nothing else to start.
    pub start_channel_sim: bool,
}

pub const ENV_PREFIX: &str = "PAYMENTS_";

impl Config {
    /// Loads the configuration: the profile's defaults, then the file,
    /// then the environment; the profile comes from the environment
    /// (`PAYMENTS_PROFILE`) or the file, defaulting to the sandbox.
    pub fn load(path: Option<&Path>) -> Result<Config> {
        let file = file::read(path)?;
        let profile = match env::profile()? {
            Some(p) => p,
            None => file.profile.unwrap_or(Profile::Sandbox),
        };
        let defaults = Config::defaults(profile);
        let mut c = Config::defaults(profile);
        file::apply(&mut c, file)?;
        env::apply(&mut c)?;
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

    /// The rules of a configured currency; any other is refused.
    pub fn currency(&self, code: &str) -> Result<CurrencyConfig, ApiError> {
        self.currencies
            .get(code)
            .cloned()
            .ok_or_else(|| ApiError::UnsupportedCurrency(code.to_string()))
    }

    /// A currency's dual-approval threshold in stored units, where it has
    /// one: a withdrawal at or above it needs two different people.
    pub fn dual_approval_threshold(&self, code: &str) -> Result<Option<i64>, ApiError> {
        Ok(self
            .currency(code)?
            .dual_approval_threshold
            .and_then(crate::domain::money::to_units))
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

    /// The README's example, as written: one key of one currency changes,
    /// and everything else stays the profile's.
    #[test]
    fn a_currency_key_in_the_file_changes_that_key_alone() {
        let file: file::FileConfig =
            toml::from_str("[currencies.THB]\ndual_approval_threshold = 600000\n").unwrap();
        let mut c = Config::defaults(Profile::Sandbox);
        let before = c.currencies.clone();
        file::apply(&mut c, file).unwrap();
        assert_eq!(
            c.currencies["THB"].dual_approval_threshold,
            Some(Decimal::from(600_000))
        );
        assert_eq!(c.currencies["THB"].max_amount, before["THB"].max_amount);
        assert_eq!(
            c.currencies["BDT"].dual_approval_threshold,
            before["BDT"].dual_approval_threshold
        );
        c.validate().unwrap();

        let off: file::FileConfig =
            toml::from_str("[currencies.BDT]\ndual_approval_threshold = \"none\"\n").unwrap();
        file::apply(&mut c, off).unwrap();
        assert_eq!(c.currencies["BDT"].dual_approval_threshold, None);

        let new: file::FileConfig = toml::from_str("[currencies.USD]\nmin_amount = 1\n").unwrap();
        let err = file::apply(&mut c, new).unwrap_err().to_string();
        assert!(err.contains("USD: fraction_digits is missing"), "{err}");
        let word: file::FileConfig =
            toml::from_str("[currencies.THB]\ndual_approval_threshold = \"off\"\n").unwrap();
        assert!(file::apply(&mut c, word).is_err());
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
    }
}
