//! The merchant payment service.
//!
//! Requests enter through `api` (the generated traits implemented), are
//! authenticated by `auth` (merchants) or `operator`, and are served by the
//! domain modules (`deposit`, `withdrawal`, `balance`, `merchant`), which
//! move orders only through `lifecycle` and money only through `ledger`,
//! and store through `db`.

pub mod api;
pub mod app;
pub mod auth;
pub mod balance;
pub mod bank;
pub mod callback;
pub mod cashier;
pub mod cashier_page;
pub mod channel;
pub mod clock;
pub mod config;
pub mod courier;
pub mod db;
pub mod delivery;
pub mod deposit;
pub mod error;
pub mod fees;
pub mod keys;
pub mod ledger;
pub mod lifecycle;
pub mod merchant;
pub mod money;
pub mod operator;
pub mod page;
pub mod ratelimit;
pub mod schedule;
pub mod server;
pub mod simulator;
pub mod status;
pub mod testing;
pub mod validate;
pub mod withdrawal;
pub mod workers;

pub use app::App;
pub use config::{Config, Profile};
