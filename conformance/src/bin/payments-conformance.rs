//! `payments-conformance`: the merchant payment service's conformance
//! suite as one program, its feature files inside it. Point it at a
//! deployment; it runs the scenarios of the profile, writes JUnit, cucumber
//! JSON and an HTML report, and exits 0 only if everything selected passed
//! and the ledger adds up afterwards.

#[path = "../../suite/mod.rs"]
mod suite;

use anyhow::{bail, Context, Result};
use clap::Parser;
use conformance::settings::{self, Settings};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "payments-conformance",
    version,
    about = "Runs the merchant payment service's conformance suite against a deployment",
    after_help = "Flags win over the environment (CONFORMANCE_*), which wins over --config.\n\
                  Exit status: 0 all passed, 1 a scenario failed or the ledger differs, 2 the run could not start."
)]
struct Cli {
    /// The deployment (`https://payments.example`). This program runs
    /// against deployments only; `cargo test -p conformance --test
    /// conformance` runs the suite against a service in its own process.
    #[arg(long, env = "CONFORMANCE_BASE_URL")]
    base_url: Option<String>,
    /// `sandbox` or `production`: which scenarios apply.
    #[arg(long, env = "CONFORMANCE_PROFILE")]
    profile: Option<String>,
    /// A cucumber tag expression, e.g. `@callbacks and not @realtime`.
    #[arg(long, env = "CONFORMANCE_TAGS")]
    tags: Option<String>,
    /// Feature files to run (`deposit,callbacks`); all by default.
    #[arg(long, env = "CONFORMANCE_FEATURES", value_delimiter = ',')]
    features: Vec<String>,
    /// Where the reports go (default `./conformance-report`).
    #[arg(long, env = "CONFORMANCE_REPORT_DIR")]
    report: Option<PathBuf>,
    /// A TOML file with any of these settings (snake_case keys).
    #[arg(long, env = "CONFORMANCE_CONFIG")]
    config: Option<PathBuf>,
    /// An operator token of the deployment: each scenario creates its own
    /// merchant with it.
    #[arg(long, env = "CONFORMANCE_OPERATOR_TOKEN", hide_env_values = true)]
    operator_token: Option<String>,
    /// The operator that token names (checked on approvals).
    #[arg(long, env = "CONFORMANCE_OPERATOR_NAME")]
    operator_name: Option<String>,
    /// Merchant API keys to use instead of an operator token (merchant-only
    /// scenarios).
    #[arg(
        long,
        env = "CONFORMANCE_API_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    api_keys: Vec<String>,
    /// The address the callback receivers listen on (default 127.0.0.1).
    #[arg(long, env = "CONFORMANCE_RECEIVER_HOST")]
    receiver_host: Option<String>,
    /// The name the deployment calls the receivers at, and their
    /// certificate names (default: localhost over https, the listen address
    /// over http).
    #[arg(long, env = "CONFORMANCE_RECEIVER_NAME")]
    receiver_name: Option<String>,
    /// Ports the receivers may use, `FIRST-LAST` (any free port by default).
    #[arg(long, env = "CONFORMANCE_RECEIVER_PORTS")]
    receiver_ports: Option<String>,
    /// The receivers' certificate (PEM), from a CA the deployment trusts.
    #[arg(long, env = "CONFORMANCE_RECEIVER_CERT", requires = "receiver_key")]
    receiver_cert: Option<PathBuf>,
    /// Its private key (PEM).
    #[arg(long, env = "CONFORMANCE_RECEIVER_KEY", requires = "receiver_cert")]
    receiver_key: Option<PathBuf>,
    /// Without your own certificate: where a test CA is written once and
    /// reused; tell the deployment to trust DIR/ca.pem.
    #[arg(long, env = "CONFORMANCE_CA_DIR")]
    ca_dir: Option<PathBuf>,
    /// The deployment's `payments-channel-sim` (base URL), for the
    /// @channel_sim scenarios; with --channel-code and --channel-secret.
    #[arg(long, env = "CONFORMANCE_CHANNEL_URL")]
    channel_url: Option<String>,
    /// The simulator's channel `code` in the deployment's configuration.
    #[arg(long, env = "CONFORMANCE_CHANNEL_CODE")]
    channel_code: Option<String>,
    /// The secret the deployment and the simulator sign with.
    #[arg(long, env = "CONFORMANCE_CHANNEL_SECRET", hide_env_values = true)]
    channel_secret: Option<String>,
    /// The deployment's other channel simulators for the @routing
    /// scenarios, `CODE=URL,...`: SIM-B (pays), SIM-REFUSING (refuses every
    /// payment and payout), SIM-SILENT (answers 503 to everything), each
    /// configured in the deployment with that code.
    #[arg(long, env = "CONFORMANCE_ROUTING_CHANNELS")]
    routing_channels: Option<String>,
    /// The port of the platform's receiver: the deployment's
    /// `platform_events_url` points at it (the receiver host, this port),
    /// for the @platform_events scenarios; with --platform-events-secret.
    #[arg(
        long,
        env = "CONFORMANCE_PLATFORM_RECEIVER_PORT",
        requires = "platform_events_secret"
    )]
    platform_receiver_port: Option<u16>,
    /// The deployment's `platform_events_secret` (`whsec_...`).
    #[arg(
        long,
        env = "CONFORMANCE_PLATFORM_EVENTS_SECRET",
        hide_env_values = true
    )]
    platform_events_secret: Option<String>,
    /// Retry scenarios tagged @flaky_network up to N times.
    #[arg(long)]
    retry: Option<usize>,
    /// Also run the @realtime scenarios (minutes of wall time).
    #[arg(long)]
    realtime: bool,
    /// Run only the @realtime scenarios.
    #[arg(long, conflicts_with = "realtime")]
    realtime_only: bool,
    /// List the feature files and exit.
    #[arg(long)]
    list_features: bool,
}

