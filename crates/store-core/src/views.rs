//! The JSON shapes of SPEC.md "Resources and their fields". They are plain
//! data built from a record, the base URL and `now`, so that every adapter
//! (HTTP today, an embedder tomorrow) answers with the same fields.

use serde::Serialize;

use crate::lifetime::Lifetime;
use crate::record::FileRecord;
use crate::time::Timestamp;

/// `type` of the persistence object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PersistenceType {
    Single,
    Dir,
    Bundle,
}

/// SPEC.md "Persistence object".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
}

impl FileView {
    pub fn new(file: &FileRecord, base_url: &str, now: Timestamp) -> Self {
        let expires_at = file.lifetime.expires_at();
        Self {
            id: file.id.clone(),
            url: format!("{base_url}/{}", file.id),
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
        }
    }
}

/// SPEC.md "Retain response".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RetainView {
    pub id: String,
    pub url: String,
    pub retention: &'static str,
    pub expires_at: Option<String>,
    pub persistence: Persistence,
}

impl RetainView {
    pub fn new(id: &str, url: String, kind: PersistenceType) -> Self {
        Self {
            id: id.to_string(),
            url,
            retention: "indefinite",
            expires_at: None,
            persistence: Persistence::new(kind, &Lifetime::Indefinite),
        }
    }
}

/// SPEC.md "Browse entry".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
            url: format!("{base_url}/{}", file.id),
            name: file.name.clone(),
            content_type: file.content_type.clone(),
            size: file.size,
            tags: file.tags.clone(),
            created_at: file.created_at.to_string(),
            expires_at: file.lifetime.expires_at().map(|t| t.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::BlobId;

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
