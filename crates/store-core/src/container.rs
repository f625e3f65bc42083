//! Bundles and dirs: objects holding several named files.
//!
//! A bundle is an immutable snapshot. A dir is mutable: every add, edit or
//! delete slides its lifetime, bumps `updated_at` and records a history
//! entry, and its writes pass a gate (write token, retain token, or none
//! for a show-dir).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::auth::{constant_time_eq, hash_token, Owner, OwnerProof, RetainAuth};
use crate::blob::BlobId;
use crate::error::StoreError;
use crate::lifetime::Lifetime;
use crate::limits::Limits;
use crate::names::validate_file_name;
use crate::time::Timestamp;

/// One file inside a bundle or dir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberFile {
    /// The file's name, unique within its bundle or dir.
    pub name: String,
    /// The media type the file is served with.
    pub content_type: String,
    /// Size of the content, in bytes.
    pub size: u64,
    /// The blob in the blob store that holds the content.
    pub blob: BlobId,
    /// A text file (CONTRACT.md), and so editable in a dir.
    pub text: bool,
    /// When a file of this name was added; replacing it keeps this time.
    pub created_at: Timestamp,
    /// When the content was last written (added, replaced or appended to).
    pub updated_at: Timestamp,
    /// The SHA-256 of the content, computed as it arrived (issue 36);
    /// none for content stored before digests were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<crate::digest::Sha256>,
}

/// `name`, or when `taken` already holds it, `name (2)`, `name (3)`...
/// with the number before the extension, so that every member of a zip
/// made from records whose names may repeat (a gallery's images) differs.
/// Names are compared ignoring case: unzipped on macOS or Windows,
/// `A.jpg` and `a.jpg` would be one file.
pub fn unique_member_name(taken: &mut std::collections::BTreeSet<String>, name: &str) -> String {
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => name.split_at(i),
        _ => (name, ""),
    };
    let mut candidate = name.to_string();
    let mut n = 2;
    while taken.contains(&candidate.to_lowercase()) {
        candidate = format!("{stem} ({n}){ext}");
        n += 1;
    }
    taken.insert(candidate.to_lowercase());
    candidate
}

/// Checks a set of member names: each safe, none repeated, not too many.
pub fn validate_member_names<'a>(
    limits: &Limits,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), StoreError> {
    let mut seen = std::collections::HashSet::new();
    for name in names {
        validate_file_name(limits, name)?;
        if !seen.insert(name) {
            return Err(StoreError::bad_request(format!(
                "the file name {name:?} appears twice"
            )));
        }
    }
    if seen.len() > limits.files_per_container_max {
        return Err(StoreError::bad_request(format!(
            "too many files: at most {} per bundle or dir",
            limits.files_per_container_max
        )));
    }
    Ok(())
}

/// The path segment `GET /d/<key>/history` uses; no dir file may take it.
pub const DIR_HISTORY_SEGMENT: &str = "history";

/// Checks a dir file's name: a safe file name, and not the history route.
pub fn validate_dir_file_name(limits: &Limits, name: &str) -> Result<(), StoreError> {
    validate_file_name(limits, name)?;
    if name == DIR_HISTORY_SEGMENT {
        return Err(StoreError::bad_request(
            "a dir file cannot be named \"history\": /d/<key>/history is the dir's history",
        ));
    }
    Ok(())
}

/// An immutable snapshot of 2 or more files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleRecord {
    /// The bundle's id (`ids::object_id`), as in its URL.
    pub id: String,
    /// When the bundle was created.
    pub created_at: Timestamp,
    /// When the record last changed: creation, then retaining it or a new `?ttl=`.
    pub updated_at: Timestamp,
    /// When the bundle expires: fixed, or indefinite once retained.
    pub lifetime: Lifetime,
    /// The member files, 2 or more.
    pub files: Vec<MemberFile>,
    /// Who made it; none for bundles stored before owner tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// A password reading it needs (or the owner token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<crate::password::Protection>,
}

impl BundleRecord {
    /// The member file named `name` (an exact, case-sensitive match), if any.
    pub fn member(&self, name: &str) -> Option<&MemberFile> {
        self.files.iter().find(|f| f.name == name)
    }

