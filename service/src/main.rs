//! `payments`: runs the merchant payment service, or administers it.

use anyhow::Result;
use clap::{Parser, Subcommand};
use payments_service::app::actor::Actor;
use payments_service::app::{ledger, merchants, App};
use payments_service::channels::child::ChildSim;
use payments_service::clock::{Clock, OffsetClock, SystemClock};
use payments_service::config::Config;
use payments_service::domain::Profile;
use payments_service::server;
use payments_service::telemetry::logs;
use std::path::PathBuf;
use std::sync::Arc;

// glibc's malloc took a tenth of the service's CPU under load (many small,
// short-lived allocations per request, freed on another worker thread);
// mimalloc keeps them in per-thread pages. `cargo xtask bench` measures it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "payments", about = "The merchant payment service")]
struct Cli {
    /// A TOML configuration file; environment variables (PAYMENTS_*) override it.
    #[arg(long, global = true, env = "PAYMENTS_CONFIG")]
    config: Option<PathBuf>,
    /// With an administration command: make the database if there is none
    /// (a new, empty sandbox). Without it such a command refuses a SQLite
    /// database that is not there: run in another directory, it would
    /// make a new sandbox there that the service never sees.
    #[arg(long, global = true)]
    init: bool,
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
    /// Administer operators: the first admin, before anyone can use the
    /// operator API without a configuration token.
    Operator {
        #[command(subcommand)]
        command: OperatorCommand,
    },
    /// The master key: reseal what is stored under a new one.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Inspect the ledger.
    Ledger {
        #[command(subcommand)]
        command: LedgerCommand,
    },
    /// Run `payments-channel-sim` (the same arguments; `--help` lists
    /// them): what the sandbox starts as a child with `start_channel_sim`.
    #[command(disable_help_flag = true)]
    ChannelSim {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Reseal every stored secret under the current master key
    /// (PAYMENTS_MASTER_KEY) while the earlier ones
    /// (PAYMENTS_PREVIOUS_MASTER_KEYS, newest first) still decrypt. Safe
    /// while the service runs, and to run again; a progress line per page.
    Rotate {
        /// Rows resealed per transaction.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(i64).range(1..=10000))]
        batch: i64,
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

#[derive(Subcommand)]
enum OperatorCommand {
    /// Create an operator and print its first API token (shown only this
    /// once; the service keeps only its keyed hash).
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        email: String,
        /// viewer, support, approver or admin.
        #[arg(long, default_value = "admin")]
        role: String,
    },
    /// Set an operator's password (for the console), read from standard
    /// input: never an argument, which the process list would show.
    Password {
        #[arg(long)]
        email: String,
    },
    /// Forget an operator's authenticator (a lost phone): their next
    /// console sign-in enrols a new one. Ends their console sessions.
    SecondFactorReset {
        #[arg(long)]
        email: String,
    },
}

#[tokio::main]
async fn main() {
    // mimalloc asks the kernel for transparent huge pages. Then the heap
    // grows 2 MiB at a time, each zeroed in one page fault on whichever
    // thread first touches it (often a worker mid-request), and counted
    // whole in the resident size. Beside 2,000 sign-ins (issue 55) peak
    // memory was 88-91 MiB with them and 58-61 MiB without, and the steady
    // merchant's p99 beside the crowd lower (bench/results/abuse.md). The
    // flag is the process's: from here on every thread faults small pages
    // (the 4 MiB touched before main stay as they are).
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::thread::disable_transparent_huge_pages(true) {
        eprintln!("payments: huge pages stay on ({e})");
    }
    if let Err(e) = run().await {
        // Once logging is set up, the failure is a log line in its format.
        if tracing::dispatcher::has_been_set() {
            tracing::error!(error = format!("{e:#}"), "payments stopped");
        } else {
            eprintln!("error: {e:#}");
        }
        std::process::exit(1);
    }
}

async fn run() -> Result<()> {
    let cli = Cli::parse();
    if let Some(Command::ChannelSim { args }) = &cli.command {
        return channel_sim(args).await;
    }
    let mut config = Config::load(cli.config.as_deref())?;
    logs::init(config.log_format, &config.log_level);
    if !matches!(cli.command, None | Some(Command::Serve)) {
        let named = database_is_there(&config.database_url, cli.init)?;
        eprintln!("database: {named}");
    }
    // Kept for the whole run: dropping it stops the child.
    let _channel_sim = if config.start_channel_sim {
        let exe = std::env::current_exe()?;
        let sim = ChildSim::start(&exe, &config.data_dir)?;
        sim.adopt(&mut config);
        tracing::info!(url = %sim.url, "channel simulator started as a child (start_channel_sim)");
        Some(sim)
    } else {
        None
    };
    // The sandbox's clock can be advanced through its API; production reads
    // the system clock only.
    let clock: Arc<dyn Clock> = if config.controllable_clock {
        Arc::new(OffsetClock::default())
    } else {
        Arc::new(SystemClock)
    };
    let app = server::build_app(config, clock).await?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(app).await,
        Command::Merchant {
            command: MerchantCommand::Create { code, name },
        } => {
            let by = Actor::System("payments merchant create");
            let created = merchants::create(&app, &by, &code, &name)
                .await
                .map_err(|e| anyhow::anyhow!("creating merchant `{code}`: {e}"))?;
            println!("merchant_id: {}", created.merchant.id);
            println!("merchant_code: {}", created.merchant.code);
            println!("api_key: {}", created.api_key);
            println!("(store the key now: it is not shown again)");
            Ok(())
        }
        Command::Operator {
            command: OperatorCommand::Create { name, email, role },
        } => create_operator(&app, name, email, &role).await,
        Command::Operator {
            command: OperatorCommand::Password { email },
        } => set_operator_password(&app, email).await,
        Command::Operator {
            command: OperatorCommand::SecondFactorReset { email },
        } => reset_second_factor(&app, email).await,
        Command::Ledger {
            command: LedgerCommand::Check,
        } => check_ledger(&app).await,
        Command::Keys {
            command: KeysCommand::Rotate { batch },
        } => rotate_master_key(&app, batch).await,
        Command::ChannelSim { .. } => unreachable!("handled before the configuration"),
    }
}

/// An administration command's database, named for the person who ran it
/// (a SQLite file by its full path, a server's URL without its password):
/// a SQLite file must already be there unless `--init` asks for a new one.
/// (A PostgreSQL database that does not exist refuses the connection by
/// itself.)
fn database_is_there(url: &str, init: bool) -> Result<String> {
    let Some(path) = url.strip_prefix("sqlite://") else {
        return Ok(payments_service::config::redact_url(url));
    };
    let path = std::env::current_dir()?.join(path.split('?').next().unwrap_or(path));
    if init || path.exists() {
        return Ok(format!("sqlite://{}", path.display()));
    }
    anyhow::bail!(
        "no database at {}: an administration command works on the database of the service it \
         administers; run it with that service's settings (its directory, PAYMENTS_DATA_DIR or \
         --config), or add --init to make a new, empty sandbox here",
        path.display()
    )
}

/// `payments keys rotate`: a line per page read, then what each place
/// held and how many values were resealed. Names key ids, never a key.
async fn rotate_master_key(app: &App, batch: i64) -> Result<()> {
    use payments_service::app::master_keys;
    let started = std::time::Instant::now();
    println!(
        "resealing every stored secret under master key {} ({} earlier key(s) still decrypt)",
        app.vault.master_key_id(),
        app.config.previous_master_keys.len()
    );
    let line = |p: &master_keys::Progress| {
        format!(
            "{}: {} read, {} resealed",
            p.place.as_str(),
            p.scanned,
            p.resealed
        )
    };
    let done =
        master_keys::rotate(&app.db, &app.vault, batch, |p| println!("  {}", line(p))).await?;
    println!("done in {:.1} s:", started.elapsed().as_secs_f64());
    for p in &done {
        println!("{}", line(p));
    }
    let meanwhile: u64 = done.iter().map(|p| p.changed_meanwhile).sum();
    if meanwhile > 0 {
        println!(
            "{meanwhile} value(s) changed while being resealed and were left as written: \
             run `payments keys rotate` again"
        );
    }
    Ok(())
}

/// `payments operator create`: the operator and its first token, which
/// the command line names so that a script can pick it up.
async fn create_operator(app: &App, name: String, email: String, role: &str) -> Result<()> {
    use payments_service::app::people;
    let fail = |e: payments_service::domain::error::ApiError| {
        anyhow::anyhow!("creating operator `{email}`: {e}", email = email.clone())
    };
    use payments_service::domain::people::Action;
    let role = people::role("role", role).map_err(fail)?;
    // The command line is in the audit trail too, as itself.
    let by = |action| {
        Actor::operator(
            command_line("payments operator create"),
            action,
            "command-line",
        )
    };
    let new = people::NewOperator {
        name,
        email: email.clone(),
        role,
    };
    let row = people::create(app, &by(Action::CreateOperator), new)
        .await
        .map_err(fail)?;
    let label = "created by `payments operator create`".into();
    let issued = people::issue_token(app, &by(Action::IssueOperatorToken), &row.id, label, None)
        .await
        .map_err(fail)?;
    println!("operator_id: {}", row.id);
    println!("email: {}", row.email);
    println!("role: {}", row.role);
    println!("token: {}", issued.token);
    if let Some(end) = issued.row.expires_at {
        println!("expires_at: {end} (Unix seconds; issue another and revoke this one before then)");
    }
    println!("(store the token now: it is not shown again)");
    Ok(())
}

/// `payments operator password --email …`: the password from the first
/// line of standard input, audited as the command line.
async fn set_operator_password(app: &App, email: String) -> Result<()> {
    use payments_service::app::people;
    use payments_service::domain::people::Action;
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| anyhow::anyhow!("reading the password from standard input: {e}"))?;
    let password = line.trim_end_matches(['\r', '\n']).to_string();
    let by = Actor::operator(
        command_line("payments operator password"),
        Action::ChangeOperator,
        "command-line",
    );
    let row = people::set_password(app, &by, email.clone(), password)
        .await
        .map_err(|e| anyhow::anyhow!("setting the password of `{email}`: {e}"))?;
    println!("operator_id: {}", row.id);
    println!("password set (stored as an Argon2id hash)");
    Ok(())
}

