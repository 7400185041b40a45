//! What routing adds to creating a channel deposit (issue 54): the decision
//! alone, timed 200,000 times, and creates with a table of one candidate,
//! of three, and of one with a daily limit, on PostgreSQL, the service in
//! the bench tool's own process (`tests/examples/routing_bench.rs`).
//! Writes bench/results/routing.md.

use super::{num, output, step, Bench, PG};
use anyhow::{Context, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// The target: the routing decision adds at most 0.2 ms to create's median.
const ADDED_TARGET_MS: f64 = 0.2;

pub fn run(bench: &Bench, database: &str) -> Result<Value> {
    step("routing: 200,000 decisions, then 3,000 creates per table (one, three, a daily limit)");
    let line = output(Command::new(&bench.routing).arg(format!("{PG}/{database}")))?;
    let v: Value = serde_json::from_str(line.trim())
        .with_context(|| format!("routing_bench printed {line}"))?;
    println!(
        "bench:   decision median {:.1} µs (p99 {:.1} µs); create median {:.3} ms with one \
         candidate, {:.3} ms with three, {:.3} ms with a daily limit",
        num(&v, "decision_median_us"),
        num(&v, "decision_p99_us"),
        num(&v, "create_median_ms one candidate"),
        num(&v, "create_median_ms three candidates"),
        num(&v, "create_median_ms one candidate with a daily limit"),
    );
    Ok(v)
}

pub fn write(v: &Value, header: &str, dir: &Path) -> Result<String> {
    let decision_ms = num(v, "decision_median_us") / 1000.0;
    let one = num(v, "create_median_ms one candidate");
    let three = num(v, "create_median_ms three candidates");
    let limited = num(v, "create_median_ms one candidate with a daily limit");
    let met = |ok: bool| if ok { "met" } else { "**not met**" };
    let mut out = String::new();
    writeln!(out, "# Routing benchmark results\n\n{header}")?;
    writeln!(out, "## Target\n")?;
    writeln!(out, "| target | measured | |\n|---|---|---|")?;
    writeln!(
        out,
        "| the routing decision adds at most {ADDED_TARGET_MS} ms to create's median | the decision's median {:.4} ms | {} |",
        decision_ms,
        met(decision_ms <= ADDED_TARGET_MS)
    )?;
    writeln!(
        out,
        "\n## The decision alone\n\nWhat a channel deposit's create runs to choose its channel: \
         the table in force read from memory, the plan (three candidates with bands and weights, \
         each channel's health looked up, the weighted draw) and the decision with its \
         `routing_` record: {} times after 20,000 unmeasured. Median **{:.2} µs**, p99 {:.2} µs \
         (timed in nanoseconds).",
        v["decisions"],
        num(v, "decision_median_us"),
        num(v, "decision_p99_us")
    )?;
    writeln!(
        out,
        "\n## Creates\n\n`deposits::create` of BDT channel deposits (the in-process simulator \
         registers each payment, so the timing is the service's own work and the database's) \
         for three merchants in turn, each with a table of its own, 3,000 each after 300 \
         unmeasured, on {}:\n\n\
         | the merchant's table | median ms | p99 ms |\n|---|---:|---:|",
        v["database"].as_str().unwrap_or("?")
    )?;
    for label in [
        "one candidate",
        "three candidates",
        "one candidate with a daily limit",
    ] {
        writeln!(
            out,
            "| {label} | {:.3} | {:.3} |",
            num(v, &format!("create_median_ms {label}")),
            num(v, &format!("create_p99_ms {label}"))
        )?;
    }
    writeln!(
        out,
        "\nThree candidates against one: {:+.3} ms on the median. A daily limit adds its \
         reservation, one statement of its own and its commit ({:+.3} ms); a table without \
         limits makes none.",
        three - one,
        limited - one
    )?;
    std::fs::write(dir.join("routing.md"), &out)?;
    Ok(out)
}
