//! What a client asks for when it creates a file or a dir, and which
//! parameters may go together: the rules every creation is checked by
//! before a byte of its body is read. The HTTP layer fills these from the
//! query (and a form's fields); the use cases take them as they are.

use crate::container::validate_custom_write_token;
use crate::encryption::Encryption;
use crate::error::StoreError;
use crate::limits::Limits;
use crate::names::{apply_tags, validate_file_name, validate_memorable_name};
use crate::password::Password;

/// An upload's parameters, checked before its body is read. A resumable
/// upload keeps them in its record until its last byte.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct NewFile {
    /// `name=`, or the multipart part's file name.
    pub name: Option<String>,
    /// The type the client declared (request or part Content-Type).
    pub declared_type: Option<String>,
    /// Requested lifetime in seconds, before clamping.
    pub ttl_secs: Option<u64>,
    /// `once=1`: the file is burnt by its first download.
    pub once: bool,
    /// Tags to set on the file; empty for none.
    pub tags: Vec<String>,
    /// `share=<name>`: store into the named dir instead.
    pub share: Option<String>,
    /// `protect=1`: writes and deletes need the owner token.
    pub protect: bool,
    /// `max_downloads=N`: removed after its Nth whole download.
    pub max_downloads: Option<u32>,
    /// `encrypted=age`: the body is a file its client encrypted, stored
    /// and served as it came.
    pub encrypted: Option<Encryption>,
    /// The password reading the file (or bundle) will need: from
    /// X-Store-Password or a form's `password` field, never from a URL.
    /// Never stored: a resumable upload keeps [`NewFile::password_hash`].
    #[serde(skip)]
    pub password: Option<Password>,
    /// The password's hash, made when a resumable upload was created, so
    /// that its record never holds the password itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_hash: Option<String>,
}

impl NewFile {
    /// Every rule that does not need the bytes: file name, tags, share name,
    /// download limit, and the once/share combination.
    pub fn validate(&self, limits: &Limits) -> Result<(), StoreError> {
        if let Some(name) = &self.name {
            validate_file_name(limits, name)?;
        }
        apply_tags(limits, &[], &self.tags, &[])?;
        self.downloads(limits)?;
        if let Some(share) = &self.share {
            if self.once || self.max_downloads.is_some() {
                return Err(StoreError::bad_request(
                    "once=1 and max_downloads cannot be combined with share: download limits apply to single files only",
                ));
            }
            if self.encrypted.is_some() {
                return Err(StoreError::bad_request(
                    "encrypted applies to single files, not to a shared dir's",
                ));
            }
            if self.password.is_some() {
                return Err(StoreError::bad_request(
                    "a password applies to a single file, a bundle or a dir of its own, not to a shared dir's files: make a dir with dir=1 and a password",
                ));
            }
            validate_memorable_name(limits, share)?;
            if self.protect {
                return Err(StoreError::bad_request(
                    "protect=1 applies to single files and bundles: a shared dir is guarded by its write token",
                ));
            }
        }
        Ok(())
    }
}

impl NewFile {
    /// The rules of a bundle (two or more file parts) beyond
    /// [`NewFile::validate`]: download limits and tags are a single
    /// file's.
    pub fn validate_bundle(&self, limits: &Limits) -> Result<(), StoreError> {
        self.validate(limits)?;
        if self.once || self.max_downloads.is_some() {
            return Err(StoreError::bad_request(
                "once=1 and max_downloads apply to single files only, not to bundles",
            ));
        }
        if !self.tags.is_empty() {
            return Err(StoreError::bad_request(
                "tags apply to single files and dirs, not to bundles",
            ));
        }
        if self.encrypted.is_some() {
            return Err(StoreError::bad_request(
                "encrypted applies to single files, not to bundles: encrypt a tar or zip of them as one file",
            ));
        }
        Ok(())
    }

