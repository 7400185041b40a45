//! The suite's runner, shared by the workspace's test target (`cargo test
//! --workspace --test conformance`) and the installed
//! `payments-conformance` binary: which scenarios run, the reports (JUnit,
//! cucumber JSON, HTML), and the ledger check afterwards. Both compile
//! these files into themselves, so that cucumber's step registry sees the
//! steps in the program that runs them.

pub mod steps;

use conformance::Profile;
use conformance::{features, harness, report, rules::Rules};
use cucumber::gherkin::tagexpr::TagOperation;
use cucumber::tag::Ext as _;
use cucumber::{writer, StatsWriter as _, World as _, WriterExt as _};
use std::path::PathBuf;
use std::str::FromStr;
use steps::PaymentsWorld;

/// Scenarios that pay through `payments-channel-sim`: they run where the
/// suite knows one (in-process production; the in-process sandbox in a
/// second pass; a deployment with `--channel-url`, `--channel-code`,
/// `--channel-secret`).
pub const CHANNEL_SIM_TAG: &str = "channel_sim";
/// Scenarios that route among several channel simulators.
pub const ROUTING_TAG: &str = "routing";

/// Scenarios that move the service's clock: through the sandbox's API, or
/// in an in-process production run through its harness; left out against
/// a production deployment, whose clock is the system's.
pub const CLOCK_TAG: &str = "clock";

/// Scenarios whose failures may come from the network between QA and the
/// deployment; `--retry N` retries only these.
pub const FLAKY_TAG: &str = "flaky_network";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Realtime {
    /// Leave out the scenarios tagged `@realtime` (minutes of wall time).
    Skip,
    /// Run them too.
    Include,
    /// Run nothing else.
    Only,
}

pub struct Run {
    pub profile: Profile,
    /// Feature file stems to run (`deposit`, `callbacks`); empty: all.
    pub features: Vec<String>,
    /// A cucumber tag expression (`@callbacks and not @realtime`).
    pub tags: Option<String>,
    pub realtime: Realtime,
    /// Where junit.xml, report.json and report.html go.
    pub report_dir: PathBuf,
    /// Retries of scenarios tagged `@flaky_network`.
    pub retry: Option<usize>,
    /// The run's configuration for the HTML report (no secrets).
    pub shown: Vec<(String, String)>,
}

/// Runs the suite; the process's exit code (0: every selected scenario
/// passed and the ledger adds up).
pub async fn run(run: Run) -> i32 {
    match run_inner(run).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("conformance: {e:#}");
            2
        }
    }
}

