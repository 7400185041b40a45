//! Callback delivery: how fast the worker drains a backlog already due,
//! the delay at a steady arrival rate, and the two ceilings it works
//! under on this machine: what an HTTP load tool reaches against the same
//! receiver with the same bodies, and what pgbench reaches running the
//! delivery's own outcome transaction.

use super::{
    free_port, num, output, peak_memory_kib, pgbench, query_one, step, wait_for_port, Bench, Guard,
    Options,
};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Drain {
    pub deliveries: usize,
    /// From the service's start with the backlog due to the last SUCCESS.
    pub seconds: f64,
    /// Peak memory of the service while it drained (VmHWM).
    pub peak_kib: u64,
}

impl Drain {
    pub fn per_second(&self) -> f64 {
        self.deliveries as f64 / self.seconds
    }
}

pub struct Figures {
    pub drain: Drain,
    pub steady: Value,
    /// wrk against the benchmark's receiver: requests/s and its latency.
    pub http_ceiling: f64,
    pub http_p99_ms: f64,
    /// pgbench running the outcome transaction: transactions/s.
    pub db_ceiling: f64,
}

impl Figures {
    pub fn lower_ceiling(&self) -> f64 {
        self.http_ceiling.min(self.db_ceiling)
    }
}

/// Every part, on a fresh database, the service in the sandbox profile so
/// that it may call a receiver on the loopback address over plain http
/// (the production profile calls https only; the worker is the same code).
pub fn run(bench: &Bench, database: &str, options: &Options) -> Result<Figures> {
    let service = bench.start(database, "sandbox", false)?;
    let key = bench.merchant(&service)?;
    drop(service);

    step(&format!(
        "callback drain: {} deliveries due at once, then the worker starts",
        options.drain
    ));
    let port = fill(bench, database, &key, options.drain)?;
    let drain = drain(bench, database, options.drain, port)?;
    println!(
        "bench:   drained {} in {:.2} s = {:.0} deliveries/s; service peak memory {:.1} MiB",
        drain.deliveries,
        drain.seconds,
        drain.per_second(),
        drain.peak_kib as f64 / 1024.0
    );

    step(&format!(
        "callback steady: {} deliveries a second for {} s, queued by pgbench, the worker on",
        options.steady_rate, bench.seconds
    ));
    let steady = steady(bench, database, options.steady_rate)?;
    println!(
        "bench:   commit to first attempt: median {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} delivered)",
        num(&steady, "p50_ms"),
        num(&steady, "p99_ms"),
        num(&steady, "max_ms"),
        steady["deliveries"]
    );

    step("ceiling: wrk posting a delivered body, signed headers and all, to the same receiver");
    let (http_ceiling, http_p99_ms) = http_ceiling(bench, database)?;
    println!("bench:   wrk: {http_ceiling:.0} requests/s, p99 {http_p99_ms:.2} ms");

    step("ceiling: pgbench running the outcome transaction (16 clients, the pool's size)");
    let db_ceiling = db_ceiling(bench, database)?;
    println!("bench:   pgbench: {db_ceiling:.0} outcome transactions/s");
    Ok(Figures {
        drain,
        steady,
        http_ceiling,
        http_p99_ms,
        db_ceiling,
    })
}

/// Creates and completes `n` deposits while no worker runs, each with a
/// callback to a receiver port chosen now; returns the port.
pub fn fill(bench: &Bench, database: &str, key: &str, n: usize) -> Result<u16> {
    let port = free_port()?;
    let service = bench.start(database, "sandbox", false)?;
    output(Command::new(&bench.delivery).args([
        "fill",
        &service.base,
        key,
        &bench.operator_token,
        &n.to_string(),
        &format!("http://127.0.0.1:{port}/callback"),
    ]))?;
    Ok(port)
}

/// Deliveries due now or being sent (what the drain has left).
const UNDELIVERED: &str = "SELECT count(*) FROM callback_deliveries WHERE status = 'SENDING' \
     OR (status = 'WAITING_RETRY' AND next_attempt_at <= floor(extract(epoch from now()))::bigint)";

