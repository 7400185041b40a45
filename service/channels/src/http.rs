//! A channel served by an adapter over HTTP (`openapi/channel.json`),
//! called through the generated client, every request signed with the
//! channel's secret. What the adapter answers is sorted into the two
//! outcomes the service acts on: a 422 `REFUSED` is the channel's own word;
//! anything else that is not a 2xx (a timeout, a broken connection, a 5xx,
//! and also a 400, 401 or 409, which say the two sides disagree, not that
//! the channel declined) leaves the outcome unknown.

use super::{
    Channel, ChannelError, ChannelPayment, PaymentAsk, PaymentState, PayoutAsk, PayoutState,
};
use crate::config::ChannelConfig;
use crate::domain::routing::Profile;
use crate::egress::AddressGuard;
use merchant_client::channel::types as wire;
use merchant_client::channel::{Client, Error, ResponseValue};
use std::time::Duration;

/// How long a call may take when the configuration does not say.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

pub struct HttpChannel {
    config: ChannelConfig,
    client: Client,
    /// Where this channel's adapter posts notifications.
    notify_url: String,
}

impl HttpChannel {
    /// The configuration was validated at start-up (`config/validate.rs`);
    /// what it cannot promise (a client that builds) is an error here.
    ///
    /// The client follows no redirect (a 3xx is an answer the protocol
    /// does not have, so the outcome is unknown: the call is never repeated
    /// somewhere else) and reads no proxy from the environment. In
    /// production it refuses a name that resolves to a private address,
    /// unless the channel is marked `private_network`.
    pub fn new(
        config: &ChannelConfig,
        public_base_url: &str,
        profile: Profile,
    ) -> anyhow::Result<HttpChannel> {
        let (Some(base_url), Some(secret)) = (&config.base_url, &config.secret) else {
            anyhow::bail!("channel {}: kind http needs base_url and secret", config.id);
        };
        let timeout =
            Duration::from_millis(config.request_timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
        let guard = AddressGuard {
            allow_private: profile == Profile::Sandbox || config.private_network,
            allowed_hosts: Vec::new(),
        };
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(std::sync::Arc::new(guard))
            .build()
            .map_err(|e| anyhow::anyhow!("channel {}: HTTP client: {e}", config.id))?;
        let credentials = merchant_client::ChannelSecret::new(secret.as_bytes().to_vec(), base_url);
        Ok(HttpChannel {
            config: config.clone(),
            client: Client::new_with_client(base_url, http, credentials),
            notify_url: format!(
                "{}/api/v1/channels/{}/notifications",
                public_base_url.trim_end_matches('/'),
                config.code
            ),
        })
    }
}

/// The adapter's answer, or which of the two outcomes it amounts to.
fn outcome<T>(
    result: Result<ResponseValue<T>, Error<wire::ChannelError>>,
) -> Result<T, ChannelError> {
    match result {
        Ok(answer) => Ok(answer.into_inner()),
        Err(Error::ErrorResponse(answer)) => {
            let status = answer.status().as_u16();
            let body = answer.into_inner();
            match (status, body.error_code) {
                (422, wire::ChannelErrorCode::Refused) => Err(ChannelError::Refused {
                    reason: body.message,
                }),
                (status, code) => Err(ChannelError::Unknown {
                    detail: format!("the adapter answered {status} {code}"),
                }),
            }
        }
        // A timeout, a connection refused or broken, a body that does not
        // parse: nothing the channel said.
        Err(other) => Err(ChannelError::Unknown {
            detail: match other.status() {
                Some(status) => format!("the adapter answered {status}"),
                None => format!("no answer from the adapter: {}", kind(&other)),
            },
        }),
    }
}

/// What went wrong, without the request (its URL holds no secret, but
/// the error's source chain may hold response bytes).
fn kind<E>(error: &Error<E>) -> &'static str {
    match error {
        Error::CommunicationError(e) if e.is_timeout() => "timed out",
        Error::CommunicationError(e) if e.is_connect() => "could not connect",
        Error::CommunicationError(_) => "the connection broke off",
        Error::InvalidResponsePayload(..) => "an answer that does not parse",
        Error::UnexpectedResponse(_) => "an answer the protocol does not have",
        _ => "the request could not be made",
    }
}

