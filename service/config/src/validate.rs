//! What a configuration must satisfy before the service starts with it;
//! each refusal names the setting and how to fix it.

use super::*;
use crate::domain::address::is_public;
use anyhow::bail;
use std::str::FromStr;

impl Config {
    pub fn validate(&self) -> Result<()> {
        self.validate_process()?;
        self.validate_production()?;
        self.validate_money()?;
        self.validate_schedules()?;
        self.validate_accounts_and_routes()?;
        self.validate_platform_events()?;
        self.validate_billing()?;
        self.validate_channels()
    }

    /// Statements print these: each name present and of a length a page
    /// holds, each tax for a configured currency at a rate from 0 to 100.
    fn validate_billing(&self) -> Result<()> {
        let b = &self.billing;
        let parties = b
            .issuer
            .iter()
            .map(|p| ("billing.issuer".to_string(), p))
            .chain(
                b.merchants
                    .iter()
                    .map(|(code, p)| (format!("billing.merchants.{code}"), p)),
            );
        for (key, party) in parties {
            if party.legal_name.trim().is_empty() || party.legal_name.len() > 120 {
                bail!("{key}.legal_name must be 1 to 120 characters");
            }
            if party.address.len() > 4 || party.address.iter().any(|l| l.len() > 120) {
                bail!("{key}.address is at most 4 lines of at most 120 characters");
            }
            if party
                .tax_number
                .as_ref()
                .is_some_and(|n| n.trim().is_empty() || n.len() > 40)
            {
                bail!("{key}.tax_number must be 1 to 40 characters");
            }
        }
        for (currency, tax) in &b.tax {
            if !self.currencies.contains_key(currency) {
                bail!("billing.tax.{currency}: {currency} is not a configured currency");
            }
            if tax.name.trim().is_empty() || tax.name.len() > 40 {
                bail!("billing.tax.{currency}.name must be 1 to 40 characters");
            }
            if tax.rate_percent < Decimal::ZERO || tax.rate_percent > Decimal::ONE_HUNDRED {
                bail!("billing.tax.{currency}.rate_percent must be from 0 to 100 (a decimal string such as \"7\")");
            }
        }
        Ok(())
    }

    fn validate_platform_events(&self) -> Result<()> {
        if !(3600..=30 * 86400).contains(&self.owner_invitation_ttl_seconds) {
            bail!("owner_invitation_ttl_seconds is outside 3600 to 2592000 (one hour to 30 days)");
        }
        let Some(url) = &self.platform_events_url else {
            if self.platform_events_secret.is_some() {
                bail!("platform_events_secret is set without platform_events_url");
            }
            return Ok(());
        };
        let parsed = url::Url::parse(url)
            .map_err(|e| anyhow::anyhow!("platform_events_url is not a URL: {e}"))?;
        let https_only = self.profile == crate::domain::routing::Profile::Production;
        match parsed.scheme() {
            "https" => {}
            "http" if !https_only => {}
            _ => bail!(
                "platform_events_url must be https{}",
                if https_only {
                    " in production"
                } else {
                    " or http"
                }
            ),
        }
        // Checked by the library that signs with it; its error would name
        // nothing but the form, never the secret.
        match &self.platform_events_secret {
            Some(secret)
                if secret.starts_with("whsec_")
                    && standardwebhooks::Webhook::new(secret).is_ok() => {}
            Some(_) => bail!("platform_events_secret must be whsec_ followed by base64 (24 to 64 bytes)"),
            None => bail!(
                "platform_events_url needs platform_events_secret (PAYMENTS_PLATFORM_EVENTS_SECRET): whsec_ followed by base64"
            ),
        }
        Ok(())
    }

