//! The JSON shapes of SPEC.md "Resources and their fields" for files,
//! bundles and dirs: plain data built from a domain record, the base URL
//! and `now`. Every URL in them comes from the route table (`url_for`).

use schemars::JsonSchema;
use serde::Serialize;

use store_core::container::{DirAction, MemberFile};
use store_core::{BundleRecord, DirRecord, FileRecord, HistoryEntry, Lifetime, Object, Timestamp};

use crate::router::{url_for, RouteId};

/// `type` of the persistence object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PersistenceType {
    Single,
    Dir,
    Bundle,
}

/// SPEC.md "Persistence object".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Persistence {
    #[serde(rename = "type")]
    pub kind: PersistenceType,
    pub expires_at: Option<String>,
    pub extendable_by: &'static str,
    pub max_age: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention: Option<&'static str>,
}

impl Persistence {
    pub fn new(kind: PersistenceType, lifetime: &Lifetime) -> Self {
        Self {
            kind,
            expires_at: lifetime.expires_at().map(|t| t.to_string()),
            extendable_by: match lifetime {
                Lifetime::Sliding { .. } => "activity",
                _ => "none",
            },
            max_age: lifetime.max_age_secs(),
            retention: lifetime.is_retained().then_some("indefinite"),
        }
    }
}

/// SPEC.md "Single file record", plus `created_at` and `once`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileView {
    pub id: String,
    pub url: String,
    pub size: u64,
    pub name: String,
    pub content_type: String,
    pub editable: bool,
    pub tags: Vec<String>,
    pub persistence: Persistence,
    pub expires_in: Option<u64>,
    pub expires_at: Option<String>,
    pub created_at: String,
    pub once: bool,
    /// Whole downloads left before the file goes (`once=1`: 1;
    /// `max_downloads`: the count); absent when downloads are not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downloads_left: Option<u32>,
    /// Whether changes need the owner token (`protect=1`).
    pub protected: bool,
    /// `"age"` for a file its client encrypted (`encrypted=age`); absent
    /// for every other file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<&'static str>,
    /// `true` when reading it needs a password (or the owner token);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
    /// Present once: in the answer to the upload that made the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner_token: Option<String>,
}

impl FileView {
    pub fn new(file: &FileRecord, base_url: &str, now: Timestamp) -> Self {
        let expires_at = file.lifetime.expires_at();
        Self {
            id: file.id.clone(),
            url: url_for(base_url, RouteId::GetFile, &[&file.id]),
            size: file.size,
            name: file.name.clone(),
            content_type: file.content_type.clone(),
            editable: file.text,
            tags: file.tags.clone(),
            persistence: Persistence::new(PersistenceType::Single, &file.lifetime),
            expires_in: expires_at.map(|at| now.secs_until(at)),
            expires_at: expires_at.map(|t| t.to_string()),
            created_at: file.created_at.to_string(),
            once: file.once,
            downloads_left: file.downloads_remaining(),
            protected: file.owner.as_ref().is_some_and(|o| o.protected),
            encrypted: file.encrypted.map(store_core::Encryption::name),
            password: file.password.is_some(),
            owner_token: None,
        }
    }

    /// The answer to the upload that made the file, with its owner token.
    pub fn created(made: &store_app::Created<FileRecord>, base_url: &str) -> Self {
        Self {
            owner_token: Some(made.owner_token.clone()),
            ..Self::new(&made.record, base_url, made.now)
        }
    }
}

/// SPEC.md "Retain response".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RetainView {
    pub id: String,
    pub url: String,
    pub retention: &'static str,
    pub expires_at: Option<String>,
    pub persistence: Persistence,
}

impl RetainView {
    fn new(id: &str, url: String, kind: PersistenceType) -> Self {
        Self {
            id: id.to_string(),
            url,
            retention: "indefinite",
            expires_at: None,
            persistence: Persistence::new(kind, &Lifetime::Indefinite),
        }
    }

    /// The answer to retaining a single file or a bundle.
    pub fn of_object(obj: &Object, base_url: &str) -> Self {
        let (id, kind) = match obj {
            Object::Bundle(b) => (&b.id, PersistenceType::Bundle),
            Object::File(f) => (&f.id, PersistenceType::Single),
            // Only files and bundles are retained by id.
            _ => unreachable!("retain answers a file or a bundle"),
        };
        Self::new(id, url_for(base_url, RouteId::GetFile, &[id]), kind)
    }

    /// The answer to retaining a dir.
    pub fn of_dir(dir: &DirRecord, base_url: &str) -> Self {
        let url = url_for(base_url, RouteId::GetDir, &[&dir.key]);
        Self::new(&dir.key, url, PersistenceType::Dir)
    }
}

/// SPEC.md "Browse entry".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BrowseEntry {
    pub id: String,
    pub url: String,
    pub name: String,
    pub content_type: String,
    pub size: u64,
    pub tags: Vec<String>,
    pub created_at: String,
    pub expires_at: Option<String>,
}

