//! Runs features/ against the service: `cargo test -p conformance --test
//! conformance`. See the harness crate for the environment it reads.

mod steps;

use conformance::profile_from_env;
use cucumber::World as _;
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
    PaymentsWorld::cucumber()
        .max_concurrent_scenarios(16)
        .fail_on_skipped()
        .filter_run_and_exit(features, move |feature, _rule, scenario| {
            !feature
                .tags
                .iter()
                .chain(scenario.tags.iter())
                .any(|t| t == skip_tag)
        })
        .await;
}
