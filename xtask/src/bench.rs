//! `cargo xtask bench`: the service under load on PostgreSQL, measured
//! from a separate process, next to the database's own ceiling on the same
//! machine in the same run, and callback delivery at two backlog sizes.
//! Writes bench/results/README.md (tables, machine) and throughput.svg.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
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
    pub deliveries: Vec<usize>,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options {
            seconds: 10,
            deliveries: vec![1_000, 10_000],
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--seconds" => {
                    options.seconds = args.next().context("--seconds needs a value")?.parse()?
                }
                "--deliveries" => {
                    options.deliveries = args
                        .next()
                        .context("--deliveries needs a value")?
                        .split(',')
                        .map(str::parse)
                        .collect::<Result<_, _>>()?
                }
                other => bail!("bench: unexpected argument `{other}`"),
            }
        }
        Ok(options)
    }
}

/// Kills the service when the run ends, however it ends.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn step(text: &str) {
    println!("bench: {text}");
}

pub fn run(root: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    step("building the service and the load generator (release)");
    for args in [
        vec![
            "build",
            "--release",
            "-p",
            "payments-service",
            "--bin",
            "payments",
        ],
        vec![
            "build",
            "--release",
            "-p",
            "integration-tests",
            "--example",
            "loadgen",
            "--example",
            "delivery_bench",
        ],
    ] {
        let status = Command::new(&cargo)
            .current_dir(root)
            .args(&args)
            .status()?;
        if !status.success() {
            bail!("cargo {} failed", args.join(" "));
        }
    }
    let bin = root.join("target/release/payments");
    let loadgen = root.join("target/release/examples/loadgen");
    let delivery = root.join("target/release/examples/delivery_bench");

    let ready = Command::new("pg_isready")
        .args(["-h", "127.0.0.1", "-p", "5432"])
        .status();
    if !ready.is_ok_and(|s| s.success()) {
        bail!("PostgreSQL is not answering on 127.0.0.1:5432 (see .ci/run for how it is started)");
    }
    let database = format!("payments_bench_{}", std::process::id());
    psql("test", &format!("CREATE DATABASE {database}"))?;
    let database_url = format!("{PG}/{database}");

    let scratch = std::env::temp_dir().join(&database);
    std::fs::create_dir_all(&scratch)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let operator_token = format!("op_bench_{}", hex(&random_bytes(16)?));
    // Production, as deployed; the rate limit raised so that it is not
    // what gets measured.
    let config = format!(
        "profile = \"production\"\nbind = \"127.0.0.1:{port}\"\npublic_base_url = \"{base}\"\n\
         database_url = \"{database_url}\"\nmaster_key = \"{}\"\nlog_level = \"error\"\n\
         [rate_limit]\nrequests_per_minute = 1000000000\nburst = 100000000\n\
         [[operators]]\nname = \"bench\"\ntoken = \"{operator_token}\"\n",
        base64(&random_bytes(32)?)
    );
    let config_path = scratch.join("bench.toml");
    std::fs::write(&config_path, config)?;
    step(&format!(
        "starting the service (production profile) on {base}, database {database}"
    ));
    let service = Service(
        Command::new(&bin)
            .args(["--config", &config_path.display().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the service")?,
    );
    let pid = service.0.id();
    wait_for_port(port)?;
    let key = output(Command::new(&loadgen).args(["setup", &base, &operator_token]))?
        .trim()
        .to_string();

    let mut load = Vec::new();
    for (endpoint, label) in ENDPOINTS {
        for clients in CLIENTS {
            step(&format!(
                "{label}: {clients} client(s) for {} s",
                options.seconds
            ));
            let line = output(Command::new(&loadgen).args([
                "run",
                &base,
                &key,
                endpoint,
                &clients.to_string(),
                &options.seconds.to_string(),
            ]))?;
            let v: Value = serde_json::from_str(line.trim())
                .with_context(|| format!("loadgen printed {line}"))?;
            println!(
                "bench:   {:.0} requests/s, median {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, {} errors",
                num(&v, "rps"),
                num(&v, "p50_ms"),
                num(&v, "p99_ms"),
                num(&v, "p999_ms"),
                v["errors"]
            );
            load.push(v);
        }
    }
    let peak_kib = peak_memory_kib(pid)?;
    drop(service);

    step("the database's own ceiling: pgbench, one deposit insert per transaction");
    // The same table the service wrote to, with all of its indexes and its
    // foreign key, and a row as wide as the load generator's orders.
    let merchant = output(Command::new("psql").args([
        &format!("{PG}/{database}"),
        "-tAc",
        "SELECT id FROM merchants ORDER BY created_at DESC LIMIT 1",
    ]))?
    .trim()
    .to_string();
    if merchant.is_empty() {
        bail!("the bench merchant is not in {database}");
    }
    let script = scratch.join("insert.sql");
    std::fs::write(&script, PGBENCH_SCRIPT)?;
    let mut ceiling = Vec::new();
    for clients in CLIENTS {
        let out = output(Command::new("pgbench").args([
            "-n",
            "-M",
            "prepared",
            "-f",
            &script.display().to_string(),
            "-D",
            &format!("merchant={merchant}"),
            "-c",
            &clients.to_string(),
            "-j",
            &clients.min(2).to_string(),
            "-T",
            &options.seconds.to_string(),
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            &database,
        ]))?;
        let tps = out
            .lines()
            .find(|l| l.starts_with("tps = "))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|t| t.parse::<f64>().ok())
            .ok_or_else(|| anyhow!("no tps in pgbench's output:\n{out}"))?;
        println!("bench:   pgbench {clients} client(s): {tps:.0} transactions/s");
        ceiling.push((clients, tps));
    }

    let mut deliveries = Vec::new();
    for n in &options.deliveries {
        step(&format!(
            "callback delivery: {n} deliveries to a local receiver"
        ));
        let out = output(
            Command::new(&delivery)
                .arg(n.to_string())
                .env("PAYMENTS_TEST_DATABASE_URL", format!("{PG}/test")),
        )?;
        let v: Value = out
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| anyhow!("delivery_bench printed no figures:\n{out}"))?;
        println!(
            "bench:   {:.0} deliveries/s, commit to first attempt median {:.1} ms, p99 {:.1} ms",
            num(&v, "per_second"),
            num(&v, "p50_ms"),
            num(&v, "p99_ms")
        );
        deliveries.push(v);
    }
    let _ = psql("test", &format!("DROP DATABASE IF EXISTS {database}"));
    let _ = std::fs::remove_dir_all(&scratch);

    let results = root.join("bench/results");
    std::fs::create_dir_all(&results)?;
    let report = report(root, options, &load, peak_kib, &ceiling, &deliveries)?;
    std::fs::write(results.join("README.md"), &report)?;
    std::fs::write(results.join("throughput.svg"), svg(&load, &ceiling))?;
    println!("\n{report}");
    step(&format!(
        "wrote bench/results/README.md and bench/results/throughput.svg in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
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
  'none', 0, 'bench-user', 0, 5025, extract(epoch from now())::bigint + 1800,
  extract(epoch from now())::bigint, extract(epoch from now())::bigint)
ON CONFLICT DO NOTHING;
COMMIT;
";

fn report(
    root: &Path,
    options: &Options,
    load: &[Value],
    peak_kib: u64,
    ceiling: &[(usize, f64)],
    deliveries: &[Value],
) -> Result<String> {
    let mut out = String::new();
    writeln!(out, "# Benchmark results\n")?;
    writeln!(
        out,
        "Written by `cargo xtask bench` (commit {}, {}). Load comes from \
         `tests/examples/loadgen.rs`, a separate process signing every request \
         through the generated client; the service runs the production profile \
         (release build) on PostgreSQL. Each cell: {} s after a 1 s warm-up.\n",
        git_commit(root),
        utc_now(),
        options.seconds
    )?;
    writeln!(out, "## Machine\n\n{}\n", machine())?;
    writeln!(out, "## Requests\n")?;
    writeln!(
        out,
        "| endpoint | clients | requests/s | median ms | p99 ms | p99.9 ms | errors |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
    for v in load {
        let label = ENDPOINTS
            .iter()
            .find(|(e, _)| v["endpoint"] == *e)
            .map_or("?", |(_, l)| *l);
        writeln!(
            out,
            "| {label} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {} |",
            v["clients"],
            num(v, "rps"),
            num(v, "p50_ms"),
            num(v, "p99_ms"),
            num(v, "p999_ms"),
            v["errors"]
        )?;
    }
    writeln!(
        out,
        "\nPeak memory of the service (VmHWM) over all of the above: {:.1} MiB.\n",
        peak_kib as f64 / 1024.0
    )?;
    writeln!(out, "## Against the database's ceiling\n")?;
    writeln!(
        out,
        "`pgbench` on the same server in the same run, after the load above: one \
         transaction inserting one order into the service's own `deposit_orders` table \
         (every index and the foreign key it has in production), the row as wide as the \
         load generator's orders (the script is in `xtask/src/bench.rs`). Create-deposit \
         does more per request than that insert: it parses and checks the signed request, \
         reads the key with its merchant and fee rates (one query), then inserts. The \
         fraction says how much of the database's rate the service turns into orders.\n"
    )?;
    writeln!(
        out,
        "| clients | pgbench tx/s | create-deposit req/s | fraction |"
    )?;
    writeln!(out, "|---:|---:|---:|---:|")?;
    for (clients, tps) in ceiling {
        let ours = load
            .iter()
            .find(|v| v["endpoint"] == "create" && v["clients"] == *clients)
            .map_or(0.0, |v| num(v, "rps"));
        writeln!(
            out,
            "| {clients} | {tps:.0} | {ours:.0} | {:.2} |",
            if *tps > 0.0 { ours / tps } else { 0.0 }
        )?;
    }
    writeln!(out, "\n## Callback delivery\n")?;
    writeln!(
        out,
        "`tests/examples/delivery_bench.rs`: N deposits with a callback URL are completed \
         (32 at a time) while the delivery worker runs; a local receiver answers 200. \
         Delay = from the commit of the completion to the receiver seeing the first attempt.\n"
    )?;
    writeln!(
        out,
        "| deliveries | deliveries/s | delay median ms | delay p99 ms | max ms |"
    )?;
    writeln!(out, "|---:|---:|---:|---:|---:|")?;
    for v in deliveries {
        writeln!(
            out,
            "| {} | {:.0} | {:.1} | {:.1} | {:.1} |",
            v["deliveries"],
            num(v, "per_second"),
            num(v, "p50_ms"),
            num(v, "p99_ms"),
            num(v, "max_ms")
        )?;
    }
    writeln!(out, "\n![requests per second](throughput.svg)")?;
    Ok(out)
}

/// Bars of requests per second per endpoint and client count, with the
/// pgbench ceiling drawn across each client group.
fn svg(load: &[Value], ceiling: &[(usize, f64)]) -> String {
    let max = load
        .iter()
        .map(|v| num(v, "rps"))
        .chain(ceiling.iter().map(|(_, t)| *t))
        .fold(1.0, f64::max);
    let (w, h, left, bottom, top) = (720.0, 380.0, 70.0, 60.0, 40.0);
    let plot_h = h - bottom - top;
    let group_w = (w - left - 20.0) / CLIENTS.len() as f64;
    let bar_w = group_w / (ENDPOINTS.len() as f64 + 1.5);
    let colors = ["#1d4ed8", "#16a34a", "#d97706"];
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Requests per second on PostgreSQL (dashed: pgbench insert ceiling)</text>\n"
    );
    for k in 0..=4 {
        let value = max * f64::from(k) / 4.0;
        let y = top + plot_h - plot_h * f64::from(k) / 4.0;
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e5e7eb\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{value:.0}</text>",
            w - 20.0,
            left - 6.0,
            y + 4.0
        );
    }
    for (g, clients) in CLIENTS.iter().enumerate() {
        let x0 = left + group_w * g as f64 + bar_w * 0.5;
        for (i, (endpoint, _)) in ENDPOINTS.iter().enumerate() {
            let rps = load
                .iter()
                .find(|v| v["endpoint"] == *endpoint && v["clients"] == *clients)
                .map_or(0.0, |v| num(v, "rps"));
            let bh = plot_h * rps / max;
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"{}\"/>",
                x0 + bar_w * i as f64,
                top + plot_h - bh,
                bar_w * 0.9,
                colors[i]
            );
        }
        if let Some((_, tps)) = ceiling.iter().find(|(c, _)| c == clients) {
            let y = top + plot_h - plot_h * tps / max;
            let _ = writeln!(
                s,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#111827\" stroke-dasharray=\"5 3\" stroke-width=\"2\"/>",
                x0 - bar_w * 0.25,
                x0 + bar_w * ENDPOINTS.len() as f64
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{clients} client{}</text>",
            x0 + bar_w * ENDPOINTS.len() as f64 / 2.0,
            h - bottom + 18.0,
            if *clients == 1 { "" } else { "s" }
        );
    }
    for (i, (_, label)) in ENDPOINTS.iter().enumerate() {
        let x = left + 190.0 * i as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{label}</text>",
            h - 24.0,
            colors[i],
            x + 16.0,
            h - 14.0
        );
    }
    s.push_str("</svg>\n");
    s
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0)
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

fn git_commit(root: &Path) -> String {
    Command::new("git")
        .current_dir(root)
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
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
