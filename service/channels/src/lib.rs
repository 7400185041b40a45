//! Payment channels: where a channel order's payer pays and who pays out
//! approved withdrawals. The sandbox has an in-process simulator; a real
//! channel is an adapter over HTTP (`http.rs`, `openapi/channel.json`).

pub mod child;
pub mod egress;
mod http;

// The layers below, under the names every module of this crate uses for
// them (`crate::domain::…`): Cargo lets this crate name nothing above it.
use payments_config as config;
use payments_domain as domain;
use payments_telemetry as telemetry;

use crate::config::ChannelConfig;
use crate::domain::fees::DirectionRates;
use crate::telemetry::metrics;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use http::HttpChannel;

/// A payment to collect for a channel deposit.
#[derive(Clone, Debug, PartialEq)]
pub struct PaymentAsk {
    pub order_no: String,
    pub amount: Decimal,
    pub currency: String,
    /// After this the order no longer takes the payment.
    pub expire_at: DateTime<Utc>,
    /// The merchant's page the channel's page links back to, if it gave one.
    pub return_url: Option<String>,
}

/// An approved withdrawal to pay out.
#[derive(Clone, PartialEq)]
pub struct PayoutAsk {
    pub order_no: String,
    pub amount: Decimal,
    pub currency: String,
    pub bank_code: String,
    pub account_no: String,
    pub account_holder: String,
}

impl std::fmt::Debug for PayoutAsk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A full account number never reaches a log line.
        let last4 = crate::domain::validate::last4(&self.account_no);
        f.debug_struct("PayoutAsk")
            .field("order_no", &self.order_no)
            .field("amount", &self.amount)
            .field("currency", &self.currency)
            .field("bank_code", &self.bank_code)
            .field("account_no", &format_args!("…{last4}"))
            .finish_non_exhaustive()
    }
}

/// What a channel answers when asked to collect a payment.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelPayment {
    pub channel_order_no: String,
    pub payment_url: String,
}

/// What a channel says of a payout it was asked about.
#[derive(Clone, Debug, PartialEq)]
pub enum PayoutState {
    /// Taken, not paid yet.
    Accepted { reference: String },
    /// Paid; `cost` (what the channel charged) when it says.
    Completed {
        reference: String,
        cost: Option<Decimal>,
    },
    /// It will not be paid.
    Failed { reason: String },
}

/// What a channel says of a payment it was asked about.
#[derive(Clone, Debug, PartialEq)]
pub enum PaymentState {
    /// Not paid yet: nothing to do.
    Waiting,
    /// The payer's payment was declined: the order is cancelled.
    Declined { channel_order_no: String },
    /// The payer's payment is found and will be confirmed.
    Matched { channel_order_no: String },
    /// Paid: `amount` is what the payer actually paid.
    Completed {
        channel_order_no: String,
        amount: Decimal,
        cost: Option<Decimal>,
    },
}

/// Why a channel call did not give its answer. The two are never confused:
/// only the channel's own word fails an order; anything else leaves the
/// outcome unknown, to be found out (asked again under the same order
/// number, which every call is idempotent on) before money moves.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChannelError {
    /// The channel answered, and said no.
    #[error("the channel refused: {reason}")]
    Refused { reason: String },
    /// No answer to trust: a timeout, a connection that broke off, a 5xx.
    /// The channel may have acted on the call.
    #[error("the channel's answer is unknown: {detail}")]
    Unknown { detail: String },
}

/// How a channel takes calls. Every call is idempotent per `order_no`: a
/// call repeated after an unknown outcome asks again, never twice.
#[async_trait::async_trait]
pub trait Channel: Send + Sync {
    /// What the configuration says of this channel: every kind is
    /// configured the same way, so what follows is read from it.
    fn config(&self) -> &ChannelConfig;
    fn id(&self) -> &str {
        &self.config().id
    }
    fn code(&self) -> &str {
        &self.config().code
    }
    fn name(&self) -> &str {
        &self.config().name
    }
    fn currencies(&self) -> &[String] {
        &self.config().currencies
    }
    /// What the channel charges the service, per direction.
    fn costs(&self) -> &DirectionRates {
        &self.config().costs
    }
    /// Registers a payment for `ask.order_no`.
    async fn create_payment(&self, ask: &PaymentAsk) -> Result<ChannelPayment, ChannelError>;
    /// Hands a payout to the channel; its reference once accepted.
    async fn dispatch_payout(&self, ask: &PayoutAsk) -> Result<String, ChannelError>;
    /// What the channel knows of the payout of `order_no`; `None` when it
    /// has no record of it (it never arrived: sending it again is safe).
    async fn inquire_payout(&self, order_no: &str) -> Result<Option<PayoutState>, ChannelError>;
    /// What the channel knows of the payment of `order_no`, for when its
    /// notification never came; `None` when it has no record of it.
    async fn inquire_payment(&self, order_no: &str) -> Result<Option<PaymentState>, ChannelError>;
}