impl BrowseEntry {
    pub fn new(file: &FileRecord, base_url: &str) -> Self {
        Self {
            id: file.id.clone(),
            url: url_for(base_url, RouteId::GetFile, &[&file.id]),
            name: file.name.clone(),
            content_type: file.content_type.clone(),
            size: file.size,
            tags: file.tags.clone(),
            created_at: file.created_at.to_string(),
            expires_at: file.lifetime.expires_at().map(|t| t.to_string()),
        }
    }
}

/// A file of a bundle (SPEC.md "Bundle record", `files`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MemberView {
    pub name: String,
    pub url: String,
    pub size: u64,
    pub content_type: String,
}

/// SPEC.md "Bundle record", plus `created_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BundleView {
    pub id: String,
    pub url: String,
    pub bundle: bool,
    pub editable: bool,
    pub persistence: Persistence,
    pub files: Vec<MemberView>,
    pub expires_at: Option<String>,
    pub created_at: String,
    /// Whether changes need the owner token (`protect=1`).
    pub protected: bool,
    /// `true` when reading it needs a password (or the owner token);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
    /// Present once: in the answer to the upload that made the bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner_token: Option<String>,
}

impl BundleView {
    /// The answer to the upload that made the bundle, with its owner token.
    pub fn created(made: &store_app::Created<BundleRecord>, base_url: &str) -> Self {
        Self {
            owner_token: Some(made.owner_token.clone()),
            ..Self::new(&made.record, base_url)
        }
    }

    pub fn new(b: &BundleRecord, base_url: &str) -> Self {
        Self {
            id: b.id.clone(),
            files: b
                .files
                .iter()
                .map(|f| MemberView {
                    name: f.name.clone(),
                    url: url_for(base_url, RouteId::GetBundleMember, &[&b.id, &f.name]),
                    size: f.size,
                    content_type: f.content_type.clone(),
                })
                .collect(),
            url: url_for(base_url, RouteId::GetFile, &[&b.id]),
            bundle: true,
            editable: false,
            persistence: Persistence::new(PersistenceType::Bundle, &b.lifetime),
            expires_at: b.lifetime.expires_at().map(|t| t.to_string()),
            created_at: b.created_at.to_string(),
            protected: b.owner.as_ref().is_some_and(|o| o.protected),
            password: b.password.is_some(),
            owner_token: None,
        }
    }
}

/// A file of a dir (SPEC.md "Dir record", `files`), plus its times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DirFileView {
    pub name: String,
    pub url: String,
    pub size: u64,
    pub content_type: String,
    pub editable: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl DirFileView {
    pub fn new(f: &MemberFile, key: &str, base_url: &str) -> Self {
        Self {
            name: f.name.clone(),
            url: url_for(base_url, RouteId::GetDirFile, &[key, &f.name]),
            size: f.size,
            content_type: f.content_type.clone(),
            editable: f.text,
            created_at: f.created_at.to_string(),
            updated_at: f.updated_at.to_string(),
        }
    }
}

/// SPEC.md "Dir record" (and, with `open: true`, "Show-dir record"), plus
/// `created_at`, `updated_at` and totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DirView {
    pub id: String,
    pub url: String,
    pub dir: bool,
    pub editable: bool,
    pub persistence: Persistence,
    pub files: Vec<DirFileView>,
    pub expires_at: Option<String>,
    pub max_age: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub listed: bool,
    pub open: bool,
    pub tags: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
    pub file_count: usize,
    pub bytes: u64,
    /// Present once: in the answer to the creation that set it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_token: Option<String>,
    /// Whether writes need a write token (the dir was made with `write=`).
    pub write_protected: bool,
    /// `true` when reading it needs a password (or the owner token);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
    /// Present once: in the answer to the creation that made the dir.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner_token: Option<String>,
    /// Present once: the drop link, in the answer to the creation that
    /// made it (`drop=1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_url: Option<String>,
    /// A dir with a drop link: its bounds, and whether it still takes
    /// files; absent for every other dir.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop: Option<DropView>,
}

/// A drop link's bounds (`drop` of a dir's record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DropView {
    /// The most files it takes.
    pub files_max: u32,
    /// The most bytes it takes.
    pub bytes_max: u64,
    /// Whether it still takes files (its owner may close it).
    pub open: bool,
}

impl DirView {
    /// The answer to creating a dir: its record, with the write token in
    /// the clear when this creation set one.
    pub fn made(made: &store_app::DirMade, base_url: &str) -> Self {
        Self {
            write_token: made.write_token.clone(),
            owner_token: made.owner_token.clone(),
            drop_url: made
                .drop_token
                .as_ref()
                .map(|t| url_for(base_url, RouteId::DropPage, &[t])),
            ..Self::new(&made.dir, base_url)
        }
    }

    pub fn new(d: &DirRecord, base_url: &str) -> Self {
        let mut v = Self::summary(d, base_url);
        v.files = d
            .files
            .iter()
            .map(|f| DirFileView::new(f, &d.key, base_url))
            .collect();
        v
    }

