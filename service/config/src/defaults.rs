//! The built-in settings of each profile: enough for the sandbox to run
//! with no file and no environment.

use super::*;

/// Callback attempts in flight per instance; a merchant's receivers, and
/// one receiver host, hold at most half of them. A merchant's backlog
/// drains as fast as its share of places goes round (claimed, sent,
/// written, given back): at 32 of 64 a one-merchant drain of 10,000 left
/// half of two cores idle at about 2,000 a second; at 128 of 256 it ran at
/// 3,700 to 4,000, near the database's own rate for the outcomes (issue
/// 56, docs/operations.md). A receiver that holds every request still
/// leaves the other half of the places to everyone else.
const CALLBACK_PLACES: usize = 256;

impl Config {
    /// Defaults of a profile: enough for the sandbox to run as it is.
    pub fn defaults(profile: Profile) -> Config {
        let data_dir = PathBuf::from(".sandbox");
        Config {
            profile,
            bind: "127.0.0.1:8080".into(),
            public_base_url: "http://127.0.0.1:8080".into(),
            database_url: match profile {
                Profile::Sandbox => format!("sqlite://{}", data_dir.join("payments.db").display()),
                Profile::Production => String::new(),
            },
            database_direct_url: None,
            database_migrate_url: None,
            database_pgbouncer: false,
            database_pool_size: 16,
            database_pool_wait_ms: 5_000,
            roles: Roles::default(),
            instance_id: format!("i-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]),
            master_key: None,
            previous_master_keys: Vec::new(),
            data_dir,
            timestamp_skew_seconds: 300,
            deposit_validity_seconds: 30 * 60,
            validity: ValidityConfig::default(),
            denominations: sandbox_denominations(),
            key_rotation_grace_seconds: 24 * 60 * 60,
            payout_inquire_after_seconds: 60,
            payout_in_doubt_after_seconds: 15 * 60,
            event_retention_days: 30,
            attempt_retention_days: 90,
            notification_retention_days: 180,
            session_retention_days: 30,
            expiry_interval_seconds: 15,
            request_body_max_bytes: 64 * 1024,
            log_level: "info".into(),
            log_format: default_log_format(profile),
            metrics_bind: None,
            shutdown_grace_seconds: 25,
            currencies: default_currencies(),
            routing: default_routing(),
            receiving_accounts: sandbox_accounts(),
            // Production names its channels (kind `http`) itself: the
            // in-process simulator is the sandbox's only.
            channels: match profile {
                Profile::Sandbox => vec![simulator()],
                Profile::Production => Vec::new(),
            },
            default_fees: BTreeMap::new(),
            operators: Vec::new(),
            platform_events_url: None,
            billing: default_billing(profile),
            platform_events_secret: None,
            owner_invitation_ttl_seconds: 24 * 60 * 60,
            rate_limit: RateLimitConfig {
                requests_per_minute: 60_000,
                burst: 2000,
            },
            callback_schedule: crate::domain::schedule::Schedule::default(),
            callback_concurrency: CALLBACK_PLACES,
            callback_in_flight_per_merchant: CALLBACK_PLACES / 2,
            callback_in_flight_per_host: CALLBACK_PLACES / 2,
            trusted_proxies: Vec::new(),
            requests_in_flight: Default::default(),
            connections_at_once: 1024,
            connections_reserved_per_surface: 64,
            connections_per_address: 128,
            approval_dispatch_wait_ms: 2_000,
            // Argon2id takes a core while it runs: never more than half.
            password_checks_at_once: std::thread::available_parallelism()
                .map_or(1, |n| (n.get() / 2).max(1)),
            password_checks_waiting: 16,
            callback_worker: true,
            callback_allow_private_addresses: profile == Profile::Sandbox,
            callback_allowed_private_hosts: Vec::new(),
            callback_ca_bundle: None,
            controllable_clock: profile == Profile::Sandbox,
            start_channel_sim: false,
        }
    }
}

/// THB and BDT, in whole units from 1 to 1,000,000.
fn default_currencies() -> BTreeMap<String, CurrencyConfig> {
    ["THB", "BDT"]
        .into_iter()
        .map(|code| {
            let currency = CurrencyConfig {
                fraction_digits: 2,
                min_amount: Decimal::ONE,
                max_amount: Decimal::from(1_000_000),
                // Half the largest order: one person alone does not pay
                // out the biggest sums.
                dual_approval_threshold: Some(Decimal::from(500_000)),
            };
            (code.to_string(), currency)
        })
        .collect()
}

/// THB deposits to the receiving account, BDT through the channel.
fn default_routing() -> RoutingConfig {
    let mut routing = RoutingConfig::default();
    routing.default.insert("THB".into(), Route::Account);
    routing.default.insert("BDT".into(), Route::Channel);
    routing
}

/// Text for a person at a terminal in the sandbox, JSON lines for a
/// collector in production.
fn default_log_format(profile: Profile) -> crate::telemetry::logs::LogFormat {
    match profile {
        Profile::Sandbox => crate::telemetry::logs::LogFormat::Text,
        Profile::Production => crate::telemetry::logs::LogFormat::Json,
    }
}

/// Production bills with what its operators configure; the sandbox with an
/// example.
fn default_billing(profile: Profile) -> BillingConfig {
    match profile {
        Profile::Sandbox => sandbox_billing(),
        Profile::Production => BillingConfig::default(),
    }
}

/// A sandbox's statements read as a real one's would: an issuer with an
/// address and a tax number, and a VAT on fees in each currency (Thailand's
/// 7 %, Bangladesh's 15 %), all of it configuration a deployment replaces.
fn sandbox_billing() -> BillingConfig {
    let vat = |rate: i64| TaxConfig {
        name: "VAT".into(),
        rate_percent: Decimal::from(rate),
    };
    BillingConfig {
        issuer: Some(PartyConfig {
            legal_name: "Sandbox Payments Co., Ltd.".into(),
            address: vec![
                "99 Example Tower, 12th floor, Sathorn Road".into(),
                "Bangkok 10120, Thailand".into(),
            ],
            tax_number: Some("0105599999999".into()),
        }),
        merchants: BTreeMap::new(),
        tax: BTreeMap::from([("THB".to_string(), vat(7)), ("BDT".to_string(), vat(15))]),
    }
}

/// The denominations a payer picks from on a cashier page, per currency.
fn sandbox_denominations() -> DenominationConfig {
    DenominationConfig {
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
    }
}

/// The sandbox's receiving accounts: the first is every THB merchant's
/// unless an operator assigns another; the other two show the other ways
/// banks behave.
fn sandbox_accounts() -> Vec<ReceivingAccountConfig> {
    let account =
        |id: &str, name: &str, no: &str, bank: (&str, &str, Option<&str>)| ReceivingAccountConfig {
            id: id.into(),
            currency: "THB".into(),
            name: name.into(),
            account_no: no.into(),
            account_holder: "Sandbox Payments Co., Ltd.".into(),
            bank_code: bank.0.into(),
            bank_name: bank.1.into(),
            bank_branch: bank.2.map(String::from),
            deposit_cost: RateConfig::default(),
            floating_amount: false,
            reports_match_first: false,
            promptpay_id: None,
        };
    vec![
        ReceivingAccountConfig {
            // A tax number no one holds (its check digit is valid, its
            // digits are all zero): a sandbox QR code a real bank app
            // scans cannot pay anybody.
            promptpay_id: Some("0000000000001".into()),
            ..account(
                "acct-thb-1",
                "Sandbox collection account",
                "1234567890",
                ("KBANK", "Kasikornbank", Some("Silom")),
            )
        },
        ReceivingAccountConfig {
            floating_amount: true,
            ..account(
                "acct-thb-float",
                "Sandbox account matched by amount",
                "2234567890",
                ("SCB", "Siam Commercial Bank", None),
            )
        },
        ReceivingAccountConfig {
            reports_match_first: true,
            ..account(
                "acct-thb-confirm",
                "Sandbox account that reports a match first",
                "3234567890",
                ("BBL", "Bangkok Bank", None),
            )
        },
    ]
}

/// The in-process simulator channel, for THB and BDT: 0.5 % of a deposit,
/// 2 per withdrawal.
fn simulator() -> ChannelConfig {
    ChannelConfig {
        id: "chan-sim-1".into(),
        code: "SIMULATOR".into(),
        name: "Sandbox simulator".into(),
        kind: "simulator".into(),
        currencies: vec!["THB".into(), "BDT".into()],
        costs: DirectionRates {
            deposit: RateConfig {
                percent: Decimal::new(5, 1),
                ..Default::default()
            },
            withdrawal: RateConfig {
                fixed: Decimal::TWO,
                ..Default::default()
            },
        },
        base_url: None,
        secret: None,
        request_timeout_ms: None,
        private_network: false,
    }
}
