//! The rules of the merchant interface that both sides of the wire must agree
//! on byte for byte: how a request or callback is signed, how amounts travel,
//! and which identifiers are acceptable; and how a channel's adapter and the
//! service sign what they send each other. The server and the generated client
//! both depend on this crate so that neither can drift from the other.

pub mod amount;
pub mod callback;
pub mod channel;
pub mod ids;
pub mod signature;

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod server;

pub use amount::{AmountNumber, DecimalString};
pub use ids::MerchantOrderNo;
pub use signature::{sign, verify, SigningFields, SigningFieldsError};
