//! What the harness needs to know about the deployment under test and
//! about its own receivers. The `payments-conformance` binary fills it from
//! its flags and configuration file; the workspace's test target from the
//! environment (`CONFORMANCE_*`), which the binary also reads as defaults.

use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Which rules the service under test keeps: its configuration profile.
/// The suite's own, so that it names no crate of the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Sandbox,
    Production,
}

impl std::str::FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sandbox" => Ok(Profile::Sandbox),
            "production" => Ok(Profile::Production),
            other => Err(format!(
                "unknown profile `{other}` (expected `sandbox` or `production`)"
            )),
        }
    }
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Sandbox => "sandbox",
            Profile::Production => "production",
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug)]
pub struct Settings {
    pub profile: Profile,
    /// A deployed service; `None` starts one in-process.
    pub base_url: Option<String>,
    /// An operator token of the deployment (scenarios create their own
    /// merchants with it).
    pub operator_token: Option<String>,
    /// The operator that token names, where scenarios check it.
    pub operator_name: Option<String>,
    /// Merchant keys handed out one per merchant a scenario asks for, when
    /// there is no operator token.
    pub api_keys: Vec<String>,
    /// The address the callback receivers listen on.
    pub receiver_bind: String,
    /// The host name the deployment calls the receivers at (in callback
    /// URLs, and what their certificate names); by default the bind
    /// address over http and `localhost` over https.
    pub receiver_name: Option<String>,
    /// Ports the receivers may take (`first..=last`), for a firewall that
    /// opens a range; any free port otherwise.
    pub receiver_ports: Option<(u16, u16)>,
    /// The receivers' certificate and key (PEM), issued by a CA the
    /// deployment trusts, instead of a generated test CA.
    pub receiver_cert: Option<PathBuf>,
    pub receiver_key: Option<PathBuf>,
    /// Where the generated test CA is written once and reused on later
    /// runs, so that a deployment is told to trust it only once.
    pub ca_dir: Option<PathBuf>,
    /// The deployment's channel simulator (`payments-channel-sim`), for the
    /// `@channel_sim` scenarios against a deployment.
    pub channel: Option<ChannelSettings>,
    /// The deployment's other channel simulators, by code, for the
    /// `@routing` scenarios: `SIM-B` (pays), `SIM-REFUSING` (refuses every
    /// payment and payout) and `SIM-SILENT` (answers 503 to everything).
    /// Their secrets are the deployment's; the scenarios only read their
    /// `/control`.
    pub routing_channels: Vec<ChannelSettings>,
    /// The platform's receiver for `@platform_events` scenarios against a
    /// deployment configured with `platform_events_url` on this port.
    pub platform_receiver_port: Option<u16>,
    /// The deployment's `platform_events_secret`, to verify what the
    /// platform receiver gets.
    pub platform_events_secret: Option<Hidden>,
}

/// A secret the settings hold and never print.
#[derive(Clone)]
pub struct Hidden(pub String);

impl std::fmt::Debug for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(hidden)")
    }
}

/// A `payments-channel-sim` the deployment under test pays through.
#[derive(Clone)]
pub struct ChannelSettings {
    /// The simulator's base URL (its payment page and `/control`).
    pub url: String,
    /// The channel's `code` in the deployment's configuration.
    pub code: String,
    /// The secret both sides sign with.
    pub secret: String,
}

impl std::fmt::Debug for ChannelSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelSettings")
            .field("url", &self.url)
            .field("code", &self.code)
            .finish_non_exhaustive()
    }
}

impl ChannelSettings {
    /// All three or none; a partial set is refused, naming what is missing.
    pub fn from_parts(
        url: Option<String>,
        code: Option<String>,
        secret: Option<String>,
    ) -> Result<Option<ChannelSettings>> {
        match (url, code, secret) {
            (None, None, None) => Ok(None),
            (Some(url), Some(code), Some(secret)) => Ok(Some(ChannelSettings { url, code, secret })),
            _ => bail!(
                "the channel simulator needs --channel-url, --channel-code and --channel-secret together"
            ),
        }
    }
}

