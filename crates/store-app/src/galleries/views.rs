//! The gallery answers as agents read them (SPEC.md "Image galleries"):
//! the JSON views of galleries, images, comments, likes and counters.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use store_core::gallery::{Comment, GalleryRecord, ImageRecord};
use store_core::PoolUsage;

use crate::App;

/// The answer to POST /pics?create=1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GalleryCreated {
    pub id: String,
    pub url: String,
    /// Only at creation: it carries the token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admin_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existed: Option<bool>,
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// An image as visitors see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ImageView {
    pub id: String,
    pub url: String,
    pub thumb_url: String,
    pub name: String,
    pub content_type: String,
    pub size: u64,
    pub width: u32,
    pub height: u32,
    pub likes: usize,
    pub created_at: String,
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
}

/// A comment as visitors see it (SPEC.md "Comment").
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CommentView {
    pub id: String,
    pub name: String,
    pub text: String,
    pub ts: f64,
    pub likes: usize,
}

impl From<&Comment> for CommentView {
    fn from(c: &Comment) -> Self {
        Self {
            id: c.id.clone(),
            name: c.name.clone(),
            text: c.text.clone(),
            ts: c.ts.as_secs_f64(),
            likes: c.likes.len(),
        }
    }
}

/// Like response (SPEC.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LikeView {
    pub id: String,
    pub likes: usize,
    pub liked: bool,
    /// The gallery, so a browser can be sent back to it.
    #[serde(skip)]
    pub gallery: String,
}

/// Counters response (SPEC.md, `?likes=1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Counters {
    pub likes: BTreeMap<String, usize>,
    pub cl: BTreeMap<String, usize>,
    pub comments: usize,
}

/// The pics pool in a gallery answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PoolView {
    pub used_bytes: u64,
    pub capacity_bytes: u64,
}

/// Gallery JSON for agents (SPEC.md: images, selected, pool, limits, an
/// upload how-to), plus comments and paging.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct GalleryView {
    pub id: String,
    pub url: String,
    pub name: Option<String>,
    pub expires_at: Option<String>,
    pub images: Vec<ImageView>,
    pub selected: Vec<String>,
    pub comments: Vec<CommentView>,
    pub page: usize,
    pub pages: usize,
    pub pool: PoolView,
    pub limits: serde_json::Value,
    pub upload: String,
}

/// A listed gallery in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GalleryEntry {
    pub id: String,
    pub url: String,
    pub name: Option<String>,
    pub images: usize,
    pub updated_at: String,
    pub expires_at: Option<String>,
}

impl App {
    pub(super) fn gallery_url(&self, gid: &str) -> String {
        format!("{}/pics/g/{gid}", self.config.base_url)
    }

    pub(super) fn image_view(&self, i: &ImageRecord) -> ImageView {
        let url = format!("{}/pics/i/{}", self.config.base_url, i.id);
        ImageView {
            thumb_url: format!("{url}?thumb=320"),
            url,
            id: i.id.clone(),
            name: i.name.clone(),
            content_type: i.content_type.clone(),
            size: i.size,
            width: i.width,
            height: i.height,
            likes: i.likes.len(),
            created_at: i.created_at.to_string(),
            expires_at: i.lifetime.expires_at().map(|t| t.to_string()),
            hidden: i.hidden,
        }
    }

    /// The answer to creating gallery `g`: with its admin token when it
    /// was just made, or marked as existing when a named one was found.
    pub(super) fn created_view(&self, g: &GalleryRecord, token: Option<String>) -> GalleryCreated {
        let url = self.gallery_url(&g.gid);
        GalleryCreated {
            admin_url: token.as_ref().map(|t| format!("{url}/{t}")),
            existed: token.is_none().then_some(true),
            id: g.gid.clone(),
            url,
            token,
            expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
            name: g.name.clone(),
        }
    }

    /// The gallery as agents read it: one page of `shown` images of
    /// `pages`, the `selected` ones, its comments, the pics pool and the
    /// limits an uploader needs.
    pub(super) fn gallery_view(
        &self,
        g: &GalleryRecord,
        shown: Vec<ImageView>,
        selected: Vec<String>,
        (page, pages): (usize, usize),
        pool: PoolUsage,
    ) -> GalleryView {
        let url = self.gallery_url(&g.gid);
        let l = &self.config.limits;
        GalleryView {
            id: g.gid.clone(),
            name: g.name.clone(),
            expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
            images: shown,
            selected,
            comments: g.comments.iter().map(CommentView::from).collect(),
            page,
            pages,
            pool: PoolView { used_bytes: pool.used_bytes, capacity_bytes: pool.capacity_bytes },
            limits: serde_json::json!({
                "upload_bytes_max": l.pics_upload_bytes_max,
                "import_bytes_max": l.pics_import_bytes_max,
                "downscale_px": l.pics_downscale_px,
                "target_bytes": l.pics_target_bytes,
                "image_lifetime_secs": l.pics_lifetime_secs,
                "comment_name_chars_max": l.comment_name_chars_max,
                "comment_text_chars_max": l.comment_text_chars_max,
                "comment_cooldown_secs": l.comment_cooldown_secs,
                "formats": ["jpeg", "png", "webp", "gif", "heic"],
            }),
            upload: format!(
                "curl --data-binary @photo.jpg '{url}?name=photo.jpg' (or multipart/form-data with several files; or POST {url}?url=<image URL>)"
            ),
            url,
        }
    }
}
