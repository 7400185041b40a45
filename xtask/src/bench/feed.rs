//! The merchant's events feed under load: 16 clients create deposits and
//! have an operator complete them while a follower reads the feed by its
//! cursor and a second reader reads it from its start again and again
//! (`tests/examples/feed_bench.rs`). The lag is from a completion's answer
//! to the follower's read that returned its event. Writes
//! bench/results/feed.md.

use super::{num, output, peak_memory_kib, step, Bench};
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// The target (issue 33): commit → visible in the feed, p99.
const LAG_P99_TARGET_MS: f64 = 100.0;
const CLIENTS: usize = 16;

pub struct Figures {
    pub load: Value,
    pub peak_kib: u64,
}

pub fn run(bench: &Bench, database: &str) -> Result<Figures> {
    let service = bench.start(database, "sandbox", false)?;
    let key = bench.merchant(&service)?;
    step(&format!(
        "events feed: {CLIENTS} clients create and complete deposits for {} s, a follower and a \
         reader from the start",
        bench.seconds
    ));
    let line = output(Command::new(&bench.feed).args([
        &service.base,
        &key,
        &bench.operator_token,
        &CLIENTS.to_string(),
        &bench.seconds.to_string(),
    ]))?;
    let load: Value =
        serde_json::from_str(line.trim()).with_context(|| format!("feed_bench printed {line}"))?;
    println!(
        "bench:   {:.0} completions/s, follower {:.0} events/s, catch-up {:.0} events/s, lag p99 \
         {:.1} ms",
        num(&load, "completions_per_second"),
        num(&load, "followed_per_second"),
        num(&load, "catch_up_per_second"),
        num(&load, "lag_p99_ms")
    );
    if num(&load, "unseen") > 0.0 {
        bail!("the follower missed {} completed deposits", load["unseen"]);
    }
    let peak_kib = peak_memory_kib(service.pid())?;
    Ok(Figures { load, peak_kib })
}

pub fn write(f: &Figures, header: &str, dir: &Path) -> Result<String> {
    let v = &f.load;
    let lag = num(v, "lag_p99_ms");
    let mut out = String::new();
    writeln!(out, "# Events feed benchmark results\n\n{header}")?;
    writeln!(out, "## Targets\n\n| target | measured | |\n|---|---|---|")?;
    writeln!(
        out,
        "| commit → visible in the feed, p99 ≤ {LAG_P99_TARGET_MS:.0} ms | {lag:.1} ms (from the \
         completion's answer; {:.1} ms from its request) | {} |",
        num(v, "lag_upper_p99_ms"),
        if lag <= LAG_P99_TARGET_MS {
            "met"
        } else {
            "**missed**"
        }
    )?;
    let mib = f.peak_kib as f64 / 1024.0;
    let most = super::report::MEMORY_TARGET_MIB;
    writeln!(
        out,
        "| the service's peak memory ≤ {most:.0} MiB | {mib:.1} MiB | {} |",
        if mib <= most { "met" } else { "**missed**" }
    )?;
    writeln!(
        out,
        "\n## Figures\n\n| figure | value |\n|---|---|\n\
         | writers (create + complete a deposit, in a loop) | {} |\n\
         | seconds | {:.1} |\n\
         | deposits completed | {} ({:.0}/s) |\n\
         | errors | {} |\n\
         | events the follower read | {} ({:.0}/s, every completion: {} unseen) |\n\
         | events read from the feed's start, again and again, meanwhile | {} ({:.0}/s) |\n\
         | lag p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |\n\
         | the service's peak memory (VmHWM) | {:.1} MiB |",
        v["clients"],
        num(v, "seconds"),
        v["completed"],
        num(v, "completions_per_second"),
        v["errors"],
        v["followed"],
        num(v, "followed_per_second"),
        v["unseen"],
        v["catch_up_events"],
        num(v, "catch_up_per_second"),
        num(v, "lag_p50_ms"),
        lag,
        num(v, "lag_max_ms"),
        f.peak_kib as f64 / 1024.0
    )?;
    writeln!(
        out,
        "\nThe follower pauses 2 ms after an empty read, as a real follower polls; the lag \
         includes that pause and one sequencer pass (`app/events.rs`). The commit happens \
         between a completion's request and its answer, so the true lag lies between the two \
         figures."
    )?;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("feed.md"), &out)?;
    Ok(out)
}