/// The same settings as a file (`--config qa.toml`); paths in it are
/// relative to the file.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    base_url: Option<String>,
    profile: Option<String>,
    tags: Option<String>,
    features: Option<Vec<String>>,
    report: Option<PathBuf>,
    operator_token: Option<String>,
    operator_name: Option<String>,
    api_keys: Option<Vec<String>>,
    receiver_host: Option<String>,
    receiver_name: Option<String>,
    receiver_ports: Option<String>,
    receiver_cert: Option<PathBuf>,
    receiver_key: Option<PathBuf>,
    ca_dir: Option<PathBuf>,
    channel_url: Option<String>,
    channel_code: Option<String>,
    channel_secret: Option<String>,
    routing_channels: Option<String>,
    platform_receiver_port: Option<u16>,
    platform_events_secret: Option<String>,
    retry: Option<usize>,
}

fn read_config(path: &Path) -> Result<FileConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the configuration {}", path.display()))?;
    let mut file: FileConfig = toml::from_str(&text)
        .with_context(|| format!("parsing the configuration {}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    for p in [
        &mut file.report,
        &mut file.receiver_cert,
        &mut file.receiver_key,
        &mut file.ca_dir,
    ]
    .into_iter()
    .flatten()
    {
        if p.is_relative() {
            *p = base.join(&*p);
        }
    }
    Ok(file)
}

fn prepare(cli: Cli) -> Result<suite::Run> {
    let file = match &cli.config {
        Some(path) => read_config(path)?,
        None => FileConfig::default(),
    };
    let pick = |flag: Option<String>, from_file: Option<String>| flag.or(from_file);
    let profile: conformance::Profile = pick(cli.profile, file.profile)
        .unwrap_or_else(|| "sandbox".into())
        .parse()
        .map_err(anyhow::Error::msg)?;
    let settings = Settings {
        profile,
        base_url: pick(cli.base_url, file.base_url),
        operator_token: pick(cli.operator_token, file.operator_token),
        operator_name: pick(cli.operator_name, file.operator_name),
        api_keys: if cli.api_keys.is_empty() {
            file.api_keys.unwrap_or_default()
        } else {
            cli.api_keys
        },
        receiver_bind: pick(cli.receiver_host, file.receiver_host)
            .unwrap_or_else(|| "127.0.0.1".into()),
        receiver_name: pick(cli.receiver_name, file.receiver_name),
        receiver_ports: pick(cli.receiver_ports, file.receiver_ports)
            .map(|p| settings::parse_ports(&p))
            .transpose()?,
        receiver_cert: cli.receiver_cert.or(file.receiver_cert),
        receiver_key: cli.receiver_key.or(file.receiver_key),
        ca_dir: cli.ca_dir.or(file.ca_dir),
        channel: settings::ChannelSettings::from_parts(
            pick(cli.channel_url, file.channel_url),
            pick(cli.channel_code, file.channel_code),
            pick(cli.channel_secret, file.channel_secret),
        )?,
        routing_channels: pick(cli.routing_channels, file.routing_channels)
            .map(|v| settings::parse_routing_channels(&v))
            .transpose()?
            .unwrap_or_default(),
        platform_receiver_port: cli.platform_receiver_port.or(file.platform_receiver_port),
        platform_events_secret: pick(cli.platform_events_secret, file.platform_events_secret)
            .map(settings::Hidden),
    };
    settings.validate()?;
    if settings.base_url.is_none() {
        bail!(
            "name the deployment with --base-url (or CONFORMANCE_BASE_URL); the suite runs \
             against a service in its own process only as a test of the workspace \
             (`cargo test -p conformance --test conformance`)"
        );
    }
    if settings.operator_token.is_none() && settings.api_keys.is_empty() {
        bail!(
            "against a deployment the suite needs its credentials: --operator-token (each \
             scenario creates a merchant) or --api-keys (merchant keys, merchant-only scenarios)"
        );
    }
    let shown = settings.shown();
    let report_dir = cli
        .report
        .or(file.report)
        .unwrap_or_else(|| PathBuf::from("conformance-report"));
    let run = suite::Run {
        profile,
        features: if cli.features.is_empty() {
            file.features.unwrap_or_default()
        } else {
            cli.features
        },
        tags: pick(cli.tags, file.tags),
        realtime: if cli.realtime_only {
            suite::Realtime::Only
        } else if cli.realtime {
            suite::Realtime::Include
        } else {
            suite::Realtime::Skip
        },
        report_dir,
        retry: cli.retry.or(file.retry),
        shown,
    };
    settings::configure(settings)?;
    Ok(run)
}

fn main() {
    let cli = Cli::parse();
    if cli.list_features {
        for name in conformance::features::names() {
            println!("{name}");
        }
        return;
    }
    let run = match prepare(cli) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("payments-conformance: {e:#}");
            std::process::exit(2);
        }
    };
    println!(
        "payments-conformance: {} profile against {}; reports in {}",
        run.profile,
        settings::current()
            .ok()
            .and_then(|s| s.base_url.clone())
            .unwrap_or_default(),
        run.report_dir.display()
    );
    let code = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt.block_on(suite::run(run)),
        Err(e) => {
            eprintln!("payments-conformance: starting the runtime: {e}");
            2
        }
    };
    std::process::exit(code);
}