    /// The page a browser opening the bundle is shown, when the bundle is
    /// a small site (SPEC.md: a bundle with an `index.html` serves it).
    pub fn site_index(&self) -> Option<&MemberFile> {
        self.member(SITE_INDEX_NAME)
    }

    /// Total size of the member files, in bytes.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// The member a bundle serves to browsers as its page.
pub const SITE_INDEX_NAME: &str = "index.html";

/// What a dir history entry says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirAction {
    /// A new file.
    Add,
    /// An existing file's content replaced (re-upload or PUT).
    Replace,
    /// Text appended (PATCH).
    Append,
    /// A file deleted.
    Delete,
}

/// One line of a dir's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// When it happened.
    pub ts: Timestamp,
    /// The name of the file acted on.
    pub file: String,
    /// What was done to the file.
    pub action: DirAction,
    /// Bytes written (add, replace, append) or removed (delete).
    pub bytes: u64,
}

/// A caller-chosen write token: 16 to 128 characters of `[A-Za-z0-9_-]`.
pub fn validate_custom_write_token(token: &str) -> Result<(), StoreError> {
    let ok = (16..=128).contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(StoreError::bad_request(
            "write must be 1 or a token of 16 to 128 characters of A-Z, a-z, 0-9, '_' and '-'",
        ))
    }
}

/// Where a write's bytes may come from (see [`DirRecord::room_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// Free room, or room made by evicting other objects.
    MayEvict,
    /// Free room only.
    FreeOnly,
}

/// A mutable collection with a sliding lifetime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirRecord {
    /// The opaque hex id, or the chosen name.
    pub key: String,
    /// Set for named dirs.
    pub name: Option<String>,
    /// When the dir was created.
    pub created_at: Timestamp,
    /// When the dir last changed: every file add, edit or delete moves it, and so do
    /// retaining it and a new `?ttl=`.
    pub updated_at: Timestamp,
    /// The sliding lifetime; indefinite when the dir is retained or a show-dir.
    pub lifetime: Lifetime,
    /// The sliding lifetime chosen at creation (kept when retained, so the
    /// record can still say what it was).
    pub ttl_secs: u64,
    /// Whether the dir appears in the listing `GET /d` (created with `listed=1`).
    pub listed: bool,
    /// A show-dir: indefinite and writable by anyone.
    pub open: bool,
    /// The dir's tags, which the `GET /d` search matches; empty when it has none.
    pub tags: Vec<String>,
    /// SHA-256 of the write token, when created with `write=`.
    pub write_token_hash: Option<String>,
    /// The dir's files.
    pub files: Vec<MemberFile>,
    /// Newest first, at most `Limits::history_limit` entries.
    pub history: Vec<HistoryEntry>,
    /// Who made it; none for dirs stored before owner tokens (and never
    /// `protected`: a dir's writes are guarded by its write token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// A password reading it needs (or the owner token); its writes keep
    /// their own gates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<crate::password::Protection>,
    /// Its drop link, when it collects files from others: then only its
    /// owner reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<crate::drops::DropBox>,
}

/// Which gate a dir write must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirWrite {
    /// Adding, editing or deleting one file.
    File,
    /// Deleting the whole dir.
    WholeDir,
    /// Adding files through its drop link, whose secret the caller has
    /// checked.
    Drop,
}

impl DirRecord {
    /// The file named `name` (an exact, case-sensitive match), if any.
    pub fn file(&self, name: &str) -> Option<&MemberFile> {
        self.files.iter().find(|f| f.name == name)
    }

    /// Total size of the dir's files, in bytes.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Whether `GET /d` lists it: made with `listed=1`, and no password
    /// (a protected object is never listed).
    pub fn is_listed(&self) -> bool {
        self.listed && self.password.is_none() && self.drop.is_none()
    }

