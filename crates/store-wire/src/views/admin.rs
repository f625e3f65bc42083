//! What the admin's routes answer (issue 36): a page of live objects with
//! the URL each is reached by, the blocklist, and what a block did.

use schemars::JsonSchema;
use serde::Serialize;
use store_app::{AdminPage, Blocked};
use store_core::moderation::{Block, Report};
use store_core::Object;

use crate::router::{url_for, with_query, RouteId};

/// One live object, as the admin sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AdminObjectView {
    pub kind: &'static str,
    pub key: String,
    pub url: String,
    pub name: Option<String>,
    pub content_type: Option<String>,
    pub size: u64,
    pub files: usize,
    pub sha256: Vec<String>,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub password: bool,
}

impl AdminObjectView {
    /// The view of `object`, stored under `key`.
    pub fn new(key: &str, object: &Object, base: &str) -> Self {
        let (name, content_type, size, files) = match object {
            Object::File(f) => (
                Some(f.name.clone()),
                Some(f.content_type.clone()),
                f.size,
                1,
            ),
            Object::Bundle(b) => (None, None, b.size(), b.files.len()),
            Object::Dir(d) => (Some(d.key.clone()), None, d.size(), d.files.len()),
            Object::Gallery(g) => (g.name.clone(), None, 0, g.images.len()),
            Object::Image(i) => (
                Some(i.name.clone()),
                Some(i.content_type.clone()),
                i.size,
                1,
            ),
            Object::Upload(u) => (u.request.name.clone(), None, u.length, 0),
        };
        Self {
            kind: object.kind().name(),
            key: key.to_string(),
            url: object_url(object, base),
            name,
            content_type,
            size,
            files,
            sha256: object.digests().iter().map(|d| d.hex()).collect(),
            created_at: object.created_at().to_string(),
            expires_at: object.lifetime().expires_at().map(|t| t.to_string()),
            password: object.protection().is_some(),
        }
    }
}

/// Where `object` is reached.
fn object_url(object: &Object, base: &str) -> String {
    match object {
        Object::File(f) => url_for(base, RouteId::GetFile, &[&f.id]),
        Object::Bundle(b) => url_for(base, RouteId::GetFile, &[&b.id]),
        Object::Dir(d) => url_for(base, RouteId::GetDir, &[&d.key]),
        Object::Gallery(g) => url_for(base, RouteId::Gallery, &[&g.gid]),
        Object::Image(i) => url_for(base, RouteId::Image, &[&i.id]),
        Object::Upload(u) => url_for(base, RouteId::TusUpload, &[&u.id]),
    }
}

/// One blocked digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BlockView {
    pub sha256: String,
    pub reason: String,
    pub blocked_at: String,
}

impl From<&Block> for BlockView {
    fn from(b: &Block) -> Self {
        Self {
            sha256: b.sha256.hex(),
            reason: b.reason.clone(),
            blocked_at: b.blocked_at.to_string(),
        }
    }
}

/// `GET /admin`: a page of live objects, newest first; the URL of the
/// next page, if there may be one; and, on the first page, the blocklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AdminListView {
    pub objects: Vec<AdminObjectView>,
    pub next: Option<String>,
    pub blocked: Vec<BlockView>,
}

impl AdminListView {
    /// The view of `page`, searched with `q` (kept in the next page's URL).
    pub fn new(page: &AdminPage, blocks: &[Block], q: &str, base: &str) -> Self {
        let admin = url_for(base, RouteId::AdminList, &[]);
        let next = page.next.as_ref().map(|c| {
            let searched = if q.is_empty() {
                admin.clone()
            } else {
                with_query(&admin, "q", q)
            };
            with_query(&searched, "after", &c.to_string())
        });
        Self {
            objects: page
                .objects
                .iter()
                .map(|(k, o)| AdminObjectView::new(k, o, base))
                .collect(),
            next,
            blocked: blocks.iter().map(BlockView::from).collect(),
        }
    }
}

/// `POST /admin/block`: the block, and the keys of what it removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BlockedView {
    pub sha256: String,
    pub reason: String,
    pub blocked_at: String,
    pub removed: Vec<String>,
}

impl From<&Blocked> for BlockedView {
    fn from(b: &Blocked) -> Self {
        let v = BlockView::from(&b.block);
        Self {
            sha256: v.sha256,
            reason: v.reason,
            blocked_at: v.blocked_at,
            removed: b.removed.clone(),
        }
    }
}

/// A visitor's report, taken (202).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReportedView {
    pub reported: bool,
}

/// One report of the admin's queue, with its object while that is live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReportView {
    pub id: String,
    pub key: String,
    pub reason: String,
    pub reported_at: String,
    pub object: Option<AdminObjectView>,
}

/// `GET /admin?reports=1`: the queue, the oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReportsView {
    pub reports: Vec<ReportView>,
}

impl ReportsView {
    /// The view of the queue's `reports`, each with its live object.
    pub fn new(reports: &[(Report, Option<Object>)], base: &str) -> Self {
        Self {
            reports: reports
                .iter()
                .map(|(r, o)| ReportView {
                    id: r.id.clone(),
                    key: r.key.clone(),
                    reason: r.reason.clone(),
                    reported_at: r.reported_at.to_string(),
                    object: o.as_ref().map(|o| AdminObjectView::new(&r.key, o, base)),
                })
                .collect(),
        }
    }
}
