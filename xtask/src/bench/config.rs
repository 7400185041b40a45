//! The service's configuration files the bench writes, in one place, and
//! a test that loads each of them as the service does at start: when a
//! release made the production profile refuse a currency routed to a
//! channel with none configured, the bench stopped at start-up, unnoticed
//! until someone ran it.

/// Both currencies to the receiving accounts: the production profile
/// refuses a currency routed to a channel when no channel is configured
/// (the channel benchmark brings its own).
pub const ACCOUNT_ROUTING: &str = "[routing.default]\nTHB = \"account\"\nBDT = \"account\"\n";

/// The service at each size runs without its expiry worker, and so without
/// the billing and inquiry passes that worker carries. Ninety days of a
/// hundred merchants seeded in one go would have it issue every statement
/// of those days and ask the channel about every pending channel deposit
/// at once, while the load runs: work a live service did as the days went
/// by, and no part of what a request costs at that size. Measured at
/// 3508a6e with it on, create p99 grew from 8.9 ms at 10⁴ to 16.9 ms at
/// 10⁶; with it off, 6.5 ms to 6.8 ms (bench/results/README.md).
pub const QUIET_JOBS: &str =
    "expiry_interval_seconds = 0\n[routing.default]\nTHB = \"account\"\nBDT = \"account\"\n";

/// The service's default `callback_concurrency`, of which one merchant and
/// one host may hold half: the abuse bench's labels name them, and its
/// shares-off run opens every place. Written once here, and held to the
/// service's own default by a test, so that a new default cannot leave
/// the labels naming the old one.
pub const CALLBACK_PLACES: usize = 256;

/// Every place open to one merchant and one host, for the fairness run
/// beside a slow receiver.
pub fn wide_callbacks() -> String {
    format!(
        "callback_in_flight_per_merchant = {CALLBACK_PLACES}\n\
         callback_in_flight_per_host = {CALLBACK_PLACES}\n"
    )
}

/// This run's master key: 32 random bytes, base64.
pub fn master_key() -> anyhow::Result<String> {
    Ok(super::base64(&super::random_bytes(32)?))
}

/// This run's operator token: 32 random bytes, as production wants.
pub fn operator_token() -> anyhow::Result<String> {
    Ok(format!(
        "op_bench_{}",
        super::hex(&super::random_bytes(32)?)
    ))
}

/// The simulator channel's shared secret.
pub fn channel_secret() -> anyhow::Result<String> {
    Ok(format!("sim_{}", super::hex(&super::random_bytes(24)?)))
}

/// What a bench service is started with.
pub struct ServiceToml<'a> {
    pub profile: &'a str,
    pub port: u16,
    pub database_url: &'a str,
    pub master_key: &'a str,
    pub operator_token: &'a str,
    /// Whether this instance delivers callbacks.
    pub worker: bool,
    /// Top-level keys first, then tables.
    pub extra: &'a str,
}

impl ServiceToml<'_> {
    /// The file's text. The rate limit is raised so that it is not what
    /// gets measured.
    pub fn render(&self) -> String {
        let Self {
            profile,
            port,
            database_url,
            master_key,
            operator_token,
            worker,
            extra,
        } = self;
        format!(
            "profile = \"{profile}\"\nbind = \"127.0.0.1:{port}\"\n\
             public_base_url = \"http://127.0.0.1:{port}\"\n\
             database_url = \"{database_url}\"\nmaster_key = \"{master_key}\"\nlog_level = \"error\"\n\
             callback_worker = {worker}\n{extra}\n\
             [rate_limit]\nrequests_per_minute = 1000000000\nburst = 100000000\n\
             [[operators]]\nname = \"bench\"\ntoken = \"{operator_token}\"\n"
        )
    }
}

/// The simulator's channel for both currencies, at `url`. The simulator
/// holds payouts accepted, never settled, so every payout a cell sends
/// stays `processing`; at the service's default, each would be inquired
/// about 60 s on, inside whichever cell came next (the next payout cell
/// starts about 100 s after the last one ended, after its own
/// withdrawals are made), and that cell would measure those inquiries
/// beside its approvals. Not before a day here, as a real channel's
/// settlement would have made most of them needless.
pub fn channel_toml(url: &str, secret: &str) -> String {
    format!(
        "payout_inquire_after_seconds = 86400\n\n[[channels]]\nid = \"chan-sim-1\"\ncode = \"SIMULATOR\"\nname = \"Bench simulator\"\n\
         kind = \"http\"\ncurrencies = [\"THB\", \"BDT\"]\nbase_url = \"{url}\"\n\
         secret = \"{secret}\"\nrequest_timeout_ms = 5000\nprivate_network = true\n\
         [channels.costs.deposit]\npercent = \"0.5\"\n\
         [channels.costs.withdrawal]\nfixed = \"2\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (profile, extra) the bench starts a service with, loaded and
    /// checked by the service's own configuration loader.
    #[test]
    fn every_configuration_the_bench_starts_is_one_the_service_accepts() {
        let channel = channel_toml("http://127.0.0.1:9", &channel_secret().unwrap());
        let wide = wide_callbacks();
        let master_key = master_key().unwrap();
        let token = operator_token().unwrap();
        let dir = std::env::temp_dir().join(format!("bench-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("production", ACCOUNT_ROUTING),
            ("sandbox", ACCOUNT_ROUTING),
            ("sandbox", QUIET_JOBS),
            ("sandbox", channel.as_str()),
            ("sandbox", wide.as_str()),
            ("sandbox", ""),
        ];
        let mut refused = Vec::new();
        for (i, (profile, extra)) in cases.iter().enumerate() {
            let path = dir.join(format!("{i}.toml"));
            let text = ServiceToml {
                profile,
                port: 18_000,
                database_url: "postgres://postgres@127.0.0.1:5432/bench",
                master_key: &master_key,
                operator_token: &token,
                worker: true,
                extra,
            }
            .render();
            std::fs::write(&path, &text).unwrap();
            if let Err(e) = payments_config::Config::load(Some(&path)) {
                refused.push(format!("{profile} with {extra:?}: {e:#}"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
    }

    /// The places the abuse bench names are the service's defaults.
    #[test]
    fn the_callback_places_named_are_the_services_defaults() {
        let path = std::env::temp_dir().join(format!("bench-places-{}.toml", std::process::id()));
        let text = ServiceToml {
            profile: "sandbox",
            port: 18_000,
            database_url: "postgres://postgres@127.0.0.1:5432/bench",
            master_key: &master_key().unwrap(),
            operator_token: &operator_token().unwrap(),
            worker: true,
            extra: "",
        }
        .render();
        std::fs::write(&path, &text).unwrap();
        let config = payments_config::Config::load(Some(&path));
        let _ = std::fs::remove_file(&path);
        let config = config.unwrap();
        assert_eq!(config.callback_concurrency, CALLBACK_PLACES);
        assert_eq!(config.callback_in_flight_per_merchant, CALLBACK_PLACES / 2);
        assert_eq!(config.callback_in_flight_per_host, CALLBACK_PLACES / 2);
    }
}
