//! Side by side with svix-server, the open-source webhook sender
//! (`--peer svix`): the same drain of 10,000 due callbacks and the same
//! steady 500 a second, against the same receiver (`delivery_bench
//! receive`) and the same PostgreSQL, three drains each, taken in turn
//! (ours, then svix's), medians compared. Writes bench/results/peer.md.
//!
//! svix-server is not built here: the repository holds no recipe that
//! builds a fetched program. `SVIX_BIN` names a svix-server built as
//! `../shared/peers/svix/README.md` describes; that folder's `bench.py`
//! drives it (an API-only instance fills its queue, then a worker-only
//! instance drains it), and its `config.toml` configures it.

use super::{delivery, output, step, Bench, Databases};
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The ratio issue 56 asks of our drain against svix's, by medians.
pub const DRAIN_RATIO_TARGET: f64 = 1.5;
const RUNS: usize = 3;

/// Where svix-server and its driver are.
pub struct Peer {
    svix_bin: PathBuf,
    folder: PathBuf,
}

impl Peer {
    /// Checks everything the peer needs before any of the run starts, so a
    /// missing piece is said at once and not after the other parts.
    pub fn find(root: &Path) -> Result<Peer> {
        let svix_bin = std::env::var_os("SVIX_BIN").map(PathBuf::from).context(
            "--peer svix: set SVIX_BIN to a svix-server binary built as \
             ../shared/peers/svix/README.md describes (this repository does not build it)",
        )?;
        if !svix_bin.is_file() {
            bail!("--peer svix: SVIX_BIN={} is not a file", svix_bin.display());
        }
        let folder = std::env::var_os("SVIX_PEER_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("../shared/peers/svix"));
        for file in ["bench.py", "config.toml"] {
            if !folder.join(file).is_file() {
                bail!(
                    "--peer svix: no {file} in {} (set SVIX_PEER_DIR to the folder that has \
                     svix's bench.py and config.toml)",
                    folder.display()
                );
            }
        }
        for tool in ["python3", "redis-cli", "createdb", "dropdb"] {
            if Command::new("which")
                .arg(tool)
                .output()
                .map_or(true, |o| !o.status.success())
            {
                bail!("--peer svix: {tool} is not installed");
            }
        }
        let pong = Command::new("redis-cli").arg("ping").output();
        if !pong.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "PONG") {
            bail!(
                "--peer svix: Redis is not answering on 127.0.0.1:6379 (svix-server queues in it; \
                 start it with redis-server --daemonize yes --port 6379 --save \"\")"
            );
        }
        Ok(Peer { svix_bin, folder })
    }
}

pub struct OursDrain {
    pub per_second: f64,
    pub seconds: f64,
    pub peak_mib: f64,
}

pub struct Figures {
    pub ours: Vec<OursDrain>,
    /// `bench.py drain`'s lines, one per run.
    pub svix: Vec<Value>,
    /// Our steady run (commit → first attempt).
    pub ours_steady: Value,
    /// `bench.py steady`'s line.
    pub svix_steady: Value,
}

impl Figures {
    pub fn ours_median(&self) -> f64 {
        median(self.ours.iter().map(|d| d.per_second).collect())
    }

    pub fn svix_median(&self) -> f64 {
        median(self.svix.iter().map(svix_rate).collect())
    }

    pub fn ratio(&self) -> f64 {
        self.ours_median() / self.svix_median()
    }

    fn ours_peak_mib(&self) -> f64 {
        self.ours.iter().map(|d| d.peak_mib).fold(0.0, f64::max)
    }

    fn svix_peak_mib(&self) -> f64 {
        self.svix
            .iter()
            .map(|v| v["peak_rss_mib"].as_f64().unwrap_or(0.0))
            .fold(0.0, f64::max)
    }
}

