//! The simulator's command line, shared by its own binary and by the
//! service's `payments channel-sim` (what the sandbox starts as a child).

use crate::faults::Faults;
use anyhow::{bail, Context};
use clap::Parser;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A payment channel speaking the adapter protocol, for the sandbox, tests
/// and benchmarks: a payment page, payouts paid after a delay, faults on
/// purpose.
#[derive(Parser)]
#[command(name = "payments-channel-sim", version)]
struct Args {
    /// Where to listen (port 0: any free port; the address is printed).
    #[arg(
        long,
        env = "PAYMENTS_CHANNEL_SIM_BIND",
        default_value = "127.0.0.1:8090"
    )]
    bind: SocketAddr,
    /// The secret shared with the service's channel configuration, at
    /// least 32 bytes. Prefer the environment: an argument is visible to
    /// every user of the machine.
    #[arg(long, env = "PAYMENTS_CHANNEL_SIM_SECRET", hide_env_values = true)]
    secret: String,
    /// Where payers reach the payment page, if not the bound address.
    #[arg(long, env = "PAYMENTS_CHANNEL_SIM_PUBLIC_URL")]
    public_url: Option<String>,
    /// Where the journal lives: what the simulator took survives restarts.
    #[arg(
        long,
        env = "PAYMENTS_CHANNEL_SIM_DATA_DIR",
        default_value = ".channel-sim"
    )]
    data_dir: PathBuf,
    /// How long an accepted payout takes to be paid, in milliseconds.
    #[arg(
        long,
        env = "PAYMENTS_CHANNEL_SIM_SETTLE_AFTER_MS",
        default_value_t = 2000
    )]
    settle_after_ms: u64,
    /// Payouts are paid only when `POST /control/payouts/{order_no}/settle`
    /// (or `/fail`) says so; `--settle-after-ms` is ignored.
    #[arg(long, env = "PAYMENTS_CHANNEL_SIM_SETTLE_BY_CONTROL")]
    settle_by_control: bool,
    /// A JSON file of faults to inject (see `GET /control/faults`).
    #[arg(long, env = "PAYMENTS_CHANNEL_SIM_FAULTS")]
    faults: Option<PathBuf>,
    /// Exit when standard input closes: a supervising process that dies
    /// (a test suite, killed or done) takes the simulator with it.
    #[arg(long)]
    exit_on_stdin_close: bool,
    /// Seeds the fault dice: the same seed rolls the same faults.
    #[arg(long, env = "PAYMENTS_CHANNEL_SIM_SEED", default_value_t = 1)]
    seed: u64,
    /// How many notifications are posted to the service at once; more
    /// wait for a free sender, as at a provider's bounded notifier.
    #[arg(
        long,
        env = "PAYMENTS_CHANNEL_SIM_NOTIFY_SENDERS",
        default_value_t = crate::SENDERS,
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    notify_senders: u16,
}

fn faults(path: Option<&PathBuf>) -> anyhow::Result<Faults> {
    let Some(path) = path else {
        return Ok(Faults::default());
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let faults: Faults = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a faults file", path.display()))?;
    if let Err(e) = faults.check() {
        bail!("{}: {e}", path.display());
    }
    Ok(faults)
}

/// The whole program, for both entry points: logs to standard error
/// (`PAYMENTS_CHANNEL_SIM_LOG` filters them), runs until interrupted, and
/// exits 1 with the error (help and version print themselves, exit 0).
pub async fn main<I, T>(args: I)
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PAYMENTS_CHANNEL_SIM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run_from(args).await {
        if let Some(clap) = e.downcast_ref::<clap::Error>() {
            clap.exit();
        }
        eprintln!("payments-channel-sim: {e:#}");
        std::process::exit(1);
    }
}

/// Parses `args` (the program's name first) and runs the simulator until
/// interrupted: the `payments-channel-sim` binary, and `payments
/// channel-sim`, the sandbox's child.
pub async fn run_from<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = Args::try_parse_from(args)?;
    if args.exit_on_stdin_close {
        std::thread::spawn(|| {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            std::process::exit(0);
        });
    }
    run(args).await
}

async fn run(args: Args) -> anyhow::Result<()> {
    let mut config = crate::Config {
        bind: args.bind,
        secret: args.secret.into_bytes(),
        public_url: args.public_url,
        data_dir: Some(args.data_dir),
        settle_after: (!args.settle_by_control)
            .then(|| Duration::from_millis(args.settle_after_ms)),
        faults: faults(args.faults.as_ref())?,
        seed: args.seed,
        notify_senders: usize::from(args.notify_senders),
    };
    let mut lives = 0u32;
    loop {
        let running = crate::start(config.clone()).await?;
        if lives == 0 {
            // The one line a supervisor (a test, a script) waits for.
            println!("payments-channel-sim listening on {}", running.url());
            std::io::stdout().flush().ok();
        } else {
            tracing::info!(lives, "restarted from the journal");
        }
        config.bind = running.local_addr();
        tokio::select! {
            _ = running.restart_requested() => {
                running.close().await?;
                lives += 1;
            }
            _ = tokio::signal::ctrl_c() => {
                running.close().await?;
                return Ok(());
            }
        }
    }
}