async fn reset_second_factor(app: &App, email: String) -> Result<()> {
    use payments_service::app::second_factor;
    use payments_service::domain::people::Action;
    let by = Actor::operator(
        command_line("payments operator second-factor-reset"),
        Action::ChangeOperator,
        "command-line",
    );
    let (row, had) = second_factor::reset(app, &by, email.clone())
        .await
        .map_err(|e| anyhow::anyhow!("resetting the second factor of `{email}`: {e}"))?;
    println!("operator_id: {}", row.id);
    println!(
        "{}; their console sessions ended, and their next sign-in sets up a new authenticator",
        if had {
            "second factor forgotten"
        } else {
            "they had no second factor yet"
        }
    );
    Ok(())
}

/// The command line as the operator it acts as: an admin named for the
/// command, with no identity of its own.
fn command_line(name: &str) -> payments_service::app::people::Operator {
    payments_service::app::people::Operator {
        id: None,
        name: name.into(),
        role: payments_service::domain::status::Role::Admin,
    }
}

/// `payments channel-sim ...`: the simulator's own command line.
async fn channel_sim(args: &[String]) -> Result<()> {
    let argv = std::iter::once("payments channel-sim".to_string()).chain(args.iter().cloned());
    payments_channel_sim::cli::main(argv).await;
    Ok(())
}

