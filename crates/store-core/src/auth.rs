//! Gates: who may write, delete and retain.
//!
//! The use-case layer turns what a request presented into a [`RetainAuth`]
//! (checking it against the configured tokens in constant time); the rules
//! below decide with that value alone.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::StoreError;
use crate::lifetime::Lifetime;

/// What a request proved about the retain token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetainAuth {
    /// No token was presented.
    Absent,
    /// A configured retain token was presented.
    Valid,
    /// A token was presented but it is not one of the configured ones (or
    /// retention is off).
    Invalid,
}

/// The configured retain tokens. Empty means retention is off.
#[derive(Clone, Default)]
pub struct RetainTokens(Vec<String>);

impl std::fmt::Debug for RetainTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a secret, not even in a debug log.
        write!(f, "RetainTokens({} configured)", self.0.len())
    }
}

impl RetainTokens {
    /// Parses STORE_RETAIN_TOKEN: comma-separated, blanks ignored.
    pub fn from_csv(csv: &str) -> Self {
        Self(
            csv.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect(),
        )
    }

    /// Whether retention is on, i.e. at least one retain token is configured.
    pub fn is_enabled(&self) -> bool {
        !self.0.is_empty()
    }

    /// What `presented` proves: `Absent` with no token, `Valid` if it matches a
    /// configured token (compared as digests, against every token, in constant time),
    /// `Invalid` otherwise.
    pub fn check(&self, presented: Option<&str>) -> RetainAuth {
        match presented {
            None => RetainAuth::Absent,
            Some(p) => {
                // Compare digests, against every token, so that timing
                // reveals neither a token's length, nor which token
                // matched, nor how much of one did.
                let presented = hash_token(p);
                let mut ok = false;
                for t in &self.0 {
                    ok |= constant_time_eq(hash_token(t).as_bytes(), presented.as_bytes());
                }
                if ok {
                    RetainAuth::Valid
                } else {
                    RetainAuth::Invalid
                }
            }
        }
    }
}

/// STORE_UPLOAD_TOKEN: when set, creating anything (a file, a bundle, a
/// dir, a gallery, a gallery image) needs it, or a retain token; reading
/// stays open. `Default` is unset: anyone may create, as SPEC.md says.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct UploadToken(Option<String>);

impl std::fmt::Debug for UploadToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a secret, not even in a debug log.
        let state = if self.is_required() { "set" } else { "unset" };
        write!(f, "UploadToken({state})")
    }
}

impl UploadToken {
    /// The token, or none for a blank value.
    pub fn new(token: Option<&str>) -> Self {
        Self(
            token
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from),
        )
    }

    /// Whether creating needs a token at all.
    pub fn is_required(&self) -> bool {
        self.0.is_some()
    }

    /// Whether `presented` is the upload token, compared as digests in
    /// constant time.
    pub fn matches(&self, presented: Option<&str>) -> bool {
        match (&self.0, presented) {
            (Some(token), Some(p)) => {
                constant_time_eq(hash_token(token).as_bytes(), hash_token(p).as_bytes())
            }
            _ => false,
        }
    }
}

/// Creating something: open unless an upload token is configured; then
/// the upload token or a valid retain token (which may do more) opens it.
pub fn authorize_create(
    gate: &UploadToken,
    presented: Option<&str>,
    retain: RetainAuth,
) -> Result<(), StoreError> {
    if !gate.is_required() || retain == RetainAuth::Valid || gate.matches(presented) {
        return Ok(());
    }
    Err(StoreError::WriteDenied(
        "this server takes uploads with its upload token only: Authorization: Bearer <token>, token=<token>, or a form's token field".into(),
    ))
}

/// Equality whose time depends on the lengths only, not on the contents.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A write or delete on an object: a wrong token is always refused (it is a
/// client mistake worth reporting), and a retained object needs a valid one.
pub fn authorize_write(lifetime: &Lifetime, auth: RetainAuth) -> Result<(), StoreError> {
    match auth {
        RetainAuth::Invalid => Err(StoreError::write_denied()),
        RetainAuth::Absent if lifetime.is_retained() => Err(StoreError::WriteDenied(
            "this object is retained: writes and deletes need the retain token".into(),
        )),
        _ => Ok(()),
    }
}

/// Who made an object, as the record keeps it: the digest of the owner
/// token handed out once at creation (never the token), and whether the
/// owner asked that only they may change it (`protect=1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Digest of the owner token (see `hash_token`), never the token itself.
    pub token_hash: String,
    /// Whether only the owner (or a valid retain token) may write or delete the
    /// object (`protect=1`); false when the stored record omits it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub protected: bool,
}