/// The sandbox's channel: its payment page is served by the service itself,
/// and it accepts every call.
pub struct SimulatorChannel {
    config: ChannelConfig,
    public_base_url: String,
}

#[async_trait::async_trait]
impl Channel for SimulatorChannel {
    fn config(&self) -> &ChannelConfig {
        &self.config
    }
    async fn dispatch_payout(&self, ask: &PayoutAsk) -> Result<String, ChannelError> {
        Ok(format!("SIMPAY-{}", ask.order_no))
    }
    /// Every payout the simulator took stays accepted until the sandbox's
    /// API settles or fails it.
    async fn inquire_payout(&self, order_no: &str) -> Result<Option<PayoutState>, ChannelError> {
        Ok(Some(PayoutState::Accepted {
            reference: format!("SIMPAY-{order_no}"),
        }))
    }
    /// The simulator's payments are moved by the sandbox's own page and API,
    /// never behind the service's back: there is nothing to find out.
    async fn inquire_payment(&self, _order_no: &str) -> Result<Option<PaymentState>, ChannelError> {
        Ok(Some(PaymentState::Waiting))
    }
    async fn create_payment(&self, ask: &PaymentAsk) -> Result<ChannelPayment, ChannelError> {
        Ok(ChannelPayment {
            channel_order_no: format!("SIM-{}", ask.order_no),
            payment_url: format!(
                "{}/sandbox/simulator/pay/{}",
                self.public_base_url.trim_end_matches('/'),
                ask.order_no
            ),
        })
    }
}

/// Any channel, with every call it takes counted by outcome and timed
/// (`payments_channel_calls_total`, `payments_channel_call_duration_seconds`).
struct Measured(Arc<dyn Channel>);

impl Measured {
    async fn call<T>(
        &self,
        call: &'static str,
        answer: impl std::future::Future<Output = Result<T, ChannelError>>,
    ) -> Result<T, ChannelError> {
        let started = std::time::Instant::now();
        let result = answer.await;
        let outcome = match &result {
            Ok(_) => "accepted",
            Err(ChannelError::Refused { .. }) => "refused",
            Err(ChannelError::Unknown { .. }) => "unknown",
        };
        metrics::channel_call(self.0.code(), call, outcome, started.elapsed());
        result
    }
}

#[async_trait::async_trait]
impl Channel for Measured {
    fn config(&self) -> &ChannelConfig {
        self.0.config()
    }
    async fn create_payment(&self, ask: &PaymentAsk) -> Result<ChannelPayment, ChannelError> {
        self.call("create_payment", self.0.create_payment(ask))
            .await
    }
    async fn dispatch_payout(&self, ask: &PayoutAsk) -> Result<String, ChannelError> {
        self.call("dispatch_payout", self.0.dispatch_payout(ask))
            .await
    }
    async fn inquire_payout(&self, order_no: &str) -> Result<Option<PayoutState>, ChannelError> {
        self.call("inquire_payout", self.0.inquire_payout(order_no))
            .await
    }
    async fn inquire_payment(&self, order_no: &str) -> Result<Option<PaymentState>, ChannelError> {
        self.call("inquire_payment", self.0.inquire_payment(order_no))
            .await
    }
}

#[derive(Clone, Default)]
pub struct Channels(BTreeMap<String, Arc<dyn Channel>>);

impl Channels {
    pub fn from_config(
        configs: &[ChannelConfig],
        public_base_url: &str,
        profile: crate::domain::routing::Profile,
    ) -> anyhow::Result<Channels> {
        let mut out: Vec<Arc<dyn Channel>> = Vec::new();
        for c in configs {
            out.push(match c.kind.as_str() {
                "simulator" => Arc::new(SimulatorChannel {
                    config: c.clone(),
                    public_base_url: public_base_url.to_string(),
                }),
                "http" => Arc::new(HttpChannel::new(c, public_base_url, profile)?),
                other => anyhow::bail!("channel {}: unknown kind `{other}`", c.id),
            });
        }
        Ok(Channels::of(out))
    }

    /// Exactly these channels, by id (a test's own, in place of the
    /// configured ones).
    pub fn of(channels: impl IntoIterator<Item = Arc<dyn Channel>>) -> Channels {
        let measured = channels.into_iter().map(|c| {
            let c: Arc<dyn Channel> = Arc::new(Measured(c));
            (c.id().to_string(), c)
        });
        Channels(measured.collect())
    }

    /// Every channel, by id.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Channel>> {
        self.0.values()
    }

    /// The channel configured with this `code` (what notifications name).
    pub fn by_code(&self, code: &str) -> Option<Arc<dyn Channel>> {
        self.0.values().find(|c| c.code() == code).cloned()
    }

    pub fn get(&self, id: &str) -> Option<Arc<dyn Channel>> {
        self.0.get(id).cloned()
    }
}
