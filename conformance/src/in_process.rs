//! The service started inside the suite's own process, for the workspace's
//! test runs. The suite names no crate of the service: the test target that
//! runs it in process (`conformance/tests/conformance.rs`) hands the
//! harness a `Starter`, so that QA's runner, which only ever goes against a
//! deployment, builds without the service.

use crate::settings::{ChannelSettings, Profile};
use anyhow::Result;
use futures::future::BoxFuture;
use std::sync::OnceLock;

/// What the harness asks of a service it starts.
#[derive(Clone, Debug)]
pub struct Start {
    pub profile: Profile,
    /// The CA (a PEM file) the suite's https receivers are signed by, for
    /// production.
    pub callback_ca_bundle: Option<std::path::PathBuf>,
    /// The platform receiver's URL and the secret platform events are
    /// signed with.
    pub platform: Option<(String, String)>,
    /// Pay through `payments-channel-sim` in its own process rather than the
    /// sandbox's in-process simulator.
    pub channel_sim: bool,
}

/// A merchant the service under test made for one scenario.
#[derive(Clone, Debug)]
pub struct NewMerchant {
    pub id: String,
    pub api_key: String,
}

/// A running in-process service, as the harness drives it.
pub trait InProcess: Send + Sync {
    fn base_url(&self) -> String;
    fn new_merchant<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<NewMerchant>>;
    /// An operator token the service accepts, and the name it stands for.
    fn operator(&self) -> (String, String);
    /// The channel simulator the service pays through, if it started one.
    fn channel(&self) -> Option<ChannelSettings>;
    /// The other simulators the `@routing` scenarios route among, by code.
    fn routing_channels(&self) -> Vec<ChannelSettings> {
        Vec::new()
    }
    /// Moves the service's clock `seconds` forward and wakes its workers,
    /// as the sandbox's clock operation does; a production service started
    /// in process runs on a clock only its harness can move. Whether it
    /// moved.
    fn advance_clock(&self, seconds: i64) -> bool;
}

/// Starts the service for a run.
pub type Starter = fn(Start) -> BoxFuture<'static, Result<Box<dyn InProcess>>>;

static STARTER: OnceLock<Starter> = OnceLock::new();

/// Lets the harness start the service in process when no deployment is
/// named; called once, before the suite runs.
pub fn provide(starter: Starter) {
    let _ = STARTER.set(starter);
}

pub(crate) fn starter() -> Option<Starter> {
    STARTER.get().copied()
}