async fn run_inner(run: Run) -> anyhow::Result<i32> {
    let known = features::names();
    let features: Vec<String> = run
        .features
        .iter()
        .map(|f| f.trim_end_matches(".feature").to_string())
        .collect();
    if let Some(unknown) = features.iter().find(|f| !known.contains(&f.as_str())) {
        anyhow::bail!("no feature `{unknown}`; there are: {}", known.join(", "));
    }
    let tags = run
        .tags
        .as_deref()
        .map(|t| {
            TagOperation::from_str(t)
                .map_err(|e| anyhow::anyhow!("the tag expression `{t}` does not parse: {e}"))
        })
        .transpose()?;
    let dir = &run.report_dir;
    let feature_dir = features::write_to(dir)?;
    let (junit, json) = open_reports(dir)
        .map_err(|e| anyhow::anyhow!("cannot write reports to {}: {e}", dir.display()))?;
    // A scenario tagged for one profile does not run in the other.
    let skip_tag = match run.profile {
        Profile::Sandbox => "production",
        Profile::Production => "sandbox",
    };
    let realtime = run.realtime;
    // Scenarios that pay through `payments-channel-sim` need one.
    let settings = conformance::settings::current()?;
    let channel_sim = settings.has_channel_sim();
    let routing = settings.has_routing_channels();
    let clock = run.profile == Profile::Sandbox || settings.base_url.is_none();
    if !clock {
        println!(
            "note: the @{CLOCK_TAG} scenarios are left out: they move the service's clock, \
             which a production deployment's is not"
        );
    }
    if !channel_sim && settings.base_url.is_some() {
        println!(
            "note: the @{CHANNEL_SIM_TAG} scenarios are left out: they need the channel \
             simulator the deployment pays through (--channel-url, --channel-code, \
             --channel-secret)"
        );
    }
    let selection = features.clone();
    let expression = tags;
    let mut cucumber = PaymentsWorld::cucumber()
        .with_writer(
            writer::Basic::stdout()
                .summarized()
                .tee::<PaymentsWorld, _>(writer::JUnit::for_tee(junit, 0))
                .tee::<PaymentsWorld, _>(writer::Json::for_tee(json))
                .normalized(),
        )
        .max_concurrent_scenarios(16)
        .fail_on_skipped()
        // Options come from `Run`; cucumber must not read the program's
        // own arguments (the binary's flags are not cucumber's).
        .with_cli(cucumber::cli::Opts::<_, _, _, cucumber::cli::Empty>::default());
    if let Some(retries) = run.retry {
        cucumber = cucumber
            .retries(retries)
            .retry_filter(TagOperation::Tag(FLAKY_TAG.into()));
    }
    let writer = cucumber
        .filter_run(feature_dir, move |feature, _rule, scenario| {
            let tags: Vec<&String> = feature.tags.iter().chain(scenario.tags.iter()).collect();
            let is_realtime = tags.iter().any(|t| *t == "realtime");
            let file = feature
                .path
                .as_ref()
                .and_then(|p| p.file_stem())
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            tags.iter().all(|t| *t != skip_tag)
                && (channel_sim || tags.iter().all(|t| *t != CHANNEL_SIM_TAG))
                && (routing || tags.iter().all(|t| *t != ROUTING_TAG))
                && (clock || tags.iter().all(|t| *t != CLOCK_TAG))
                && match realtime {
                    Realtime::Skip => !is_realtime,
                    Realtime::Include => true,
                    Realtime::Only => is_realtime,
                }
                && (selection.is_empty() || selection.iter().any(|o| o == file))
                && expression.as_ref().is_none_or(|op| op.eval(tags.iter()))
        })
        .await;
    let failed = writer.execution_has_failed();
    let report_json = dir.join("report.json");
    match per_feature(&report_json) {
        Ok(table) => println!("{table}"),
        Err(e) => eprintln!("conformance: no per-feature summary: {e:#}"),
    }
    let report_value = std::fs::read(&report_json)
        .map_err(anyhow::Error::from)
        .and_then(|bytes| Ok(serde_json::from_slice::<serde_json::Value>(&bytes)?));
    if let Ok(json) = &report_value {
        print!("{}", report::failures_text(json));
    }

    // Whatever the scenarios did to money, the ledger must still add up.
    let ledger = ledger_check().await;
    let ledger_ok = match &ledger {
        Ok(summary) => {
            println!("{summary}");
            !summary.contains("DIFFERENCE")
        }
        Err(e) => {
            eprintln!("conformance: the ledger check after the suite failed: {e:#}");
            false
        }
    };

    let mut shown = run.shown.clone();
    if !channel_sim {
        let whole = features::tagged(CHANNEL_SIM_TAG).join(", ");
        let said = match settings.base_url {
            None => format!(
                "the @{CHANNEL_SIM_TAG} scenarios ({whole}) run in a second pass, a sandbox \
                 paying through payments-channel-sim (reports in channel-sim/)"
            ),
            Some(_) => format!(
                "the @{CHANNEL_SIM_TAG} scenarios ({whole}): they need the channel simulator \
                 the deployment pays through (--channel-url, --channel-code, --channel-secret)"
            ),
        };
        shown.push(("left out".into(), said));
    }
    if channel_sim && !routing {
        shown.push((
            "left out".into(),
            format!(
                "the @{ROUTING_TAG} scenarios ({}): they need the deployment's other channel \
                 simulators (--routing-channels SIM-B=URL,SIM-REFUSING=URL,SIM-SILENT=URL)",
                features::tagged(ROUTING_TAG).join(", ")
            ),
        ));
    }
    if !clock {
        shown.push((
            "left out".into(),
            format!(
                "the @{CLOCK_TAG} scenarios: they move the service's clock, which a production \
                 deployment's is not"
            ),
        ));
    }
    if !features.is_empty() {
        shown.push(("features".into(), features.join(", ")));
    }
    if let Some(t) = &run.tags {
        shown.push(("tags".into(), t.clone()));
    }
    if let Some(n) = run.retry {
        shown.push(("retries".into(), format!("{n} for @{FLAKY_TAG} scenarios")));
    }
    shown.push((
        "ledger check after the run".into(),
        match &ledger {
            Ok(summary) => summary.clone(),
            Err(e) => format!("failed: {e:#}"),
        },
    ));
    let html = dir.join("report.html");
    let page = report_value.map(|json| {
        report::html(
            &json,
            &Rules::parse(features::rule_map()),
            &format!(
                "Merchant payment service conformance, {} profile",
                run.profile
            ),
            &shown,
        )
    });
    match page {
        Ok(page) => std::fs::write(&html, page)?,
        Err(e) => eprintln!("conformance: no HTML report: {e:#}"),
    }
    println!(
        "reports: {}, {} and {}",
        dir.join("junit.xml").display(),
        report_json.display(),
        html.display()
    );
    Ok(if failed || !ledger_ok { 1 } else { 0 })
}

