//! Runs features/ against the service: `cargo test --workspace --test
//! conformance`, configured by `CONFORMANCE_*` in the environment (see
//! the harness crate and `suite/`).

#[path = "../suite/mod.rs"]
mod suite;

use std::path::PathBuf;
use suite::{Realtime, Run};

/// The run `cargo test` asks for: everything from `CONFORMANCE_*`.
fn from_env() -> anyhow::Result<Run> {
    let settings = conformance::settings::current()?;
    let realtime = match std::env::var("CONFORMANCE_REALTIME")
        .unwrap_or_default()
        .as_str()
    {
        "only" => Realtime::Only,
        "1" => Realtime::Include,
        _ => Realtime::Skip,
    };
    let profile = settings.profile;
    Ok(Run {
        profile,
        features: conformance::settings::split_list(
            &std::env::var("CONFORMANCE_FEATURES").unwrap_or_default(),
        ),
        tags: std::env::var("CONFORMANCE_TAGS")
            .ok()
            .filter(|t| !t.is_empty()),
        realtime,
        report_dir: std::env::var("CONFORMANCE_REPORT_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../target/conformance"
                ))
                .join(profile.as_str())
            }),
        retry: None,
        shown: settings.shown(),
    })
}

#[tokio::main]
async fn main() {
    let run = match from_env() {
        Ok(run) => run,
        Err(e) => {
            eprintln!("conformance: {e:#}");
            std::process::exit(2);
        }
    };
    std::process::exit(suite::run(run).await);
}
