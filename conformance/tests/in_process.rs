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
                c.channels = vec![channel];
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

    fn advance_clock(&self, seconds: i64) -> bool {
        let app = self.service.service.app();
        let moved = app.clock.advance_by(seconds);
        if moved {
            app.clock_moved();
        }
        moved
    }
}
