//! Which addresses import may connect to. The check runs on resolved IP
//! addresses, never on URL text, so every spelling of an address
//! (`2130706433`, `0x7f000001`, `127.1`, `[::ffff:127.0.0.1]`) meets it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// What an address is, for import's purposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrClass {
    /// Globally routable: import may connect.
    Global,
    /// Loopback, private (RFC 1918, ULA) or shared (CGNAT): only with
    /// STORE_IMPORT_ALLOW_PRIVATE=1, for tests.
    Private,
    /// Never: unspecified, link-local (with the cloud metadata address),
    /// multicast, broadcast, reserved, documentation, benchmarking, and
    /// IPv6 forms whose embedded IPv4 cannot be checked (Teredo).
    Forbidden,
}

fn v4_in(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn v6_in(ip: Ipv6Addr, net: Ipv6Addr, prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    (u128::from(ip) & mask) == (u128::from(net) & mask)
}

pub fn classify_v4(ip: Ipv4Addr) -> AddrClass {
    use AddrClass::*;
    const TABLE: &[([u8; 4], u32, AddrClass)] = &[
        ([0, 0, 0, 0], 8, Forbidden),       // "this network", unspecified
        ([10, 0, 0, 0], 8, Private),        // RFC 1918
        ([100, 64, 0, 0], 10, Private),     // CGNAT shared space
        ([127, 0, 0, 0], 8, Private),       // loopback
        ([169, 254, 0, 0], 16, Forbidden),  // link-local, cloud metadata
        ([172, 16, 0, 0], 12, Private),     // RFC 1918
        ([192, 0, 0, 0], 24, Forbidden),    // IETF protocol assignments
        ([192, 0, 2, 0], 24, Forbidden),    // TEST-NET-1
        ([192, 88, 99, 0], 24, Forbidden),  // 6to4 relay anycast
        ([192, 168, 0, 0], 16, Private),    // RFC 1918
        ([198, 18, 0, 0], 15, Forbidden),   // benchmarking
        ([198, 51, 100, 0], 24, Forbidden), // TEST-NET-2
        ([203, 0, 113, 0], 24, Forbidden),  // TEST-NET-3
        ([224, 0, 0, 0], 4, Forbidden),     // multicast
        ([240, 0, 0, 0], 4, Forbidden),     // reserved, and broadcast
    ];
    TABLE
        .iter()
        .find(|(net, prefix, _)| v4_in(ip, *net, *prefix))
        .map_or(Global, |(_, _, class)| *class)
}

pub fn classify_v6(ip: Ipv6Addr) -> AddrClass {
    use AddrClass::*;
    let seg = ip.segments();
    // Forms that embed an IPv4 address are judged by that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4); // ::ffff:a.b.c.d
    }
    if v6_in(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return classify_v4(Ipv4Addr::from(u128::from(ip) as u32)); // NAT64
    }
    if v6_in(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        let v4 = Ipv4Addr::new(
            (seg[1] >> 8) as u8,
            seg[1] as u8,
            (seg[2] >> 8) as u8,
            seg[2] as u8,
        );
        return match classify_v4(v4) {
            Global => Global,
            _ => Forbidden, // 6to4 towards a private address: no reason to allow
        };
    }
    if ip.is_loopback() {
        return Private; // ::1
    }
    const TABLE: &[(Ipv6Addr, u32, AddrClass)] = &[
        (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96, Forbidden), // ::/96: unspecified, IPv4-compatible
        (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, Forbidden), // discard-only
        (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, Forbidden), // Teredo
        (Ipv6Addr::new(0x2001, 0x2, 0, 0, 0, 0, 0, 0), 48, Forbidden), // benchmarking
        (Ipv6Addr::new(0x2001, 0x10, 0, 0, 0, 0, 0, 0), 28, Forbidden), // ORCHID
        (Ipv6Addr::new(0x2001, 0x20, 0, 0, 0, 0, 0, 0), 28, Forbidden), // ORCHIDv2
        (
            Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
            32,
            Forbidden,
        ), // documentation
        (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, Forbidden), // documentation (2024)
        (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, Private), // unique local
        (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, Forbidden), // link-local
        (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, Forbidden), // site-local (deprecated)
        (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, Forbidden), // multicast
    ];
    if let Some((_, _, class)) = TABLE.iter().find(|(net, p, _)| v6_in(ip, *net, *p)) {
        return *class;
    }
    // Only 2000::/3 is global unicast; the rest is unassigned or special.
    if v6_in(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        Global
    } else {
        Forbidden
    }
}