/// `CODE=URL,CODE=URL`: the routing scenarios' simulators.
pub fn parse_routing_channels(text: &str) -> Result<Vec<ChannelSettings>> {
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (code, url) = pair
                .split_once('=')
                .with_context(|| format!("`{pair}` is not CODE=URL"))?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!("`{url}` (channel {code}) is not an http(s) URL");
            }
            Ok(ChannelSettings {
                url: url.trim_end_matches('/').to_string(),
                code: code.to_string(),
                secret: String::new(),
            })
        })
        .collect()
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets what the harness uses; the first call wins, and must come before
/// the first scenario.
pub fn configure(settings: Settings) -> Result<()> {
    SETTINGS
        .set(settings)
        .map_err(|_| anyhow!("the conformance settings were already fixed"))
}

/// The settings in force: as configured, else from the environment.
pub fn current() -> Result<&'static Settings> {
    if let Some(s) = SETTINGS.get() {
        return Ok(s);
    }
    let from_env = Settings::from_env()?;
    Ok(SETTINGS.get_or_init(|| from_env))
}

/// The in-process sandbox pays through `payments-channel-sim` in place of
/// its in-process simulator (`CONFORMANCE_CHANNEL_SIM=1`).
pub fn in_process_channel_sim() -> bool {
    var("CONFORMANCE_CHANNEL_SIM").as_deref() == Some("1")
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Settings {
    /// `CONFORMANCE_PROFILE`, `CONFORMANCE_BASE_URL`,
    /// `CONFORMANCE_OPERATOR_TOKEN`, `CONFORMANCE_OPERATOR_NAME`,
    /// `CONFORMANCE_API_KEYS`, `CONFORMANCE_RECEIVER_HOST`,
    /// `CONFORMANCE_RECEIVER_NAME`, `CONFORMANCE_RECEIVER_PORTS`,
    /// `CONFORMANCE_RECEIVER_CERT`, `CONFORMANCE_RECEIVER_KEY`,
    /// `CONFORMANCE_CA_DIR`, `CONFORMANCE_CHANNEL_URL`,
    /// `CONFORMANCE_CHANNEL_CODE`, `CONFORMANCE_CHANNEL_SECRET`,
    /// `CONFORMANCE_PLATFORM_RECEIVER_PORT`, `CONFORMANCE_PLATFORM_EVENTS_SECRET`.
    pub fn from_env() -> Result<Settings> {
        let settings = Settings {
            profile: var("CONFORMANCE_PROFILE")
                .unwrap_or_else(|| "sandbox".into())
                .parse()
                .map_err(anyhow::Error::msg)?,
            base_url: var("CONFORMANCE_BASE_URL"),
            operator_token: var("CONFORMANCE_OPERATOR_TOKEN"),
            operator_name: var("CONFORMANCE_OPERATOR_NAME"),
            api_keys: var("CONFORMANCE_API_KEYS")
                .map(|k| split_list(&k))
                .unwrap_or_default(),
            receiver_bind: var("CONFORMANCE_RECEIVER_HOST").unwrap_or_else(|| "127.0.0.1".into()),
            receiver_name: var("CONFORMANCE_RECEIVER_NAME"),
            receiver_ports: var("CONFORMANCE_RECEIVER_PORTS")
                .map(|p| parse_ports(&p))
                .transpose()?,
            receiver_cert: var("CONFORMANCE_RECEIVER_CERT").map(PathBuf::from),
            receiver_key: var("CONFORMANCE_RECEIVER_KEY").map(PathBuf::from),
            ca_dir: var("CONFORMANCE_CA_DIR").map(PathBuf::from),
            channel: ChannelSettings::from_parts(
                var("CONFORMANCE_CHANNEL_URL"),
                var("CONFORMANCE_CHANNEL_CODE"),
                var("CONFORMANCE_CHANNEL_SECRET"),
            )?,
            routing_channels: var("CONFORMANCE_ROUTING_CHANNELS")
                .map(|v| parse_routing_channels(&v))
                .transpose()?
                .unwrap_or_default(),
            platform_receiver_port: var("CONFORMANCE_PLATFORM_RECEIVER_PORT")
                .map(|p| {
                    p.parse()
                        .context("CONFORMANCE_PLATFORM_RECEIVER_PORT is a port")
                })
                .transpose()?,
            platform_events_secret: var("CONFORMANCE_PLATFORM_EVENTS_SECRET").map(Hidden),
        };
        settings.validate()?;
        Ok(settings)
    }

    /// Refuses what cannot work, saying what to change.
    pub fn validate(&self) -> Result<()> {
        if self.receiver_cert.is_some() != self.receiver_key.is_some() {
            bail!("a receiver certificate needs its key, and a key its certificate (--receiver-cert with --receiver-key)");
        }
        if self.receiver_cert.is_some() && self.ca_dir.is_some() {
            bail!("--receiver-cert and --ca-dir exclude each other: the receivers use your certificate, or a test CA, not both");
        }
        for path in [&self.receiver_cert, &self.receiver_key]
            .into_iter()
            .flatten()
        {
            if !path.is_file() {
                bail!("{} does not exist", path.display());
            }
        }
        if let Some(url) = &self.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!("the base URL `{url}` is not an http(s) URL");
            }
        }
        Ok(())
    }

    /// Whether the `@channel_sim` scenarios can run: against a deployment
    /// when its simulator is named; in process, production always starts
    /// one, the sandbox when `CONFORMANCE_CHANNEL_SIM=1` asks.
    pub fn has_channel_sim(&self) -> bool {
        match &self.base_url {
            Some(_) => self.channel.is_some(),
            None => self.profile == Profile::Production || in_process_channel_sim(),
        }
    }

    /// Whether the `@routing` scenarios can run: where the `@channel_sim`
    /// ones can, and against a deployment only when its other simulators
    /// are named (`--routing-channels`).
    pub fn has_routing_channels(&self) -> bool {
        match &self.base_url {
            Some(_) => self.channel.is_some() && !self.routing_channels.is_empty(),
            None => self.has_channel_sim(),
        }
    }

    /// The host name in callback URLs, for a receiver over `tls` or not.
    pub fn receiver_host(&self, tls: bool) -> String {
        match (&self.receiver_name, tls) {
            (Some(name), _) => name.clone(),
            (None, true) => "localhost".into(),
            (None, false) => self.receiver_bind.clone(),
        }
    }

    /// The run's configuration as a report may show it: no token, no key.
    pub fn shown(&self) -> Vec<(String, String)> {
        let mut out = vec![
            ("profile".to_string(), self.profile.to_string()),
            (
                "target".into(),
                self.base_url
                    .clone()
                    .unwrap_or_else(|| "a service started in-process".into()),
            ),
            (
                "merchants".into(),
                if self.operator_token.is_some() {
                    "created per scenario with an operator token (not shown)".into()
                } else if !self.api_keys.is_empty() {
                    format!(
                        "{} merchant keys handed in (not shown)",
                        self.api_keys.len()
                    )
                } else {
                    "created in-process".into()
                },
            ),
            (
                "receivers".into(),
                format!(
                    "listen on {}{}, called at {} (https) / {} (http)",
                    self.receiver_bind,
                    self.receiver_ports
                        .map(|(a, b)| format!(" ports {a}-{b}"))
                        .unwrap_or_default(),
                    self.receiver_host(true),
                    self.receiver_host(false)
                ),
            ),
        ];
        let certificate = match (&self.receiver_cert, &self.ca_dir) {
            (Some(cert), _) => format!("the QA team's own: {}", cert.display()),
            (None, Some(dir)) => format!("a test CA kept in {} (trust ca.pem)", dir.display()),
            (None, None) => "a test CA made for this run".into(),
        };
        if self.profile == Profile::Production {
            out.push(("receiver certificate".into(), certificate));
        }
        out
    }
}

pub fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(String::from)
        .collect()
}

/// `20000-20099` (or one port).
pub fn parse_ports(text: &str) -> Result<(u16, u16)> {
    let bad = || format!("receiver ports `{text}`: expected FIRST-LAST, for example 20000-20099");
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let a: u16 = a.trim().parse().with_context(bad)?;
    let b: u16 = b.trim().parse().with_context(bad)?;
    if a == 0 || a > b {
        bail!(bad());
    }
    Ok((a, b))
}
