//! Name, tag, file-name, ttl and time parsing: no panics, and whatever is
//! accepted obeys the rules it was checked against.
#![no_main]
use libfuzzer_sys::fuzz_target;
use store_core::{limits, names, ttl, Timestamp};

fuzz_target!(|s: &str| {
    if names::validate_memorable_name(s).is_ok() {
        assert!((limits::NAME_CHARS_MIN..=limits::NAME_CHARS_MAX).contains(&s.len()));
        assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
    }
    if names::validate_tag(s).is_ok() {
        assert!((1..=24).contains(&s.len()));
    }
    if names::validate_file_name(s).is_ok() {
        assert!(!s.contains('/') && !s.contains('\\') && s != "." && s != "..");
        assert!(!s.chars().any(char::is_control));
    }
    if let Ok(secs) = ttl::parse_ttl(s) {
        assert!(secs > 0);
        let t = ttl::file_ttl(Some(secs));
        assert!((limits::FILE_TTL_MIN_SECS..=limits::FILE_TTL_MAX_SECS).contains(&t));
    }
    if let Some(t) = Timestamp::parse(s) {
        let _ = t.to_string();
    }
    let tags: Vec<String> = s.split(',').map(String::from).collect();
    if let Ok(out) = names::apply_tags(&[], &tags, &[]) {
        assert!(out.len() <= limits::TAGS_PER_OBJECT_MAX);
    }
});
