//! Galleries (pics): creation, uploads through the media pipeline, images
//! and their previews, likes, comments, and administration.
//!
//! The use cases on galleries, their likes, comments and administration
//! are here; `images` has the image pipeline, `slots` the media jobs'
//! semaphore. They answer records and outcomes; the JSON views of them are
//! store-http's.

use std::collections::BTreeMap;

use store_core::auth::constant_time_eq;
use store_core::auth::hash_token;
use store_core::container::{unique_member_name, MemberFile};
use store_core::gallery::{
    fingerprint, gallery_name, toggle_like, validate_comment, Comment, GalleryRecord, ImageRecord,
};
use store_core::names::validate_memorable_name;
use store_core::record::{gallery_storage_key, image_storage_key};
use store_core::{ids, Lifetime, Listing, Object, Pool, Rev, StoreError, Timestamp};

use crate::{App, AppResult, GalleryMade, GalleryPage, GalleryTally, Liked};

mod images;
mod slots;

pub use slots::{Slots, MEDIA_JOBS_MAX};

/// Who is looking: the client's address and User-Agent. Only their
/// fingerprint, keyed per gallery, is ever stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visitor {
    /// The client's IP address, as text.
    pub ip: String,
    /// The client's User-Agent; empty when it sent none.
    pub user_agent: String,
}

/// Admin actions (SPEC.md galleries, rule 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminAction {
    /// Hides an image from visitors; its admin still sees it.
    Hide,
    /// Shows a hidden image again.
    Unhide,
    /// Deletes an image: its place in the gallery, its record and its bytes.
    Delete,
    /// Moves an image one place towards the start of the gallery.
    Up,
    /// Moves an image one place towards the end of the gallery.
    Down,
    /// Deletes a comment, named by its id.
    DeleteComment,
}

/// Images per page of a gallery.
pub const IMAGES_PER_PAGE: usize = 48;

