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

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::auth::OwnerProof;
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

/// How long a pass (the proof a browser keeps after the right password)
/// opens its object, in seconds.
pub const PASS_LIFETIME_SECS: u64 = 3600;

/// An object's password, as its record keeps it: the slow salted hash
/// (argon2id, in the PHC string format) and the wrong tries lately given.
/// The password itself is never kept.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Protection {
    /// The password's hash, in the PHC string format.
    pub hash: String,
    /// The wrong passwords given lately.
    #[serde(default, skip_serializing_if = "WrongTries::is_empty")]
    pub wrong: WrongTries,
}

impl std::fmt::Debug for Protection {
    // Records are logged at debug level in places; the hash is kept out
    // of every log as the password is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("hash", &"<redacted>")
            .field("wrong", &self.wrong.len())
            .finish()
    }
}

impl Protection {
    /// A pass for the object stored under `storage_key`, valid until
    /// `expires`: `<expiry secs>.<hex MAC>`. The MAC is keyed by the
    /// password's hash, which no one outside the store sees, so any
    /// process can check a pass another made, and a new password voids
    /// every pass of the old one.
    pub fn pass(&self, storage_key: &str, expires: Timestamp) -> String {
        let secs = expires.as_secs();
        let mac = self.mac(storage_key, secs).finalize().into_bytes();
        format!("{secs}.{}", crate::auth::hex(&mac))
    }

    /// Whether `pass` opens the object stored under `storage_key` at `now`.
    pub fn admits_pass(&self, storage_key: &str, pass: &str, now: Timestamp) -> bool {
        let Some((secs, hex)) = pass.split_once('.') else {
            return false;
        };
        let Ok(secs) = secs.parse::<i64>() else {
            return false;
        };
        let Some(mac) = from_hex(hex) else {
            return false;
        };
        let live = Timestamp::from_secs(secs) > now
            && Timestamp::from_secs(secs) <= now.plus_secs(PASS_LIFETIME_SECS);
        // verify_slice compares in constant time.
        live && self.mac(storage_key, secs).verify_slice(&mac).is_ok()
    }

    fn mac(&self, storage_key: &str, expires_secs: i64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(self.hash.as_bytes())
            .expect("HMAC takes keys of any length");
        mac.update(b"storesrv pass\n");
        mac.update(storage_key.as_bytes());
        mac.update(b"\n");
        mac.update(expires_secs.to_string().as_bytes());
        mac
    }
}

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What a reader showed an object's password gate: the owner token's
/// verdict, and whether one of its passes opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadProof {
    /// What the presented owner token proves.
    pub owner: OwnerProof,
    /// A pass for this object, still valid, was presented.
    pub pass: bool,
}

/// Whether a read of an object with `protection` may go on: always
/// without a password; with one, for its owner or a valid pass. Anything
/// else (nothing, a wrong owner token, a stale pass) is
/// [`StoreError::PasswordNeeded`]: 401, which asks for the password.
pub fn authorize_read(protection: Option<&Protection>, proof: ReadProof) -> Result<(), StoreError> {
    match protection {
        None => Ok(()),
        Some(_) if proof.owner == OwnerProof::Owner || proof.pass => Ok(()),
        Some(_) => Err(StoreError::password_needed()),
    }
}

/// A password as a client gave it, checked by [`validate_password`]. It
/// never shows itself in a debug print, and is never stored: records keep
/// its hash.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// `text`, if the service takes it as a password.
    pub fn new(text: &str) -> Result<Self, StoreError> {
        validate_password(text)?;
        Ok(Self(text.to_string()))
    }

    /// A password a reader presented, to be checked as it is: one that
    /// breaks the rules of [`validate_password`] matches nothing, and is
    /// counted as any wrong password. Cut to [`PASSWORD_CHARS_MAX`]
    /// characters and one more, so no one makes the server hash a
    /// megabyte.
    pub fn presented(text: &str) -> Self {
        Self(text.chars().take(PASSWORD_CHARS_MAX + 1).collect())
    }

    /// The password's text, for the hash function and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(<redacted>)")
    }
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

    fn protected() -> Protection {
        Protection {
            hash: "$argon2id$v=19$m=19456,t=4,p=1$c2FsdA$aGFzaA".into(),
            wrong: WrongTries::default(),
        }
    }

    #[test]
    fn a_pass_opens_its_own_object_until_it_expires() {
        let p = protected();
        let now = Timestamp::from_secs(1_800_000_000);
        let pass = p.pass("abc", now.plus_secs(PASS_LIFETIME_SECS));
        assert!(p.admits_pass("abc", &pass, now));
        assert!(p.admits_pass("abc", &pass, now.plus_secs(PASS_LIFETIME_SECS - 1)));
        assert!(!p.admits_pass("abc", &pass, now.plus_secs(PASS_LIFETIME_SECS)));
        assert!(!p.admits_pass("abd", &pass, now), "another object");
        let other = Protection {
            hash: "$argon2id$v=19$m=19456,t=4,p=1$c2FsdA$b3RoZXI".into(),
            ..p.clone()
        };
        assert!(!other.admits_pass("abc", &pass, now), "a new password");
        let far = p.pass("abc", now.plus_secs(10 * PASS_LIFETIME_SECS));
        assert!(!p.admits_pass("abc", &far, now), "longer than a pass lives");
        for forged in [
            "",
            "1.",
            "x.ab",
            &pass.replace('.', ""),
            &format!("{pass}0"),
        ] {
            assert!(!p.admits_pass("abc", forged, now), "{forged:?}");
        }
    }

    #[test]
    fn a_protected_read_needs_the_owner_or_a_pass() {
        let p = protected();
        let proof = |owner, pass| ReadProof { owner, pass };
        assert!(authorize_read(None, proof(OwnerProof::Absent, false)).is_ok());
        assert!(authorize_read(Some(&p), proof(OwnerProof::Owner, false)).is_ok());
        assert!(authorize_read(Some(&p), proof(OwnerProof::Absent, true)).is_ok());
        for owner in [OwnerProof::Absent, OwnerProof::Wrong] {
            let refused = authorize_read(Some(&p), proof(owner, false)).unwrap_err();
            assert_eq!(refused, StoreError::password_needed());
        }
        assert!(
            !format!("{p:?}").contains("argon2"),
            "the hash is never shown"
        );
    }

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
