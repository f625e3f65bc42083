//! Name, tag, file-name, ttl and time parsing: no panics, and whatever is
//! accepted obeys the rules it was checked against.
#![no_main]
use libfuzzer_sys::fuzz_target;
use store_core::{names, ttl, Limits, Timestamp};

const L: Limits = Limits::DEFAULT;

fuzz_target!(|s: &str| {
    if names::validate_memorable_name(&L, s).is_ok() {
        assert!((L.name_chars_min..=L.name_chars_max).contains(&s.len()));
        assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
    }
    if names::validate_tag(&L, s).is_ok() {
        assert!((L.tag_chars_min..=L.tag_chars_max).contains(&s.len()));
    }
    if names::validate_file_name(&L, s).is_ok() {
        assert!(!s.contains('/') && !s.contains('\\') && s != "." && s != "..");
        assert!(!s.chars().any(char::is_control));
    }
    if let Ok(secs) = ttl::parse_ttl(s) {
        assert!(secs > 0);
        let t = ttl::file_ttl(&L, Some(secs));
        assert!((L.file_ttl_min_secs..=L.file_ttl_max_secs).contains(&t));
    }
    if let Some(t) = Timestamp::parse(s) {
        let _ = t.to_string();
    }
    let tags: Vec<String> = s.split(',').map(String::from).collect();
    if let Ok(out) = names::apply_tags(&L, &[], &tags, &[]) {
        assert!(out.len() <= L.tags_per_object_max);
    }
});
