//! `cargo xtask bench`: the service under load on PostgreSQL, measured
//! from separate processes, next to the database's and the network's own
//! ceilings on the same machine in the same run; callback delivery as a
//! drained backlog and at a steady rate; and every figure again on tables
//! seeded to 10⁴, 10⁵ and 10⁶ orders; money through a channel simulator in
//! a process of its own. Writes bench/results/README.md and its plots, and
//! bench/results/channels.md.

mod abuse;
mod channels;
mod config;
// The load generators' reading of /proc, one file for both: the bench
// reads only the machine's ticks from it, around pgbench.
#[allow(dead_code)]
#[path = "../../../tests/examples/support/cpu.rs"]
mod cpu;
mod delivery;
mod feed;
mod peer;
mod report;
mod routing;
mod sizes;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PG: &str = "postgres://postgres@127.0.0.1:5432";
const CLIENTS: [usize; 3] = [1, 16, 64];
const ENDPOINTS: [(&str, &str); 3] = [
    ("create", "signed create-deposit"),
    ("query", "query by merchant_order_no"),
    ("balance", "balance"),
];

pub struct Options {
    pub seconds: u64,
    /// Deliveries due at once for the drain.
    pub drain: usize,
    /// Arrivals per second for the steady mode.
    pub steady_rate: u32,
    /// Order counts the tables are seeded to, in turn.
    pub sizes: Vec<u64>,
    /// Only these parts (all when empty).
    pub only: Vec<String>,
    /// The webhook sender to run side by side with ours (`svix`).
    pub peer: Option<String>,
}

const PARTS: [&str; 8] = [
    "requests", "delivery", "sizes", "channels", "feed", "abuse", "routing", "peer",
];

impl Options {
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options {
            seconds: 10,
            drain: 10_000,
            steady_rate: 500,
            sizes: vec![10_000, 100_000, 1_000_000],
            only: Vec::new(),
            peer: None,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .with_context(|| format!("{name} needs a value"))
                    .cloned()
            };
            match arg.as_str() {
                "--seconds" => options.seconds = value("--seconds")?.parse()?,
                "--drain" => options.drain = value("--drain")?.parse()?,
                "--steady-rate" => options.steady_rate = value("--steady-rate")?.parse()?,
                "--sizes" => {
                    options.sizes = value("--sizes")?
                        .split(',')
                        .map(str::parse)
                        .collect::<Result<_, _>>()
                        .context("--sizes takes order counts, comma-separated")?;
                    if options.sizes.iter().any(|s| *s < 1_000) {
                        bail!("--sizes: each size is at least 1000 orders");
                    }
                }
                "--only" => {
                    options.only = value("--only")?.split(',').map(String::from).collect();
                    if let Some(bad) = options.only.iter().find(|p| !PARTS.contains(&p.as_str())) {
                        bail!("--only: `{bad}` is not one of {}", PARTS.join(", "));
                    }
                }
                "--peer" => {
                    let peer = value("--peer")?;
                    if peer != "svix" {
                        bail!("--peer: `{peer}` is not a known peer (svix is)");
                    }
                    options.peer = Some(peer);
                }
                other => bail!("bench: unexpected argument `{other}`"),
            }
        }
        if options.only.iter().any(|p| p == "peer") && options.peer.is_none() {
            bail!("--only peer: say which peer with --peer svix");
        }
        if options.seconds == 0 || options.drain == 0 || options.steady_rate == 0 {
            bail!("--seconds, --drain and --steady-rate must be above zero");
        }
        Ok(options)
    }

    /// The peer part runs only when a peer is named: its program is not
    /// built here.
    fn wants(&self, part: &str) -> bool {
        if part == "peer" && self.peer.is_none() {
            return false;
        }
        self.only.is_empty() || self.only.iter().any(|p| p == part)
    }
}

/// Kills a child process when the run ends, however it ends.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running service.
struct Service {
    guard: Guard,
    base: String,
    /// Its configuration file, for the command line run beside it.
    config: PathBuf,
}

impl Service {
    fn pid(&self) -> u32 {
        self.guard.0.id()
    }
}

/// What every part of the run shares: the built programs, the secrets of
/// this run's services, and a scratch directory.
struct Bench {
    bin: PathBuf,
    loadgen: PathBuf,
    delivery: PathBuf,
    channels: PathBuf,
    feed: PathBuf,
    abuse: PathBuf,
    routing: PathBuf,
    channel_sim: PathBuf,
    scratch: PathBuf,
    master_key: String,
    operator_token: String,
    seconds: u64,
}

