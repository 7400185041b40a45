//! The outbound HTTP client that posts callbacks, apart from the worker
//! that decides what to post: no redirects, no proxy from the environment,
//! https only and no private addresses in production (checked on the
//! address a name resolves to, `channels::egress`), an extra CA bundle
//! when configured.

use crate::app::{CallbackPost, PostFailure};
use crate::channels::egress::{AddressGuard, Failure};
use crate::config::Config;
use anyhow::{Context, Result};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// Posts callbacks: no redirects, no proxy, https only and no private
/// addresses in production, an extra CA bundle when configured.
#[derive(Clone)]
pub struct Courier {
    client: reqwest::Client,
    guard: AddressGuard,
}

impl Courier {
    pub fn new(config: &Config) -> Result<Courier> {
        let guard = AddressGuard {
            allow_private: config.callback_allow_private_addresses,
            allowed_hosts: config
                .callback_allowed_private_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
        };
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy resolves the merchant's host itself, so the guard
            // would never see the address: `HTTP(S)_PROXY` is not read.
            .no_proxy()
            .https_only(config.profile == crate::domain::routing::Profile::Production)
            .dns_resolver(Arc::new(guard.clone()))
            .user_agent("payments-callbacks/0.1");
        if let Some(path) = &config.callback_ca_bundle {
            let pem = std::fs::read(path)
                .with_context(|| format!("reading callback CA bundle {}", path.display()))?;
            for cert in reqwest::Certificate::from_pem_bundle(&pem)
                .with_context(|| format!("parsing callback CA bundle {}", path.display()))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        Ok(Courier {
            client: builder
                .build()
                .context("building the callback HTTP client")?,
            guard,
        })
    }
}

#[async_trait::async_trait]
impl CallbackPost for Courier {
    async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &str,
        timeout: Duration,
    ) -> Result<u16, PostFailure> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| Failure::ConnectFailed.with_detail(&format!("bad callback URL: {e}")))?;
        // A literal address never reaches the resolver: check it here.
        if let Some(host) = parsed.host_str() {
            if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
                self.guard.check(host, ip)?;
            }
        }
        let mut request = self
            .client
            .post(parsed)
            .timeout(timeout)
            .header("content-type", "application/json")
            .body(body.to_string());
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        match request.send().await {
            Ok(response) => Ok(response.status().as_u16()),
            Err(e) if e.is_timeout() => Err(PostFailure {
                reason: format!("timeout after {} s", timeout.as_secs()),
                timed_out: true,
            }),
            Err(e) => Err(failure(&describe(&e.without_url())).into()),
        }
    }
}

/// A failed request's reason, its kind first (`egress::coarse` reads it
/// back for merchants): the guard's refusal from inside the resolver, a
/// handshake, or any other failure to connect.
fn failure(detail: &str) -> String {
    let lower = detail.to_ascii_lowercase();
    let kind = if detail.contains(Failure::AddressNotAllowed.as_str()) {
        Failure::AddressNotAllowed
    } else if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake")
    {
        Failure::TlsFailed
    } else {
        Failure::ConnectFailed
    };
    kind.with_detail(detail)
}

/// The error chain of a failed request. The URL is left out: the delivery
/// record names it, and a receiver's URL may carry its own secret, which
/// must not reach a log line through this text.
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
