//! The service's outbound calls (callbacks to merchants, calls to channel
//! adapters) and what keeps them where they are meant to go: the address a
//! name resolves to is checked before any connection is made (a name that
//! resolves to an internal address is refused too), no proxy from the
//! environment is used (a proxy would resolve the name itself, and the
//! check would never see the address), and a failure is told in two words
//! to whoever does not run the service (`Failure`), in full to operators.

use crate::domain::address::is_public;
use std::net::{IpAddr, SocketAddr};

/// Why an outbound call got no answer, as people outside the service are
/// told it: a merchant reads this, never the detail, which may name an
/// internal address or host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    AddressNotAllowed,
    ConnectFailed,
    TlsFailed,
    Timeout,
}

impl Failure {
    pub const ALL: [Failure; 4] = [
        Failure::AddressNotAllowed,
        Failure::ConnectFailed,
        Failure::TlsFailed,
        Failure::Timeout,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Failure::AddressNotAllowed => "address not allowed",
            Failure::ConnectFailed => "connect failed",
            Failure::TlsFailed => "TLS failed",
            Failure::Timeout => "timeout",
        }
    }

    /// A reason for operators: the kind first, so that the coarse word can
    /// be read back from the stored text (`coarse`), then the detail.
    pub fn with_detail(self, detail: &str) -> String {
        format!("{}: {detail}", self.as_str())
    }
}

/// The words a merchant may read for an attempt's stored reason: its kind
/// when the reason starts with one, `connect failed` otherwise (a reason
/// stored before kinds were written, or one no kind fits).
pub fn coarse(reason: &str) -> &'static str {
    Failure::ALL
        .into_iter()
        .find(|f| reason.starts_with(f.as_str()))
        .unwrap_or(Failure::ConnectFailed)
        .as_str()
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
            Err(format!(
                "{}: {ip} is not a public address",
                Failure::AddressNotAllowed.as_str()
            ))
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
                    None => format!("{}: {host} has no address", Failure::ConnectFailed.as_str()),
                };
                return Err(reason.into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}
