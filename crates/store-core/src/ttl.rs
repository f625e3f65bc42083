//! `ttl` notation (CONTRACT.md): `<N>h` or `<N>d`, N a positive integer; a
//! bare integer means hours. Out-of-range values are clamped, not rejected.

use crate::error::StoreError;
use crate::limits;

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

/// The lifetime of a single file: the default when none was asked for,
/// otherwise the request clamped to [4h, 14d].
pub fn file_ttl(requested_secs: Option<u64>) -> u64 {
    requested_secs.map_or(limits::FILE_TTL_DEFAULT_SECS, |s| {
        s.clamp(limits::FILE_TTL_MIN_SECS, limits::FILE_TTL_MAX_SECS)
    })
}

/// The sliding lifetime of a dir: default 7d, clamped to [4h, 14d].
pub fn dir_ttl(requested_secs: Option<u64>) -> u64 {
    requested_secs.map_or(limits::DIR_TTL_DEFAULT_SECS, |s| {
        s.clamp(limits::DIR_TTL_MIN_SECS, limits::DIR_TTL_MAX_SECS)
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
        assert_eq!(file_ttl(None), 14_400);
        assert_eq!(file_ttl(Some(3600)), 14_400);
        assert_eq!(file_ttl(Some(30 * 86_400)), 1_209_600);
        assert_eq!(dir_ttl(None), 604_800);
        assert_eq!(dir_ttl(Some(1)), 14_400);
    }

    proptest! {
        #[test]
        fn every_parsed_ttl_clamps_into_range(n in 1u64..u64::MAX, unit in prop::sample::select(vec!["h", "d", ""])) {
            let secs = parse_ttl(&format!("{n}{unit}")).unwrap();
            let ttl = file_ttl(Some(secs));
            prop_assert!((limits::FILE_TTL_MIN_SECS..=limits::FILE_TTL_MAX_SECS).contains(&ttl));
            let ttl = dir_ttl(Some(secs));
            prop_assert!((limits::DIR_TTL_MIN_SECS..=limits::DIR_TTL_MAX_SECS).contains(&ttl));
        }

        #[test]
        fn junk_never_parses_to_zero(text in ".{0,12}") {
            if let Ok(secs) = parse_ttl(&text) { prop_assert!(secs > 0); }
        }
    }
}