    /// The rules of an import's file beyond [`NewFile::validate`]: an
    /// import makes one file, never a shared dir's.
    pub fn validate_import(&self, limits: &Limits) -> Result<(), StoreError> {
        self.validate(limits)?;
        if self.share.is_some() {
            return Err(StoreError::bad_request("share does not apply to import"));
        }
        if self.encrypted.is_some() {
            return Err(StoreError::bad_request(
                "encrypted does not apply to import: upload the encrypted file itself",
            ));
        }
        Ok(())
    }
}

impl NewFile {
    /// The whole downloads the file may have, if they are counted:
    /// `once=1` is `max_downloads=1`; a count outside 1 to
    /// `limits.downloads_max`, or `once=1` with another count, is refused.
    pub fn downloads(&self, limits: &Limits) -> Result<Option<u32>, StoreError> {
        match (self.once, self.max_downloads) {
            (_, Some(n)) if n == 0 || n > limits.downloads_max => Err(StoreError::bad_request(
                format!("max_downloads must be 1 to {}", limits.downloads_max),
            )),
            (true, Some(n)) if n != 1 => Err(StoreError::bad_request(
                "once=1 is max_downloads=1: give one or the other",
            )),
            (true, _) => Ok(Some(1)),
            (false, n) => Ok(n),
        }
    }
}

/// `write=` on creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteRequest {
    /// `write=1`: the server makes a token.
    Generate,
    /// `write=<token>`: the caller's own (16-128 of `[A-Za-z0-9_-]`).
    Custom(String),
}

/// POST /?dir=1's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewDir {
    /// `name=`: the dir's memorable name; None makes an unnamed dir with a
    /// random id.
    pub name: Option<String>,
    /// `listed=1`: the dir appears in `GET /d`.
    pub listed: bool,
    /// Tags to set on the dir; empty for none.
    pub tags: Vec<String>,
    /// Requested sliding lifetime in seconds, clamped to the dir limits; None
    /// takes the default.
    pub ttl_secs: Option<u64>,
    /// `write=`: the write token to set; None sets none.
    pub write: Option<WriteRequest>,
    /// `show=1`: make a show-dir, indefinite and open to every writer. It
    /// needs the retain token.
    pub show: bool,
    /// `protect=1`, which a dir refuses: its write token guards it.
    pub protect: bool,
    /// The password reading the dir will need (X-Store-Password or a
    /// form's `password` field).
    pub password: Option<Password>,
    /// `drop=1`: a drop link collects files into it, and only its owner
    /// reads it.
    pub drop: Option<crate::drops::DropRequest>,
}

