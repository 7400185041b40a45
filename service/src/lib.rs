//! The merchant payment service: start-up (`server`), over the crates that
//! hold its layers, lowest first (ARCHITECTURE.md draws them; each crate's
//! dependencies are the layer rule, so Cargo refuses a use that points up):
//!
//! `payments-domain` (rules and values, the clock) and `payments-telemetry`
//! → `payments-config` (settings, the master key) → `payments-channels`,
//! `payments-store` (rows and queries) → `payments-app` (use cases) →
//! `payments-http`, `payments-workers` (how the world reaches the use
//! cases and how callbacks leave) → this crate.
//!
//! The layers are re-exported under the names they had as modules, for the
//! in-process service (`payments-testing`) and the tests.

pub mod connections;
pub mod server;

pub use payments_app as app;
pub use payments_app::App;
pub use payments_channels as channels;
pub use payments_config as config;
pub use payments_config::{keys, Config};
pub use payments_domain as domain;
pub use payments_domain::{clock, ratelimit, Profile};
pub use payments_http as http;
pub use payments_store as store;
pub use payments_telemetry as telemetry;
pub use payments_workers::{delivery, jobs};
