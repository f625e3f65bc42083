//! Who the client is: the peer address, or, behind a trusted proxy, the
//! rightmost untrusted address of X-Forwarded-For. Rate limits key on it,
//! with IPv6 clients bucketed by /64 (one subscriber's whole allocation).

use std::net::{IpAddr, Ipv6Addr};

use http::HeaderMap;

/// An address block, `10.0.0.0/8` or a single address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `a.b.c.d`, `a.b.c.d/n`, `x::y` or `x::y/n`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("{text:?} is not an IP address or CIDR"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{text:?} has an invalid prefix length"))?,
        };
        Ok(Self { addr, prefix })
    }

    /// Whether `ip` lies in this block (an IPv4-mapped IPv6 address counts
    /// as its IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u32::MAX << (32 - self.prefix)
                };
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u128::MAX << (128 - self.prefix)
                };
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// IPv4-mapped IPv6 addresses are the IPv4 client they carry.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The client's address. X-Forwarded-For is read only when the peer is a
/// trusted proxy, from the right: the first address that is not itself a
/// trusted proxy is the client (everything left of it could be forged).
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[Cidr]) -> IpAddr {
    let peer = canonical(peer);
    let is_trusted = |ip: IpAddr| trusted.iter().any(|c| c.contains(ip));
    if !is_trusted(peer) {
        return peer;
    }
    let hops: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|s| s.trim().parse::<IpAddr>().ok())
        .map(canonical)
        .collect();
    hops.into_iter()
        .rev()
        .find(|ip| !is_trusted(*ip))
        .unwrap_or(peer)
}

/// The rate-limit bucket of an address: IPv4 as is, IPv6 by its /64.
pub fn rate_key(ip: IpAddr) -> IpAddr {
    match canonical(ip) {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64))),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xff(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", v.parse().unwrap());
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn cidrs() {
        let c = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(c.contains(ip("10.2.3.4")));
        assert!(c.contains(ip("::ffff:10.2.3.4")));
        assert!(!c.contains(ip("11.0.0.1")));
        assert!(Cidr::parse("192.168.1.5")
            .unwrap()
            .contains(ip("192.168.1.5")));
        assert!(Cidr::parse("fd00::/8").unwrap().contains(ip("fd12::1")));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert!(Cidr::parse("nope").is_err());
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let trusted = [Cidr::parse("10.0.0.0/8").unwrap()];
        // From an untrusted peer the header changes nothing.
        assert_eq!(
            client_ip(ip("203.0.113.5"), &xff("1.2.3.4"), &trusted),
            ip("203.0.113.5")
        );
        // From a trusted proxy: the rightmost untrusted hop.
        assert_eq!(
            client_ip(ip("10.0.0.1"), &xff("1.2.3.4, 5.6.7.8"), &trusted),
            ip("5.6.7.8")
        );
        assert_eq!(
            client_ip(ip("10.0.0.1"), &xff("6.6.6.6, 5.6.7.8, 10.0.0.9"), &trusted),
            ip("5.6.7.8")
        );
        assert_eq!(
            client_ip(ip("10.0.0.1"), &xff("garbage"), &trusted),
            ip("10.0.0.1")
        );
        assert_eq!(
            client_ip(ip("10.0.0.1"), &HeaderMap::new(), &trusted),
            ip("10.0.0.1")
        );
        assert_eq!(
            client_ip(ip("10.0.0.1"), &xff("1.2.3.4"), &[]),
            ip("10.0.0.1"),
            "no trusted proxies: never"
        );
    }

    #[test]
    fn ipv6_clients_share_their_64() {
        assert_eq!(rate_key(ip("2001:db8:1:2:3:4:5:6")), ip("2001:db8:1:2::"));
        assert_eq!(
            rate_key(ip("2001:db8:1:2:ffff::1")),
            rate_key(ip("2001:db8:1:2::9"))
        );
        assert_ne!(
            rate_key(ip("2001:db8:1:3::1")),
            rate_key(ip("2001:db8:1:2::1"))
        );
        assert_eq!(rate_key(ip("::ffff:1.2.3.4")), ip("1.2.3.4"));
    }
}
