//! The background work: the callback delivery worker (`delivery`) and the
//! jobs (`jobs`: expiry, dispatch, inquiries, billing).

pub mod delivery;
pub mod jobs;

// The layers below, under the names every module of this crate uses for
// them (`crate::domain::…`): Cargo lets this crate name nothing above it.
use payments_app as app;
use payments_channels as channels;
use payments_config as config;
use payments_domain as domain;
use payments_telemetry as telemetry;
