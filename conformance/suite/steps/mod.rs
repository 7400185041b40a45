//! Step definitions, one module per area of the contract.

mod balance;
mod bank;
mod billing;
mod callbacks;
mod cashier;
mod cashier_page;
mod changes;
mod channel;
mod common;
mod console;
mod deposit;
mod envelope;
mod expiry;
mod keys;
mod merchants;
mod money;
mod operations;
mod owners;
mod people;
mod reconciliation;
mod routing;
mod signing;
mod suspension;
mod webhooks;

pub use common::PaymentsWorld;
