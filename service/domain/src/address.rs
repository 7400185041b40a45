//! Addresses: which are on the public internet (what the service's
//! outbound calls may reach without an operator saying otherwise), and who
//! sent a request that came through the operator's own proxies.

use ipnet::IpNet;
use std::net::IpAddr;

/// The address a request came from: the peer's, unless the peer is one of
/// the `trusted` proxies; then the rightmost address of `X-Forwarded-For`
/// that is not itself a trusted proxy (each proxy appends the address it
/// saw, so everything left of that may have been written by the client).
/// A header from an untrusted peer is never read.
pub fn client_address(peer: IpAddr, forwarded_for: Option<&str>, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let Some(header) = forwarded_for else {
        return peer;
    };
    let mut chain = Vec::new();
    for part in header.split(',') {
        match part.trim().parse::<IpAddr>() {
            Ok(ip) => chain.push(ip),
            // A hop that is not an address: nothing left of it is known.
            Err(_) => chain.clear(),
        }
    }
    chain
        .iter()
        .rev()
        .find(|ip| !is_trusted(ip))
        .or(chain.first())
        .copied()
        .unwrap_or(peer)
}

/// At most this many networks on one key's address allowlist.
pub const ALLOWLIST_MAX: usize = 32;

/// A key's address allowlist as given: each entry a network
/// (`203.0.113.0/24`, `2001:db8::/32`) or one address, normalised (host
/// bits cleared, an IPv4 address in IPv6 written as IPv4), without
/// repeats, in order. Empty: from anywhere. An entry that is neither is
/// refused, naming it.
pub fn allowlist(given: &[String]) -> Result<Vec<IpNet>, String> {
    if given.len() > ALLOWLIST_MAX {
        return Err(format!(
            "holds {} entries; at most {ALLOWLIST_MAX}",
            given.len()
        ));
    }
    let mut nets: Vec<IpNet> = Vec::new();
    for entry in given {
        let text = entry.trim();
        let net = match text.parse::<IpNet>() {
            Ok(net) => net,
            Err(_) => match text.parse::<IpAddr>() {
                Ok(ip) => IpNet::from(ip),
                Err(_) => return Err(format!("`{text}` is not an address or a network (CIDR)")),
            },
        };
        let net = match net {
            IpNet::V6(v6) => match (v6.addr().to_ipv4_mapped(), v6.prefix_len()) {
                (Some(v4), len) if len >= 96 => IpNet::new(IpAddr::V4(v4), len - 96)
                    .map_err(|_| format!("`{text}` is not a network"))?,
                _ => IpNet::V6(v6),
            },
            v4 => v4,
        }
        .trunc();
        if !nets.contains(&net) {
            nets.push(net);
        }
    }
    nets.sort();
    Ok(nets)
}

/// Whether `ip` may use a key whose allowlist is `nets` (empty: anywhere).
pub fn allows(nets: &[IpNet], ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    nets.is_empty() || nets.iter().any(|net| net.contains(&ip))
}

/// The `host:port` a callback URL is posted to, lowercased, with the
/// scheme's port when none is written: one receiver, whatever path or
/// spelling its merchants use. None for a URL without a host.
pub fn receiver_host(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
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
    fn an_allowlist_is_normalised_and_holds_what_it_names_only() {
        let given: Vec<String> = [
            "203.0.113.7/24",
            "198.51.100.5",
            "::ffff:192.0.2.1",
            "198.51.100.5/32",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let nets = allowlist(&given).unwrap();
        let shown: Vec<String> = nets.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["192.0.2.1/32", "198.51.100.5/32", "203.0.113.0/24"]);
        assert!(allows(&nets, "203.0.113.200".parse().unwrap()));
        assert!(allows(&nets, "::ffff:203.0.113.9".parse().unwrap()));
        assert!(!allows(&nets, "203.0.114.1".parse().unwrap()));
        assert!(!allows(&nets, "127.0.0.1".parse().unwrap()));
        assert!(allows(&[], "127.0.0.1".parse().unwrap()), "empty: anywhere");
        let bad = allowlist(&["10.0.0.0/33".to_string()]).unwrap_err();
        assert!(bad.contains("10.0.0.0/33"), "{bad}");
        assert!(allowlist(&vec!["10.0.0.1".to_string(); ALLOWLIST_MAX + 1]).is_err());
    }

    #[test]
    fn the_client_is_the_first_untrusted_hop_from_the_right() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        // Behind the operator's balancer: the address it saw.
        assert_eq!(
            client_address(ip("10.0.0.5"), Some("203.0.113.7"), &trusted),
            ip("203.0.113.7")
        );
        // What the client wrote itself is left of that, and ignored.
        assert_eq!(
            client_address(
                ip("10.0.0.5"),
                Some("1.2.3.4, 203.0.113.7, 10.0.0.9"),
                &trusted
            ),
            ip("203.0.113.7")
        );
        // From anyone else the header is the client's own word: not read.
        assert_eq!(
            client_address(ip("198.51.100.1"), Some("203.0.113.7"), &trusted),
            ip("198.51.100.1")
        );
        assert_eq!(
            client_address(ip("10.0.0.5"), None, &trusted),
            ip("10.0.0.5")
        );
        assert_eq!(
            client_address(ip("10.0.0.5"), Some("10.0.0.7"), &trusted),
            ip("10.0.0.7")
        );
        assert_eq!(
            client_address(ip("10.0.0.5"), Some("not an address"), &[]),
            ip("10.0.0.5")
        );
        assert_eq!(
            client_address(ip("10.0.0.5"), Some("garbage, 10.0.0.6"), &trusted),
            ip("10.0.0.6")
        );
    }

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

    #[test]
    fn a_receiver_is_its_host_and_port_whatever_the_spelling() {
        assert_eq!(
            receiver_host("https://Hooks.Example.com/a?b=1").as_deref(),
            Some("hooks.example.com:443")
        );
        assert_eq!(
            receiver_host("https://hooks.example.com:443/other").as_deref(),
            Some("hooks.example.com:443")
        );
        assert_eq!(
            receiver_host("http://[::1]:8080/x").as_deref(),
            Some("[::1]:8080")
        );
        assert_eq!(receiver_host("not a url"), None);
    }
}
