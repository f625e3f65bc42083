//! Validators, conditional requests and byte ranges for stored bytes
//! (CONTRACT.md "Downloads: ranges and validators"; RFC 9110 sections 8.8,
//! 13 and 14): a pure decision over the request's headers, table-tested.

use http::{header, HeaderMap};
use store_core::Timestamp;

/// What to answer a GET or HEAD of stored bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// 200 with every byte.
    Whole,
    /// 304: the client's copy is current.
    NotModified,
    /// 206 with the bytes `start..=end`.
    Partial {
        /// The first byte sent, counted from 0.
        start: u64,
        /// The last byte sent, inclusive.
        end: u64,
    },
    /// 416: the range starts at or past the end.
    Unsatisfiable,
}

/// The validators of some bytes: a strong entity tag (quoted) and the
/// time they were last written.
#[derive(Debug, Clone, Copy)]
pub struct Validators<'a> {
    /// The strong entity tag, quotes included.
    pub etag: &'a str,
    /// When the bytes were last written.
    pub modified: Timestamp,
}

/// The strong entity tag of a blob: its id, which no other bytes ever
/// carry (an edit writes a new blob).
pub fn etag(blob: &store_core::BlobId) -> String {
    format!("\"{}\"", blob.0)
}

/// `Last-Modified`'s form of `t`: an IMF-fixdate, to the second.
pub fn http_date(t: Timestamp) -> String {
    httpdate::fmt_http_date(system_time(t))
}

fn system_time(t: Timestamp) -> std::time::SystemTime {
    let secs = u64::try_from(t.as_millis().div_euclid(1000)).unwrap_or(0);
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)
}

/// Decides the answer for bytes of `len` with validators `v`.
/// `If-None-Match` wins over `If-Modified-Since`; a range counts only
/// when `If-Range` (if any) still holds. Several ranges are served whole
/// (docs/DECISIONS.md), as is a `Range` that does not parse.
pub fn decide(headers: &HeaderMap, v: Validators<'_>, len: u64) -> Answer {
    if not_modified(headers, v) {
        return Answer::NotModified;
    }
    let Some(range) = headers.get(header::RANGE).and_then(|h| h.to_str().ok()) else {
        return Answer::Whole;
    };
    if !if_range_holds(headers, v) {
        return Answer::Whole;
    }
    match parse_range(range) {
        Some(spec) => spec.resolve(len),
        None => Answer::Whole,
    }
}

fn not_modified(headers: &HeaderMap, v: Validators<'_>) -> bool {
    if let Some(inm) = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|h| h.to_str().ok())
    {
        // Weak comparison (RFC 9110 13.1.2): a `W/` prefix still matches.
        return inm
            .split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag.trim_start_matches("W/") == v.etag);
    }
    let Some(since) = headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| httpdate::parse_http_date(h).ok())
    else {
        return false;
    };
    system_time(v.modified) <= since
}

/// `If-Range` holds when it names the current entity tag (strongly) or
/// the exact `Last-Modified` date; absent, it holds.
fn if_range_holds(headers: &HeaderMap, v: Validators<'_>) -> bool {
    let Some(cond) = headers.get(header::IF_RANGE).and_then(|h| h.to_str().ok()) else {
        return true;
    };
    let cond = cond.trim();
    if cond.starts_with('"') {
        return cond == v.etag;
    }
    httpdate::parse_http_date(cond).is_ok_and(|t| t == system_time(v.modified))
}

/// One range of `bytes=`: from a first byte (to a last, or the end), or a
/// suffix of n bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    From { first: u64, last: Option<u64> },
    Suffix(u64),
}

impl Spec {
    fn resolve(self, len: u64) -> Answer {
        match self {
            Self::From { first, .. } if first >= len => Answer::Unsatisfiable,
            Self::From { first, last } => Answer::Partial {
                start: first,
                end: last.map_or(len - 1, |l| l.min(len - 1)),
            },
            Self::Suffix(0) => Answer::Unsatisfiable,
            Self::Suffix(_) if len == 0 => Answer::Unsatisfiable,
            Self::Suffix(n) => Answer::Partial {
                start: len.saturating_sub(n),
                end: len - 1,
            },
        }
    }
}