impl Bench {
    /// Starts the service on `database` and waits until it listens, with
    /// both currencies routed to the receiving accounts.
    fn start(&self, database: &str, profile: &str, worker: bool) -> Result<Service> {
        self.start_with(database, profile, worker, config::ACCOUNT_ROUTING)
    }

    /// `start`, with `extra` in the configuration file: top-level keys
    /// first, then its tables.
    fn start_with(
        &self,
        database: &str,
        profile: &str,
        worker: bool,
        extra: &str,
    ) -> Result<Service> {
        let port = free_port()?;
        let base = format!("http://127.0.0.1:{port}");
        let config = config::ServiceToml {
            profile,
            port,
            database_url: &format!("{PG}/{database}"),
            master_key: &self.master_key,
            operator_token: &self.operator_token,
            worker,
            extra,
        }
        .render();
        let config_path = self
            .scratch
            .join(format!("{database}-{profile}-{worker}.toml"));
        std::fs::write(&config_path, config)?;
        let guard = Guard(
            Command::new(&self.bin)
                .args(["--config", &config_path.display().to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .context("starting the service")?,
        );
        wait_for_port(port)?;
        Ok(Service {
            guard,
            base,
            config: config_path,
        })
    }

    /// A merchant for the load, made through the operator API; its key.
    fn merchant(&self, service: &Service) -> Result<String> {
        Ok(output(Command::new(&self.loadgen).args([
            "setup",
            &service.base,
            &self.operator_token,
        ]))?
        .trim()
        .to_string())
    }

    /// `clients` keep requests to `endpoint` in flight for the run's
    /// seconds; the load generator's figures.
    fn load(&self, service: &Service, key: &str, endpoint: &str, clients: usize) -> Result<Value> {
        self.load_with(service, key, endpoint, clients, &[])
    }

    fn load_with(
        &self,
        service: &Service,
        key: &str,
        endpoint: &str,
        clients: usize,
        env: &[(&str, String)],
    ) -> Result<Value> {
        let line = output(
            Command::new(&self.loadgen)
                .args([
                    "run",
                    &service.base,
                    key,
                    endpoint,
                    &clients.to_string(),
                    &self.seconds.to_string(),
                ])
                .envs(env.iter().map(|(k, v)| (*k, v.as_str()))),
        )?;
        let v: Value =
            serde_json::from_str(line.trim()).with_context(|| format!("loadgen printed {line}"))?;
        println!(
            "bench:   {:.0} requests/s, median {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, {} errors",
            num(&v, "rps"),
            num(&v, "p50_ms"),
            num(&v, "p99_ms"),
            num(&v, "p999_ms"),
            v["errors"]
        );
        // A cell whose requests fail measures the failure, not the service:
        // the run stops (the load generator printed what failed).
        if num(&v, "errors") > num(&v, "requests") / 100.0 {
            bail!("{endpoint} at {clients} clients: more than 1% of the requests failed");
        }
        Ok(v)
    }
}

fn step(text: &str) {
    println!("bench: {text}");
}

impl Results {
    /// The ceiling each create cell's fraction is taken of: the higher of
    /// the readings around it.
    fn ceiling(&self) -> Vec<(usize, f64)> {
        self.ceiling_readings
            .iter()
            .map(|(clients, before, after)| (*clients, before.max(*after)))
            .collect()
    }
}

/// Everything measured, for the report.
#[derive(Default)]
pub struct Results {
    load: Vec<Value>,
    peak_kib: u64,
    /// pgbench's insert rate at each create cell's clients, read before
    /// and after the cell (`Results::ceiling` takes the higher).
    ceiling_readings: Vec<(usize, f64, f64)>,
    delivery: Option<delivery::Figures>,
    sizes: Vec<sizes::AtSize>,
    explain: Vec<(String, String)>,
}

pub fn run(root: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let peer = if options.wants("peer") {
        Some(peer::Peer::find(root)?)
    } else {
        None
    };
    step("building the service and the load generators (release)");
    let status = Command::new(&cargo)
        .current_dir(root)
        .args([
            "build",
            "--release",
            "--workspace",
            "--bin",
            "payments",
            "--bin",
            "loadgen",
            "--example",
            "delivery_bench",
            "--example",
            "channel_bench",
            "--example",
            "feed_bench",
            "--example",
            "abuse_bench",
            "--example",
            "routing_bench",
            "--bin",
            "payments-channel-sim",
        ])
        .status()?;
    if !status.success() {
        bail!("the release build failed");
    }
    // What was built is what is measured: the commit is read now.
    git_commit(root);
    for tool in ["pg_isready", "pgbench", "psql"] {
        if Command::new("which")
            .arg(tool)
            .output()
            .map_or(true, |o| !o.status.success())
        {
            bail!("{tool} is not installed (Debian's postgresql-client has it)");
        }
    }
    let ready = Command::new("pg_isready")
        .args(["-h", "127.0.0.1", "-p", "5432"])
        .status();
    if !ready.is_ok_and(|s| s.success()) {
        bail!("PostgreSQL is not answering on 127.0.0.1:5432 (see .ci/run for how it is started)");
    }
    let run_id = std::process::id();
    let scratch = std::env::temp_dir().join(format!("payments_bench_{run_id}"));
    std::fs::create_dir_all(&scratch)?;
    let bench = Bench {
        bin: root.join("target/release/payments"),
        loadgen: root.join("target/release/loadgen"),
        delivery: root.join("target/release/examples/delivery_bench"),
        channels: root.join("target/release/examples/channel_bench"),
        feed: root.join("target/release/examples/feed_bench"),
        abuse: root.join("target/release/examples/abuse_bench"),
        routing: root.join("target/release/examples/routing_bench"),
        channel_sim: root.join("target/release/payments-channel-sim"),
        scratch: scratch.clone(),
        master_key: config::master_key()?,
        operator_token: config::operator_token()?,
        seconds: options.seconds,
    };
    let databases = Databases(Vec::new());
    let mut databases = databases;
    let mut results = Results::default();

    if options.wants("requests") {
        databases.part(run_id, "requests", |database| {
            requests(&bench, database, &mut results)
        })?;
    }
    if options.wants("delivery") {
        results.delivery = Some(databases.part(run_id, "delivery", |database| {
            delivery::run(&bench, database, options)
        })?);
    }
    if options.wants("sizes") {
        let (at_sizes, explain) = databases.part(run_id, "sizes", |database| {
            sizes::run(&bench, database, options)
        })?;
        results.sizes = at_sizes;
        results.explain = explain;
    }
    let channel_figures = if options.wants("channels") {
        Some(databases.part(run_id, "channels", |database| {
            channels::run(&bench, database, options.steady_rate)
        })?)
    } else {
        None
    };
    let feed_figures = if options.wants("feed") {
        Some(databases.part(run_id, "feed", |database| feed::run(&bench, database))?)
    } else {
        None
    };
    let abuse_figures = if options.wants("abuse") {
        Some(databases.part(run_id, "abuse", |database| abuse::run(&bench, database))?)
    } else {
        None
    };
    let routing_figures = if options.wants("routing") {
        Some(databases.part(run_id, "routing", |database| routing::run(&bench, database))?)
    } else {
        None
    };
    let peer_figures = match &peer {
        Some(peer) => Some(peer::run(
            &bench,
            peer,
            &mut databases,
            run_id,
            options.drain,
            options.steady_rate,
        )?),
        None => None,
    };
    drop(databases);
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(figures) = &peer_figures {
        let header = format!(
            "Written by `cargo xtask bench --peer svix` (commit {}, {}): the service and the \
             receiver (`tests/examples/delivery_bench.rs`) are release builds; svix-server is \
             `SVIX_BIN`, driven by `../shared/peers/svix/bench.py`.\n\n## Machine\n\n{}\n",
            git_commit(root),
            utc_now(),
            machine()
        );
        let text = peer::write(figures, &header, &root.join("bench/results"))?;
        println!("\n{text}");
    }
    if let Some(figures) = &routing_figures {
        let header = format!(
            "Written by `cargo xtask bench` (commit {}, {}): the service in the bench tool's own \
             process (`tests/examples/routing_bench.rs`, release build, PostgreSQL).\n\n\
             ## Machine\n\n{}\n",
            git_commit(root),
            utc_now(),
            machine()
        );
        let text = routing::write(figures, &header, &root.join("bench/results"))?;
        println!("\n{text}");
    }
    if let Some(figures) = &abuse_figures {
        let header = format!(
            "Written by `cargo xtask bench` (commit {}, {}): the service (release build, \
             PostgreSQL) and the load (`tests/examples/abuse_bench.rs`, \
             `tests/examples/delivery_bench.rs`, pgbench), each a process of its own.\n\n\
             ## Machine\n\n{}\n",
            git_commit(root),
            utc_now(),
            machine()
        );
        let text = abuse::write(figures, &header, &root.join("bench/results"))?;
        println!("\n{text}");
    }
    if let Some(figures) = &feed_figures {
        let header = format!(
            "Written by `cargo xtask bench` (commit {}, {}): the service (release build, \
             PostgreSQL) and the load (`tests/examples/feed_bench.rs`), each a process of its \
             own.\n\n## Machine\n\n{}\n",
            git_commit(root),
            utc_now(),
            machine()
        );
        let text = feed::write(figures, &header, &root.join("bench/results"))?;
        println!("\n{text}");
    }
    // The channel figures stand in a file of their own, so a run of that
    // part alone (`--only channels`) writes them where they are kept.
    if let Some(figures) = &channel_figures {
        let header = format!(
            "Written by `cargo xtask bench` (commit {}, {}): the service (release build, \
             PostgreSQL), `payments-channel-sim` (release build) and the load \
             (`tests/examples/channel_bench.rs`), each a process of its own. Each payout cell: \
             {} s after a 1 s warm-up.\n\n## Machine\n\n{}\n",
            git_commit(root),
            utc_now(),
            options.seconds,
            machine()
        );
        let dir = root.join("bench/results");
        let text = channels::write(figures, &header, &dir)?;
        println!("\n{text}");
    }
    let own_file =
        |p: &String| ["channels", "feed", "abuse", "routing", "peer"].contains(&p.as_str());
    if options.only.iter().all(own_file) && !options.only.is_empty() {
        step(&format!(
            "wrote bench/results/{}.md in {:.0} s",
            options.only.join(".md and bench/results/"),
            started.elapsed().as_secs_f64()
        ));
        return Ok(());
    }

    // A partial run leaves the committed results alone.
    let results_dir = if options.only.is_empty() {
        root.join("bench/results")
    } else {
        root.join("target/bench-partial")
    };
    std::fs::create_dir_all(&results_dir)?;
    let text = report::write(root, options, &results, &results_dir)?;
    println!("\n{text}");
    step(&format!(
        "wrote {} in {:.0} s",
        results_dir.display(),
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// This run's databases, dropped when it ends, however it ends.
struct Databases(Vec<String>);

impl Databases {
    fn create(&mut self, name: &str) -> Result<String> {
        psql("test", &format!("CREATE DATABASE {name}"))?;
        self.0.push(name.to_string());
        Ok(name.to_string())
    }

    /// A part of the bench on a database of its own, dropped as soon as
    /// the part ends, so that no part measures beside what an earlier one
    /// left: a database kept to the run's end is there for autovacuum to
    /// work on while later parts measure (the sizes part leaves a million
    /// orders), and a cell counts every PostgreSQL process's CPU as its
    /// own. Approvals at 16 in flight reached 0.52 of their ceiling in
    /// the whole run at 6f61a0d, beside every earlier part's database,
    /// and 0.61 in a run of the channel part alone at the same commit.
    fn part<T>(
        &mut self,
        run_id: u32,
        name: &str,
        run: impl FnOnce(&str) -> Result<T>,
    ) -> Result<T> {
        let database = self.create(&format!("payments_bench_{run_id}_{name}"))?;
        let out = run(&database);
        self.drop_now(&database);
        out
    }

    /// Drops one before the run ends (a part that makes many), so the disk
    /// holds one at a time.
    fn drop_now(&mut self, name: &str) {
        if psql(
            "test",
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        )
        .is_ok()
        {
            self.0.retain(|n| n != name);
        }
    }
}

impl Drop for Databases {
    fn drop(&mut self) {
        for name in &self.0 {
            let _ = psql(
                "test",
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            );
        }
    }
}

/// Create, query and balance at 1, 16 and 64 clients on the production
/// profile, each create cell between two runs of pgbench's rate for the
/// same insert at as many clients.
fn requests(bench: &Bench, database: &str, results: &mut Results) -> Result<()> {
    step(&format!(
        "starting the service (production profile), database {database}"
    ));
    let service = bench.start(database, "production", true)?;
    let key = bench.merchant(&service)?;
    // The same table the service writes to, with all of its indexes and its
    // foreign key, and a row as wide as the load generator's orders.
    let merchant = load_merchant(database)?;
    let script = bench.scratch.join("insert.sql");
    std::fs::write(&script, PGBENCH_SCRIPT)?;
    let ceiling = |clients: usize, when: &str| -> Result<f64> {
        step(&format!(
            "the database's own ceiling {when}: pgbench, one deposit insert per transaction, \
             {clients} client(s)"
        ));
        let tps = pgbench(
            database,
            &script,
            &[("merchant", &merchant)],
            clients,
            bench.seconds,
        )?;
        println!("bench:   pgbench {clients} client(s): {tps:.0} transactions/s");
        Ok(tps)
    };
    for (endpoint, label) in ENDPOINTS {
        for clients in CLIENTS {
            // This shared machine's rate drifts by a third within minutes
            // (`docs/scaling.md`): the ceiling is read right before and
            // right after the cell it is set against, and the higher
            // reading is the one the fraction is taken of.
            let before = match endpoint {
                "create" => Some(ceiling(clients, "before")?),
                _ => None,
            };
            step(&format!(
                "{label}: {clients} client(s) for {} s",
                bench.seconds
            ));
            results
                .load
                .push(bench.load(&service, &key, endpoint, clients)?);
            if let Some(before) = before {
                let after = ceiling(clients, "after")?;
                results.ceiling_readings.push((clients, before, after));
            }
        }
    }
    results.peak_kib = peak_memory_kib(service.pid())?;
    Ok(())
}

/// pgbench's transactions per second, and how busy it kept the machine's
/// cores (0 to 1): a ceiling read with every core busy is the machine's
/// CPU, not a lock's or a disk's.
fn pgbench_busy(
    database: &str,
    script: &Path,
    defines: &[(&str, &str)],
    clients: usize,
    seconds: u64,
) -> Result<(f64, f64)> {
    let (busy, total) = cpu::machine_ticks();
    let tps = pgbench(database, script, defines, clients, seconds)?;
    let (busy_after, total_after) = cpu::machine_ticks();
    let share = (busy_after - busy) as f64 / (total_after - total).max(1) as f64;
    Ok((tps, share))
}

/// pgbench's transactions per second for `script` (prepared statements).
fn pgbench(
    database: &str,
    script: &Path,
    defines: &[(&str, &str)],
    clients: usize,
    seconds: u64,
) -> Result<f64> {
    let mut cmd = Command::new("pgbench");
    cmd.args(["-n", "-M", "prepared", "-f", &script.display().to_string()]);
    for (name, value) in defines {
        cmd.args(["-D", &format!("{name}={value}")]);
    }
    cmd.args([
        "-c",
        &clients.to_string(),
        "-j",
        &clients.min(2).to_string(),
        "-T",
        &seconds.to_string(),
        "-h",
        "127.0.0.1",
        "-U",
        "postgres",
        database,
    ]);
    let out = output(&mut cmd)?;
    out.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|t| t.parse::<f64>().ok())
        .ok_or_else(|| anyhow!("no tps in pgbench's output:\n{out}"))
}

/// What one create-deposit commits, as the database sees it: one row into
/// the service's own `deposit_orders`, every column the load generator's
/// orders fill (an account order with a remark), in its own transaction.
const PGBENCH_SCRIPT: &str = "\\set n random(1, 2000000000)
BEGIN;
INSERT INTO deposit_orders (id, order_no, merchant_id, merchant_order_no, request_fingerprint,
  order_type, route, status, currency, requested_amount, amount, fee, actual_amount,
  expected_remark, account_id, payment_snapshot, callback_status, callback_count, user_id,
  estimated_channel_cost, estimated_profit, expire_at, created_at, updated_at)
VALUES (md5(:client_id::text || ':' || :n || clock_timestamp()::text),
  'P' || md5(clock_timestamp()::text || :n), :merchant,
  'P' || :client_id || '-' || :n || '-' || clock_timestamp()::text, md5(:n::text),
  'direct', 'account', 'pending', 'THB', 1005000, 1005000, 5025, 0,
  upper(substr(md5(random()::text), 1, 8)), 'bench-account',
  '{\"account_holder\":\"Bench Co\",\"account_no\":\"1234567890\",\"amount\":\"100.5000\",\"bank_code\":\"KBANK\",\"bank_name\":\"Kasikornbank\",\"currency_code\":\"THB\",\"remark\":\"ABCDEFGH\"}',
  'none', 0, 'bench-user', 0, 5025, floor(extract(epoch from now()))::bigint + 1800,
  floor(extract(epoch from now()))::bigint, floor(extract(epoch from now()))::bigint)
ON CONFLICT DO NOTHING;
COMMIT;
";

/// The id of the merchant `loadgen setup` made (its code is `bench<pid>`);
/// the sandbox's demo merchant may have been made in the same second.
fn load_merchant(database: &str) -> Result<String> {
    newest_bench_merchant(database, "")
}

/// The merchant `loadgen setup` made last, other than `not`.
fn newest_bench_merchant(database: &str, not: &str) -> Result<String> {
    let id = query_one(
        database,
        &format!(
            "SELECT id FROM merchants WHERE code LIKE 'bench%' AND id <> '{not}' \
             ORDER BY created_at DESC, code DESC LIMIT 1"
        ),
    )?;
    if id.is_empty() {
        bail!("the load generator's merchant is not in {database}");
    }
    Ok(id)
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0)
}

/// The first column of the first row `sql` returns, as text.
fn query_one(database: &str, sql: &str) -> Result<String> {
    Ok(output(Command::new("psql").args([
        &format!("{PG}/{database}"),
        "-v",
        "ON_ERROR_STOP=1",
        "-tAc",
        sql,
    ]))?
    .trim()
    .to_string())
}

/// One psql asked the same question again and again: a psql started for
/// each look, ten looks a second, took a tenth of the two cores from the
/// drain it timed.
pub(crate) struct Poll {
    _psql: Guard,
    ask: std::process::ChildStdin,
    answers: std::io::BufReader<std::process::ChildStdout>,
}

impl Poll {
    fn start(database: &str) -> Result<Poll> {
        let mut child = Command::new("psql")
            .args([&format!("{PG}/{database}"), "-v", "ON_ERROR_STOP=1", "-tAq"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting psql")?;
        let ask = child.stdin.take().context("psql's stdin")?;
        let answers = std::io::BufReader::new(child.stdout.take().context("psql's stdout")?);
        Ok(Poll {
            _psql: Guard(child),
            ask,
            answers,
        })
    }

    /// The one-line answer to `sql` (one row, one column).
    fn one(&mut self, sql: &str) -> Result<String> {
        use std::io::{BufRead, Write};
        writeln!(self.ask, "{sql};")?;
        self.ask.flush()?;
        let mut line = String::new();
        if self.answers.read_line(&mut line)? == 0 {
            bail!("psql ended while polling");
        }
        Ok(line.trim().to_string())
    }
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn psql(database: &str, sql: &str) -> Result<()> {
    let out = Command::new("psql")
        .args([
            &format!("{PG}/{database}"),
            "-v",
            "ON_ERROR_STOP=1",
            "-qc",
            sql,
        ])
        .output()
        .context("running psql")?;
    if !out.status.success() {
        bail!("psql: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .context("running a bench tool")?;
    if !out.status.success() {
        bail!("{:?} failed: {}", cmd, String::from_utf8_lossy(&out.stdout));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn wait_for_port(port: u16) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!("the service did not listen on {port} within 60 s")
}

fn peak_memory_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow!("no VmHWM for {pid}"))
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
    let pg = Command::new("psql")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!(
        "- CPU: {cpu}, {cores} cores available to this run\n- Memory: {mem_gib:.1} GiB\n\
         - Database: {pg} server on 127.0.0.1, the same machine as the service and the load\n\
         - Service, load generator and database share these cores, so each figure is a floor \
         for a machine that separates them."
    )
}

/// The commit measured; a working tree with changes to tracked files is
/// said to be one, so that a report never names code it did not run.
/// Read once, when the run's build is done (`run`): read at each report's
/// writing, the reports written before it in the same run counted as
/// changes, and every report but the first said "with uncommitted
/// changes" of a clean tree.
fn git_commit(root: &Path) -> String {
    static MEASURED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MEASURED.get_or_init(|| read_commit(root)).clone()
}

fn read_commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Ok(head) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "unknown".into();
    };
    match git(&["status", "--porcelain", "--untracked-files=no"]) {
        Ok(changes) if changes.is_empty() => head,
        _ => format!("{head} with uncommitted changes"),
    }
}

fn utc_now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn random_bytes(n: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
