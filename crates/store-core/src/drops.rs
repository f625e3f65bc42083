//! Drop links, or upload requests (CONTRACT.md "Private sharing"): a dir
//! that only its owner reads, and a link through which anyone who has it
//! adds files, never seeing what is there. This module keeps the rules:
//! what a drop may hold, how its link names it, and the new name a file
//! gets when its name is taken.
//!
//! The link's token is a 128-bit secret followed by the dir's key, so
//! the dir is found by its key as any dir is, and the secret is checked
//! against its digest in the record. The key alone opens nothing: every
//! route of a drop dir but the link answers 404 to anyone without the
//! owner token.

use serde::{Deserialize, Serialize};

use crate::auth::{constant_time_eq, hash_token, OwnerProof, RetainAuth};
use crate::error::StoreError;
use crate::limits::Limits;

/// The most files a drop may be made to take.
pub const DROP_FILES_MAX: u32 = 1000;
/// Files a drop takes when its maker does not say.
pub const DROP_FILES_DEFAULT: u32 = 100;
/// Hex characters of a drop link's secret: 128 bits.
pub const DROP_SECRET_CHARS: usize = 32;

/// A dir's drop link, as its record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropBox {
    /// SHA-256 of the link's secret ([`hash_token`]).
    pub secret_hash: String,
    /// The most files the dir holds through its link.
    pub files_max: u32,
    /// The most bytes the dir holds through its link.
    pub bytes_max: u64,
    /// Whether the link still takes files: its owner may close it early.
    pub open: bool,
}

/// What `POST /?dir=1&drop=1` asks for: `drop_files=`, `drop_bytes=`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropRequest {
    /// `drop_files=N`: 1 to [`DROP_FILES_MAX`].
    pub files_max: Option<u32>,
    /// `drop_bytes=N`: at least 1.
    pub bytes_max: Option<u64>,
}

impl DropRequest {
    /// Refuses a count out of range.
    pub fn validate(&self) -> Result<(), StoreError> {
        if self
            .files_max
            .is_some_and(|n| !(1..=DROP_FILES_MAX).contains(&n))
        {
            return Err(StoreError::bad_request(format!(
                "drop_files must be a whole number from 1 to {DROP_FILES_MAX}"
            )));
        }
        if self.bytes_max == Some(0) {
            return Err(StoreError::bad_request(
                "drop_bytes must be a whole number of bytes, 1 or more",
            ));
        }
        Ok(())
    }

    /// The drop this asks for, whose link's secret is `secret`: by
    /// default [`DROP_FILES_DEFAULT`] files and a tenth of the pool.
    pub fn open_box(self, secret: &str, limits: &Limits) -> DropBox {
        DropBox {
            secret_hash: hash_token(secret),
            files_max: self.files_max.unwrap_or(DROP_FILES_DEFAULT),
            bytes_max: self.bytes_max.unwrap_or(limits.pool_bytes / 10).max(1),
            open: true,
        }
    }
}

/// The token of a drop link: its secret, then the dir's key.
pub fn drop_token(secret: &str, key: &str) -> String {
    format!("{secret}{key}")
}

/// A drop link's token split into its secret and the dir's key; `None`
/// when it cannot be one.
pub fn split_drop_token(token: &str) -> Option<(&str, &str)> {
    let secret = token.get(..DROP_SECRET_CHARS)?;
    let key = &token[DROP_SECRET_CHARS..];
    let hex = secret
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (hex && !key.is_empty()).then_some((secret, key))
}

impl DropBox {
    /// Whether the link with `secret` opens this drop: its secret, and
    /// the drop still open.
    pub fn admits(&self, secret: &str) -> bool {
        let matches = constant_time_eq(self.secret_hash.as_bytes(), hash_token(secret).as_bytes());
        self.open && matches
    }

    /// Whether `incoming_files` files of `incoming_bytes` in all fit
    /// beside the dir's `files_now` and `bytes_now`: 403 past either
    /// limit.
    pub fn check_room(
        &self,
        (files_now, bytes_now): (usize, u64),
        (incoming_files, incoming_bytes): (usize, u64),
    ) -> Result<(), StoreError> {
        let files_after = files_now.saturating_add(incoming_files);
        if files_after > self.files_max as usize {
            return Err(StoreError::forbidden(format!(
                "this drop link takes {} files at most, and holds {files_now}",
                self.files_max
            )));
        }
        if bytes_now.saturating_add(incoming_bytes) > self.bytes_max {
            return Err(StoreError::forbidden(format!(
                "this drop link takes {} bytes at most, and holds {bytes_now}",
                self.bytes_max
            )));
        }
        Ok(())
    }
}

