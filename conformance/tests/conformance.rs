//! Runs features/ against the service: `cargo test --workspace --test
//! conformance`, configured by `CONFORMANCE_*` in the environment (see
//! the harness crate and `suite/`).

#[path = "../suite/mod.rs"]
mod suite;

mod in_process;

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

/// The in-process sandbox keeps its in-process simulator, which its own
/// scenarios drive; its `@channel_sim` scenarios, of whichever feature,
/// run in a second pass, this program again with `CONFORMANCE_CHANNEL_SIM=1`,
/// where a sandbox pays through `payments-channel-sim` instead. The pass's
/// exit code, or `None` when this run has no such pass.
fn channel_sim_pass(run: &Run) -> Option<i32> {
    let settings = conformance::settings::current().ok()?;
    let tagged = conformance::features::with_tag_anywhere("channel_sim");
    let features: Vec<&str> = match run.features.is_empty() {
        true => tagged.clone(),
        false => run
            .features
            .iter()
            .map(|f| f.trim_end_matches(".feature"))
            .filter(|f| tagged.contains(f))
            .collect(),
    };
    if settings.base_url.is_some()
        || settings.has_channel_sim()
        || settings.profile != conformance::Profile::Sandbox
        || run.realtime == Realtime::Only
        || features.is_empty()
    {
        return None;
    }
    println!("\n==> the @channel_sim scenarios, the sandbox paying through payments-channel-sim");
    let tags = match &run.tags {
        Some(t) => format!("@channel_sim and ({t})"),
        None => "@channel_sim".to_string(),
    };
    let status = std::process::Command::new(std::env::current_exe().ok()?)
        .env("CONFORMANCE_CHANNEL_SIM", "1")
        .env("CONFORMANCE_FEATURES", features.join(","))
        .env("CONFORMANCE_TAGS", tags)
        .env("CONFORMANCE_REPORT_DIR", run.report_dir.join("channel-sim"))
        .status();
    Some(match status {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("conformance: the @channel_sim pass did not start: {e}");
            2
        }
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
    conformance::in_process::provide(in_process::start);
    let second = channel_sim_pass(&run);
    let first = suite::run(run).await;
    std::process::exit(first.max(second.unwrap_or(0)));
}