impl Owner {
    /// The owner of a new object, whose token is `token`.
    pub fn new(token: &str, protected: bool) -> Self {
        Self {
            token_hash: hash_token(token),
            protected,
        }
    }
}

/// What a presented owner token proves about one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerProof {
    /// No owner token was presented.
    Absent,
    /// The object's owner token, compared as digests in constant time.
    Owner,
    /// A token that is not this object's (or the object has no owner:
    /// objects stored before owner tokens existed have none).
    Wrong,
}

impl OwnerProof {
    /// Compares a presented owner token with the object's owner digest in constant
    /// time: `Absent` with no token, `Owner` on a match, `Wrong` otherwise (also when
    /// the object has no owner).
    pub fn of(owner: Option<&Owner>, presented: Option<&str>) -> Self {
        match (owner, presented) {
            (_, None) => Self::Absent,
            (Some(o), Some(token))
                if constant_time_eq(o.token_hash.as_bytes(), hash_token(token).as_bytes()) =>
            {
                Self::Owner
            }
            _ => Self::Wrong,
        }
    }
}

/// A write or delete on an object that may have an owner: a wrong owner
/// token is refused like a wrong retain token; then the retain rule of
/// [`authorize_write`] applies (the owner token does not stand in for the
/// retain token); then a protected object needs its owner token (or a
/// valid retain token, which administers everything).
pub fn authorize_owned_write(
    lifetime: &Lifetime,
    owner: Option<&Owner>,
    auth: RetainAuth,
    proof: OwnerProof,
) -> Result<(), StoreError> {
    if proof == OwnerProof::Wrong {
        return Err(StoreError::WriteDenied(
            "the owner token does not match this object".into(),
        ));
    }
    authorize_write(lifetime, auth)?;
    let protected = owner.is_some_and(|o| o.protected);
    if protected && proof != OwnerProof::Owner && auth != RetainAuth::Valid {
        return Err(StoreError::WriteDenied(
            "this object is protected: writes and deletes need its owner token (X-Store-Owner: <token> or owner=<token>)".into(),
        ));
    }
    Ok(())
}

/// Changing an object's expiry (`?ttl=`) is the owner's alone.
pub fn authorize_owner(proof: OwnerProof) -> Result<(), StoreError> {
    match proof {
        OwnerProof::Owner => Ok(()),
        OwnerProof::Absent => Err(StoreError::WriteDenied(
            "changing the expiry needs the owner token the upload answered (X-Store-Owner: <token> or owner=<token>)".into(),
        )),
        OwnerProof::Wrong => Err(StoreError::WriteDenied(
            "the owner token does not match this object".into(),
        )),
    }
}

/// Retaining needs a valid retain token.
pub fn authorize_retain(auth: RetainAuth) -> Result<(), StoreError> {
    match auth {
        RetainAuth::Valid => Ok(()),
        RetainAuth::Absent => Err(StoreError::WriteDenied(
            "retaining needs the retain token (Authorization: Bearer <token> or token=<token>)"
                .into(),
        )),
        RetainAuth::Invalid => Err(StoreError::write_denied()),
    }
}

/// The lifetime a new upload gets: indefinite with a valid token, the
/// given lifetime without one, and a refusal with a wrong one.
pub fn lifetime_for_new(auth: RetainAuth, otherwise: Lifetime) -> Result<Lifetime, StoreError> {
    match auth {
        RetainAuth::Valid => Ok(Lifetime::Indefinite),
        RetainAuth::Absent => Ok(otherwise),
        RetainAuth::Invalid => Err(StoreError::write_denied()),
    }
}