#[async_trait::async_trait]
impl Channel for HttpChannel {
    fn config(&self) -> &ChannelConfig {
        &self.config
    }

    async fn create_payment(&self, ask: &PaymentAsk) -> Result<ChannelPayment, ChannelError> {
        let request = wire::PaymentRequest {
            order_no: wire::OrderNo(ask.order_no.clone()),
            amount: payments_wire::DecimalString(ask.amount),
            currency_code: wire::CurrencyCode(ask.currency.clone()),
            notify_url: self.notify_url.clone(),
            expire_at: ask.expire_at,
            return_url: ask.return_url.clone(),
        };
        let payment = outcome(self.client.create_payment(&request).await)?;
        Ok(ChannelPayment {
            channel_order_no: payment.channel_order_no,
            payment_url: payment.payment_url,
        })
    }

    async fn dispatch_payout(&self, ask: &PayoutAsk) -> Result<String, ChannelError> {
        let request = wire::PayoutRequest {
            order_no: wire::OrderNo(ask.order_no.clone()),
            amount: payments_wire::DecimalString(ask.amount),
            currency_code: wire::CurrencyCode(ask.currency.clone()),
            bank_code: ask.bank_code.clone(),
            account_no: ask.account_no.clone(),
            account_holder: ask.account_holder.clone(),
            notify_url: self.notify_url.clone(),
        };
        let payout = outcome(self.client.dispatch_payout(&request).await)?;
        match payout.status {
            wire::PayoutStatus::Failed => Err(ChannelError::Refused {
                reason: payout
                    .failure_reason
                    .unwrap_or_else(|| "the channel reports the payout failed".into()),
            }),
            wire::PayoutStatus::Accepted | wire::PayoutStatus::Completed => {
                Ok(payout.payout_reference)
            }
        }
    }

    async fn inquire_payout(&self, order_no: &str) -> Result<Option<PayoutState>, ChannelError> {
        let asked = self
            .client
            .inquire_payout(&wire::OrderNo(order_no.to_string()))
            .await;
        let payout = match asked {
            Err(Error::ErrorResponse(answer))
                if answer.status().as_u16() == 404
                    && answer.error_code == wire::ChannelErrorCode::OrderNotFound =>
            {
                return Ok(None)
            }
            other => outcome(other)?,
        };
        Ok(Some(match payout.status {
            wire::PayoutStatus::Accepted => PayoutState::Accepted {
                reference: payout.payout_reference,
            },
            wire::PayoutStatus::Completed => PayoutState::Completed {
                reference: payout.payout_reference,
                cost: payout.channel_cost.map(|c| c.0),
            },
            wire::PayoutStatus::Failed => PayoutState::Failed {
                reason: payout
                    .failure_reason
                    .unwrap_or_else(|| "the channel reports the payout failed".into()),
            },
        }))
    }

    async fn inquire_payment(&self, order_no: &str) -> Result<Option<PaymentState>, ChannelError> {
        let asked = self
            .client
            .inquire_payment(&wire::OrderNo(order_no.to_string()))
            .await;
        let payment = match asked {
            Err(Error::ErrorResponse(answer))
                if answer.status().as_u16() == 404
                    && answer.error_code == wire::ChannelErrorCode::OrderNotFound =>
            {
                return Ok(None)
            }
            other => outcome(other)?,
        };
        Ok(Some(match (payment.status, payment.paid_amount) {
            (wire::PaymentStatus::Completed, Some(paid)) => PaymentState::Completed {
                channel_order_no: payment.channel_order_no,
                amount: paid.0,
                cost: payment.channel_cost.map(|c| c.0),
            },
            // Paid for an amount it does not say: not an answer to act on.
            (wire::PaymentStatus::Completed, None) => {
                return Err(ChannelError::Unknown {
                    detail: "the adapter reports a completed payment without paid_amount".into(),
                })
            }
            (wire::PaymentStatus::Matched, _) => PaymentState::Matched {
                channel_order_no: payment.channel_order_no,
            },
            (wire::PaymentStatus::Failed, _) => PaymentState::Declined {
                channel_order_no: payment.channel_order_no,
            },
            _ => PaymentState::Waiting,
        }))
    }
}