pub fn classify(ip: IpAddr) -> AddrClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Which addresses and ports import may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// Global addresses on ports 80 and 443 (the default).
    PublicOnly,
    /// Also loopback and private addresses, on any port
    /// (STORE_IMPORT_ALLOW_PRIVATE=1, for tests). Forbidden ranges stay
    /// forbidden.
    AllowPrivate,
    /// Exactly these socket addresses and nothing else (in-process tests).
    Exactly(Vec<SocketAddr>),
}

/// The full guard: the policy, plus addresses that are never fetched
/// whatever the policy says (the service's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub policy: Policy,
    /// The service's own listening address and base URL host addresses.
    pub own: Vec<SocketAddr>,
}

/// An IPv4-mapped IPv6 address is the IPv4 address it carries.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl Guard {
    /// Whether a connection to `addr` would reach the service itself: one
    /// of its own addresses, in any spelling (`[::ffff:127.0.0.1]` is
    /// 127.0.0.1), and, when it listens on a wildcard address, every
    /// loopback address (all of 127.0.0.0/8 and ::1) on its port.
    pub fn is_own(&self, addr: SocketAddr) -> bool {
        let ip = canonical(addr.ip());
        self.own.iter().any(|own| {
            let own_ip = canonical(own.ip());
            own.port() == addr.port()
                && (own_ip == ip
                    || own_ip.is_unspecified() && (ip.is_loopback() || ip.is_unspecified()))
        })
    }

    pub fn allows(&self, addr: SocketAddr) -> bool {
        if self.is_own(addr) {
            return false;
        }
        match &self.policy {
            Policy::PublicOnly => {
                classify(addr.ip()) == AddrClass::Global && matches!(addr.port(), 80 | 443)
            }
            Policy::AllowPrivate => classify(addr.ip()) != AddrClass::Forbidden,
            Policy::Exactly(list) => list.contains(&addr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use AddrClass::*;

    #[test]
    fn address_table() {
        for (addr, want) in [
            ("8.8.8.8", Global),
            ("1.1.1.1", Global),
            ("93.184.216.34", Global),
            ("2001:4860:4860::8888", Global),
            ("2606:4700:4700::1111", Global),
            ("127.0.0.1", Private),
            ("127.255.255.254", Private),
            ("::1", Private),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Private),
            ("100.127.255.255", Private),
            ("fc00::1", Private),
            ("fd12:3456::1", Private),
            ("172.32.0.1", Global),
            ("100.128.0.1", Global),
            ("0.0.0.0", Forbidden),
            ("::", Forbidden),
            ("169.254.169.254", Forbidden),
            ("169.254.1.1", Forbidden),
            ("fe80::1", Forbidden),
            ("198.18.0.1", Forbidden),
            ("198.19.255.255", Forbidden),
            ("224.0.0.1", Forbidden),
            ("239.255.255.250", Forbidden),
            ("ff02::1", Forbidden),
            ("255.255.255.255", Forbidden),
            ("240.0.0.1", Forbidden),
            ("192.0.2.1", Forbidden),
            ("198.51.100.7", Forbidden),
            ("203.0.113.9", Forbidden),
            ("2001:db8::1", Forbidden),
            ("192.0.0.8", Forbidden),
            ("::ffff:127.0.0.1", Private),
            ("::ffff:169.254.169.254", Forbidden),
            ("::ffff:8.8.8.8", Global),
            ("64:ff9b::7f00:1", Private),
            ("64:ff9b::a9fe:a9fe", Forbidden),
            ("64:ff9b::808:808", Global),
            ("2002:7f00:1::", Forbidden),
            ("2002:a9fe:a9fe::", Forbidden),
            ("2002:808:808::1", Global),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Forbidden),
            ("::127.0.0.1", Forbidden),
            ("4000::1", Forbidden),
        ] {
            let ip: IpAddr = addr.parse().unwrap();
            assert_eq!(classify(ip), want, "{addr}");
        }
    }

    #[test]
    fn policies() {
        let public = Guard {
            policy: Policy::PublicOnly,
            own: vec![],
        };
        assert!(public.allows("8.8.8.8:443".parse().unwrap()));
        assert!(public.allows("8.8.8.8:80".parse().unwrap()));
        assert!(
            !public.allows("8.8.8.8:22".parse().unwrap()),
            "other ports are refused"
        );
        assert!(!public.allows("127.0.0.1:80".parse().unwrap()));
        let private = Guard {
            policy: Policy::AllowPrivate,
            own: vec!["127.0.0.1:8080".parse().unwrap()],
        };
        assert!(private.allows("127.0.0.1:9999".parse().unwrap()));
        assert!(
            !private.allows("127.0.0.1:8080".parse().unwrap()),
            "never the service itself"
        );
        assert!(
            !private.allows("169.254.169.254:80".parse().unwrap()),
            "metadata stays forbidden"
        );
        let exact = Guard {
            policy: Policy::Exactly(vec!["127.0.0.1:1234".parse().unwrap()]),
            own: vec![],
        };
        assert!(exact.allows("127.0.0.1:1234".parse().unwrap()));
        assert!(!exact.allows("127.0.0.2:1234".parse().unwrap()));
        assert!(!exact.allows("8.8.8.8:443".parse().unwrap()));
    }

    #[test]
    fn the_service_itself_is_refused_in_every_spelling() {
        let on_loopback = Guard {
            policy: Policy::AllowPrivate,
            own: vec!["127.0.0.1:8080".parse().unwrap()],
        };
        for own in ["127.0.0.1:8080", "[::ffff:127.0.0.1]:8080"] {
            assert!(!on_loopback.allows(own.parse().unwrap()), "{own}");
        }
        // Bound to 127.0.0.1 alone, 127.0.0.2 is another host.
        assert!(on_loopback.allows("127.0.0.2:8080".parse().unwrap()));
        let on_wildcard = Guard {
            policy: Policy::AllowPrivate,
            own: vec!["0.0.0.0:8080".parse().unwrap()],
        };
        for own in [
            "127.0.0.1:8080",
            "127.0.0.2:8080",
            "127.255.255.254:8080",
            "[::1]:8080",
            "[::ffff:127.0.0.1]:8080",
            "[::ffff:127.9.9.9]:8080",
        ] {
            assert!(!on_wildcard.allows(own.parse().unwrap()), "{own}");
        }
        assert!(on_wildcard.allows("127.0.0.2:8081".parse().unwrap()));
        let on_v6_wildcard = Guard {
            policy: Policy::AllowPrivate,
            own: vec!["[::]:8080".parse().unwrap()],
        };
        assert!(!on_v6_wildcard.allows("127.0.0.5:8080".parse().unwrap()));
        assert!(!on_v6_wildcard.allows("[::1]:8080".parse().unwrap()));
    }

    proptest! {
        /// An IPv4 address is blocked exactly when its mapped and NAT64
        /// forms are.
        #[test]
        fn embedded_forms_agree(bits in any::<u32>()) {
            let v4 = Ipv4Addr::from(bits);
            let mapped = v4.to_ipv6_mapped();
            let nat64 = Ipv6Addr::from((0x0064_ff9b_u128 << 96) | u128::from(bits));
            prop_assert_eq!(classify_v6(mapped), classify_v4(v4));
            prop_assert_eq!(classify_v6(nat64), classify_v4(v4));
            let public = Guard { policy: Policy::PublicOnly, own: vec![] };
            let a = public.allows(SocketAddr::new(IpAddr::V4(v4), 443));
            prop_assert_eq!(a, public.allows(SocketAddr::new(IpAddr::V6(mapped), 443)));
            prop_assert_eq!(a, public.allows(SocketAddr::new(IpAddr::V6(nat64), 443)));
        }
    }
}
