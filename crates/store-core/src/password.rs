//! Passwords on shared objects (CONTRACT.md, "Private sharing"): which
//! passwords are taken, and how many wrong ones an object takes before it
//! refuses further tries for a while. The hash itself is the caller's to
//! make and check (a slow, salted argon2id hash, computed away from the
//! executor): this module keeps the rules, which need no I/O and take the
//! time they apply at.
//!
//! The wrong tries are counted in the object's own record, so every
//! process of a cluster sees the same count: the record is where the
//! shared state already is, and a try changes it under the key's lock.

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::time::Timestamp;

/// The fewest characters a password has.
pub const PASSWORD_CHARS_MIN: usize = 4;
/// The most characters a password has.
pub const PASSWORD_CHARS_MAX: usize = 256;
/// Wrong passwords one object takes within [`WRONG_TRIES_WINDOW_SECS`]
/// before it refuses further tries.
pub const WRONG_TRIES_MAX: usize = 10;
/// The window the wrong tries are counted in, in seconds.
pub const WRONG_TRIES_WINDOW_SECS: u64 = 600;

/// Refuses a password the service does not take: fewer than 4 or more
/// than 256 characters, or a control character (which no form or header
/// carries as meant).
pub fn validate_password(password: &str) -> Result<(), StoreError> {
    let chars = password.chars().count();
    if !(PASSWORD_CHARS_MIN..=PASSWORD_CHARS_MAX).contains(&chars) {
        return Err(StoreError::bad_request(format!(
            "a password has {PASSWORD_CHARS_MIN} to {PASSWORD_CHARS_MAX} characters"
        )));
    }
    if password.chars().any(char::is_control) {
        return Err(StoreError::bad_request(
            "a password has no control characters",
        ));
    }
    Ok(())
}

/// The wrong passwords an object was given lately: the instants of the
/// last [`WRONG_TRIES_MAX`] at most, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WrongTries(Vec<Timestamp>);

impl WrongTries {
    /// Whether a password may be tried at `now`: refused, with the whole
    /// seconds until the oldest of the window's tries leaves it (at least
    /// 1), once [`WRONG_TRIES_MAX`] wrong ones fall within the last
    /// [`WRONG_TRIES_WINDOW_SECS`]. A refused try is never checked, so it
    /// never counts.
    pub fn admit(&self, now: Timestamp) -> Result<(), StoreError> {
        let recent: Vec<&Timestamp> = self.0.iter().filter(|t| in_window(**t, now)).collect();
        if recent.len() < WRONG_TRIES_MAX {
            return Ok(());
        }
        let frees_at = recent[0].plus_secs(WRONG_TRIES_WINDOW_SECS);
        let wait_ms = frees_at.as_millis().saturating_sub(now.as_millis());
        let retry_after_secs = u64::try_from(wait_ms).unwrap_or(0).div_ceil(1000).max(1);
        Err(StoreError::RateLimited { retry_after_secs })
    }

    /// One wrong password at `now`: kept, and tries that can no longer
    /// count (out of the window, or beyond the last [`WRONG_TRIES_MAX`])
    /// let go, so the record stays small.
    pub fn note_wrong(&mut self, now: Timestamp) {
        self.0.retain(|t| in_window(*t, now));
        self.0.push(now);
        let over = self.0.len().saturating_sub(WRONG_TRIES_MAX);
        self.0.drain(..over);
    }

    /// How many wrong tries are kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Whether a try at `at` still counts at `now`.
fn in_window(at: Timestamp, now: Timestamp) -> bool {
    at.plus_secs(WRONG_TRIES_WINDOW_SECS) > now
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn passwords_have_four_to_256_characters_and_no_controls() {
        assert!(validate_password("abcd").is_ok());
        assert!(validate_password("äöüß").is_ok(), "characters, not bytes");
        assert!(validate_password("abc").is_err());
        assert!(validate_password(&"x".repeat(256)).is_ok());
        assert!(validate_password(&"x".repeat(257)).is_err());
        assert!(validate_password("ab\ncd").is_err());
        assert!(validate_password("correct horse").is_ok());
    }

    #[test]
    fn the_eleventh_wrong_try_in_ten_minutes_waits_for_the_first_to_leave() {
        let t0 = Timestamp::from_secs(1_800_000_000);
        let mut tries = WrongTries::default();
        for i in 0..10 {
            assert!(tries.admit(t0.plus_secs(i)).is_ok(), "try {}", i + 1);
            tries.note_wrong(t0.plus_secs(i));
        }
        let refused = tries.admit(t0.plus_secs(10)).unwrap_err();
        assert_eq!(refused.retry_after_secs(), Some(590));
        assert!(tries.admit(t0.plus_secs(599)).is_err());
        assert!(tries.admit(t0.plus_secs(600)).is_ok(), "the first try left");
        tries.note_wrong(t0.plus_secs(600));
        assert_eq!(tries.len(), 10, "what can no longer count is let go");
    }

    proptest! {
        /// Against a model that keeps every wrong try: a try is refused
        /// exactly when ten or more fell in the last ten minutes, and the
        /// record never keeps more than ten.
        #[test]
        fn tries_are_refused_exactly_past_ten_in_the_window(gaps in proptest::collection::vec(0u64..200, 1..60)) {
            let mut now = Timestamp::from_secs(1_800_000_000);
            let mut tries = WrongTries::default();
            let mut all: Vec<Timestamp> = Vec::new();
            for gap in gaps {
                now = now.plus_secs(gap);
                let recent = all.iter().filter(|t| t.plus_secs(WRONG_TRIES_WINDOW_SECS) > now).count();
                let admitted = tries.admit(now).is_ok();
                prop_assert_eq!(admitted, recent < WRONG_TRIES_MAX);
                if admitted {
                    tries.note_wrong(now);
                    all.push(now);
                }
                prop_assert!(tries.len() <= WRONG_TRIES_MAX);
            }
        }
    }
}