    fn validate_process(&self) -> Result<()> {
        if !(1..=600).contains(&self.shutdown_grace_seconds) {
            bail!(
                "shutdown_grace_seconds is {}; it must be between 1 and 600",
                self.shutdown_grace_seconds
            );
        }
        if !(100..=60_000).contains(&self.database_pool_wait_ms) {
            bail!("database_pool_wait_ms must be between 100 and 60000");
        }
        if self.approval_dispatch_wait_ms > 60_000 {
            bail!("approval_dispatch_wait_ms must be at most 60000");
        }
        self.validate_bounds()?;
        if self.callback_in_flight_per_merchant == 0 || self.callback_in_flight_per_host == 0 {
            bail!("callback_in_flight_per_merchant and callback_in_flight_per_host must be at least 1");
        }
        if !(1..=64).contains(&self.password_checks_at_once) {
            bail!("password_checks_at_once must be between 1 and 64");
        }
        if self.password_checks_waiting > 10_000 {
            bail!("password_checks_waiting must be at most 10000");
        }
        if self.database_pgbouncer && !self.database_url.starts_with("postgres") {
            bail!("database_pgbouncer is for a PostgreSQL URL through PgBouncer");
        }
        if let Some(owner) = &self.database_migrate_url {
            if !owner.starts_with("postgres") || !self.database_url.starts_with("postgres") {
                bail!("database_migrate_url is for PostgreSQL: the owning role's URL, beside a database_url for the service's own role");
            }
        }
        if self.instance_id.is_empty()
            || !self
                .instance_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            bail!(
                "instance_id `{}` must be letters, digits, `-`, `_` or `.`",
                self.instance_id
            );
        }
        if let Some(bind) = &self.metrics_bind {
            if bind.parse::<std::net::SocketAddr>().is_err() {
                bail!(
                    "metrics_bind `{bind}` is not an address and port (for example 127.0.0.1:9090)"
                );
            }
        }
        Ok(())
    }

    /// Requests in flight and connections: each bound in range, and the
    /// connections' room for the surfaces' requests and kept shares.
    fn validate_bounds(&self) -> Result<()> {
        let f = self.requests_in_flight;
        if [f.payments, f.operators, f.pages, f.per_merchant]
            .iter()
            .any(|n| !(1..=100_000).contains(n))
        {
            bail!("requests_in_flight: payments, operators, pages and per_merchant must each be 1 to 100000");
        }
        if let Some(running) = f.running_per_merchant {
            if !(1..=f.per_merchant).contains(&running) {
                bail!(
                    "requests_in_flight.running_per_merchant must be 1 to per_merchant ({})",
                    f.per_merchant
                );
            }
        }
        let most_in_flight = f.payments + f.operators + f.pages;
        if !(16..=100_000).contains(&self.connections_at_once) {
            bail!("connections_at_once must be between 16 and 100000");
        }
        if self.connections_at_once < most_in_flight {
            bail!(
                "connections_at_once ({}) is below the requests the surfaces take at once \
                 (requests_in_flight: {most_in_flight}): the surfaces' own bounds would never be reached",
                self.connections_at_once
            );
        }
        if self.connections_reserved_per_surface * 3 > self.connections_at_once / 2 {
            bail!(
                "connections_reserved_per_surface ({}) kept for each of the three surfaces may take \
                 at most half of connections_at_once ({})",
                self.connections_reserved_per_surface,
                self.connections_at_once
            );
        }
        if self.connections_per_address > self.connections_at_once {
            bail!(
                "connections_per_address ({}) must be at most connections_at_once ({}); 0 for no bound per address",
                self.connections_per_address,
                self.connections_at_once
            );
        }
        Ok(())
    }

    fn validate_production(&self) -> Result<()> {
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
            for op in &self.operators {
                if !strong_token(&op.token) {
                    bail!(
                        "operator `{}`: a bootstrap token in production carries at least 32 random bytes \
                         (64 hexadecimal digits or 43 base64 characters after a prefix such as `op_`; \
                         `openssl rand -hex 32`)",
                        op.name
                    );
                }
            }
        }
        Ok(())
    }

    fn validate_money(&self) -> Result<()> {
        for (code, cur) in &self.currencies {
            if cur.fraction_digits > 4 {
                bail!("currency {code}: fraction_digits is at most 4");
            }
            if cur.min_amount <= Decimal::ZERO || cur.min_amount > cur.max_amount {
                bail!("currency {code}: need 0 < min_amount <= max_amount");
            }
            if cur
                .dual_approval_threshold
                .is_some_and(|t| t <= Decimal::ZERO || crate::domain::money::to_units(t).is_none())
            {
                bail!("currency {code}: dual_approval_threshold must be a positive amount with at most 4 fraction digits");
            }
        }
        Ok(())
    }

    fn validate_schedules(&self) -> Result<()> {
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
        if !(1..=86_400).contains(&self.payout_inquire_after_seconds) {
            bail!("payout_inquire_after_seconds is outside 1 to 86400");
        }
        if !(1..=3660).contains(&self.event_retention_days) {
            bail!("event_retention_days is outside 1 to 3660");
        }
        for (key, days) in [
            ("attempt_retention_days", self.attempt_retention_days),
            (
                "notification_retention_days",
                self.notification_retention_days,
            ),
            ("session_retention_days", self.session_retention_days),
        ] {
            if !(1..=3660).contains(&days) {
                bail!("{key} is outside 1 to 3660");
            }
        }
        if !(1..=7 * 86_400).contains(&self.payout_in_doubt_after_seconds) {
            bail!("payout_in_doubt_after_seconds is outside 1 to 604800");
        }
        Ok(())
    }

    /// Each channel names a kind the service has, with what that kind
    /// needs; nothing else reaches `channels::Channels::from_config`.
    fn validate_channels(&self) -> Result<()> {
        if self.start_channel_sim && self.profile == Profile::Production {
            bail!(
                "start_channel_sim is for the sandbox: in production run payments-channel-sim \
                 (or your own adapter) as a service of its own and point a [[channels]] entry \
                 of kind `http` at it"
            );
        }
        for c in &self.channels {
            match c.kind.as_str() {
                "simulator" if self.profile == Profile::Production => bail!(
                    "channel {}: kind `simulator` is the sandbox's in-process simulator, and the \
                     production profile refuses it: set the channel's kind to `http`, with \
                     base_url and secret of its adapter (payments-channel-sim speaks the \
                     protocol, for a rehearsal)",
                    c.id
                ),
                "simulator" => {}
                "http" => self.validate_http_channel(c)?,
                other => bail!(
                    "channel {}: unknown kind `{other}` (simulator or http)",
                    c.id
                ),
            }
        }
        let routed = self
            .routing
            .default
            .iter()
            .map(|(c, r)| (None, c, r))
            .chain(
                self.routing
                    .merchants
                    .iter()
                    .flat_map(|(m, routes)| routes.iter().map(move |(c, r)| (Some(m), c, r))),
            );
        for (merchant, currency, route) in routed {
            let collected = self
                .channels
                .iter()
                .any(|c| c.currencies.iter().any(|x| x == currency));
            if *route == Route::Channel && !collected {
                let whose = merchant.map_or(String::new(), |m| format!(" of merchant {m}"));
                bail!(
                    "routing sends {currency} deposits{whose} to a channel, and no channel \
                     collects {currency}: add a [[channels]] entry (kind `http`) with \
                     currencies = [\"{currency}\"], or route {currency} to `account`"
                );
            }
        }
        self.validate_routing_tables()
    }

    /// Each configured routing table: a configured currency, each candidate
    /// a configured channel that lists it, sound as a table; one table per
    /// currency, direction and merchant.
    fn validate_routing_tables(&self) -> Result<()> {
        if let Some(p) = self.routing.health.problem() {
            bail!("routing.health: {p}");
        }
        let mut seen = std::collections::BTreeSet::new();
        for t in &self.routing.tables {
            let whose = t
                .merchant
                .as_ref()
                .map_or(String::new(), |m| format!(" of merchant {m}"));
            let name = format!(
                "routing table {} {}{whose}",
                t.currency,
                t.direction.as_str()
            );
            if !self.currencies.contains_key(&t.currency) {
                bail!("{name}: currency {} is not configured", t.currency);
            }
            if !seen.insert((&t.currency, t.direction, &t.merchant)) {
                bail!("{name} is configured twice");
            }
            if let Err(why) = crate::domain::routing::table::check(&t.candidates) {
                bail!("{name}: {why}");
            }
            for c in &t.candidates {
                let Some(channel) = self.channels.iter().find(|x| x.code == c.channel) else {
                    bail!(
                        "{name}: no channel has the code {}; the configured codes are {}",
                        c.channel,
                        self.channels
                            .iter()
                            .map(|x| x.code.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                };
                if !channel.currencies.contains(&t.currency) {
                    bail!(
                        "{name}: channel {} does not list {} in its currencies",
                        c.channel,
                        t.currency
                    );
                }
            }
        }
        Ok(())
    }

    /// An adapter over the protocol: a URL, a secret, a timeout in range,
    /// and in production https at a public address unless it is listed
    /// as on the operator's own network.
    fn validate_http_channel(&self, c: &ChannelConfig) -> Result<()> {
        let url = c.base_url.as_deref().unwrap_or_default();
        let parsed = url::Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        let Some(parsed) = parsed else {
            bail!("channel {}: kind http needs base_url, an http(s) URL", c.id);
        };
        if self.profile == Profile::Production && !c.private_network {
            if parsed.scheme() != "https" {
                bail!(
                    "channel {}: production calls adapters over https only; an \
                     adapter inside your own network (beside the service) may be \
                     http if its entry says private_network = true",
                    c.id
                );
            }
            let literal = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
                Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
                _ => None,
            };
            if let Some(ip) = literal.filter(|ip| !is_public(*ip)) {
                bail!(
                    "channel {}: {ip} is not a public address, and production calls \
                     adapters at public addresses only; set private_network = true \
                     on the entry if the adapter is inside your own network",
                    c.id
                );
            }
        }
        if c.secret.as_deref().map_or(0, str::len) < 32 {
            bail!(
                "channel {}: kind http needs a secret of at least 32 bytes",
                c.id
            );
        }
        if let Some(ms) = c.request_timeout_ms {
            if !(100..=60_000).contains(&ms) {
                bail!(
                    "channel {}: request_timeout_ms is outside 100 to 60000",
                    c.id
                );
            }
        }
        Ok(())
    }

    fn validate_accounts_and_routes(&self) -> Result<()> {
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
            if let Some(id) = &account.promptpay_id {
                if account.currency != "THB" {
                    bail!(
                        "receiving account {} has a promptpay_id, but PromptPay pays only THB \
                         and the account's currency is {}",
                        account.id,
                        account.currency
                    );
                }
                if let Err(why) = id.parse::<crate::domain::promptpay::PromptPayId>() {
                    bail!(
                        "receiving account {}: promptpay_id is not a valid PromptPay ID: {why}",
                        account.id
                    );
                }
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
}

/// Whether `token` plausibly carries 32 random bytes: its random part
/// (after a lowercase `word_` prefix such as `op_` or `op_live_`) is at
/// least 64 hexadecimal digits, or 43 characters of another alphabet, and
/// not a repetition of a few characters. It cannot measure randomness;
/// it refuses what is certainly too little.
pub(crate) fn strong_token(token: &str) -> bool {
    let mut random = token;
    while let Some((word, rest)) = random.split_once('_') {
        if word.is_empty() || word.len() > 8 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
            break;
        }
        random = rest;
    }
    let random = random.trim_end_matches('=');
    let distinct = random
        .chars()
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let hex = random.chars().all(|c| c.is_ascii_hexdigit());
    let needed = if hex { 64 } else { 43 };
    random.chars().count() >= needed && distinct >= 12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_refuses_a_bootstrap_token_of_fewer_than_32_random_bytes() {
        let hex64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        for weak in [
            "op_test_conformance_operator_token",
            "op_scale_9f86d081884c7d659a2feaa0c55ad015",
            &format!("op_{}", "ab".repeat(40)),
            "correct-horse-battery-staple",
        ] {
            assert!(!strong_token(weak), "{weak} passed");
            let mut c = Config::defaults(Profile::Production);
            c.database_url = "postgres://h/db".into();
            c.master_key = Some("x".into());
            c.operators = vec![crate::OperatorConfig {
                name: "boot".into(),
                token: weak.into(),
            }];
            let why = c.validate().unwrap_err().to_string();
            assert!(
                why.contains("at least 32 random bytes") && !why.contains(weak),
                "{why}"
            );
        }
        for strong in [
            format!("op_{hex64}"),
            format!("op_live_{}", hex64.to_uppercase()),
            "op_Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5".to_string(),
        ] {
            assert!(strong_token(&strong), "{strong} refused");
        }
        // The sandbox takes any token.
        let mut c = Config::defaults(Profile::Sandbox);
        c.operators = vec![crate::OperatorConfig {
            name: "boot".into(),
            token: "short".into(),
        }];
        assert!(c.validate().is_ok());
    }

    fn refusal(edit: impl FnOnce(&mut ReceivingAccountConfig)) -> String {
        let mut config = Config::defaults(Profile::Sandbox);
        edit(&mut config.receiving_accounts[0]);
        config.validate().unwrap_err().to_string()
    }

    #[test]
    fn a_promptpay_id_that_is_not_a_phone_or_tax_number_is_refused_naming_the_account() {
        let why = refusal(|a| a.promptpay_id = Some("0212345678".into()));
        assert!(
            why.contains("receiving account acct-thb-1: promptpay_id"),
            "{why}"
        );
        assert!(why.contains("06, 08 or 09"), "{why}");
        let why = refusal(|a| a.promptpay_id = Some("1234567890122".into()));
        assert!(why.contains("check digit"), "{why}");
        let why = refusal(|a| a.currency = "BDT".into());
        assert!(why.contains("PromptPay pays only THB"), "{why}");
        assert!(Config::defaults(Profile::Sandbox).validate().is_ok());
    }

    fn channel_refusal(edit: impl FnOnce(&mut ChannelConfig)) -> Option<String> {
        let mut config = Config::defaults(Profile::Sandbox);
        let channel = &mut config.channels[0];
        channel.kind = "http".into();
        channel.base_url = Some("https://adapter.example.com/bkash".into());
        channel.secret = Some("s".repeat(32));
        edit(channel);
        config.validate().err().map(|e| e.to_string())
    }

    #[test]
    fn production_calls_an_adapter_over_https_at_a_public_address_unless_listed() {
        let production = |url: &str, private_network: bool| {
            let mut config = Config::defaults(Profile::Production);
            config.database_url = "postgres://127.0.0.1/payments".into();
            config.master_key = Some("k".into());
            // Production has no channel of its own: the sandbox's, as http.
            config.channels = Config::defaults(Profile::Sandbox).channels;
            let channel = &mut config.channels[0];
            channel.kind = "http".into();
            channel.base_url = Some(url.into());
            channel.secret = Some("s".repeat(32));
            channel.private_network = private_network;
            config.validate().err().map(|e| e.to_string())
        };
        let why = production("http://adapter.example.com", false).unwrap();
        assert!(why.contains("https only"), "{why}");
        let why = production("https://10.3.0.12:8443", false).unwrap();
        assert!(why.contains("10.3.0.12 is not a public address"), "{why}");
        for listed in ["http://127.0.0.1:9000", "https://10.3.0.12:8443"] {
            let why = production(listed, true).unwrap_or_default();
            assert!(!why.contains("channel chan-sim-1"), "{listed}: {why}");
        }
        let why = production("https://adapter.example.com", false).unwrap_or_default();
        assert!(!why.contains("channel chan-sim-1"), "{why}");
    }

    #[test]
    fn production_refuses_the_simulator_and_a_route_to_no_channel() {
        let mut config = Config::defaults(Profile::Production);
        config.database_url = "postgres://127.0.0.1/payments".into();
        config.master_key = Some("k".into());
        let why = config.validate().unwrap_err().to_string();
        assert!(
            why.contains("routing sends BDT deposits to a channel"),
            "{why}"
        );
        assert!(why.contains("[[channels]]"), "{why}");
        config.channels = Config::defaults(Profile::Sandbox).channels;
        let why = config.validate().unwrap_err().to_string();
        assert!(
            why.contains("channel chan-sim-1: kind `simulator`"),
            "{why}"
        );
        assert!(why.contains("production profile refuses it"), "{why}");
        let mut started = config.clone();
        started.start_channel_sim = true;
        let why = started.validate().unwrap_err().to_string();
        assert!(
            why.contains("start_channel_sim is for the sandbox"),
            "{why}"
        );
        config.channels[0].kind = "http".into();
        config.channels[0].base_url = Some("https://adapter.example.com".into());
        config.channels[0].secret = Some("s".repeat(32));
        config.validate().unwrap();
    }

    #[test]
    fn an_http_channel_needs_a_url_a_long_secret_and_a_sane_timeout() {
        assert_eq!(channel_refusal(|_| {}), None);
        let why = channel_refusal(|c| c.base_url = Some("ftp://adapter".into())).unwrap();
        assert!(
            why.contains("chan-sim-1: kind http needs base_url"),
            "{why}"
        );
        let why = channel_refusal(|c| c.secret = Some("short".into())).unwrap();
        assert!(why.contains("secret of at least 32 bytes"), "{why}");
        assert!(!why.contains("short"), "the secret is not repeated: {why}");
        let why = channel_refusal(|c| c.request_timeout_ms = Some(99)).unwrap();
        assert!(why.contains("request_timeout_ms"), "{why}");
        let why = channel_refusal(|c| c.kind = "carrier-pigeon".into()).unwrap();
        assert!(why.contains("unknown kind `carrier-pigeon`"), "{why}");
    }
}