/// The SHA-256 of a token (a dir's write token, an owner token, a
/// gallery's admin token), hex. Only the hash is stored, so a copy of the
/// database does not hand out write access.
pub fn hash_token(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// `bytes` as lowercase hex, two characters a byte: how digests, MACs
/// and random ids are written.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    #[test]
    fn owner_tokens_prove_ownership_in_constant_time_digests() {
        let owner = Owner::new("tok-aaaaaaaaaaaaaaaa", false);
        assert_ne!(owner.token_hash, "tok-aaaaaaaaaaaaaaaa", "only a digest");
        let proof = |p| OwnerProof::of(Some(&owner), p);
        assert_eq!(proof(None), OwnerProof::Absent);
        assert_eq!(proof(Some("tok-aaaaaaaaaaaaaaaa")), OwnerProof::Owner);
        assert_eq!(proof(Some("tok-aaaaaaaaaaaaaaab")), OwnerProof::Wrong);
        assert_eq!(OwnerProof::of(None, Some("x")), OwnerProof::Wrong);
        assert_eq!(OwnerProof::of(None, None), OwnerProof::Absent);
    }

    #[test]
    fn protected_objects_need_the_owner_and_retained_ones_the_retain_token() {
        use OwnerProof::{Absent, Owner as Own, Wrong};
        use RetainAuth::{Absent as NoTok, Invalid, Valid};
        let now = Timestamp::from_secs(1_000);
        let fixed = Lifetime::fixed(now, 60);
        let open = Owner::new("t", false);
        let guarded = Owner::new("t", true);
        // (lifetime, owner, retain token, owner proof) -> allowed?
        let cases: [(&Lifetime, Option<&Owner>, RetainAuth, OwnerProof, bool); 12] = [
            (&fixed, None, NoTok, Absent, true),
            (&fixed, Some(&open), NoTok, Absent, true),
            (&fixed, Some(&open), NoTok, Wrong, false),
            (&fixed, Some(&open), NoTok, Own, true),
            (&fixed, Some(&guarded), NoTok, Absent, false),
            (&fixed, Some(&guarded), NoTok, Own, true),
            (&fixed, Some(&guarded), Valid, Absent, true),
            (&fixed, Some(&guarded), Invalid, Own, false),
            (&Lifetime::Indefinite, Some(&open), NoTok, Own, false),
            (&Lifetime::Indefinite, Some(&open), Valid, Absent, true),
            (&Lifetime::Indefinite, Some(&guarded), Valid, Own, true),
            (&Lifetime::Indefinite, None, NoTok, Absent, false),
        ];
        for (i, (lifetime, owner, auth, proof, allowed)) in cases.into_iter().enumerate() {
            let got = authorize_owned_write(lifetime, owner, auth, proof);
            assert_eq!(got.is_ok(), allowed, "case {i}: {got:?}");
            if let Err(e) = got {
                assert_eq!(e.code(), crate::ErrorCode::WriteDenied, "case {i}");
            }
        }
        assert!(authorize_owner(Own).is_ok());
        assert!(authorize_owner(Absent).is_err());
        assert!(authorize_owner(Wrong).is_err());
    }

    #[test]
    fn creating_needs_the_upload_token_only_when_one_is_set() {
        let open = UploadToken::new(None);
        assert!(authorize_create(&open, None, RetainAuth::Absent).is_ok());
        assert!(
            !UploadToken::new(Some("  ")).is_required(),
            "blank is unset"
        );
        let closed = UploadToken::new(Some("up-secret"));
        assert!(authorize_create(&closed, Some("up-secret"), RetainAuth::Absent).is_ok());
        assert!(authorize_create(&closed, Some("retain"), RetainAuth::Valid).is_ok());
        for (presented, retain) in [
            (None, RetainAuth::Absent),
            (Some("up-secreT"), RetainAuth::Invalid),
            (Some(""), RetainAuth::Invalid),
        ] {
            assert_eq!(
                authorize_create(&closed, presented, retain)
                    .unwrap_err()
                    .code(),
                crate::ErrorCode::WriteDenied,
                "{presented:?}"
            );
        }
        assert_eq!(format!("{closed:?}"), "UploadToken(set)", "never printed");
    }

    #[test]
    fn tokens() {
        let t = RetainTokens::from_csv(" a1 , ,b2");
        assert!(t.is_enabled());
        assert_eq!(t.check(Some("a1")), RetainAuth::Valid);
        assert_eq!(t.check(Some("b2")), RetainAuth::Valid);
        assert_eq!(t.check(Some("a")), RetainAuth::Invalid);
        assert_eq!(t.check(None), RetainAuth::Absent);
        let off = RetainTokens::from_csv("");
        assert!(!off.is_enabled());
        assert_eq!(off.check(Some("")), RetainAuth::Invalid);
        assert!(!format!("{t:?}").contains("a1"));
    }

    #[test]
    fn gates() {
        let live = Lifetime::fixed(Timestamp::EPOCH, 10);
        let kept = Lifetime::Indefinite;
        assert!(authorize_write(&live, RetainAuth::Absent).is_ok());
        assert!(authorize_write(&live, RetainAuth::Invalid).is_err());
        assert!(authorize_write(&kept, RetainAuth::Absent).is_err());
        assert!(authorize_write(&kept, RetainAuth::Valid).is_ok());
        assert!(authorize_retain(RetainAuth::Absent).is_err());
        assert!(authorize_retain(RetainAuth::Valid).is_ok());
        assert_eq!(
            lifetime_for_new(RetainAuth::Valid, live),
            Ok(Lifetime::Indefinite)
        );
        assert_eq!(lifetime_for_new(RetainAuth::Absent, live), Ok(live));
    }
}