/// svix's drain rate: deliveries over the time to the last arrival at
/// the receiver (ours is timed to the last outcome written, which comes
/// after its arrival, so the comparison does not favour us).
fn svix_rate(v: &Value) -> f64 {
    v["per_second"].as_f64().unwrap_or(0.0)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

pub fn run(
    bench: &Bench,
    peer: &Peer,
    databases: &mut Databases,
    run_id: u32,
    drain_n: usize,
    steady_rate: u32,
) -> Result<Figures> {
    let run_dir = bench.scratch.join("svix");
    std::fs::create_dir_all(&run_dir)?;
    std::fs::copy(peer.folder.join("config.toml"), run_dir.join("config.toml"))?;
    let mut figures = Figures {
        ours: Vec::new(),
        svix: Vec::new(),
        ours_steady: Value::Null,
        svix_steady: Value::Null,
    };
    for i in 1..=RUNS {
        step(&format!(
            "peer {i}/{RUNS}: our drain of {drain_n} due callbacks"
        ));
        let database = databases.create(&format!("payments_bench_{run_id}_peer{i}"))?;
        let service = bench.start(&database, "sandbox", false)?;
        let key = bench.merchant(&service)?;
        drop(service);
        let port = delivery::fill(bench, &database, &key, drain_n)?;
        let drain = delivery::drain(bench, &database, drain_n, port)?;
        println!(
            "bench:   ours: {:.0} deliveries/s ({:.2} s), peak {:.1} MiB",
            drain.per_second(),
            drain.seconds,
            drain.peak_kib as f64 / 1024.0
        );
        figures.ours.push(OursDrain {
            per_second: drain.per_second(),
            seconds: drain.seconds,
            peak_mib: drain.peak_kib as f64 / 1024.0,
        });
        databases.drop_now(&database);

        step(&format!(
            "peer {i}/{RUNS}: svix-server's drain of {drain_n}"
        ));
        let line = svix(bench, peer, &run_dir, drain_n, &["drain", &i.to_string()])?;
        println!(
            "bench:   svix: {:.0} deliveries/s ({} s to the last arrival), worker peak {} MiB",
            svix_rate(&line),
            line["seconds_to_last_arrival"],
            line["peak_rss_mib"]
        );
        figures.svix.push(line);
    }

    step(&format!(
        "peer: our steady {steady_rate}/s for {} s (commit → first attempt)",
        bench.seconds
    ));
    let database = databases.create(&format!("payments_bench_{run_id}_peersteady"))?;
    let service = bench.start(&database, "sandbox", false)?;
    let key = bench.merchant(&service)?;
    drop(service);
    // The steady run copies delivered bodies of real orders.
    let port = delivery::fill(bench, &database, &key, 1_000)?;
    delivery::drain(bench, &database, 1_000, port)?;
    figures.ours_steady = delivery::steady(bench, &database, steady_rate)?;
    println!(
        "bench:   ours: p99 {:.1} ms",
        figures.ours_steady["p99_ms"].as_f64().unwrap_or(0.0)
    );
    databases.drop_now(&database);

    step("peer: svix-server's steady 500/s for 10 s (API answer → first attempt)");
    figures.svix_steady = svix(bench, peer, &run_dir, drain_n, &["steady"])?;
    println!(
        "bench:   svix: p99 {} ms",
        figures.svix_steady["resp_to_arrival_ms"]["p99"]
    );
    println!(
        "bench:   drain ratio {:.2}× by medians ({:.0} against {:.0} deliveries/s)",
        figures.ratio(),
        figures.ours_median(),
        figures.svix_median()
    );
    Ok(figures)
}

/// Runs svix's driver with `args`; the JSON line it prints last.
fn svix(bench: &Bench, peer: &Peer, run_dir: &Path, n: usize, args: &[&str]) -> Result<Value> {
    let out = output(
        Command::new("python3")
            .arg(peer.folder.join("bench.py"))
            .args(args)
            .env("SVIX_BIN", &peer.svix_bin)
            .env("RECEIVER", &bench.delivery)
            .env("RUN_DIR", run_dir)
            .env("BENCH_N", n.to_string()),
    )?;
    delivery::last_json(&out)
}

pub fn write(f: &Figures, header: &str, dir: &Path) -> Result<String> {
    let ratio = f.ratio();
    let (ours_peak, svix_peak) = (f.ours_peak_mib(), f.svix_peak_mib());
    let ours_p99 = f.ours_steady["p99_ms"].as_f64().unwrap_or(0.0);
    let svix_resp = &f.svix_steady["resp_to_arrival_ms"];
    let svix_sent = &f.svix_steady["send_to_arrival_ms"];
    let mut out = String::new();
    writeln!(out, "# Side by side with svix-server\n\n{header}")?;
    writeln!(
        out,
        "## Targets (issue 56)\n\n| target | measured | |\n|---|---|---|"
    )?;
    writeln!(
        out,
        "| our drain ≥ {DRAIN_RATIO_TARGET}× svix-server's (median of {RUNS} each) | {ratio:.2}× \
         ({:.0} against {:.0} deliveries/s) | {} |",
        f.ours_median(),
        f.svix_median(),
        super::channels::verdict(ratio >= DRAIN_RATIO_TARGET)
    )?;
    writeln!(
        out,
        "| at no more memory | {ours_peak:.1} MiB (the whole service) against {svix_peak:.1} MiB \
         (svix's worker alone) | {} |",
        super::channels::verdict(ours_peak <= svix_peak)
    )?;
    writeln!(
        out,
        "| steady 500/s p99, both reported from the same clock start | ours {ours_p99:.1} ms, \
         svix {} ms | reported |",
        svix_resp["p99"]
    )?;
    writeln!(
        out,
        "\n## Drain of {} due callbacks, in the order run\n\n\
         | run | ours /s | ours s | ours peak MiB | svix /s | svix s to last arrival | svix worker \
         peak MiB |\n|---:|---:|---:|---:|---:|---:|---:|",
        f.svix
            .first()
            .map_or(Value::Null, |v| v["deliveries"].clone())
    )?;
    for (i, (o, s)) in f.ours.iter().zip(&f.svix).enumerate() {
        writeln!(
            out,
            "| {} | {:.0} | {:.2} | {:.1} | {:.0} | {} | {} |",
            i + 1,
            o.per_second,
            o.seconds,
            o.peak_mib,
            svix_rate(s),
            s["seconds_to_last_arrival"],
            s["peak_rss_mib"]
        )?;
    }
    writeln!(
        out,
        "\nOurs: 10,000 deposits created and completed through the API with the worker off, \
         then the service starts with its worker; timed from its start until nothing is due or \
         being sent (every outcome written, polled every 0.1 s) and the receiver has every \
         order. svix: an API-only instance enqueues 10,000 messages with the worker off, then a \
         worker-only instance starts; timed from its start to the receiver's last arrival. Both \
         use PostgreSQL on this machine with a pool of 16; svix queues in Redis as well. Peak \
         memory is VmHWM.\n"
    )?;
    writeln!(
        out,
        "## Steady arrivals\n\n| | arrivals | median ms | p99 ms | p99.9 ms | max ms |\n\
         |---|---:|---:|---:|---:|---:|\n\
         | ours: commit → first attempt | {} | {:.1} | {ours_p99:.1} | {:.1} | {:.1} |\n\
         | svix: API answer → first attempt | {} | {} | {} | {} | {} |\n\
         | svix: request sent → first attempt | {} | {} | {} | {} | {} |",
        f.ours_steady["deliveries"],
        f.ours_steady["p50_ms"].as_f64().unwrap_or(0.0),
        f.ours_steady["p999_ms"].as_f64().unwrap_or(0.0),
        f.ours_steady["max_ms"].as_f64().unwrap_or(0.0),
        f.svix_steady["matched"],
        svix_resp["p50"],
        svix_resp["p99"],
        svix_resp["p99.9"],
        svix_resp["max"],
        f.svix_steady["matched"],
        svix_sent["p50"],
        svix_sent["p99"],
        svix_sent["p99.9"],
        svix_sent["max"],
    )?;
    writeln!(
        out,
        "\nThe clock starts, for both, when the callback is durable in the sender's database: \
         ours at the queuing statement just before its commit (pgbench queues copies of real \
         callbacks at Poisson arrivals, and their commit wakes the worker as another \
         instance's would); svix's at the answer to the message's POST, which it sends after \
         its commit. Both end at the receiver writing down the first attempt, on the same \
         machine's wall clock. The second svix line starts before the POST.\n"
    )?;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("peer.md"), &out)?;
    Ok(out)
}
