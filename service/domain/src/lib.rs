//! The rules and values of payments, with no I/O: money, statuses, the
//! lifecycle tables and the callback each move sends, fees, routing,
//! PromptPay payloads, the retry discipline and the errors a client can
//! cause. Nothing here knows a connection, a request or `App`.

pub mod address;
pub mod billing;
pub mod clock;
pub mod error;
pub mod events;
pub mod fees;
pub mod four_eyes;
pub mod lifecycle;
pub mod money;
pub mod people;
pub mod promptpay;
pub mod ratelimit;
pub mod routing;
pub mod schedule;
pub mod status;
pub mod status_sql;
pub mod validate;

pub use routing::Profile;
