//! Gates: who may write, delete and retain.
//!
//! The use-case layer turns what a request presented into a [`RetainAuth`]
//! (checking it against the configured tokens in constant time); the rules
//! below decide with that value alone.

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

    pub fn is_enabled(&self) -> bool {
        !self.0.is_empty()
    }

    pub fn check(&self, presented: Option<&str>) -> RetainAuth {
        match presented {
            None => RetainAuth::Absent,
            Some(p) => {
                // Compare digests, against every token, so that timing
                // reveals neither a token's length, nor which token
                // matched, nor how much of one did.
                let presented = crate::container::hash_token(p);
                let mut ok = false;
                for t in &self.0 {
                    ok |= constant_time_eq(
                        crate::container::hash_token(t).as_bytes(),
                        presented.as_bytes(),
                    );
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
            (Some(token), Some(p)) => constant_time_eq(
                crate::container::hash_token(token).as_bytes(),
                crate::container::hash_token(p).as_bytes(),
            ),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

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
