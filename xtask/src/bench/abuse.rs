//! The service under abuse (issue 55): a crowd of connections each sending
//! a create, a crowd of wrong-password sign-ins, and a receiver that holds
//! every callback while other merchants' callbacks come due; then the
//! retention pass over a million callback attempts. Each beside what it
//! must not take down, measured from separate processes. Writes
//! bench/results/abuse.md.

use super::config::CALLBACK_PLACES;
use super::delivery::{arrival_delays, arrivals_receiver, fill, last_json, queue_arrivals};
use super::{
    newest_bench_merchant, num, output, peak_memory_kib, query_one, step, wait_for_port, Bench,
    Guard, Service,
};
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Connections opened at once, each with one signed create.
const CONNECTIONS: usize = 10_000;
/// Concurrent wrong-password sign-ins.
const SIGN_INS: usize = 2_000;
/// The merchant's steady creates per second beside either crowd.
const STEADY: u32 = 200;
/// The slow merchant's backlog and the other merchant's arrivals.
const HELD: usize = 5_000;
const OTHERS: usize = 5_000;
const OTHERS_PER_SECOND: u32 = 500;
/// How long the slow receiver's merchant lets a callback take: the
/// receiver never answers, so each attempt holds its place this long.
const HOLD_SECONDS: u32 = 60;
/// Callback attempts the retention pass deletes.
const OLD_ATTEMPTS: u64 = 1_000_000;

pub struct Figures {
    flood: Value,
    flood_peak_kib: u64,
    /// The same crowd with no bound per address: what a crowd spread over
    /// as many hosts as it needs meets.
    spread: Value,
    spread_peak_kib: u64,
    sign_ins: Value,
    sign_in_peak_kib: u64,
    fair: Value,
    /// The same with each merchant and host allowed every place: what the
    /// shares change.
    unfair: Value,
    retention: Value,
}

pub fn run(bench: &Bench, database: &str) -> Result<Figures> {
    step(&format!(
        "abuse: {CONNECTIONS} connections at once, each a signed create, beside {STEADY} creates/s"
    ));
    let service = bench.start(database, "production", true)?;
    let key = bench.merchant(&service)?;
    let crowd_key = bench.merchant(&service)?;
    let (flood, flood_peak_kib) = crowd_of_creates(bench, service, &key, &crowd_key)?;
    step("abuse: the same crowd, with no bound per address (a crowd from many hosts)");
    let service = bench.start_with(
        database,
        "production",
        true,
        &format!(
            "connections_per_address = 0\n{}",
            super::config::ACCOUNT_ROUTING
        ),
    )?;
    let (spread, spread_peak_kib) = crowd_of_creates(bench, service, &key, &crowd_key)?;

    step(&format!(
        "abuse: {SIGN_INS} wrong-password sign-ins at once, beside {STEADY} creates/s"
    ));
    let service = bench.start(database, "production", true)?;
    let (email, password) = ("bench-operator@example.com", "a long bench passphrase");
    operator_with_password(bench, &service.config, email, password)?;
    let sign_ins = last_json(&output(Command::new(&bench.abuse).args([
        "sign-ins",
        &service.base,
        &key,
        &SIGN_INS.to_string(),
        &STEADY.to_string(),
        &bench.seconds.to_string(),
        email,
        password,
    ]))?)?;
    let sign_in_peak_kib = peak_memory_kib(service.pid())?;
    drop(service);
    println!(
        "bench:   crowd {}; operator {}; steady p99 {:.2} / {:.2} ms alone (before / after), {:.2} ms beside; peak {:.1} MiB",
        sign_ins["crowd"]["answers"],
        sign_ins["operator"],
        num(&sign_ins["alone"], "p99_ms"),
        num(&sign_ins["alone_after"], "p99_ms"),
        num(&sign_ins["beside"], "p99_ms"),
        sign_in_peak_kib as f64 / 1024.0
    );

    let (fair, unfair) = fair_delivery(bench, database)?;
    let retention = retention(bench, database)?;
    Ok(Figures {
        flood,
        flood_peak_kib,
        spread,
        spread_peak_kib,
        sign_ins,
        sign_in_peak_kib,
        fair,
        unfair,
        retention,
    })
}