    /// The record without its file list, for `GET /d` entries.
    pub fn summary(d: &DirRecord, base_url: &str) -> Self {
        Self {
            id: d.key.clone(),
            url: url_for(base_url, RouteId::GetDir, &[&d.key]),
            dir: true,
            editable: false,
            persistence: Persistence::new(PersistenceType::Dir, &d.lifetime),
            files: vec![],
            expires_at: d.lifetime.expires_at().map(|t| t.to_string()),
            max_age: d.ttl_secs,
            name: d.name.clone(),
            listed: d.listed,
            open: d.open,
            tags: d.tags.clone(),
            created_at: d.created_at.to_string(),
            updated_at: d.updated_at.to_string(),
            file_count: d.files.len(),
            bytes: d.size(),
            write_token: None,
            write_protected: d.write_token_hash.is_some(),
            password: d.password.is_some(),
            owner_token: None,
            drop_url: None,
            drop: d.drop.as_ref().map(|b| DropView {
                files_max: b.files_max,
                bytes_max: b.bytes_max,
                open: b.open,
            }),
        }
    }
}

/// SPEC.md "Dir history entry": `ts` is Unix seconds as a float.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistoryView {
    pub ts: f64,
    pub file: String,
    pub action: DirAction,
    pub bytes: u64,
}

impl From<&HistoryEntry> for HistoryView {
    fn from(h: &HistoryEntry) -> Self {
        Self {
            ts: h.ts.as_secs_f64(),
            file: h.file.clone(),
            action: h.action,
            bytes: h.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store_core::BlobId;

    #[test]
    fn file_view_has_every_spec_field() {
        let now = Timestamp::from_secs(1_795_359_845);
        let f = FileRecord {
            id: "abc".into(),
            name: "a.txt".into(),
            content_type: "text/plain".into(),
            size: 3,
            blob: BlobId("b".into()),
            created_at: now,
            updated_at: now,
            lifetime: Lifetime::fixed(now, 14_400),
            once: false,
            tags: vec!["x".into()],
            text: true,
            link: false,
            thumbs: Default::default(),
            owner: None,
            downloads_left: None,
            encrypted: None,
            password: None,
            sha256: None,
        };
        let v = serde_json::to_value(FileView::new(&f, "http://h", now)).unwrap();
        assert_eq!(v["url"], "http://h/abc");
        assert_eq!(v["expires_in"], 14_400);
        assert_eq!(v["expires_at"], "2026-11-22T19:04:05Z");
        assert_eq!(v["persistence"]["type"], "single");
        assert_eq!(v["persistence"]["extendable_by"], "none");
        assert!(v["persistence"]["max_age"].is_null());
        assert!(v["persistence"].get("retention").is_none());
        assert_eq!(v["editable"], true);

        let kept = FileRecord {
            lifetime: Lifetime::Indefinite,
            ..f
        };
        let v = serde_json::to_value(FileView::new(&kept, "http://h", now)).unwrap();
        assert!(v["expires_in"].is_null());
        assert!(v["expires_at"].is_null());
        assert!(v["persistence"]["expires_at"].is_null());
        assert_eq!(v["persistence"]["retention"], "indefinite");
    }
}

#[cfg(test)]
mod container_view_tests {
    use super::*;
    use store_core::BlobId;

    #[test]
    fn dir_view_shapes() {
        let now = Timestamp::from_secs(1_795_359_845);
        let d = DirRecord {
            key: "proj-x".into(),
            name: Some("proj-x".into()),
            created_at: now,
            updated_at: now,
            lifetime: Lifetime::sliding(now, 604_800),
            ttl_secs: 604_800,
            listed: true,
            open: false,
            tags: vec![],
            write_token_hash: None,
            files: vec![MemberFile {
                name: "a b.txt".into(),
                content_type: "text/plain".into(),
                size: 3,
                blob: BlobId("x".into()),
                text: true,
                created_at: now,
                updated_at: now,
                sha256: None,
            }],
            history: vec![],
            owner: None,
            password: None,
            drop: None,
        };
        let v = serde_json::to_value(DirView::new(&d, "http://h")).unwrap();
        assert_eq!(v["url"], "http://h/d/proj-x");
        assert_eq!(v["dir"], true);
        assert_eq!(v["editable"], false);
        assert_eq!(v["persistence"]["type"], "dir");
        assert_eq!(v["persistence"]["extendable_by"], "activity");
        assert_eq!(v["persistence"]["max_age"], 604_800);
        assert_eq!(v["max_age"], 604_800);
        assert_eq!(v["files"][0]["url"], "http://h/d/proj-x/a%20b.txt");
        assert_eq!(v["files"][0]["editable"], true);
        assert!(v.get("write_token").is_none());
    }
    #[test]
    fn retain_answers_name_their_kind() {
        let store_core::Object::Dir(mut d) = store_testkit::suite::sample_dir("kept-dir", false)
        else {
            unreachable!("sample_dir makes a dir")
        };
        d.lifetime = Lifetime::Indefinite;
        let v = serde_json::to_value(RetainView::of_dir(&d, "http://h")).unwrap();
        assert_eq!(v["url"], "http://h/d/kept-dir");
        assert_eq!(v["retention"], "indefinite");
        assert!(v["expires_at"].is_null());
        assert_eq!(v["persistence"]["type"], "dir");
        assert_eq!(v["persistence"]["retention"], "indefinite");
    }
}