impl NewDir {
    /// Checks every rule that needs no bytes: `protect=1` (refused), the
    /// name, the tags and a custom write token. The first that fails is
    /// the error (400).
    pub fn validate(&self, limits: &Limits) -> Result<(), StoreError> {
        if self.protect {
            return Err(StoreError::bad_request(
                "protect=1 applies to single files and bundles: a dir is guarded by its write token (write=1)",
            ));
        }
        if let Some(drop) = &self.drop {
            drop.validate()?;
            let clash = [
                (self.show, "show=1"),
                (self.listed, "listed=1"),
                (self.write.is_some(), "write="),
                (self.password.is_some(), "a password"),
            ];
            if let Some((_, what)) = clash.iter().find(|(on, _)| *on) {
                return Err(StoreError::bad_request(format!(
                    "{what} cannot go with drop=1: a drop dir is read by its owner only and takes files through its drop link"
                )));
            }
        }
        if self.show && self.password.is_some() {
            return Err(StoreError::bad_request(
                "a show-dir is public: it cannot have a password",
            ));
        }
        if let Some(name) = &self.name {
            validate_memorable_name(limits, name)?;
        }
        apply_tags(limits, &[], &self.tags, &[])?;
        if let Some(WriteRequest::Custom(t)) = &self.write {
            validate_custom_write_token(t)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn new_file(once: bool, max_downloads: Option<u32>, share: bool, protect: bool) -> NewFile {
        NewFile {
            once,
            max_downloads,
            share: share.then(|| "team-notes".to_string()),
            protect,
            ..NewFile::default()
        }
    }

    #[test]
    fn encrypted_is_a_single_files() {
        let limits = Limits::DEFAULT;
        let age = NewFile {
            encrypted: Some(Encryption::Age),
            once: true,
            protect: true,
            ..NewFile::default()
        };
        assert!(age.validate(&limits).is_ok());
        assert!(age.validate_bundle(&limits).is_err());
        assert!(age.validate_import(&limits).is_err());
        let shared = NewFile {
            encrypted: Some(Encryption::Age),
            share: Some("team-notes".into()),
            ..NewFile::default()
        };
        assert!(shared.validate(&limits).is_err());
        assert!(NewFile::default().validate_bundle(&limits).is_ok());
    }

    proptest! {
        /// Which upload parameters combine: download limits and
        /// `protect=1` are a single file's or a bundle's, never a shared
        /// dir's; `once=1` is `max_downloads=1`; counts run from 1 to the
        /// limit.
        #[test]
        fn upload_parameters_combine_as_the_contract_says(
            once in any::<bool>(),
            max_downloads in proptest::option::of(0u32..1_200),
            share in any::<bool>(),
            protect in any::<bool>(),
        ) {
            let limits = Limits::DEFAULT;
            let count_ok = match max_downloads {
                Some(n) => (1..=limits.downloads_max).contains(&n) && (!once || n == 1),
                None => true,
            };
            let share_ok = !share || (!once && max_downloads.is_none() && !protect);
            let verdict = new_file(once, max_downloads, share, protect).validate(&limits);
            prop_assert_eq!(verdict.is_ok(), count_ok && share_ok, "{:?}", verdict);
            if let Err(e) = verdict {
                prop_assert_eq!(e.code(), crate::ErrorCode::BadRequest);
            }
        }

        /// A dir refuses `protect=1` whatever else it asks for, and
        /// otherwise is judged by its name, tags and write token alone.
        #[test]
        fn a_dir_refuses_protect_whatever_else_it_asks(
            protect in any::<bool>(),
            listed in any::<bool>(),
            show in any::<bool>(),
            generate in any::<bool>(),
        ) {
            let dir = NewDir {
                name: Some("team-notes".into()),
                listed,
                show,
                protect,
                write: generate.then_some(WriteRequest::Generate),
                ..NewDir::default()
            };
            let verdict = dir.validate(&Limits::DEFAULT);
            prop_assert_eq!(verdict.is_ok(), !protect, "{:?}", verdict);
        }
    }

    proptest! {
        /// A bundle takes a file's rules, less download limits and tags;
        /// an import takes them, less `share`.
        #[test]
        fn bundles_and_imports_narrow_a_files_rules(
            once in any::<bool>(),
            max_downloads in proptest::option::of(1u32..3),
            share in any::<bool>(),
            tagged in any::<bool>(),
        ) {
            let limits = Limits::DEFAULT;
            let mut req = new_file(once, max_downloads, share, false);
            if tagged {
                req.tags = vec!["notes".into()];
            }
            let file_ok = req.validate(&limits).is_ok();
            let bundle = req.validate_bundle(&limits);
            prop_assert_eq!(
                bundle.is_ok(),
                file_ok && !once && max_downloads.is_none() && !tagged,
                "{:?}", bundle
            );
            let import = req.validate_import(&limits);
            prop_assert_eq!(import.is_ok(), file_ok && !share, "{:?}", import);
        }
    }

    #[test]
    fn a_custom_write_token_is_checked() {
        let dir = |t: &str| NewDir {
            write: Some(WriteRequest::Custom(t.into())),
            ..NewDir::default()
        };
        assert!(dir("short").validate(&Limits::DEFAULT).is_err());
        assert!(dir("a-long-enough-token_1234")
            .validate(&Limits::DEFAULT)
            .is_ok());
    }
}
