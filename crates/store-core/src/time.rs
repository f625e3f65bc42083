//! Time as a value. The core never reads a clock: every decision takes `now`.
//!
//! A [`Timestamp`] counts milliseconds since the Unix epoch, which is fine
//! enough for the float `ts` of history entries and comments while records
//! show whole seconds in RFC 3339 (CONTRACT.md "Values").

use serde::{Deserialize, Serialize};
use std::fmt;

/// Milliseconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(i64);

impl Timestamp {
    /// 1970-01-01T00:00:00Z, Unix time 0.
    pub const EPOCH: Timestamp = Timestamp(0);

    /// The instant `ms` milliseconds after the Unix epoch (before it if negative).
    pub const fn from_millis(ms: i64) -> Self {
        Self(ms)
    }

    /// The instant `secs` seconds after the Unix epoch, saturating on overflow.
    pub const fn from_secs(secs: i64) -> Self {
        Self(secs.saturating_mul(1000))
    }

    /// Milliseconds since the Unix epoch.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// Whole seconds, rounded towards the past.
    pub const fn as_secs(self) -> i64 {
        self.0.div_euclid(1000)
    }

    /// Seconds since the Unix epoch, with the milliseconds as the fraction.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// The instant `secs` seconds later, saturating at the largest timestamp.
    pub fn plus_secs(self, secs: u64) -> Self {
        let ms = i64::try_from(secs).unwrap_or(i64::MAX).saturating_mul(1000);
        Self(self.0.saturating_add(ms))
    }

    /// Whole seconds from `self` until `later`, zero if `later` has passed.
    pub fn secs_until(self, later: Timestamp) -> u64 {
        u64::try_from(later.0.saturating_sub(self.0) / 1000).unwrap_or(0)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|+00:00|±HH:MM)`, or a Unix time
    /// in seconds (integer or float), which is what the `GET /d` filters take.
    pub fn parse(text: &str) -> Option<Self> {
        if let Ok(secs) = text.parse::<i64>() {
            return Some(Self::from_secs(secs));
        }
        if let Ok(secs) = text.parse::<f64>() {
            if secs.is_finite() {
                return Some(Self((secs * 1000.0) as i64));
            }
            return None;
        }
        parse_rfc3339(text)
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 UTC with whole seconds and a `Z`, e.g. `2026-11-22T15:04:05Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.as_secs();
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )
    }
}

/// Howard Hinnant's `civil_from_days`: day count since the epoch to a
/// proleptic Gregorian date.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let ms_text: String = frac[..digits]
            .chars()
            .chain("000".chars())
            .take(3)
            .collect();
        millis = ms_text.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_secs = match rest {
        "Z" | "z" => 0,
        _ => {
            let rb = rest.as_bytes();
            if rb.len() != 6 || !matches!(rb[0], b'+' | b'-') || rb[3] != b':' {
                return None;
            }
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            let sign = if rb[0] == b'-' { -1 } else { 1 };
            sign * (oh * 3600 + om * 60)
        }
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86_400 + h * 3600 + mi * 60 + se - offset_secs;
    Some(Timestamp(secs * 1000 + millis))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats_rfc3339_with_whole_seconds() {
        assert_eq!(Timestamp::EPOCH.to_string(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Timestamp::from_millis(1_795_359_845_999).to_string(),
            "2026-11-22T15:04:05Z"
        );
        assert_eq!(
            Timestamp::from_secs(951_782_400).to_string(),
            "2000-02-29T00:00:00Z"
        );
    }

    #[test]
    fn parses_rfc3339_and_unix_seconds() {
        let t = Timestamp::from_secs(1_795_359_845);
        assert_eq!(Timestamp::parse("2026-11-22T15:04:05Z"), Some(t));
        assert_eq!(Timestamp::parse("2026-11-22T16:04:05+01:00"), Some(t));
        assert_eq!(Timestamp::parse("1795359845"), Some(t));
        assert_eq!(
            Timestamp::parse("2026-11-22T15:04:05.250Z"),
            Some(Timestamp::from_millis(1_795_359_845_250))
        );
        assert_eq!(Timestamp::parse("2026-13-22T15:04:05Z"), None);
        assert_eq!(Timestamp::parse("yesterday"), None);
    }

    proptest! {
        #[test]
        fn display_and_parse_round_trip(secs in -62_135_596_800i64..253_402_300_799i64) {
            let t = Timestamp::from_secs(secs);
            prop_assert_eq!(Timestamp::parse(&t.to_string()), Some(t));
        }

        #[test]
        fn secs_until_never_negative(a in any::<i32>(), b in any::<i32>()) {
            let (a, b) = (Timestamp::from_millis(a.into()), Timestamp::from_millis(b.into()));
            if b <= a { prop_assert_eq!(a.secs_until(b), 0); }
        }
    }
}
