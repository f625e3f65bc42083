//! The gallery answers as agents read them (SPEC.md "Image galleries"):
//! galleries, images, comments, likes and counters, built from store-app's
//! records and outcomes. Every URL comes from the route table.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use store_app::{GalleryMade, GalleryPage, GalleryTally, Liked};
use store_core::gallery::{Comment, GalleryRecord, ImageRecord};
use store_core::Limits;

use crate::router::{url_for, with_query, RouteId};

/// The preview size an image list links to: the gallery grid's.
const GRID_THUMB_PX: u32 = store_core::gallery::THUMB_SIZES[1];

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

impl GalleryCreated {
    /// With its admin token when the gallery was just made, or marked as
    /// existing when a named one was found.
    pub fn new(made: &GalleryMade, base_url: &str) -> Self {
        let g = &made.gallery;
        let token = made.token.clone();
        Self {
            admin_url: token
                .as_ref()
                .map(|t| url_for(base_url, RouteId::GalleryAdmin, &[&g.gid, t])),
            existed: token.is_none().then_some(true),
            id: g.gid.clone(),
            url: url_for(base_url, RouteId::Gallery, &[&g.gid]),
            token,
            expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
            name: g.name.clone(),
        }
    }
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

impl ImageView {
    pub fn new(i: &ImageRecord, base_url: &str) -> Self {
        let url = url_for(base_url, RouteId::Image, &[&i.id]);
        Self {
            thumb_url: with_query(&url, crate::routes::THUMB.name, &GRID_THUMB_PX.to_string()),
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
}

impl From<&Liked> for LikeView {
    fn from(l: &Liked) -> Self {
        Self {
            id: l.id.clone(),
            likes: l.likes,
            liked: l.liked,
        }
    }
}

/// Counters response (SPEC.md, `?likes=1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Counters {
    pub likes: BTreeMap<String, usize>,
    pub cl: BTreeMap<String, usize>,
    pub comments: usize,
}

impl From<&GalleryTally> for Counters {
    fn from(t: &GalleryTally) -> Self {
        let comments = &t.gallery.comments;
        Self {
            likes: t
                .visible
                .iter()
                .map(|i| (i.id.clone(), i.likes.len()))
                .collect(),
            cl: comments
                .iter()
                .map(|c| (c.id.clone(), c.likes.len()))
                .collect(),
            comments: comments.len(),
        }
    }
}

/// The pics pool in a gallery answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PoolView {
    pub used_bytes: u64,
    pub capacity_bytes: u64,
}

/// What an uploader to a gallery needs to know, from the running limits.
/// The fields are in alphabetical order, the order the untyped map they
/// replace was written in, so the answer's bytes did not change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GalleryLimits {
    pub comment_cooldown_secs: u64,
    pub comment_name_chars_max: usize,
    pub comment_text_chars_max: usize,
    pub downscale_px: u32,
    /// The image formats an upload may be in.
    pub formats: Vec<&'static str>,
    pub image_lifetime_secs: u64,
    pub import_bytes_max: u64,
    pub target_bytes: u64,
    pub upload_bytes_max: u64,
}

impl From<&Limits> for GalleryLimits {
    fn from(l: &Limits) -> Self {
        Self {
            comment_cooldown_secs: l.comment_cooldown_secs,
            comment_name_chars_max: l.comment_name_chars_max,
            comment_text_chars_max: l.comment_text_chars_max,
            downscale_px: l.pics_downscale_px,
            formats: vec!["jpeg", "png", "webp", "gif", "heic"],
            image_lifetime_secs: l.pics_lifetime_secs,
            import_bytes_max: l.pics_import_bytes_max,
            target_bytes: l.pics_target_bytes,
            upload_bytes_max: l.pics_upload_bytes_max,
        }
    }
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
    pub limits: GalleryLimits,
    pub upload: String,
}

impl GalleryView {
    /// One page of a gallery, with the limits an uploader needs.
    pub fn new(p: &GalleryPage, limits: &Limits, base_url: &str) -> Self {
        let g = &p.gallery;
        let url = url_for(base_url, RouteId::Gallery, &[&g.gid]);
        Self {
            id: g.gid.clone(),
            name: g.name.clone(),
            expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
            images: p.images.iter().map(|i| ImageView::new(i, base_url)).collect(),
            selected: p.selected.clone(),
            comments: g.comments.iter().map(CommentView::from).collect(),
            page: p.page,
            pages: p.pages,
            pool: PoolView {
                used_bytes: p.pool.used_bytes,
                capacity_bytes: p.pool.capacity_bytes,
            },
            limits: GalleryLimits::from(limits),
            upload: format!(
                "curl --data-binary @photo.jpg '{url}?name=photo.jpg' (or multipart/form-data with several files; or POST {url}?url=<image URL>)"
            ),
            url,
        }
    }

    /// The how-to on a server that takes gallery images from admins only
    /// (STORE_PICS_UPLOADS=admin): the visitor's path would answer 401.
    pub fn for_admin_uploads(mut self) -> Self {
        self.upload = format!(
            "this server takes images from the gallery's admin only: curl --data-binary @photo.jpg '{}/<admin token>?upload=1&name=photo.jpg'",
            self.url
        );
        self
    }
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

impl GalleryEntry {
    pub fn new(g: &GalleryRecord, base_url: &str) -> Self {
        Self {
            id: g.gid.clone(),
            url: url_for(base_url, RouteId::Gallery, &[&g.gid]),
            name: g.name.clone(),
            images: g.images.len(),
            updated_at: g.updated_at.to_string(),
            expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallery_limits_keep_the_order_agents_saw() {
        let v = serde_json::to_string(&GalleryLimits::from(&Limits::DEFAULT)).unwrap();
        let keys: Vec<&str> = v
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|k| k.contains('_') || *k == "formats")
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
    }
}