    /// Whether the dir is live at `now`: strictly before its expiry, always when retained.
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.lifetime.is_live(now)
    }

    /// The write gate of SPEC.md "Dirs", rules 7 and 8:
    /// - a wrong retain token is always refused;
    /// - a show-dir takes file writes from anyone, but deleting it whole
    ///   needs the retain token;
    /// - a retained dir needs the retain token for every write;
    /// - a dir created with `write=` needs its write token (or the retain
    ///   token, which administers everything);
    /// - any other dir is open to anyone with its URL.
    pub fn authorize(
        &self,
        op: DirWrite,
        retain: RetainAuth,
        write_token: Option<&str>,
        owner: OwnerProof,
    ) -> Result<(), StoreError> {
        if retain == RetainAuth::Invalid {
            return Err(StoreError::write_denied());
        }
        if owner == OwnerProof::Wrong {
            return Err(StoreError::WriteDenied(
                "the owner token does not match this dir".into(),
            ));
        }
        let admin = retain == RetainAuth::Valid;
        if op == DirWrite::Drop {
            return Ok(());
        }
        crate::drops::authorize_drop_dir(self.drop.as_ref(), owner, retain)?;
        if self.open {
            return match op {
                DirWrite::File | DirWrite::Drop => Ok(()),
                DirWrite::WholeDir if admin => Ok(()),
                DirWrite::WholeDir => Err(StoreError::WriteDenied(
                    "deleting a show-dir needs the retain token".into(),
                )),
            };
        }
        if admin {
            return Ok(());
        }
        if self.lifetime.is_retained() {
            return Err(StoreError::WriteDenied(
                "this dir is retained: writes and deletes need the retain token".into(),
            ));
        }
        // The owner passes the write gate, as the write token does.
        match (&self.write_token_hash, write_token) {
            (None, _) => Ok(()),
            _ if owner == OwnerProof::Owner => Ok(()),
            (Some(hash), Some(token)) if constant_time_eq(hash.as_bytes(), hash_token(token).as_bytes()) => Ok(()),
            (Some(_), _) => Err(StoreError::WriteDenied(
                "this dir is write-protected: send its write token as X-Store-Write or write=<token>".into(),
            )),
        }
    }

    /// Records activity: the lifetime slides (capped at
    /// `dir_sliding_cap_secs` from now), `updated_at` moves, and the
    /// history gains an entry, the oldest dropped past `history_limit`.
    pub fn record_activity(
        &mut self,
        limits: &Limits,
        now: Timestamp,
        file: &str,
        action: DirAction,
        bytes: u64,
    ) {
        self.lifetime.slide(now, limits.dir_sliding_cap_secs);
        self.updated_at = now;
        self.history.insert(
            0,
            HistoryEntry {
                ts: now,
                file: file.to_string(),
                action,
                bytes,
            },
        );
        self.history.truncate(limits.history_limit);
    }

    /// Adds a file, or replaces the one of the same name (which makes adds
    /// retry-safe). Returns the replaced file, whose blob the caller frees.
    pub fn upsert_file(
        &mut self,
        limits: &Limits,
        now: Timestamp,
        file: MemberFile,
    ) -> Result<Option<MemberFile>, StoreError> {
        validate_dir_file_name(limits, &file.name)?;
        let (name, bytes) = (file.name.clone(), file.size);
        let old = match self.files.iter_mut().find(|f| f.name == file.name) {
            Some(slot) => {
                let created_at = slot.created_at;
                let old = std::mem::replace(slot, file);
                slot.created_at = created_at;
                Some(old)
            }
            None => {
                if self.files.len() >= limits.files_per_container_max {
                    return Err(StoreError::bad_request(format!(
                        "this dir is full: at most {} files",
                        limits.files_per_container_max
                    )));
                }
                self.files.push(file);
                None
            }
        };
        let action = if old.is_some() {
            DirAction::Replace
        } else {
            DirAction::Add
        };
        self.record_activity(limits, now, &name, action, bytes);
        Ok(old)
    }

    /// Removes a file; returns it so the caller can free its blob.
    pub fn remove_file(
        &mut self,
        limits: &Limits,
        now: Timestamp,
        name: &str,
    ) -> Result<MemberFile, StoreError> {
        let pos = self
            .files
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(StoreError::not_found)?;
        let old = self.files.remove(pos);
        self.record_activity(limits, now, name, DirAction::Delete, old.size);
        Ok(old)
    }

    /// How a write that leaves the dir holding `size_after` bytes may take
    /// its room in the pool. A show-dir is written by anyone and never
    /// evicted, so a writer without the retain token gets only free room
    /// (it may never evict another user's objects), and at most
    /// `show_dir_bytes_max` bytes in the dir (507 past it). Everyone else,
    /// and any write to another dir, may evict as usual.
    pub fn room_for(
        &self,
        limits: &Limits,
        retain: RetainAuth,
        size_after: u64,
    ) -> Result<Room, StoreError> {
        if !self.open || retain == RetainAuth::Valid {
            return Ok(Room::MayEvict);
        }
        let show_dir_bytes_max = limits.show_dir_bytes_max;
        if size_after > show_dir_bytes_max {
            return Err(StoreError::PoolFull {
                message: format!(
                    "this show-dir is full: it holds at most {show_dir_bytes_max} bytes from writers without the retain token; delete some files first"
                ),
                retry_after_secs: limits.pool_full_retry_after_secs,
            });
        }
        Ok(Room::FreeOnly)
    }

    /// Makes the dir a show-dir: indefinite and open to every writer.
    pub fn make_show(&mut self) {
        self.open = true;
        self.lifetime = Lifetime::Indefinite;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_member_names_are_numbered_before_the_extension() {
        let mut taken = std::collections::BTreeSet::new();
        let names: Vec<String> = ["a.jpg", "a.jpg", "a.jpg", "b", "b", ".hidden", ".hidden"]
            .iter()
            .map(|n| unique_member_name(&mut taken, n))
            .collect();
        assert_eq!(
            names,
            [
                "a.jpg",
                "a (2).jpg",
                "a (3).jpg",
                "b",
                "b (2)",
                ".hidden",
                ".hidden (2)"
            ]
        );
        // A name that happens to look numbered is never given twice, and
        // case does not make a name differ.
        assert_eq!(unique_member_name(&mut taken, "a (2).jpg"), "a (2) (2).jpg");
        assert_eq!(unique_member_name(&mut taken, "A.JPG"), "A (4).JPG");
    }
    use proptest::prelude::*;

    const L: Limits = Limits::DEFAULT;

    fn dir(now: Timestamp) -> DirRecord {
        DirRecord {
            key: "abcde".into(),
            name: Some("abcde".into()),
            created_at: now,
            updated_at: now,
            lifetime: Lifetime::sliding(now, 14_400),
            ttl_secs: 14_400,
            listed: false,
            open: false,
            tags: vec![],
            write_token_hash: None,
            files: vec![],
            history: vec![],
            owner: None,
            password: None,
            drop: None,
        }
    }

    fn file(name: &str, size: u64, now: Timestamp) -> MemberFile {
        MemberFile {
            name: name.into(),
            content_type: "text/plain".into(),
            size,
            blob: BlobId(format!("b{name}{size}")),
            text: true,
            created_at: now,
            updated_at: now,
            sha256: None,
        }
    }

    #[test]
    fn gates() {
        let now = Timestamp::EPOCH;
        let mut d = dir(now);
        use DirWrite::*;
        use RetainAuth::*;
        assert!(d.authorize(File, Absent, None, OwnerProof::Absent).is_ok());
        assert!(d
            .authorize(File, Invalid, None, OwnerProof::Absent)
            .is_err());
        d.write_token_hash = Some(hash_token("0123456789abcdef"));
        assert!(d.authorize(File, Absent, None, OwnerProof::Absent).is_err());
        assert!(d
            .authorize(File, Absent, Some("wrong-token-0000"), OwnerProof::Absent)
            .is_err());
        assert!(d
            .authorize(File, Absent, Some("0123456789abcdef"), OwnerProof::Absent)
            .is_ok());
        assert!(d
            .authorize(WholeDir, Valid, None, OwnerProof::Absent)
            .is_ok());
        // The owner passes the write gate; a wrong owner token is refused
        // even where no token is needed.
        d.owner = Some(Owner::new("owner-token", false));
        assert!(d.authorize(File, Absent, None, OwnerProof::Owner).is_ok());
        assert!(d
            .authorize(WholeDir, Absent, None, OwnerProof::Owner)
            .is_ok());
        d.write_token_hash = None;
        assert!(d.authorize(File, Absent, None, OwnerProof::Wrong).is_err());
        d.lifetime = Lifetime::Indefinite;
        assert!(
            d.authorize(File, Absent, None, OwnerProof::Owner).is_err(),
            "the owner token does not stand in for the retain token"
        );
        assert!(
            d.authorize(File, Absent, None, OwnerProof::Absent).is_err(),
            "retained dirs need the token"
        );
        d.make_show();
        assert!(
            d.authorize(File, Absent, None, OwnerProof::Absent).is_ok(),
            "show-dirs are open"
        );
        assert!(d
            .authorize(WholeDir, Absent, None, OwnerProof::Absent)
            .is_err());
        assert!(d
            .authorize(WholeDir, Valid, None, OwnerProof::Absent)
            .is_ok());
    }

    #[test]
    fn custom_tokens() {
        assert!(validate_custom_write_token("abcdefghijklmnop").is_ok());
        assert!(validate_custom_write_token("short").is_err());
        assert!(validate_custom_write_token("has space in it!!").is_err());
        assert!(validate_custom_write_token(&"a".repeat(129)).is_err());
        assert_eq!(hash_token("abc").len(), 64);
    }

    #[test]
    fn member_names() {
        assert!(validate_member_names(&L, ["a", "b"]).is_ok());
        assert!(validate_member_names(&L, ["a", "a"]).is_err());
        assert!(validate_member_names(&L, ["a", "../b"]).is_err());
        let many: Vec<String> = (0..=L.files_per_container_max)
            .map(|i| format!("f{i}"))
            .collect();
        assert!(validate_member_names(&L, many.iter().map(String::as_str)).is_err());
    }

    #[test]
    fn upsert_replaces_and_keeps_created_at() {
        let t0 = Timestamp::from_secs(100);
        let t1 = Timestamp::from_secs(200);
        let mut d = dir(t0);
        assert!(d.upsert_file(&L, t0, file("a", 1, t0)).unwrap().is_none());
        let old = d.upsert_file(&L, t1, file("a", 2, t1)).unwrap().unwrap();
        assert_eq!(old.size, 1);
        assert_eq!(d.files.len(), 1);
        assert_eq!(d.files[0].created_at, t0);
        assert_eq!(d.files[0].size, 2);
        assert_eq!(d.history[0].action, DirAction::Replace);
        assert_eq!(d.history[1].action, DirAction::Add);
        assert_eq!(d.updated_at, t1);
        assert!(d.upsert_file(&L, t1, file("history", 1, t1)).is_err());
        assert!(d.remove_file(&L, t1, "missing").is_err());
        assert_eq!(d.remove_file(&L, t1, "a").unwrap().size, 2);
        assert_eq!(d.history[0].action, DirAction::Delete);
    }

    proptest! {
        /// History stays newest first and capped; the lifetime never passes
        /// the 30-day cap; every activity moves `updated_at` to now.
        #[test]
        fn activity_keeps_history_bounded_and_ordered(
            steps in prop::collection::vec((0u64..20_000, 0usize..3, 0u8..4), 1..400),
        ) {
            let mut now = Timestamp::from_secs(1_700_000_000);
            let mut d = dir(now);
            for (dt, which, name) in steps {
                now = now.plus_secs(dt);
                if !d.is_live(now) { break; }
                let name = format!("f{name}");
                match which {
                    0 | 1 => { d.upsert_file(&L, now, file(&name, dt, now)).unwrap(); }
                    _ => { let _ = d.remove_file(&L, now, &name); }
                }
                prop_assert!(d.history.len() <= L.history_limit);
                prop_assert!(d.history.windows(2).all(|w| w[0].ts >= w[1].ts));
                prop_assert!(d.lifetime.expires_at().unwrap() <= now.plus_secs(L.dir_sliding_cap_secs));
                if d.history.first().is_some_and(|h| h.ts == now) {
                    prop_assert_eq!(d.updated_at, now);
                }
            }
        }
    }
}
