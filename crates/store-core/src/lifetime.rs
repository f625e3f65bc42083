//! The lifetime state machine shared by every object kind: fixed expiry,
//! sliding expiry with its 30-day cap, and indefinite retention.

use serde::{Deserialize, Serialize};

use crate::time::Timestamp;

/// How long an object lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Lifetime {
    /// Dies at `expires_at` (single files and bundles).
    Fixed {
        /// When the object dies: it is live strictly before this instant.
        expires_at: Timestamp,
    },
    /// Dies at `expires_at`, which activity pushes forward by `max_age_secs`
    /// (dirs).
    Sliding {
        /// When the dir dies unless activity pushes it forward; live strictly before it.
        expires_at: Timestamp,
        /// Seconds each activity pushes `expires_at` forward (the dir's ttl).
        max_age_secs: u64,
    },
    /// Retained: never expires and is never evicted.
    Indefinite,
}

impl Lifetime {
    /// A fixed lifetime ending `ttl_secs` seconds after `now`.
    pub fn fixed(now: Timestamp, ttl_secs: u64) -> Self {
        Self::Fixed {
            expires_at: now.plus_secs(ttl_secs),
        }
    }

    /// A sliding lifetime of `max_age_secs` seconds from `now` (a new dir).
    pub fn sliding(now: Timestamp, max_age_secs: u64) -> Self {
        Self::Sliding {
            expires_at: now.plus_secs(max_age_secs),
            max_age_secs,
        }
    }

    /// `None` when retained.
    pub fn expires_at(&self) -> Option<Timestamp> {
        match *self {
            Self::Fixed { expires_at } | Self::Sliding { expires_at, .. } => Some(expires_at),
            Self::Indefinite => None,
        }
    }

    /// An object is live strictly before its expiry: at `expires_at` it is
    /// already gone, so a reader and the sweeper never disagree.
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.expires_at().is_none_or(|at| now < at)
    }

    /// Whether the object is retained: it never expires and is never evicted.
    pub fn is_retained(&self) -> bool {
        matches!(self, Self::Indefinite)
    }

    /// Activity on a dir: `expires_at` moves forward by the dir's ttl, but
    /// never past `cap_secs` from now (`Limits::dir_sliding_cap_secs`, 30
    /// days by default). Fixed and indefinite lifetimes ignore activity.
    pub fn slide(&mut self, now: Timestamp, cap_secs: u64) {
        if let Self::Sliding {
            expires_at,
            max_age_secs,
        } = self
        {
            let cap = now.plus_secs(cap_secs);
            let base = (*expires_at).max(now);
            *expires_at = base.plus_secs(*max_age_secs).min(cap);
        }
    }

    /// The owner's `?ttl=`: a new lifetime of `secs` (already clamped by
    /// the caller, as at upload) counted from `now`, of the same kind. A
    /// retained lifetime is left as it is: retention is the retain token's
    /// to give, and no owner's to take back.
    pub fn renewed(&self, now: Timestamp, secs: u64) -> Self {
        match self {
            Self::Fixed { .. } => Self::fixed(now, secs),
            Self::Sliding { .. } => Self::sliding(now, secs),
            Self::Indefinite => Self::Indefinite,
        }
    }

    /// `max_age` of SPEC.md's persistence object: the sliding lifetime, or
    /// null for single files, bundles and retained objects.
    pub fn max_age_secs(&self) -> Option<u64> {
        match *self {
            Self::Sliding { max_age_secs, .. } => Some(max_age_secs),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn renewing_counts_from_now_and_keeps_the_kind() {
        let (then, now) = (Timestamp::from_secs(1_000), Timestamp::from_secs(5_000));
        assert_eq!(
            Lifetime::fixed(then, 60).renewed(now, 7_200),
            Lifetime::fixed(now, 7_200),
            "shorter or longer, from now"
        );
        assert_eq!(
            Lifetime::sliding(then, 60).renewed(now, 86_400),
            Lifetime::sliding(now, 86_400)
        );
        assert_eq!(
            Lifetime::Indefinite.renewed(now, 60),
            Lifetime::Indefinite,
            "a retained object keeps its retention"
        );
    }

    const CAP_SECS: u64 = crate::Limits::DEFAULT.dir_sliding_cap_secs;

    #[test]
    fn live_until_expiry_exclusive() {
        let t0 = Timestamp::from_secs(1000);
        let l = Lifetime::fixed(t0, 10);
        assert!(l.is_live(t0));
        assert!(l.is_live(Timestamp::from_millis(t0.as_millis() + 9_999)));
        assert!(!l.is_live(t0.plus_secs(10)));
        assert!(Lifetime::Indefinite.is_live(Timestamp::from_secs(i64::MAX / 1000)));
    }

    #[test]
    fn sliding_adds_ttl_and_caps_at_thirty_days() {
        let t0 = Timestamp::from_secs(0);
        let day = 86_400;
        let mut l = Lifetime::sliding(t0, 14 * day);
        l.slide(t0, CAP_SECS);
        assert_eq!(l.expires_at(), Some(t0.plus_secs(28 * day)));
        l.slide(t0, CAP_SECS);
        assert_eq!(l.expires_at(), Some(t0.plus_secs(30 * day)));
        let mut f = Lifetime::fixed(t0, 10);
        f.slide(t0, CAP_SECS);
        assert_eq!(f.expires_at(), Some(t0.plus_secs(10)));
    }

    proptest! {
        #[test]
        fn sliding_never_passes_the_cap_nor_moves_back(
            max_age in 14_400u64..=1_209_600,
            steps in prop::collection::vec(0u64..3 * 86_400, 1..40),
        ) {
            let mut now = Timestamp::from_secs(1_700_000_000);
            let mut l = Lifetime::sliding(now, max_age);
            for dt in steps {
                let before = l.expires_at().unwrap();
                now = now.plus_secs(dt);
                if !l.is_live(now) { break; }
                l.slide(now, CAP_SECS);
                let after = l.expires_at().unwrap();
                prop_assert!(after >= before);
                prop_assert!(after <= now.plus_secs(CAP_SECS));
                prop_assert!(after >= now.plus_secs(max_age.min(CAP_SECS)));
            }
        }
    }
}