/// Who may use a drop dir's own routes (`/d/<key>` and below): its
/// owner, and the retain token, which administers everything. Anyone
/// else is answered as if the dir did not exist.
pub fn authorize_drop_dir(
    drop: Option<&DropBox>,
    owner: OwnerProof,
    retain: RetainAuth,
) -> Result<(), StoreError> {
    match drop {
        Some(_) if owner != OwnerProof::Owner && retain != RetainAuth::Valid => {
            Err(StoreError::not_found())
        }
        _ => Ok(()),
    }
}

/// `name` if `taken` says it is free, else the first free of
/// `stem (2).ext`, `stem (3).ext`...: a dropped file never replaces one
/// already there. The extension is what follows the last dot, unless the
/// name starts with its only dot (`.env`).
pub fn unused_name(name: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(name) {
        return name.to_string();
    }
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    };
    (2u64..)
        .map(|n| format!("{stem} ({n}){ext}"))
        .find(|candidate| !taken(candidate))
        .expect("some number is free")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_taken_name_gets_the_next_number_before_its_extension() {
        let taken = ["a.txt", "a (2).txt", ".env", "notes"];
        let is_taken = |n: &str| taken.contains(&n);
        assert_eq!(unused_name("b.txt", is_taken), "b.txt");
        assert_eq!(unused_name("a.txt", is_taken), "a (3).txt");
        assert_eq!(unused_name(".env", is_taken), ".env (2)");
        assert_eq!(unused_name("notes", is_taken), "notes (2)");
    }

    #[test]
    fn a_token_is_the_secret_then_the_key() {
        let secret = "0123456789abcdef0123456789abcdef";
        let token = drop_token(secret, "team-inbox");
        assert_eq!(split_drop_token(&token), Some((secret, "team-inbox")));
        assert_eq!(split_drop_token(secret), None, "no key");
        assert_eq!(split_drop_token("short"), None);
        let upper = drop_token(&secret.to_uppercase(), "k");
        assert_eq!(split_drop_token(&upper), None, "only lowercase hex");
        assert_eq!(split_drop_token("ééééééééééééééééé"), None);
    }

    #[test]
    fn a_drop_admits_its_secret_while_open_and_only_within_its_limits() {
        let mut b = DropRequest {
            files_max: Some(2),
            bytes_max: Some(10),
        }
        .open_box("s3cret", &Limits::DEFAULT);
        assert!(b.admits("s3cret"));
        assert!(!b.admits("other"));
        assert!(b.check_room((1, 5), (1, 5)).is_ok());
        assert_eq!(
            b.check_room((2, 0), (1, 1)).unwrap_err().code(),
            crate::ErrorCode::Forbidden
        );
        assert!(b.check_room((0, 6), (1, 5)).is_err(), "bytes");
        b.open = false;
        assert!(!b.admits("s3cret"), "closed");
        assert!(DropRequest {
            files_max: Some(0),
            bytes_max: None
        }
        .validate()
        .is_err());
        assert!(DropRequest {
            files_max: Some(1001),
            bytes_max: None
        }
        .validate()
        .is_err());
        assert!(DropRequest {
            files_max: None,
            bytes_max: Some(0)
        }
        .validate()
        .is_err());
    }

    #[test]
    fn a_drop_dir_answers_strangers_as_if_it_did_not_exist() {
        let b = DropRequest::default().open_box("s", &Limits::DEFAULT);
        let refused = authorize_drop_dir(Some(&b), OwnerProof::Absent, RetainAuth::Absent);
        assert_eq!(refused.unwrap_err(), StoreError::not_found());
        assert!(authorize_drop_dir(Some(&b), OwnerProof::Wrong, RetainAuth::Absent).is_err());
        assert!(authorize_drop_dir(Some(&b), OwnerProof::Owner, RetainAuth::Absent).is_ok());
        assert!(authorize_drop_dir(Some(&b), OwnerProof::Absent, RetainAuth::Valid).is_ok());
        assert!(authorize_drop_dir(None, OwnerProof::Absent, RetainAuth::Absent).is_ok());
    }

    proptest! {
        /// The name chosen is never taken, and is the name itself when
        /// that is free; a batch named one by one never repeats a name.
        #[test]
        fn chosen_names_are_free_and_distinct(names in proptest::collection::vec("[a-c]{1,2}(\\.[a-c])?", 1..30)) {
            let mut taken: Vec<String> = Vec::new();
            for name in names {
                let chosen = unused_name(&name, |n| taken.iter().any(|t| t == n));
                prop_assert!(!taken.contains(&chosen));
                if !taken.contains(&name) {
                    prop_assert_eq!(&chosen, &name);
                }
                taken.push(chosen);
            }
        }
    }
}