/// The crowd of creates beside the steady ones, on `service` (stopped
/// after): the figures and the service's peak memory.
fn crowd_of_creates(
    bench: &Bench,
    service: Service,
    key: &str,
    crowd_key: &str,
) -> Result<(Value, u64)> {
    let flood = last_json(&output(Command::new(&bench.abuse).args([
        "flood",
        &service.base,
        crowd_key,
        key,
        &CONNECTIONS.to_string(),
        &STEADY.to_string(),
        &bench.seconds.to_string(),
    ]))?)?;
    let peak_kib = peak_memory_kib(service.pid())?;
    drop(service);
    println!(
        "bench:   crowd {}; steady p99 {:.2} / {:.2} ms alone (before / after), {:.2} ms beside; peak {:.1} MiB",
        flood["crowd"]["answers"],
        num(&flood["alone"], "p99_ms"),
        num(&flood["alone_after"], "p99_ms"),
        num(&flood["beside"], "p99_ms"),
        peak_kib as f64 / 1024.0
    );
    Ok((flood, peak_kib))
}

/// An operator who signs in to the console, made with the command line.
fn operator_with_password(bench: &Bench, config: &Path, email: &str, password: &str) -> Result<()> {
    let config = config.display().to_string();
    output(Command::new(&bench.bin).args([
        "--config",
        &config,
        "operator",
        "create",
        "--name",
        "Bench Operator",
        "--email",
        email,
        "--role",
        "viewer",
    ]))?;
    let mut child = Command::new(&bench.bin)
        .args([
            "--config", &config, "operator", "password", "--email", email,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        std::io::Write::write_all(&mut stdin, format!("{password}\n").as_bytes())?;
    }
    if !child.wait()?.success() {
        bail!("setting the bench operator's password failed");
    }
    Ok(())
}

/// One merchant's receiver holds every request; its backlog is due at
/// once, and another merchant's callbacks come due at a steady rate
/// beside it. Run with the shares as configured by default, then with
/// every place open to one merchant and host (the release before them).
fn fair_delivery(bench: &Bench, database: &str) -> Result<(Value, Value)> {
    step(&format!(
        "abuse: {HELD} callbacks due to a receiver that never answers ({HOLD_SECONDS} s timeout), \
         {OTHERS} of another merchant's arriving at {OTHERS_PER_SECOND}/s"
    ));
    let service = bench.start(database, "sandbox", false)?;
    let slow_key = bench.merchant(&service)?;
    drop(service);
    let slow_merchant = newest_bench_merchant(database, "")?;
    super::psql(
        database,
        &format!(
            "UPDATE merchants SET callback_timeout_seconds = {HOLD_SECONDS} WHERE id = '{slow_merchant}'"
        ),
    )?;
    let hold_port = fill(bench, database, &slow_key, HELD)?;
    let service = bench.start(database, "sandbox", false)?;
    bench.merchant(&service)?;
    drop(service);
    let other = newest_bench_merchant(database, &slow_merchant)?;
    // The other merchant's arrivals: copies of delivered bodies, queued
    // under its id, as the steady part of the delivery bench queues them.
    super::psql(
        database,
        &format!(
            "CREATE TABLE bench_orders AS \
             SELECT row_number() OVER () AS n, '{other}'::text AS merchant_id, order_no, body \
             FROM callback_deliveries WHERE merchant_id = '{slow_merchant}'; \
             CREATE UNIQUE INDEX ON bench_orders (n); ANALYZE bench_orders; \
             CREATE SEQUENCE bench_arrivals_seq"
        ),
    )?;
    let _hold = Guard(
        Command::new(&bench.abuse)
            .args(["hold", &hold_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the holding receiver")?,
    );
    wait_for_port(hold_port)?;
    let fair = with_a_slow_receiver(bench, database, &slow_merchant, "", None)?;
    let (places, share) = (CALLBACK_PLACES, CALLBACK_PLACES / 2);
    report_fair(
        &format!("shares on ({share} and {share} of {places})"),
        &fair,
    );
    let unfair = with_a_slow_receiver(
        bench,
        database,
        &slow_merchant,
        &super::config::wide_callbacks(),
        Some(UNFAIR_LIMIT_SECONDS),
    )?;
    report_fair(&format!("shares off ({places} of {places})"), &unfair);
    Ok((fair, unfair))
}

fn report_fair(label: &str, v: &Value) {
    println!(
        "bench:   {label}: {} of the other merchant's delivered within {} s; commit to first attempt \
         p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; the slow receiver held {} at once",
        v["deliveries"],
        v["limit_seconds"],
        num(v, "p50_ms"),
        num(v, "p99_ms"),
        num(v, "max_ms"),
        v["slow_in_flight"]
    );
}

/// How long the run without shares waits for the other merchant's
/// callbacks: without them the slow receiver holds every place, and they
/// wait behind its whole backlog (an hour and more).
const UNFAIR_LIMIT_SECONDS: u64 = 120;

/// The slow merchant's backlog due now, nothing else waiting; then the
/// service with its worker and `extra` configuration, and the other
/// merchant's arrivals. Every one of them must arrive, unless `gives_up`
/// says after how long to count what did.
fn with_a_slow_receiver(
    bench: &Bench,
    database: &str,
    slow_merchant: &str,
    extra: &str,
    gives_up: Option<u64>,
) -> Result<Value> {
    super::psql(
        database,
        &format!(
            "DELETE FROM callback_attempts; \
             DELETE FROM callback_deliveries WHERE id LIKE 'bench-%'; \
             UPDATE callback_deliveries SET status = 'WAITING_RETRY', attempts = 0, \
             claim_token = NULL, signature = NULL, \
             next_attempt_at = floor(extract(epoch from now()))::bigint \
             WHERE merchant_id = '{slow_merchant}'"
        ),
    )?;
    let arrivals = bench
        .scratch
        .join(format!("others-{}.csv", extra.is_empty()));
    let limit = gives_up.unwrap_or(300);
    let (port, mut receiver) = arrivals_receiver(bench, OTHERS, limit, &arrivals)?;
    let service = bench.start_with(database, "sandbox", true, extra)?;
    let orders = query_one(database, "SELECT count(*) FROM bench_orders")?;
    queue_arrivals(bench, database, &orders, port, OTHERS_PER_SECOND, OTHERS)?;
    let status = receiver.0.wait()?;
    let slow_in_flight: u64 = query_one(
        database,
        &format!(
            "SELECT count(*) FROM callback_deliveries \
             WHERE merchant_id = '{slow_merchant}' AND status = 'SENDING'"
        ),
    )?
    .parse()?;
    drop(service);
    if !status.success() && gives_up.is_none() {
        bail!("the other merchant's receiver did not get its {OTHERS} callbacks");
    }
    let mut v = arrival_delays(database, &arrivals)?;
    v["slow_in_flight"] = slow_in_flight.into();
    v["limit_seconds"] = limit.into();
    Ok(v)
}

/// A million callback attempts past their window, deleted by the
/// retention pass a starting service runs; how fast, and that the ledger,
/// the feed and the deliveries are as they were.
fn retention(bench: &Bench, database: &str) -> Result<Value> {
    step(&format!(
        "abuse: retention over {OLD_ATTEMPTS} callback attempts 200 days old"
    ));
    super::psql(
        database,
        &format!(
            "CREATE TABLE bench_delivery_ids AS \
             SELECT row_number() OVER () AS n, id FROM callback_deliveries; \
             CREATE UNIQUE INDEX ON bench_delivery_ids (n); \
             INSERT INTO callback_attempts (id, delivery_id, attempt, scheduled_at, started_at, \
               duration_ms, status_code, error, outcome, next_attempt_at) \
             SELECT 'old-' || g, d.id, 1, t, t, 2, 200, NULL, 'success', NULL \
             FROM generate_series(1, {OLD_ATTEMPTS}) AS g, \
                  LATERAL (SELECT floor(extract(epoch from now()))::bigint - 200 * 86400 AS t) AS at, \
                  bench_delivery_ids d \
             WHERE d.n = 1 + g % (SELECT count(*) FROM bench_delivery_ids); \
             ANALYZE callback_attempts"
        ),
    )?;
    let counts = "SELECT json_build_object(\
        'deliveries', (SELECT count(*) FROM callback_deliveries), \
        'events', (SELECT count(*) FROM merchant_events), \
        'ledger_lines', (SELECT count(*) FROM balance_transactions), \
        'orders', (SELECT count(*) FROM deposit_orders))";
    let before: Value = serde_json::from_str(&query_one(database, counts)?)?;
    let old = "SELECT count(*) FROM callback_attempts WHERE id LIKE 'old-%'";
    let started = Instant::now();
    let service = bench.start(database, "sandbox", false)?;
    let seconds = loop {
        let left: u64 = query_one(database, old)?.parse()?;
        if left == 0 {
            break started.elapsed().as_secs_f64();
        }
        if started.elapsed() > Duration::from_secs(900) {
            bail!("{left} old attempts still there after 15 minutes");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let after: Value = serde_json::from_str(&query_one(database, counts)?)?;
    let check = Command::new(&bench.bin)
        .args([
            "--config",
            &service.config.display().to_string(),
            "ledger",
            "check",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()?;
    drop(service);
    let ledger_holds = check.status.success();
    let kept = before == after;
    println!(
        "bench:   deleted {OLD_ATTEMPTS} in {seconds:.1} s = {:.0}/s (from the start of the service); \
         ledger check {}; deliveries, events, ledger lines and orders {}",
        OLD_ATTEMPTS as f64 / seconds,
        if ledger_holds { "passes" } else { "FAILS" },
        if kept { "unchanged" } else { "CHANGED" }
    );
    if !ledger_holds || !kept {
        bail!(
            "retention touched what it must not: ledger check {}, before {before}, after {after}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
    Ok(serde_json::json!({
        "attempts": OLD_ATTEMPTS,
        "seconds": seconds,
        "per_second": OLD_ATTEMPTS as f64 / seconds,
        "kept": after,
    }))
}

fn ms(v: &Value, key: &str) -> String {
    format!("{:.1}", num(v, key))
}

fn answers(v: &Value) -> String {
    v["answers"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// One table row per load: requests, answers by status, latencies.
fn latency_rows(t: &mut String, rows: &[(&str, &Value)]) -> Result<()> {
    for (label, v) in rows {
        writeln!(
            t,
            "| {label} | {} | {} | {} | {} | {} |",
            v["requests"],
            answers(v),
            ms(v, "p50_ms"),
            ms(v, "p99_ms"),
            ms(v, "max_ms")
        )?;
    }
    Ok(())
}

pub fn write(f: &Figures, header: &str, dir: &Path) -> Result<String> {
    let mib = |kib: u64| kib as f64 / 1024.0;
    // Each part's own bound (issue 55) is the bench's; issue 56 holds every
    // part of the bench to less, and the line says which it meets.
    let peak = |kib: u64| {
        let most = super::report::MEMORY_TARGET_MIB;
        let met = if mib(kib) <= most {
            "met"
        } else {
            "**not met**"
        };
        format!(
            "**{:.1} MiB** (issue 56: ≤ {most:.0} MiB in every part, {met})",
            mib(kib)
        )
    };
    // Against the quieter run alone (before or after the crowd): the lower
    // p99, so that a tail of the run alone never flatters the ratio.
    let ratio = |v: &Value| {
        let alone = num(&v["alone"], "p99_ms").min(num(&v["alone_after"], "p99_ms"));
        num(&v["beside"], "p99_ms") / alone.max(0.001)
    };
    let mut t = String::new();
    writeln!(t, "# The service under abuse\n\n{header}")?;
    writeln!(
        t,
        "## 1. {CONNECTIONS} connections at once\n\n\
         Each of {CONNECTIONS} connections, opened together from one address of their own \
         (127.0.0.4), sends one create-deposit signed by one merchant, while another merchant sends {STEADY} creates a second on connections of \
         its own, from a process of its own, timed after one untimed second that warms its \
         connections, alone before the crowd, beside it, and alone again after it (production \
         profile, default bounds, so one address holds at most 128 connections); the ratio is taken against the lower of the two p99s alone. \
         The crowd's client is a process of its own at nice 19: on these shared cores its own \
         work (ten thousand connections opened, written and read) would otherwise be counted \
         against the service, where a real crowd's clients run on machines of their own; the \
         service still meets every request the crowd sends. \
         Targets: peak memory ≤ 128 MiB; every request answered (its \
         success or 503) within 5 s; the steady p99 beside ≤ 5× alone.\n\n\
         | | requests | answers | median ms | p99 ms | max ms |\n|---|---|---|---|---|---|"
    )?;
    latency_rows(
        &mut t,
        &[
            ("crowd", &f.flood["crowd"]),
            ("steady, alone (before)", &f.flood["alone"]),
            ("steady, alone (after)", &f.flood["alone_after"]),
            ("steady, beside the crowd", &f.flood["beside"]),
        ],
    )?;
    writeln!(
        t,
        "\nPeak memory of the service (VmHWM): {}. Steady p99 beside ÷ alone: **{:.2}**.\n",
        peak(f.flood_peak_kib),
        ratio(&f.flood)
    )?;
    writeln!(
        t,
        "The same crowd again, on a service with no bound per address \
         (`connections_per_address = 0`): what a crowd spread over as many hosts as it needs \
         meets, holding every shared connection of the payment API. Not a target; shown so the \
         row above is read for what it is.\n\n\
         | | requests | answers | median ms | p99 ms | max ms |\n|---|---|---|---|---|---|"
    )?;
    latency_rows(
        &mut t,
        &[
            ("crowd", &f.spread["crowd"]),
            ("steady, alone (before)", &f.spread["alone"]),
            ("steady, alone (after)", &f.spread["alone_after"]),
            ("steady, beside the crowd", &f.spread["beside"]),
        ],
    )?;
    writeln!(
        t,
        "\nPeak memory of the service: **{:.1} MiB**. Steady p99 beside ÷ alone: **{:.2}**.\n",
        mib(f.spread_peak_kib),
        ratio(&f.spread)
    )?;
    writeln!(
        t,
        "## 2. {SIGN_INS} wrong-password sign-ins at once\n\n\
         {SIGN_INS} console sign-ins with unknown emails and wrong passwords, together, from \
         127.0.0.4 (at most 128 of them connected at once, as above), beside the merchant's {STEADY} creates a second; meanwhile an operator signs \
         in from 127.0.0.2 with the right password, again after `Retry-After` when told to wait. \
         The steady creates run alone before and after as well, and the ratio is taken against \
         the lower p99 alone. The crowd's client runs at nice 19, as above; the service's \
         password checks run on threads of their own at nice 10, below its request workers. \
         Targets: peak memory ≤ 256 MiB; every sign-in answered 401, 429 or 503; the steady p99 \
         beside ≤ 3× alone; the operator signs in.\n\n\
         | | requests | answers | median ms | p99 ms | max ms |\n|---|---|---|---|---|---|"
    )?;
    latency_rows(
        &mut t,
        &[
            ("sign-ins", &f.sign_ins["crowd"]),
            ("steady, alone (before)", &f.sign_ins["alone"]),
            ("steady, alone (after)", &f.sign_ins["alone_after"]),
            ("steady, beside the sign-ins", &f.sign_ins["beside"]),
        ],
    )?;
    let op = &f.sign_ins["operator"];
    writeln!(
        t,
        "\nThe operator from another address: signed in **{}**, answers {}, after {:.0} ms. \
         Peak memory of the service: {}. Steady p99 beside ÷ alone: **{:.2}**.\n",
        op["signed_in"],
        op["answers"],
        num(op, "after_ms"),
        peak(f.sign_in_peak_kib),
        ratio(&f.sign_ins)
    )?;
    writeln!(
        t,
        "## 3. A receiver that holds every callback\n\n\
         One merchant's receiver reads each request and never answers; its merchant's callback \
         timeout is {HOLD_SECONDS} s, so each attempt holds its place that long. {HELD} of its \
         callbacks are due when the worker starts; beside them {OTHERS} of another merchant's \
         come due at {OTHERS_PER_SECOND} a second (queued by pgbench, each a committed record \
         the worker treats as a completion's), to a receiver that answers at once. Delay: from \
         the commit that queued each of the other merchant's callbacks to its first arrival. \
         Target: p99 ≤ 1 s.\n\n\
         | | delivered (of {OTHERS}) | median ms | p99 ms | max ms | slow receiver's attempts in flight |\n\
         |---|---|---|---|---|---|"
    )?;
    let (places, share) = (CALLBACK_PLACES, CALLBACK_PLACES / 2);
    for (label, v) in [
        (
            format!(
                "shares on (the defaults: {share} per merchant, {share} per host, of {places})"
            ),
            &f.fair,
        ),
        (
            format!(
                "shares off ({places} per merchant and host: every place); the delays are those \
                 of the callbacks that arrived"
            ),
            &f.unfair,
        ),
    ] {
        writeln!(
            t,
            "| {label} | {} within {} s | {} | {} | {} | {} |",
            v["deliveries"],
            v["limit_seconds"],
            ms(v, "p50_ms"),
            ms(v, "p99_ms"),
            ms(v, "max_ms"),
            v["slow_in_flight"]
        )?;
    }
    let r = &f.retention;
    writeln!(
        t,
        "\n## Retention over {OLD_ATTEMPTS} callback attempts\n\n\
         {OLD_ATTEMPTS} callback attempts 200 days old (past `attempt_retention_days`, 90), on \
         the deliveries above; a service starts and its retention pass deletes them, 1000 a \
         batch, oldest first. **{:.1} s, {:.0} attempts a second**, timed from the service's \
         start. Afterwards `payments ledger check` passes, and the deliveries, the merchants' \
         events (the feed), the ledger's lines and the orders number what they did before \
         ({}).\n",
        num(r, "seconds"),
        num(r, "per_second"),
        r["kept"]
    )?;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("abuse.md"), &t)?;
    Ok(t)
}
