//! Files their clients encrypted before uploading (`encrypted=age`): the
//! service stores and serves the ciphertext as it came, never sees a key,
//! and checks only that the bytes are what the upload says they are.
//!
//! The one format taken is age (age-encryption.org/v1), in its binary
//! form: what `age -r` and `age -p` write, and what the home page's
//! "Encrypt in this browser" makes. Its first line names the format, so a
//! file that is not age is refused before it is stored.

use serde::{Deserialize, Serialize};

use crate::error::StoreError;

/// How a file's client encrypted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encryption {
    /// The age format, version 1 (age-encryption.org/v1).
    Age,
}

/// The first line of every binary age file, its newline included.
pub const AGE_HEADER: &[u8] = b"age-encryption.org/v1\n";

/// The first line of an age file in its ASCII armor (`age -a`).
const AGE_ARMOR_HEADER: &[u8] = b"-----BEGIN AGE ENCRYPTED FILE-----";

/// The type an encrypted file is served with, whatever its name or the
/// type its upload declared: bytes no program should open as they are.
pub const ENCRYPTED_CONTENT_TYPE: &str = "application/octet-stream";

impl Encryption {
    /// Every format, by the name `encrypted=` takes.
    pub const ALL: &'static [Encryption] = &[Encryption::Age];

    /// The name `encrypted=` takes and records show.
    pub fn name(self) -> &'static str {
        match self {
            Encryption::Age => "age",
        }
    }

    /// Reads `encrypted=`.
    pub fn parse(value: &str) -> Result<Encryption, StoreError> {
        Self::ALL
            .iter()
            .copied()
            .find(|e| e.name() == value)
            .ok_or_else(|| {
                StoreError::bad_request(format!(
                    "encrypted={value:?} is not a format this service takes: use encrypted=age"
                ))
            })
    }

    /// Whether a body that starts with `head` (its first bytes, or all of
    /// them when it is shorter) is in this format.
    pub fn check_head(self, head: &[u8]) -> Result<(), StoreError> {
        self.check_start(head, true)
    }

    /// Whether a body whose first bytes so far are `head` may still be in
    /// this format: refused as soon as they cannot be (a resumable upload
    /// is refused at the PATCH that shows it, not after its last byte),
    /// and, once `complete`, unless they are.
    pub fn check_start(self, head: &[u8], complete: bool) -> Result<(), StoreError> {
        match self {
            Encryption::Age if !complete && AGE_HEADER.starts_with(head) => Ok(()),
            Encryption::Age if head.starts_with(AGE_HEADER) => Ok(()),
            Encryption::Age if head.starts_with(AGE_ARMOR_HEADER) => Err(StoreError::bad_request(
                "encrypted=age takes the binary age format: encrypt without -a/--armor",
            )),
            Encryption::Age => Err(StoreError::bad_request(
                "encrypted=age: the body is not an age file (it must begin with the line age-encryption.org/v1)",
            )),
        }
    }

    /// The name an encrypted file gets when its upload names none.
    pub fn default_file_name(self) -> &'static str {
        match self {
            Encryption::Age => "encrypted.age",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_the_age_header_is_taken() {
        let age = Encryption::parse("age").unwrap();
        assert_eq!(age, Encryption::Age);
        assert!(Encryption::parse("AGE").is_err());
        assert!(Encryption::parse("gpg").is_err());
        let file = b"age-encryption.org/v1\n-> X25519 abc\n--- def\n\x00\x01";
        assert!(age.check_head(file).is_ok());
        assert!(age.check_head(b"age-encryption.org/v1").is_err());
        assert!(age.check_head(b"age-encryption.org/v2\n").is_err());
        assert!(age.check_head(b"").is_err());
        // Too little to tell is taken until the body is whole.
        assert!(age.check_start(b"age-enc", false).is_ok());
        assert!(age.check_start(b"", false).is_ok());
        assert!(age.check_start(b"age-enc", true).is_err());
        assert!(age.check_start(b"agx", false).is_err());
        let armored = b"-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n";
        let e = age.check_head(armored).unwrap_err();
        assert!(e.to_string().contains("armor"), "{e}");
        assert_eq!(serde_json::to_string(&age).unwrap(), "\"age\"");
    }

    proptest! {
        /// A body is taken exactly when it begins with the header line.
        #[test]
        fn a_body_is_taken_when_it_begins_with_the_header(body in proptest::collection::vec(any::<u8>(), 0..64), header in any::<bool>()) {
            let mut head = if header { AGE_HEADER.to_vec() } else { Vec::new() };
            head.extend_from_slice(&body);
            prop_assert_eq!(Encryption::Age.check_head(&head).is_ok(), head.starts_with(AGE_HEADER));
        }
    }
}