/// Parses a `Range` of exactly one byte range; `None` for anything else
/// (another unit, several ranges, a malformed one), which is ignored.
fn parse_range(value: &str) -> Option<Spec> {
    let set = value.trim().strip_prefix("bytes=")?;
    if set.contains(',') {
        return None;
    }
    let (first, last) = set.trim().split_once('-')?;
    let number = |s: &str| -> Option<u64> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    if first.trim().is_empty() {
        return number(last).map(Spec::Suffix);
    }
    let first = number(first)?;
    let last = if last.trim().is_empty() {
        None
    } else {
        Some(number(last)?)
    };
    if last.is_some_and(|l| l < first) {
        return None;
    }
    Some(Spec::From { first, last })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &str = "\"abc123\"";

    fn v() -> Validators<'static> {
        Validators {
            etag: TAG,
            modified: Timestamp::from_secs(1_784_000_000),
        }
    }

    fn answer(pairs: &[(&str, &str)], len: u64) -> Answer {
        let mut h = HeaderMap::new();
        for (k, val) in pairs {
            h.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                val.parse().unwrap(),
            );
        }
        decide(&h, v(), len)
    }

    #[test]
    fn single_ranges_resolve_and_clamp() {
        let p = |start, end| Answer::Partial { start, end };
        for (range, want) in [
            ("bytes=0-9", p(0, 9)),
            ("bytes=5-", p(5, 99)),
            ("bytes=-10", p(90, 99)),
            ("bytes=-1000", p(0, 99)),
            ("bytes=90-1000", p(90, 99)),
            ("bytes=99-99", p(99, 99)),
            ("bytes=100-", Answer::Unsatisfiable),
            ("bytes=100-200", Answer::Unsatisfiable),
            ("bytes=-0", Answer::Unsatisfiable),
            (" bytes=1-2", p(1, 2)),
        ] {
            assert_eq!(answer(&[("range", range)], 100), want, "{range}");
        }
    }

    #[test]
    fn what_is_not_one_good_range_is_served_whole() {
        for range in [
            "bytes=0-1,3-4",
            "bytes=5-2",
            "bytes=a-b",
            "bytes=-",
            "items=0-1",
            "bytes=+1-2",
            "bytes=0-1-2",
            "",
        ] {
            assert_eq!(answer(&[("range", range)], 100), Answer::Whole, "{range:?}");
        }
        assert_eq!(answer(&[], 100), Answer::Whole);
    }

    #[test]
    fn empty_bytes_have_no_satisfiable_range() {
        assert_eq!(answer(&[("range", "bytes=0-")], 0), Answer::Unsatisfiable);
        assert_eq!(answer(&[("range", "bytes=-5")], 0), Answer::Unsatisfiable);
    }

    #[test]
    fn validators_answer_304() {
        let date = http_date(v().modified);
        let later =
            httpdate::fmt_http_date(system_time(v().modified) + std::time::Duration::from_secs(60));
        let earlier =
            httpdate::fmt_http_date(system_time(v().modified) - std::time::Duration::from_secs(60));
        for (headers, want) in [
            (vec![("if-none-match", TAG)], Answer::NotModified),
            (
                vec![("if-none-match", "\"other\", \"abc123\"")],
                Answer::NotModified,
            ),
            (vec![("if-none-match", "W/\"abc123\"")], Answer::NotModified),
            (vec![("if-none-match", "*")], Answer::NotModified),
            (vec![("if-none-match", "\"other\"")], Answer::Whole),
            (
                vec![("if-modified-since", date.as_str())],
                Answer::NotModified,
            ),
            (
                vec![("if-modified-since", later.as_str())],
                Answer::NotModified,
            ),
            (vec![("if-modified-since", earlier.as_str())], Answer::Whole),
            (vec![("if-modified-since", "yesterday")], Answer::Whole),
            // If-None-Match decides alone when present.
            (
                vec![
                    ("if-none-match", "\"other\""),
                    ("if-modified-since", later.as_str()),
                ],
                Answer::Whole,
            ),
        ] {
            assert_eq!(answer(&headers, 100), want, "{headers:?}");
        }
    }

    #[test]
    fn if_range_keeps_the_range_only_while_it_holds() {
        let date = http_date(v().modified);
        let p = Answer::Partial { start: 0, end: 9 };
        for (cond, want) in [
            (TAG, p),
            ("\"stale\"", Answer::Whole),
            ("W/\"abc123\"", Answer::Whole),
            (date.as_str(), p),
            ("Mon, 01 Jan 2001 00:00:00 GMT", Answer::Whole),
        ] {
            assert_eq!(
                answer(&[("range", "bytes=0-9"), ("if-range", cond)], 100),
                want,
                "{cond}"
            );
        }
    }
}
