//! The import address guard: URL parsing never panics, and an IPv4 address
//! is judged exactly like its mapped and NAT64 forms.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use store_fetch::{classify, guard::classify_v4};

fuzz_target!(|data: (u32, u128, &str)| {
    let (v4, v6, text) = data;
    let v4 = Ipv4Addr::from(v4);
    assert_eq!(classify(IpAddr::V6(v4.to_ipv6_mapped())), classify_v4(v4));
    let nat64 = Ipv6Addr::from((0x0064_ff9b_u128 << 96) | u128::from(u32::from(v4)));
    assert_eq!(classify(IpAddr::V6(nat64)), classify_v4(v4));
    let _ = classify(IpAddr::V6(Ipv6Addr::from(v6)));
    if let Ok(u) = url::Url::parse(text) {
        if let Some(url::Host::Ipv4(ip)) = u.host() {
            let _ = classify_v4(ip);
        }
    }
});