fn open_reports(dir: &std::path::Path) -> std::io::Result<(std::fs::File, std::fs::File)> {
    std::fs::create_dir_all(dir)?;
    Ok((
        std::fs::File::create(dir.join("junit.xml"))?,
        std::fs::File::create(dir.join("report.json"))?,
    ))
}

/// Passed, failed and skipped scenarios per feature, from the JSON report.
fn per_feature(path: &std::path::Path) -> anyhow::Result<String> {
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(path)?)?;
    let mut out = format!(
        "{:<52} {:>6} {:>6} {:>7}\n",
        "feature", "passed", "failed", "skipped"
    );
    let mut rows: Vec<(String, [usize; 3])> = Vec::new();
    for feature in report.as_array().into_iter().flatten() {
        let name = feature["name"].as_str().unwrap_or("?").to_string();
        let mut counts = [0usize; 3];
        for scenario in feature["elements"].as_array().into_iter().flatten() {
            if scenario["type"].as_str() == Some("background") {
                continue;
            }
            let statuses: Vec<&str> = scenario["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s["result"]["status"].as_str())
                .collect();
            let k = if statuses.contains(&"failed") {
                1
            } else if statuses.iter().any(|s| *s != "passed") {
                2
            } else {
                0
            };
            counts[k] += 1;
        }
        match rows.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => (0..3).for_each(|i| c[i] += counts[i]),
            None => rows.push((name, counts)),
        }
    }
    for (name, [p, f, s]) in rows {
        let name: String = name.chars().take(52).collect();
        out.push_str(&format!("{name:<52} {p:>6} {f:>6} {s:>7}\n"));
    }
    Ok(out)
}

async fn ledger_check() -> anyhow::Result<String> {
    let report = harness()
        .await
        .operator()?
        .check_ledger()
        .await?
        .into_inner();
    let mut out = format!(
        "ledger check after the suite (journal, balance lines, daily statements): {} journal entries, {} balances, {}",
        report.entries_checked,
        report.balances_checked,
        if report.ok {
            "no difference"
        } else {
            "DIFFERENCES:"
        }
    );
    for d in report.differences {
        out.push_str(&format!(
            "\n  DIFFERENCE {:?} {}: {}",
            d.kind, d.reference, d.detail
        ));
    }
    Ok(out)
}
