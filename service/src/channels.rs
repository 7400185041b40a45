//! Payment channels: where a channel order's payer pays. The sandbox has a
//! simulator; real channels plug in behind the same trait.

use crate::config::ChannelConfig;
use crate::domain::fees::DirectionRates;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a channel answers when asked to collect a payment.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelPayment {
    pub channel_order_no: String,
    pub payment_url: String,
}

pub trait Channel: Send + Sync {
    fn id(&self) -> &str;
    fn code(&self) -> &str;
    fn name(&self) -> &str;
    fn currencies(&self) -> &[String];
    /// What the channel charges the service, per direction.
    fn costs(&self) -> &DirectionRates;
    /// Registers a payment for `order_no`. Must be idempotent per
    /// `order_no`: a retried create asks again.
    fn create_payment(&self, order_no: &str) -> ChannelPayment;
    /// Hands a payout to the channel and returns the channel's reference.
    /// Must be idempotent per `order_no`: a retried dispatch asks again.
    fn dispatch_payout(&self, order_no: &str) -> String;
}

/// The sandbox's channel: its payment page is served by the service itself.
pub struct SimulatorChannel {
    config: ChannelConfig,
    public_base_url: String,
}

impl Channel for SimulatorChannel {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn code(&self) -> &str {
        &self.config.code
    }
    fn name(&self) -> &str {
        &self.config.name
    }
    fn currencies(&self) -> &[String] {
        &self.config.currencies
    }
    fn costs(&self) -> &DirectionRates {
        &self.config.costs
    }
    fn dispatch_payout(&self, order_no: &str) -> String {
        format!("SIMPAY-{order_no}")
    }
    fn create_payment(&self, order_no: &str) -> ChannelPayment {
        ChannelPayment {
            channel_order_no: format!("SIM-{order_no}"),
            payment_url: format!(
                "{}/sandbox/simulator/pay/{order_no}",
                self.public_base_url.trim_end_matches('/')
            ),
        }
    }
}

#[derive(Clone, Default)]
pub struct Channels(BTreeMap<String, Arc<dyn Channel>>);

impl Channels {
    pub fn from_config(
        configs: &[ChannelConfig],
        public_base_url: &str,
    ) -> anyhow::Result<Channels> {
        let mut out = BTreeMap::new();
        for c in configs {
            let channel: Arc<dyn Channel> = match c.kind.as_str() {
                "simulator" => Arc::new(SimulatorChannel {
                    config: c.clone(),
                    public_base_url: public_base_url.to_string(),
                }),
                other => anyhow::bail!("channel {}: unknown kind `{other}`", c.id),
            };
            out.insert(c.id.clone(), channel);
        }
        Ok(Channels(out))
    }

    /// The first channel that collects `currency`.
    pub fn for_currency(&self, currency: &str) -> Option<Arc<dyn Channel>> {
        self.0
            .values()
            .find(|c| c.currencies().iter().any(|x| x == currency))
            .cloned()
    }

    pub fn get(&self, id: &str) -> Option<Arc<dyn Channel>> {
        self.0.get(id).cloned()
    }
}
