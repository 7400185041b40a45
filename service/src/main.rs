//! `payments`: runs the merchant payment service, or administers it.

use anyhow::Result;
use clap::{Parser, Subcommand};
use payments_service::app::{ledger, merchants};
use payments_service::clock::{Clock, OffsetClock, SystemClock};
use payments_service::config::Config;
use payments_service::domain::Profile;
use payments_service::server;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(name = "payments", about = "The merchant payment service")]
struct Cli {
    /// A TOML configuration file; environment variables (PAYMENTS_*) override it.
    #[arg(long, global = true, env = "PAYMENTS_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service (the default).
    Serve,
    /// Administer merchants.
    Merchant {
        #[command(subcommand)]
        command: MerchantCommand,
    },
    /// Inspect the ledger.
    Ledger {
        #[command(subcommand)]
        command: LedgerCommand,
    },
}

#[derive(Subcommand)]
enum LedgerCommand {
    /// Recompute every balance from the journal and report any difference
    /// (exit status 1 when there is one).
    Check,
}

#[derive(Subcommand)]
enum MerchantCommand {
    /// Create a merchant and print its API key (shown only this once).
    Create {
        #[arg(long)]
        code: String,
        #[arg(long)]
        name: String,
    },
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn run() -> Result<()> {
    let cli = Cli::parse();
    let config = Config::load(cli.config.as_deref())?;
    init_logging(&config.log_level);
    // The sandbox's clock can be advanced through its API; production reads
    // the system clock only.
    let clock: Arc<dyn Clock> = if config.controllable_clock {
        Arc::new(OffsetClock::default())
    } else {
        Arc::new(SystemClock)
    };
    let app = server::build_app(config, clock).await?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let service = server::start(app.clone())?;
            if app.config.profile == Profile::Sandbox {
                let (demo, created) = merchants::ensure_demo(&app).await?;
                print_sandbox_banner(&app.config, &demo, created);
            } else {
                println!(
                    "payments: production profile listening on {}",
                    service.local_addr()
                );
            }
            tokio::select! {
                result = service.wait() => result?,
                _ = tokio::signal::ctrl_c() => println!("payments: shutting down"),
            }
            Ok(())
        }
        Command::Merchant {
            command: MerchantCommand::Create { code, name },
        } => {
            let created = merchants::create(&app, &code, &name)
                .await
                .map_err(|e| anyhow::anyhow!("creating merchant `{code}`: {e}"))?;
            println!("merchant_id: {}", created.merchant.id);
            println!("merchant_code: {}", created.merchant.code);
            println!("api_key: {}", created.api_key);
            println!("(store the key now: it is not shown again)");
            Ok(())
        }
        Command::Ledger {
            command: LedgerCommand::Check,
        } => {
            let report = ledger::check(&app)
                .await
                .map_err(|e| anyhow::anyhow!("checking the ledger: {e}"))?;
            println!(
                "ledger check: {} journal entries, {} balances",
                report.entries_checked, report.balances_checked
            );
            for d in &report.differences {
                println!("  {} {}: {}", d.kind, d.reference, d.detail);
            }
            if report.ok() {
                println!("no difference");
                Ok(())
            } else {
                anyhow::bail!("{} differences", report.differences.len())
            }
        }
    }
}

/// The service's own events (workers, delivery, pages) through `tracing`
/// on stderr, at `PAYMENTS_LOG_LEVEL` (or an `RUST_LOG`-style filter in
/// it, `payments_service=debug`). dropshot's request lines keep their own
/// logger.
fn init_logging(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(level)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// The sandbox's first screen: everything needed for a first request. The
/// demo key is printed on purpose (sandbox only): it is the sandbox's.
fn print_sandbox_banner(config: &Config, demo: &merchants::NewMerchant, created: bool) {
    let base = config.public_base_url.trim_end_matches('/');
    println!(
        r#"
payments sandbox is running at {base}  (data in {data})
{created}demo merchant `{code}` (id {id})

  API key:         {key}
  operator token:  {operator}  (operator API and sandbox simulation)
  spec:            {base}/api/v1/merchant/openapi.json

A first request, ready to paste (bash; needs curl and md5sum):

  KEY='{key}'
  OP='{operator}'
  ORDER="demo-$(date +%s)"
  BODY="{{\"merchant_order_no\":\"$ORDER\",\"amount\":100.50,\"currency_code\":\"THB\"}}"
  SIG=$(printf '%s' "amount=100.50&currency_code=THB&merchant_order_no=$ORDER$KEY" | md5sum | cut -d' ' -f1)
  curl -s {base}/api/v1/merchant/orders/deposit -H 'content-type: application/json' \
    -H "x-api-key: $KEY" -H "x-timestamp: $(date +%s)" -H "x-signature: $SIG" -d "$BODY"

Press Ctrl-C to stop.
"#,
        data = config.data_dir.display(),
        created = if created { "created " } else { "" },
        code = demo.merchant.code,
        id = demo.merchant.id,
        key = demo.api_key,
        operator = config
            .operators
            .iter()
            .find(|o| o.name == server::SANDBOX_OPERATOR)
            .map_or("(configured)", |o| o.token.as_str()),
    );
}