impl App {
    pub(super) fn live_gallery(&self, gid: &str, now: Timestamp) -> AppResult<GalleryRecord> {
        match self.ports.repo.get(&gallery_storage_key(gid))? {
            Some(Object::Gallery(g)) if g.lifetime.is_live(now) => Ok(g),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// [`App::live_gallery`] with its revision, for a use case that will
    /// write it back (under the gallery's lock).
    pub(super) fn loaded_gallery(
        &self,
        gid: &str,
        now: Timestamp,
    ) -> AppResult<(GalleryRecord, Rev)> {
        match self.ports.repo.load(&gallery_storage_key(gid))? {
            Some((Object::Gallery(g), rev)) if g.lifetime.is_live(now) => Ok((g, rev)),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// An image record with its revision, visible or not.
    pub(super) fn loaded_image(&self, id: &str) -> AppResult<Option<(ImageRecord, Rev)>> {
        Ok(match self.ports.repo.load(&image_storage_key(id))? {
            Some((Object::Image(i), rev)) => Some((i, rev)),
            _ => None,
        })
    }

    pub(super) fn image(&self, id: &str) -> AppResult<Option<ImageRecord>> {
        Ok(match self.ports.repo.get(&image_storage_key(id))? {
            Some(Object::Image(i)) => Some(i),
            _ => None,
        })
    }

    pub(super) fn visible_image(&self, id: &str, now: Timestamp) -> AppResult<ImageRecord> {
        match self.image(id)? {
            Some(i) if i.is_visible(now) => Ok(i),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// Whether `secret` administers `g`: its own token or the superadmin's,
    /// compared as digests in constant time.
    pub(super) fn is_admin(&self, g: &GalleryRecord, secret: &str) -> bool {
        if secret.is_empty() {
            return false;
        }
        let presented = hash_token(secret);
        let own = constant_time_eq(g.token_hash.as_bytes(), presented.as_bytes());
        let superadmin = self
            .config
            .superadmin_token
            .as_deref()
            .is_some_and(|s| constant_time_eq(hash_token(s).as_bytes(), presented.as_bytes()));
        own | superadmin
    }

    /// POST /pics?create=1: a dir-style name is the key (idempotent);
    /// any other name is a display name on a fresh hex id.
    pub fn create_gallery(&self, name: Option<&str>, listed: bool) -> AppResult<GalleryMade> {
        let now = self.now();
        let name = gallery_name(name)?;
        let keyed = name.filter(|n| validate_memorable_name(&self.config.limits, n).is_ok());
        let gid = keyed.map_or_else(|| ids::dir_id(self.ports.random.as_ref()), str::to_string);
        let key = gallery_storage_key(&gid);
        let _guard = self.lock(&[&key])?;
        match self.ports.repo.load(&key)? {
            Some((Object::Gallery(g), _)) if g.lifetime.is_live(now) => {
                return Ok(GalleryMade {
                    gallery: g,
                    token: None,
                });
            }
            Some((old, rev)) => self.remove_object(&key, rev, &old)?,
            None => {}
        }
        let token = ids::token(self.ports.random.as_ref());
        let g = GalleryRecord {
            gid: gid.clone(),
            name: name.map(str::to_string),
            created_at: now,
            updated_at: now,
            lifetime: Lifetime::fixed(now, self.config.limits.pics_lifetime_secs),
            listed,
            token_hash: hash_token(&token),
            fingerprint_key: ids::token(self.ports.random.as_ref()),
            images: vec![],
            comments: vec![],
            last_comment: BTreeMap::new(),
        };
        if !self
            .ports
            .repo
            .insert_new(&key, &Object::Gallery(g.clone()))?
        {
            return Err(store_core::StorageError::new("gallery id collision").into());
        }
        Ok(GalleryMade {
            gallery: g,
            token: Some(token),
        })
    }

    /// GET /pics: listed, live galleries, most recently updated first.
    pub fn list_galleries(&self) -> AppResult<Vec<GalleryRecord>> {
        let now = self.now();
        let mut out = vec![];
        self.ports.repo.listed(Listing::Galleries, &mut |_, obj| {
            if let Object::Gallery(g) = obj {
                if g.listed && g.lifetime.is_live(now) {
                    out.push(g.clone());
                }
            }
            std::ops::ControlFlow::Continue(())
        })?;
        out.sort_by_key(|g| std::cmp::Reverse(g.updated_at));
        out.truncate(self.config.limits.browse_results_max);
        Ok(out)
    }

    /// Every image a visitor sees, in the gallery's order, as the members
    /// of a zip ("download all"). Names that repeat are numbered, since a
    /// zip's names must differ.
    pub fn gallery_members(&self, gid: &str) -> AppResult<Vec<MemberFile>> {
        let now = self.now();
        let g = self.live_gallery(gid, now)?;
        let mut taken = std::collections::BTreeSet::new();
        let mut out = vec![];
        for id in &g.images {
            let Some(i) = self.image(id)? else { continue };
            if !i.is_visible(now) {
                continue;
            }
            out.push(MemberFile {
                name: unique_member_name(&mut taken, &i.name),
                content_type: i.content_type,
                size: i.size,
                blob: i.blob,
                text: false,
                created_at: i.created_at,
                updated_at: i.created_at,
                sha256: i.sha256,
            });
        }
        Ok(out)
    }

    /// Whether an upload (or import) into a gallery may go ahead: the
    /// gallery is live, and `admin`, when given, is its admin token (or
    /// the superadmin's); a wrong one is 404, as on the admin page. Without
    /// one, a server whose gallery uploads are for admins only refuses
    /// with 401 `write_denied`. Checked before any byte is read.
    pub fn check_gallery_upload(&self, gid: &str, admin: Option<&str>) -> AppResult<()> {
        let g = self.live_gallery(gid, self.now())?;
        let admin = admin.map(|secret| self.is_admin(&g, secret));
        Ok(self.config.gallery_uploads.authorize(admin)?)
    }

    /// The gallery for visitors (or, with `admin`, with hidden images too).
    /// `stars` come first, unknown, hidden or expired ones skipped.
    pub fn gallery(
        &self,
        gid: &str,
        page: usize,
        stars: &[String],
        admin: Option<&str>,
    ) -> AppResult<GalleryPage> {
        let now = self.now();
        let g = self.live_gallery(gid, now)?;
        if let Some(secret) = admin {
            if !self.is_admin(&g, secret) {
                return Err(StoreError::not_found().into());
            }
        }
        let mut images = vec![];
        for id in &g.images {
            if let Some(i) = self.image(id)? {
                if i.lifetime.is_live(now) && (admin.is_some() || !i.hidden) {
                    images.push(i);
                }
            }
        }
        let mut selected = vec![];
        for s in stars {
            if images.iter().any(|i| &i.id == s && !i.hidden) && !selected.contains(s) {
                selected.push(s.clone());
            }
        }
        // Starred images first, in the order given; the rest keep theirs.
        images.sort_by_key(|i| {
            selected
                .iter()
                .position(|s| s == &i.id)
                .unwrap_or(usize::MAX)
        });
        let pages = images.len().div_ceil(IMAGES_PER_PAGE).max(1);
        let page = page.clamp(1, pages);
        let shown: Vec<ImageRecord> = images
            .into_iter()
            .skip((page - 1) * IMAGES_PER_PAGE)
            .take(IMAGES_PER_PAGE)
            .collect();
        Ok(GalleryPage {
            gallery: g,
            images: shown,
            selected,
            page,
            pages,
            pool: self.ledgers.usage(Pool::Pics)?,
        })
    }

    /// POST `/pics/i/<id>?like=1`: toggles this visitor's like.
    pub fn like_image(&self, id: &str, visitor: &Visitor) -> AppResult<Liked> {
        let now = self.now();
        let key = image_storage_key(id);
        let _guard = self.lock(&[&key])?;
        let (mut image, rev) = match self.loaded_image(id)? {
            Some((i, rev)) if i.is_visible(now) => (i, rev),
            _ => return Err(StoreError::not_found().into()),
        };
        let g = self.live_gallery(&image.gallery, now)?;
        let fp = fingerprint(&g.fingerprint_key, &visitor.ip, &visitor.user_agent);
        let liked = toggle_like(&mut image.likes, &fp);
        self.ports
            .repo
            .replace(&key, rev, &Object::Image(image.clone()), &[])?;
        Ok(Liked {
            id: id.to_string(),
            likes: image.likes.len(),
            liked,
            gallery: image.gallery,
        })
    }

    /// GET `/pics/g/<gid>?likes=1`.
    pub fn counters(&self, gid: &str) -> AppResult<GalleryTally> {
        let now = self.now();
        let gallery = self.live_gallery(gid, now)?;
        let mut visible = vec![];
        for id in &gallery.images {
            if let Some(i) = self.image(id)? {
                if i.is_visible(now) {
                    visible.push(i);
                }
            }
        }
        Ok(GalleryTally { gallery, visible })
    }

    /// POST `/pics/g/<gid>?comment=1`.
    pub fn comment(
        &self,
        gid: &str,
        visitor: &Visitor,
        name: Option<&str>,
        text: &str,
    ) -> AppResult<Comment> {
        let now = self.now();
        let (name, text) = validate_comment(&self.config.limits, name, text)?;
        let key = gallery_storage_key(gid);
        let _guard = self.lock(&[&key])?;
        let (mut g, rev) = self.loaded_gallery(gid, now)?;
        let fp = fingerprint(&g.fingerprint_key, &visitor.ip, &visitor.user_agent);
        let id = ids::object_id(self.ports.random.as_ref());
        let comment = g
            .add_comment(&self.config.limits, now, &fp, (id, name, text))?
            .clone();
        self.ports
            .repo
            .replace(&key, rev, &Object::Gallery(g), &[])?;
        Ok(comment)
    }

    /// POST `/pics/g/<gid>?clike=<cid>`.
    pub fn like_comment(&self, gid: &str, cid: &str, visitor: &Visitor) -> AppResult<Liked> {
        let now = self.now();
        let key = gallery_storage_key(gid);
        let _guard = self.lock(&[&key])?;
        let (mut g, rev) = self.loaded_gallery(gid, now)?;
        let fp = fingerprint(&g.fingerprint_key, &visitor.ip, &visitor.user_agent);
        let c = g
            .comments
            .iter_mut()
            .find(|c| c.id == cid)
            .ok_or_else(StoreError::not_found)?;
        let liked = toggle_like(&mut c.likes, &fp);
        let view = Liked {
            id: cid.to_string(),
            likes: c.likes.len(),
            liked,
            gallery: gid.to_string(),
        };
        self.ports
            .repo
            .replace(&key, rev, &Object::Gallery(g), &[])?;
        Ok(view)
    }

    /// POST `/pics/g/<gid>/<secret>`: a wrong secret is a 404, exactly like
    /// an unknown gallery.
    pub fn administer(
        &self,
        gid: &str,
        secret: &str,
        action: AdminAction,
        target: &str,
    ) -> AppResult<()> {
        let now = self.now();
        let key = gallery_storage_key(gid);
        let ikey = image_storage_key(target);
        // An action on an image holds the image's lock with the gallery's,
        // both taken at once (KeyLocks' rule: never wait while holding).
        let _guard = match action {
            AdminAction::Hide | AdminAction::Unhide | AdminAction::Delete => {
                self.lock(&[&key, &ikey])?
            }
            _ => self.lock(&[&key])?,
        };
        let (mut g, rev) = self.loaded_gallery(gid, now)?;
        if !self.is_admin(&g, secret) {
            return Err(StoreError::not_found().into());
        }
        match action {
            AdminAction::Up | AdminAction::Down => {
                g.move_image(target, action == AdminAction::Up)?
            }
            AdminAction::DeleteComment => {
                let before = g.comments.len();
                g.comments.retain(|c| c.id != target);
                if g.comments.len() == before {
                    return Err(StoreError::not_found().into());
                }
            }
            AdminAction::Hide | AdminAction::Unhide | AdminAction::Delete => {
                if !g.images.iter().any(|i| i == target) {
                    return Err(StoreError::not_found().into());
                }
                let Some((mut image, irev)) = self.loaded_image(target)? else {
                    // A listed id without a record (an image that expired
                    // and was swept): deleting it just drops the id.
                    if action == AdminAction::Delete {
                        g.images.retain(|i| i != target);
                        self.ports
                            .repo
                            .replace(&key, rev, &Object::Gallery(g), &[])?;
                        return Ok(());
                    }
                    return Err(StoreError::not_found().into());
                };
                if action == AdminAction::Delete {
                    g.images.retain(|i| i != target);
                    self.ports
                        .repo
                        .replace(&key, rev, &Object::Gallery(g), &[])?;
                    self.remove_object(&ikey, irev, &Object::Image(image))?;
                    return Ok(());
                }
                image.hidden = action == AdminAction::Hide;
                self.ports
                    .repo
                    .replace(&ikey, irev, &Object::Image(image), &[])?;
                // The gallery itself did not change.
                return Ok(());
            }
        }
        self.ports
            .repo
            .replace(&key, rev, &Object::Gallery(g), &[])?;
        Ok(())
    }

    /// Answers 404 unless `gid` is a live gallery: checked before an
    /// upload's body is read.
    pub fn check_gallery(&self, gid: &str) -> AppResult<()> {
        self.live_gallery(gid, self.now()).map(|_| ())
    }

    /// Answers 404 unless `secret` administers the live gallery `gid`
    /// (SPEC.md: a wrong secret is a 404), before a form is even read.
    pub fn check_gallery_admin(&self, gid: &str, secret: &str) -> AppResult<()> {
        let g = self.live_gallery(gid, self.now())?;
        if !self.is_admin(&g, secret) {
            return Err(StoreError::not_found().into());
        }
        Ok(())
    }

    /// The pics pool in use.
    pub fn pics_used_bytes(&self) -> AppResult<u64> {
        Ok(self.ledgers.usage(Pool::Pics)?.used_bytes)
    }
}
