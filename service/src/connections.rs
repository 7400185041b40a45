//! What the server's bound on connections (`connections_at_once`, in the
//! patched dropshot of `vendor/dropshot`) asks of the service: which
//! surface a connection past the shared ones may take a kept connection
//! of, and how many one address may hold. Hand-written: counters and
//! semaphores looked up per connection, which no crate offers for
//! dropshot's accept loop.

use crate::app::admission::Budget;
use crate::config::Config;
use crate::http::observe;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Connections kept for each surface, past the shared ones: a connection
/// takes one of its surface's (from its request line) when the shared are
/// all held, so a crowd on the pages leaves the payment API connections.
pub type Reserve = Arc<dyn Fn(&[u8]) -> Option<OwnedSemaphorePermit> + Send + Sync>;

pub fn surface_reserve(kept: usize) -> Reserve {
    let [payments, operators, pages] = [(); 3].map(|()| Arc::new(Semaphore::new(kept)));
    Arc::new(move |line: &[u8]| {
        // `METHOD SP request-target SP HTTP-version`; a line that is not
        // one is refused as any connection past the bound.
        let target = line.split(|b| *b == b' ').nth(1)?;
        let path = std::str::from_utf8(target).ok()?;
        let kept = match Budget::of_path(path) {
            Budget::Payments => &payments,
            Budget::Operators => &operators,
            Budget::Pages => &pages,
        };
        kept.clone().try_acquire_owned().ok()
    })
}

/// What a connection holds while open, or the bytes it is refused with.
pub type PerClient = Arc<dyn Fn(SocketAddr) -> Result<Box<dyn Send>, bytes::Bytes> + Send + Sync>;

/// At most `connections_per_address` connections from one address, except
/// from `trusted_proxies` (the load balancers, through which every client
/// is one address: they bound their clients themselves). None when 0.
pub fn per_address(config: &Config) -> Option<PerClient> {
    let most = config.connections_per_address;
    if most == 0 {
        return None;
    }
    let proxies = config.trusted_proxies.clone();
    let counts = Counts::new(most);
    Some(Arc::new(move |peer: SocketAddr| {
        let ip = peer.ip().to_canonical();
        if proxies.iter().any(|net| net.contains(&ip)) {
            return Ok(Box::new(()) as Box<dyn Send>);
        }
        match counts.take(ip) {
            Some(held) => Ok(Box::new(held) as Box<dyn Send>),
            None => Err(observe::address_refusal(most)),
        }
    }))
}

/// Connections open per address. An address is in the map only while it
/// holds a connection, so the map holds at most as many entries as the
/// server holds connections.
#[derive(Clone)]
struct Counts {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    most: usize,
}

/// One connection of `ip`, counted until dropped.
struct Held {
    counts: Counts,
    ip: IpAddr,
}

impl Counts {
    fn new(most: usize) -> Counts {
        Counts {
            open: Arc::new(Mutex::new(HashMap::new())),
            most,
        }
    }

    fn take(&self, ip: IpAddr) -> Option<Held> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_insert(0);
        if *n >= self.most {
            return None;
        }
        *n += 1;
        Some(Held {
            counts: self.clone(),
            ip,
        })
    }

    #[cfg(test)]
    fn of(&self, ip: IpAddr) -> usize {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(&ip).copied().unwrap_or(0)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.counts.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_at_most_its_share_and_leaves_the_map_when_it_holds_none() {
        let counts = Counts::new(2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let first = counts.take(a).unwrap();
        let second = counts.take(a).unwrap();
        assert!(counts.take(a).is_none(), "a third from the same address");
        assert!(counts.take(b).is_some(), "another address has its own");
        drop(first);
        assert_eq!(counts.of(a), 1);
        assert!(counts.take(a).is_some(), "a place freed serves again");
        drop(second);
        assert!(
            counts.open.lock().unwrap().is_empty(),
            "no address holds any"
        );
    }

    #[test]
    fn the_surface_reserve_reads_the_request_line() {
        let reserve = surface_reserve(1);
        let merchant = reserve(b"POST /api/v1/merchant/orders/deposit HTTP/1.1");
        assert!(merchant.is_some());
        assert!(reserve(b"POST /api/v1/merchant/orders/deposit HTTP/1.1").is_none());
        assert!(reserve(b"GET /api/v1/operator/withdrawals HTTP/1.1").is_some());
        assert!(reserve(b"GET /console/login HTTP/1.1").is_some());
        assert!(reserve(b"garbage").is_none(), "no request target");
    }
}
