//! The built-in settings of each profile: enough for the sandbox to run
//! with no file and no environment.

use super::*;
use std::str::FromStr;

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
            database_direct_url: None,
            database_pgbouncer: false,
            database_pool_size: 16,
            roles: Roles::default(),
            instance_id: format!("i-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]),
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
            log_format: match profile {
                Profile::Sandbox => crate::telemetry::logs::LogFormat::Text,
                Profile::Production => crate::telemetry::logs::LogFormat::Json,
            },
            metrics_bind: None,
            shutdown_grace_seconds: 25,
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
            callback_schedule: crate::domain::schedule::Schedule::default(),
            callback_concurrency: 64,
            callback_worker: true,
            callback_allow_private_addresses: profile == Profile::Sandbox,
            callback_allowed_private_hosts: Vec::new(),
            callback_ca_bundle: None,
            controllable_clock: profile == Profile::Sandbox,
        }
    }
}
