//! Content detection: the streaming UTF-8 check agrees with std whatever
//! the chunking, and type decisions never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use store_core::content::{decide, sniff, Utf8Check};

fuzz_target!(|data: (&[u8], u8, &str)| {
    let (bytes, cut, name) = data;
    let cut = usize::from(cut).min(bytes.len());
    let mut c = Utf8Check::new();
    c.push(&bytes[..cut]);
    c.push(&bytes[cut..]);
    assert_eq!(c.is_text(), std::str::from_utf8(bytes).is_ok() && !bytes.contains(&0));
    let _ = sniff(bytes);
    let t = decide(bytes, name, Some(name), c.is_text());
    assert!(http::HeaderValue::from_str(&t).is_ok(), "{t:?}");
});
