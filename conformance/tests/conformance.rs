//! Runs features/ against the service: `cargo test --workspace --test
//! conformance`. See the harness crate for the environment it reads.

mod steps;

use conformance::{harness, profile_from_env};
use cucumber::{writer, StatsWriter as _, World as _, WriterExt as _};
use payments_service::Profile;
use std::path::PathBuf;
use steps::PaymentsWorld;

#[tokio::main]
async fn main() {
    let profile = match profile_from_env() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("conformance: {e:#}");
            std::process::exit(2);
        }
    };
    let features = concat!(env!("CARGO_MANIFEST_DIR"), "/../features");
    // A scenario tagged for one profile does not run in the other.
    let skip_tag = match profile {
        Profile::Sandbox => "production",
        Profile::Production => "sandbox",
    };
    // Real-time scenarios take minutes of wall time: `1` adds them, `only`
    // runs nothing else.
    let realtime = std::env::var("CONFORMANCE_REALTIME").unwrap_or_default();
    let only_realtime = realtime == "only";
    let realtime = realtime == "1" || only_realtime;
    // `CONFORMANCE_FEATURES=cashier,callbacks` runs those files only.
    let only: Vec<String> = std::env::var("CONFORMANCE_FEATURES")
        .unwrap_or_default()
        .split(',')
        .map(|f| f.trim().trim_end_matches(".feature").to_string())
        .filter(|f| !f.is_empty())
        .collect();
    // Reports for QA's tools next to the terminal's progress: JUnit XML and
    // cucumber JSON, per profile unless CONFORMANCE_REPORT_DIR says where.
    let reports = std::env::var("CONFORMANCE_REPORT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../target/conformance"
            ))
            .join(profile_name(profile))
        });
    let (junit, json) = match open_reports(&reports) {
        Ok(files) => files,
        Err(e) => {
            eprintln!(
                "conformance: cannot write reports to {}: {e}",
                reports.display()
            );
            std::process::exit(2);
        }
    };
    let writer = PaymentsWorld::cucumber()
        .with_writer(
            writer::Basic::stdout()
                .summarized()
                .tee::<PaymentsWorld, _>(writer::JUnit::for_tee(junit, 0))
                .tee::<PaymentsWorld, _>(writer::Json::for_tee(json))
                .normalized(),
        )
        .max_concurrent_scenarios(16)
        .fail_on_skipped()
        .filter_run(features, move |feature, _rule, scenario| {
            let tags: Vec<&String> = feature.tags.iter().chain(scenario.tags.iter()).collect();
            let is_realtime = tags.iter().any(|t| *t == "realtime");
            tags.iter().all(|t| *t != skip_tag)
                && (realtime || !is_realtime)
                && (!only_realtime || is_realtime)
                && (only.is_empty()
                    || feature
                        .path
                        .as_ref()
                        .and_then(|p| p.file_stem())
                        .and_then(|s| s.to_str())
                        .is_some_and(|s| only.iter().any(|o| o == s)))
        })
        .await;
    let failed = writer.execution_has_failed();
    match per_feature(&reports.join("report.json")) {
        Ok(table) => println!("{table}"),
        Err(e) => eprintln!("conformance: no per-feature summary: {e:#}"),
    }
    println!(
        "reports: {} and {}",
        reports.join("junit.xml").display(),
        reports.join("report.json").display()
    );

    // Whatever the scenarios did to money, the ledger must still add up.
    let ledger_ok = match ledger_check().await {
        Ok(summary) => {
            println!("{summary}");
            !summary.contains("DIFFERENCE")
        }
        Err(e) => {
            eprintln!("conformance: the ledger check after the suite failed: {e:#}");
            false
        }
    };
    if failed || !ledger_ok {
        std::process::exit(1);
    }
}

fn profile_name(profile: Profile) -> &'static str {
    match profile {
        Profile::Sandbox => "sandbox",
        Profile::Production => "production",
    }
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
        "ledger check after the suite: {} journal entries, {} balances, {}",
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
