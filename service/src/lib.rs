//! The merchant payment service.
//!
//! Requests enter through `api` (the generated trait implemented), are
//! authenticated by `auth`, and are served by the domain modules (`deposit`,
//! `balance`, `merchant`), which store through `db`.

pub mod api;
pub mod app;
pub mod auth;
pub mod balance;
pub mod channel;
pub mod clock;
pub mod config;
pub mod db;
pub mod deposit;
pub mod error;
pub mod keys;
pub mod merchant;
pub mod money;
pub mod server;
pub mod testing;
pub mod validate;

pub use app::App;
pub use config::{Config, Profile};