/// Starts the receiver and then the service with its worker, and times
/// the worker until nothing is due and every callback arrived.
pub fn drain(bench: &Bench, database: &str, n: usize, port: u16) -> Result<Drain> {
    let due: usize = query_one(database, UNDELIVERED)?.parse()?;
    if due < n {
        bail!("only {due} deliveries are due, not {n}");
    }
    let receiver = Guard(
        Command::new(&bench.delivery)
            .args(["receive", &port.to_string(), &n.to_string(), "600"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the receiver")?,
    );
    wait_for_port(port)?;
    let mut poll = super::Poll::start(database)?;
    let started = Instant::now();
    let service = bench.start(database, "sandbox", true)?;
    // Polled, not waited on: the service says nothing when it is done.
    // A tenth of a second is 1% of a 10,000-delivery drain at 1,000/s.
    let seconds = loop {
        let left: usize = poll.one(UNDELIVERED)?.parse()?;
        if left == 0 {
            break started.elapsed().as_secs_f64();
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!("{left} deliveries still undelivered after 10 minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let peak_kib = peak_memory_kib(service.pid())?;
    drop(service);
    let mut receiver = receiver;
    let out = {
        let mut text = String::new();
        if let Some(mut stdout) = receiver.0.stdout.take() {
            std::io::Read::read_to_string(&mut stdout, &mut text)?;
        }
        let status = receiver.0.wait()?;
        if !status.success() {
            bail!("the receiver did not get every callback: {text}");
        }
        text
    };
    let got = last_json(&out)?;
    if got["orders"].as_u64() != Some(n as u64) {
        bail!("the receiver saw {} orders, not {n}", got["orders"]);
    }
    Ok(Drain {
        deliveries: n,
        seconds,
        peak_kib,
    })
}

fn http_ceiling(bench: &Bench, database: &str) -> Result<(f64, f64)> {
    let body = query_one(database, "SELECT body FROM callback_deliveries LIMIT 1")?;
    let body_path = bench.scratch.join("callback-body.json");
    std::fs::write(&body_path, &body)?;
    // Headers as long as the real ones: a key, a timestamp, a hex HMAC.
    let script = format!(
        "local f = io.open(\"{}\", \"rb\")\nwrk.method = \"POST\"\nwrk.body = f:read(\"*a\")\nf:close()\n\
         wrk.headers[\"Content-Type\"] = \"application/json\"\n\
         wrk.headers[\"X-Api-Key\"] = \"sk_bench_{}\"\n\
         wrk.headers[\"X-Timestamp\"] = \"1795000000\"\n\
         wrk.headers[\"X-Signature\"] = \"{}\"\n",
        body_path.display(),
        "0".repeat(32),
        "ab".repeat(32)
    );
    let script_path = bench.scratch.join("post.lua");
    std::fs::write(&script_path, script)?;
    ensure_wrk()?;
    let port = free_port()?;
    let _receiver = Guard(
        Command::new(&bench.delivery)
            .args(["serve", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the receiver")?,
    );
    wait_for_port(port)?;
    // As many connections as the worker's default concurrency.
    let out = output(Command::new("wrk").args([
        "-t2",
        "-c64",
        &format!("-d{}s", bench.seconds),
        "--latency",
        "-s",
        &script_path.display().to_string(),
        &format!("http://127.0.0.1:{port}/callback"),
    ]))?;
    let rps = out
        .lines()
        .find(|l| l.trim_start().starts_with("Requests/sec:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| anyhow!("no Requests/sec in wrk's output:\n{out}"))?;
    let p99 = out
        .lines()
        .find(|l| l.trim_start().starts_with("99%"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(wrk_ms)
        .unwrap_or(0.0);
    Ok((rps, p99))
}

/// wrk's latency (`812.00us`, `1.20ms`, `2.01s`) in milliseconds.
fn wrk_ms(text: &str) -> Option<f64> {
    let (value, scale) = if let Some(v) = text.strip_suffix("us") {
        (v, 0.001)
    } else if let Some(v) = text.strip_suffix("ms") {
        (v, 1.0)
    } else if let Some(v) = text.strip_suffix('s') {
        (v, 1000.0)
    } else {
        return None;
    };
    value.parse::<f64>().ok().map(|v| v * scale)
}

fn ensure_wrk() -> Result<()> {
    if Command::new("wrk").arg("--version").output().is_ok() {
        return Ok(());
    }
    step("installing wrk (Debian's package)");
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "wrk"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if install()
        || (Command::new("apt-get")
            .arg("update")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
            && install())
    {
        Ok(())
    } else {
        bail!("wrk is not installed and apt-get could not install it")
    }
}

/// What one attempt's outcome commits: the delivery's new state, the
/// attempt's record and the order's callback summary, in one transaction,
/// on the rows the drain delivered (a delivery found by a random number
/// through a side table, inside the UPDATE, so the round trips are the
/// service's own: BEGIN, three statements, COMMIT).
const OUTCOME_SCRIPT: &str = "\\set n random(1, :count)
BEGIN;
UPDATE callback_deliveries SET status = 'SUCCESS', attempts = attempts + 1,
  next_attempt_at = NULL, signature = :signature, claim_token = NULL,
  updated_at = floor(extract(epoch from now()))::bigint
  WHERE id = (SELECT id FROM bench_deliveries WHERE n = :n)
  RETURNING id AS delivery, order_no AS order_no \\gset
INSERT INTO callback_attempts (id, delivery_id, attempt, scheduled_at, started_at,
  duration_ms, status_code, error, outcome, next_attempt_at)
  VALUES (md5(random()::text || clock_timestamp()::text), :delivery, 1,
  floor(extract(epoch from now()))::bigint, floor(extract(epoch from now()))::bigint, 2, 200, NULL,
  'success', NULL);
UPDATE deposit_orders SET callback_status = 'success', callback_count = callback_count + 1,
  updated_at = floor(extract(epoch from now()))::bigint WHERE order_no = :order_no;
COMMIT;
";

fn db_ceiling(bench: &Bench, database: &str) -> Result<f64> {
    super::psql(
        database,
        "CREATE TABLE bench_deliveries AS \
         SELECT row_number() OVER () AS n, id FROM callback_deliveries; \
         CREATE UNIQUE INDEX ON bench_deliveries (n); ANALYZE bench_deliveries",
    )?;
    let count = query_one(database, "SELECT count(*) FROM bench_deliveries")?;
    let script = bench.scratch.join("outcome.sql");
    std::fs::write(&script, OUTCOME_SCRIPT)?;
    let signature = "ab".repeat(32);
    pgbench(
        database,
        &script,
        &[("count", &count), ("signature", &signature)],
        16,
        bench.seconds,
    )
}

/// Queues one due delivery per arrival, at the given rate (pgbench's
/// `--rate`: Poisson arrivals), each a copy of a delivered body for a real
/// order with its own `bench_id`, so that the worker does for it exactly
/// what it does for a completion's callback; the commit wakes the worker
/// through NOTIFY, as another instance's would. `queued_at_ms` is stamped
/// in the inserting statement, just before its commit.
const ARRIVAL_SCRIPT: &str = "\\set n random(1, :orders)
INSERT INTO callback_deliveries (id, merchant_id, order_kind, order_no, event, callback_url,
  body, status, attempts, next_attempt_at, created_at, updated_at, queued_at_ms, receiver_host)
SELECT 'bench-' || s, o.merchant_id, 'deposit', o.order_no, 'deposit.completed#' || s, :url,
  jsonb_set(o.body::jsonb, '{bench_id}', to_jsonb('bench-' || s))::text, 'WAITING_RETRY', 0,
  floor(extract(epoch from now()))::bigint, floor(extract(epoch from now()))::bigint,
  floor(extract(epoch from now()))::bigint, (extract(epoch from clock_timestamp()) * 1000)::bigint,
  :host
FROM bench_orders o, nextval('bench_arrivals_seq') AS s WHERE o.n = :n;
";

/// The steady mode: deliveries arrive at `rate` a second for the run's
/// seconds while the worker runs; the delay of each from the commit that
/// queued it to the receiver seeing its first attempt.
///
/// The arrivals come from pgbench rather than from order completions
/// through the API because on this machine's two cores the completions
/// themselves (ledger, balance, callback record) could not be offered at
/// 500 a second beside the delivery being measured.
pub(super) fn steady(bench: &Bench, database: &str, rate: u32) -> Result<Value> {
    super::psql(
        database,
        "CREATE TABLE bench_orders AS \
         SELECT row_number() OVER () AS n, merchant_id, order_no, body FROM callback_deliveries \
         WHERE order_kind = 'deposit'; \
         CREATE UNIQUE INDEX ON bench_orders (n); ANALYZE bench_orders; \
         CREATE SEQUENCE bench_arrivals_seq",
    )?;
    let orders = query_one(database, "SELECT count(*) FROM bench_orders")?;
    let n = usize::try_from(u64::from(rate) * bench.seconds)?;
    let arrivals = bench.scratch.join("arrivals.csv");
    let (port, mut receiver) = arrivals_receiver(bench, n, 120, &arrivals)?;
    let service = bench.start(database, "sandbox", true)?;
    let out = queue_arrivals(bench, database, &orders, port, rate, n)?;
    let offered = out
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0);
    let status = receiver.0.wait()?;
    drop(service);
    if !status.success() {
        bail!("the receiver did not get every callback of the steady run");
    }
    let mut v = arrival_delays(database, &arrivals)?;
    v["rate"] = rate.into();
    v["offered_per_second"] = offered.into();
    if v["deliveries"].as_u64() != Some(n as u64) {
        bail!(
            "{} of {n} steady deliveries were matched to their records",
            v["deliveries"]
        );
    }
    Ok(v)
}

/// A receiver for `n` callbacks on a port of its own, writing each one's
/// first arrival to `arrivals`; exits once all came or after `limit` s.
pub(super) fn arrivals_receiver(
    bench: &Bench,
    n: usize,
    limit: u64,
    arrivals: &std::path::Path,
) -> Result<(u16, Guard)> {
    let port = free_port()?;
    let receiver = Guard(
        Command::new(&bench.delivery)
            .args([
                "receive",
                &port.to_string(),
                &n.to_string(),
                &limit.to_string(),
                &arrivals.display().to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the receiver")?,
    );
    wait_for_port(port)?;
    Ok((port, receiver))
}

/// Queues `n` deliveries at `rate` a second (pgbench, `ARRIVAL_SCRIPT`,
/// copies of the `orders` rows of `bench_orders`) for the receiver on
/// `port`; pgbench's output.
pub(super) fn queue_arrivals(
    bench: &Bench,
    database: &str,
    orders: &str,
    port: u16,
    rate: u32,
    n: usize,
) -> Result<String> {
    let script = bench.scratch.join("arrival.sql");
    std::fs::write(&script, ARRIVAL_SCRIPT)?;
    output(Command::new("pgbench").args([
        "-n",
        "-M",
        "prepared",
        "-f",
        &script.display().to_string(),
        "-D",
        &format!("orders={orders}"),
        "-D",
        &format!("url=http://127.0.0.1:{port}/callback"),
        "-D",
        &format!("host=127.0.0.1:{port}"),
        "-R",
        &rate.to_string(),
        "-t",
        &(n / 4).to_string(),
        "-c",
        "4",
        "-j",
        "2",
        "-h",
        "127.0.0.1",
        "-U",
        "postgres",
        database,
    ]))
}

/// From the commit that queued each delivery the receiver wrote down to
/// its first arrival: count, median, p99, p99.9 and max.
pub(super) fn arrival_delays(database: &str, arrivals: &std::path::Path) -> Result<Value> {
    super::psql(
        database,
        &format!(
            "DROP TABLE IF EXISTS bench_arrivals; \
             CREATE TABLE bench_arrivals (id text PRIMARY KEY, at_ms double precision); \
             COPY bench_arrivals FROM '{}' WITH (FORMAT csv)",
            arrivals.display()
        ),
    )?;
    let figures = query_one(
        database,
        "SELECT json_build_object('deliveries', count(*), \
           'p50_ms', percentile_cont(0.5) WITHIN GROUP (ORDER BY d), \
           'p99_ms', percentile_cont(0.99) WITHIN GROUP (ORDER BY d), \
           'p999_ms', percentile_cont(0.999) WITHIN GROUP (ORDER BY d), \
           'max_ms', max(d)) \
         FROM (SELECT a.at_ms - c.queued_at_ms AS d FROM bench_arrivals a \
               JOIN callback_deliveries c ON c.id = a.id) AS delays",
    )?;
    serde_json::from_str(&figures).with_context(|| format!("the delays query answered {figures}"))
}

pub(super) fn last_json(out: &str) -> Result<Value> {
    out.lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| anyhow!("no figures in:\n{out}"))
}
