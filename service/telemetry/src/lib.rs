//! What the service tells the people who run it: Prometheus metrics
//! (`metrics`), log lines in JSON or text (`logs`), worker heartbeats
//! (`heartbeat`) and the masking of secrets in what is logged (`redact`).
//!
//! The lowest layer, beside `clock` and `keys`: it names no other module of
//! the service. Callers hand it plain values (a kind, a currency, a status
//! as text), so every label it records comes from a bounded set and no
//! order number, merchant or key ever becomes one.

pub mod heartbeat;
pub mod logs;
pub mod metrics;
pub mod redact;
