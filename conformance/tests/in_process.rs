//! The in-process service the suite runs against in the workspace's own
//! test runs (`conformance::in_process`): as deployed, the sandbox on a
//! clock its API advances, the delivery and expiry workers running.

use anyhow::{Context, Result};
use conformance::in_process::{InProcess, NewMerchant, Start};
use conformance::settings::{ChannelSettings, Profile};
use futures::future::BoxFuture;
use payments_service::clock::{Clock, OffsetClock};
use payments_testing::channel_sim::ChannelSim;
use payments_testing::TestService;
use std::sync::Arc;

struct Started {
    service: TestService,
    /// In-process production pays through `payments-channel-sim`, a
    /// separate process (the production profile refuses the in-process
    /// simulator); it ends with the suite.
    channel_sim: Option<ChannelSim>,
    /// The other simulators the `@routing` scenarios route among, by code.
    routing: Vec<(String, ChannelSim)>,
}

/// The `@routing` scenarios' channels beside the simulator: one that pays,
/// one that refuses every payment and payout, one that answers 503 to
/// everything (an outcome never known).
fn routing_sims() -> Result<Vec<(String, ChannelSim)>> {
    let settled = ["--settle-by-control"];
    Ok(vec![
        ("SIM-B".to_string(), ChannelSim::start(&settled)?),
        (
            "SIM-REFUSING".to_string(),
            ChannelSim::start_with_faults(&serde_json::json!({"refuse_percent": 100}), &settled)?,
        ),
        (
            "SIM-SILENT".to_string(),
            ChannelSim::start_with_faults(&serde_json::json!({"error_percent": 100}), &settled)?,
        ),
    ])
}

/// Every scenario but the `@routing` ones pays through the simulator
/// alone: the tables for its currencies name only it.
fn only_the_simulator(code: &str) -> Vec<payments_service::config::RoutingTableConfig> {
    use payments_service::domain::routing::table::{Candidate, RoutedDirection};
    ["THB", "BDT"]
        .into_iter()
        .flat_map(|currency| {
            [RoutedDirection::Deposit, RoutedDirection::Withdrawal].map(|direction| {
                payments_service::config::RoutingTableConfig {
                    currency: currency.into(),
                    direction,
                    merchant: None,
                    candidates: vec![Candidate::plain(code, 100)],
                }
            })
        })
        .collect()
}

pub fn start(start: Start) -> BoxFuture<'static, Result<Box<dyn InProcess>>> {
    Box::pin(async move {
        let profile = match start.profile {
            Profile::Sandbox => payments_service::Profile::Sandbox,
            Profile::Production => payments_service::Profile::Production,
        };
        let channel_sim = match start.channel_sim {
            true => Some(
                ChannelSim::start(&["--settle-by-control"])
                    .context("starting payments-channel-sim")?,
            ),
            false => None,
        };
        let channel = channel_sim.as_ref().map(ChannelSim::channel_config);
        let routing = match start.channel_sim {
            true => routing_sims().context("starting the routing scenarios' simulators")?,
            false => Vec::new(),
        };
        let routed: Vec<_> = routing
            .iter()
            .map(|(code, sim)| {
                sim.channel_config_as(&format!("chan-{}", code.to_lowercase()), code)
            })
            .collect();
        // Both run on the system clock plus an offset: the sandbox's API
        // moves it, and in production only the harness does
        // (`InProcess::advance_clock`, for the `@clock` scenarios), the
        // production profile serving no such operation.
        let clock: Arc<dyn Clock> = Arc::new(OffsetClock::default());
        // Production trusts the test CA and may call the suite's receivers
        // on `localhost`; every other internal address stays refused.
        let service = TestService::start_with(profile, clock, |c| {
            c.callback_worker = true;
            c.expiry_interval_seconds =
                payments_service::config::Config::defaults(profile).expiry_interval_seconds;
            if let Some(bundle) = start.callback_ca_bundle {
                c.callback_ca_bundle = Some(bundle);
                c.callback_allowed_private_hosts = vec!["localhost".into()];
            }
            // In place of the sandbox's in-process simulator, which
            // production refuses.
            if let Some(channel) = channel {
                c.routing.tables = only_the_simulator(&channel.code);
                c.channels = vec![channel];
                c.channels.extend(routed);
            }
            if let Some((url, secret)) = start.platform {
                c.platform_events_url = Some(url);
                c.platform_events_secret = Some(secret);
            }
        })
        .await?;
        Ok(Box::new(Started {
            service,
            channel_sim,
            routing,
        }) as Box<dyn InProcess>)
    })
}

impl InProcess for Started {
    fn base_url(&self) -> String {
        self.service.base_url()
    }

    fn new_merchant<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<NewMerchant>> {
        Box::pin(async move {
            let m = self.service.new_merchant(name).await?;
            Ok(NewMerchant {
                id: m.merchant.id,
                api_key: m.api_key,
            })
        })
    }

    fn operator(&self) -> (String, String) {
        (
            payments_testing::TEST_OPERATOR_TOKEN.to_string(),
            payments_testing::TEST_OPERATOR.to_string(),
        )
    }

    fn channel(&self) -> Option<ChannelSettings> {
        self.channel_sim.as_ref().map(|sim| ChannelSettings {
            url: sim.url.clone(),
            code: sim.channel_config().code,
            secret: sim.secret.clone(),
        })
    }

    fn routing_channels(&self) -> Vec<ChannelSettings> {
        self.routing
            .iter()
            .map(|(code, sim)| ChannelSettings {
                url: sim.url.clone(),
                code: code.clone(),
                secret: sim.secret.clone(),
            })
            .collect()
    }

    fn advance_clock(&self, seconds: i64) -> bool {
        let app = self.service.service.app();
        let moved = app.clock.advance_by(seconds);
        if moved {
            app.clock_moved();
        }
        moved
    }
}
