//! Runs features/ against the service: `cargo test --workspace --test
//! conformance`. See the harness crate for the environment it reads.

mod steps;

use conformance::{harness, profile_from_env};
use cucumber::{StatsWriter as _, World as _};
use payments_service::Profile;
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
    let writer = PaymentsWorld::cucumber()
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
