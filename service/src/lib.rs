//! The merchant payment service.
//!
//! The layers, lowest first (ARCHITECTURE.md draws them; a test in
//! `service/tests/module_cycles.rs` refuses an import that points up):
//! `clock`, `keys`, `telemetry` → `domain` (pure rules and values) → `config`,
//! `channels`, `ratelimit` → `store` (rows and queries) → `app` (use
//! cases) → `http`, `delivery`, `jobs` (how the world reaches the use
//! cases and how callbacks leave) → `server` (start-up).

pub mod app;
pub mod channels;
pub mod clock;
pub mod config;
pub mod delivery;
pub mod domain;
pub mod http;
pub mod jobs;
pub mod keys;
pub mod ratelimit;
pub mod server;
pub mod store;
pub mod telemetry;

pub use app::App;
pub use config::Config;
pub use domain::Profile;
