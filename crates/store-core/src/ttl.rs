//! `ttl` notation (CONTRACT.md): `<N>h` or `<N>d`, N a positive integer; a
//! bare integer means hours. Out-of-range values are clamped, not rejected.

use crate::error::StoreError;
use crate::limits::Limits;

/// A requested lifetime in seconds, before clamping.
pub fn parse_ttl(text: &str) -> Result<u64, StoreError> {
    let bad = || {
        StoreError::bad_request(format!(
            "invalid ttl {text:?}: use <N>h or <N>d with N a positive integer (a bare N means hours)"
        ))
    };
    let (digits, unit_secs) = match text.as_bytes().last() {
        Some(b'h') => (&text[..text.len() - 1], 3600),
        Some(b'd') => (&text[..text.len() - 1], 86_400),
        _ => (text, 3600),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // A number too long for u64 is still a positive integer: it clamps to the
    // maximum like any other large value.
    let n: u64 = digits.parse().unwrap_or(u64::MAX);
    if n == 0 {
        return Err(bad());
    }
    Ok(n.saturating_mul(unit_secs))
}

/// The lifetime of a single file or bundle: the default when none was
/// asked for, otherwise the request clamped to the configured bounds
/// (SPEC.md: default 4h, clamped to [4h, 14d]).
pub fn file_ttl(limits: &Limits, requested_secs: Option<u64>) -> u64 {
    requested_secs.map_or(limits.file_ttl_default_secs, |s| {
        s.clamp(limits.file_ttl_min_secs, limits.file_ttl_max_secs)
    })
}

/// The sliding lifetime of a dir: the default when none was asked for,
/// otherwise clamped to the configured bounds (SPEC.md: 7d, [4h, 14d]).
pub fn dir_ttl(limits: &Limits, requested_secs: Option<u64>) -> u64 {
    requested_secs.map_or(limits.dir_ttl_default_secs, |s| {
        s.clamp(limits.dir_ttl_min_secs, limits.dir_ttl_max_secs)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn notation() {
        for (text, want) in [
            ("4h", Some(14_400)),
            ("1d", Some(86_400)),
            ("12", Some(43_200)),
            ("0h", None),
            ("0", None),
            ("", None),
            ("h", None),
            ("-1h", None),
            ("+1h", None),
            ("1.5h", None),
            ("1w", None),
            ("1H", None),
            (" 1h", None),
            ("99999999999999999999999d", Some(u64::MAX)),
        ] {
            assert_eq!(parse_ttl(text).ok(), want, "{text:?}");
        }
    }

    #[test]
    fn defaults_and_clamps() {
        let limits = Limits::default();
        assert_eq!(file_ttl(&limits, None), 14_400);
        assert_eq!(file_ttl(&limits, Some(3600)), 14_400);
        assert_eq!(file_ttl(&limits, Some(30 * 86_400)), 1_209_600);
        assert_eq!(dir_ttl(&limits, None), 604_800);
        assert_eq!(dir_ttl(&limits, Some(1)), 14_400);
    }

    #[test]
    fn configured_bounds_are_the_ones_enforced() {
        let limits = Limits {
            file_ttl_min_secs: 60,
            file_ttl_default_secs: 120,
            file_ttl_max_secs: 3_600,
            dir_ttl_min_secs: 600,
            dir_ttl_default_secs: 700,
            dir_ttl_max_secs: 800,
            ..Limits::default()
        };
        assert_eq!(file_ttl(&limits, None), 120);
        assert_eq!(file_ttl(&limits, Some(1)), 60);
        assert_eq!(file_ttl(&limits, Some(86_400)), 3_600);
        assert_eq!(dir_ttl(&limits, None), 700);
        assert_eq!(dir_ttl(&limits, Some(1)), 600);
        assert_eq!(dir_ttl(&limits, Some(86_400)), 800);
    }

    proptest! {
        #[test]
        fn every_parsed_ttl_clamps_into_range(n in 1u64..u64::MAX, unit in prop::sample::select(vec!["h", "d", ""])) {
            let secs = parse_ttl(&format!("{n}{unit}")).unwrap();
            let limits = Limits::default();
            let ttl = file_ttl(&limits, Some(secs));
            prop_assert!((limits.file_ttl_min_secs..=limits.file_ttl_max_secs).contains(&ttl));
            let ttl = dir_ttl(&limits, Some(secs));
            prop_assert!((limits.dir_ttl_min_secs..=limits.dir_ttl_max_secs).contains(&ttl));
        }

        #[test]
        fn junk_never_parses_to_zero(text in ".{0,12}") {
            if let Ok(secs) = parse_ttl(&text) { prop_assert!(secs > 0); }
        }
    }
}