/// Serves until SIGTERM or SIGINT, then stops within the grace.
async fn serve(app: Arc<App>) -> Result<()> {
    let mut signals = Signals::new()?;
    let mut service = server::start(app.clone())?;
    tracing::info!(
        profile = %app.config.profile,
        address = %service.local_addr(),
        metrics_address = service.metrics_addr().map(|a| a.to_string()),
        version = env!("CARGO_PKG_VERSION"),
        "listening"
    );
    if app.config.profile == Profile::Sandbox {
        let (demo, created) = merchants::ensure_demo(&app).await?;
        print_sandbox_banner(&app.config, &demo, created);
    }
    let signal = tokio::select! {
        result = service.wait() => return result,
        signal = signals.next() => signal,
    };
    let grace = Duration::from_secs(app.config.shutdown_grace_seconds);
    tracing::info!(
        signal,
        grace_seconds = grace.as_secs(),
        "shutting down: no new connections; requests and callback attempts under way may finish"
    );
    // A second signal means now.
    tokio::spawn(async move {
        let again = signals.next().await;
        tracing::warn!(signal = again, "second signal: exiting at once");
        std::process::exit(1);
    });
    let stopped = service.shutdown(grace).await?;
    tracing::info!(
        requests_cut_off = stopped.requests_cut_off,
        attempts_cut_off = stopped.attempts_cut_off,
        claims_released = stopped.claims_released,
        "stopped"
    );
    Ok(())
}

/// `payments ledger check`: every difference printed, failing if any.
async fn check_ledger(app: &App) -> Result<()> {
    let report = ledger::check(app)
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

/// SIGTERM (what orchestrators send) and SIGINT (Ctrl-C), as one stream.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// The name of the next signal that arrives.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
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
  reference:       {base}/docs
  console:         {base}/console  (operators: `payments operator create …`, then
                   `payments operator password --email …` sets the sign-in password)
  portal:          {base}/portal   (merchant owners, by an operator's invitation){inbox}

A first request, ready to paste (bash; needs curl and md5sum):

  KEY='{key}'
  OP='{operator}'
  ORDER="demo-$(date +%s)"
  BODY="{{\"merchant_order_no\":\"$ORDER\",\"amount\":100.50,\"currency_code\":\"THB\"}}"
  SIG=$(printf '%s' "amount=100.50&currency_code=THB&merchant_order_no=$ORDER$KEY" | md5sum | cut -d' ' -f1)
  curl -s {base}/api/v1/merchant/orders/deposit -H 'content-type: application/json' \
    -H "x-api-key: $KEY" -H "x-timestamp: $(date +%s)" -H "x-signature: $SIG" -d "$BODY"

Press Ctrl-C to stop (a second Ctrl-C stops at once).
"#,
        data = config.data_dir.display(),
        inbox = if config.platform_events_url.as_deref()
            == Some(payments_service::app::platform_inbox::own_url(base).as_str())
        {
            format!(
                "\n  invitations:     {base}/console/platform-events  (no platform_events_url: \
                 the sandbox receives its own platform events; invite from a merchant's page)"
            )
        } else {
            String::new()
        },
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
