//! The outbound HTTP client that posts callbacks, apart from the worker
//! that decides what to post: no redirects, https only and no private
//! addresses in production (checked on the address a name resolves to),
//! an extra CA bundle when configured.

use crate::app::{CallbackPost, PostFailure};
use crate::config::Config;
use anyhow::{Context, Result};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Posts callbacks: no redirects, https only and no private addresses in
/// production, an extra CA bundle when configured.
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
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("bad callback URL: {e}"))?;
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
            Err(e) => Err(describe(&e.without_url()).into()),
        }
    }
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

/// Refuses loopback, private, link-local, metadata and other non-public
/// addresses unless configuration allows them, at resolution time, so a
/// name that resolves to an internal address is refused too.
#[derive(Clone, Debug)]
pub struct AddressGuard {
    pub allow_private: bool,
    /// Lower-case names exempt from the check.
    pub allowed_hosts: Vec<String>,
}

impl AddressGuard {
    pub fn check(&self, host: &str, ip: IpAddr) -> Result<(), String> {
        let exempt = || {
            self.allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
        };
        if self.allow_private || is_public(ip) || exempt() {
            Ok(())
        } else {
            Err(format!("refused to call a non-public address ({ip})"))
        }
    }
}

impl reqwest::dns::Resolve for AddressGuard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| guard.check(&host, a.ip()).is_ok())
                .collect();
            if allowed.is_empty() {
                let reason = match found.first() {
                    Some(a) => guard.check(&host, a.ip()).err().unwrap_or_default(),
                    None => format!("{host} has no address"),
                };
                return Err(reason.into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local() // 169.254/16, cloud metadata included
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared address space
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local, fd00:ec2::254 included
                || (first & 0xffc0) == 0xfe80) // link-local
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
