//! Galleries (pics): creation, uploads through the media pipeline, images
//! and their previews, likes, comments, and administration.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Condvar, Mutex};

use schemars::JsonSchema;
use serde::Serialize;
use store_core::auth::constant_time_eq;
use store_core::container::hash_token;
use store_core::gallery::{
    fingerprint, thumb_box, toggle_like, validate_comment, Comment, GalleryRecord, ImageRecord,
    GALLERY_DISPLAY_NAME_CHARS_MAX, THUMB_SIZES,
};
use store_core::names::validate_memorable_name;
use store_core::record::{gallery_storage_key, image_storage_key};
use store_core::{ids, BlobId, Lifetime, Listing, Object, Pool, StoreError, Timestamp};
use store_media::{MediaError, MediaLimits};

use crate::files::Download;
use crate::import::fetch_error;
use crate::{App, AppResult, Staged};

/// Image jobs (decode, resize, encode) running at once. Each may hold a
/// 50 MP image (200 MB of pixels) at its peak; two keep the worst case
/// well inside a small machine.
pub const MEDIA_JOBS_MAX: usize = 2;

/// A counting semaphore for the blocking pool, which also counts who
/// waits (the media jobs an operator sees queued).
#[derive(Debug)]
pub struct Slots {
    state: Mutex<SlotState>,
    freed: Condvar,
}

#[derive(Debug)]
struct SlotState {
    free: usize,
    size: usize,
    waiting: usize,
}

impl Slots {
    pub fn new(n: usize) -> Self {
        let size = n.max(1);
        Self {
            state: Mutex::new(SlotState {
                free: size,
                size,
                waiting: 0,
            }),
            freed: Condvar::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Jobs running and jobs waiting, now.
    pub fn load(&self) -> (u64, u64) {
        let st = self.state();
        ((st.size - st.free) as u64, st.waiting as u64)
    }

    fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        {
            let mut st = self.state();
            st.waiting += 1;
            while st.free == 0 {
                st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.waiting -= 1;
            st.free -= 1;
        }
        // Give the slot back even if the job panics.
        struct Release<'a>(&'a Slots);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.state().free += 1;
                self.0.freed.notify_one();
            }
        }
        let _release = Release(self);
        f()
    }
}

/// Who is looking: the client's address and User-Agent. Only their
/// fingerprint, keyed per gallery, is ever stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visitor {
    pub ip: String,
    pub user_agent: String,
}

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

/// Admin actions (SPEC.md galleries, rule 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminAction {
    Hide,
    Unhide,
    Delete,
    Up,
    Down,
    DeleteComment,
}

impl AdminAction {
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        Ok(match s {
            "hide" => Self::Hide,
            "unhide" => Self::Unhide,
            "delete" => Self::Delete,
            "up" => Self::Up,
            "down" => Self::Down,
            "cdel" => Self::DeleteComment,
            _ => {
                return Err(StoreError::bad_request(
                    "action must be hide, unhide, delete, up, down or cdel",
                ))
            }
        })
    }
}

/// Images per page of a gallery.
pub const IMAGES_PER_PAGE: usize = 48;

fn media_error(e: MediaError) -> crate::AppError {
    match e {
        MediaError::TooLarge(msg) => {
            StoreError::TooLarge(format!("the image is too large: {msg}")).into()
        }
        e => StoreError::bad_request(e.to_string()).into(),
    }
}

impl App {
    fn media_limits(&self) -> MediaLimits {
        MediaLimits {
            downscale_px: self.config.limits.pics_downscale_px,
            target_bytes: self.config.limits.pics_target_bytes,
            ..MediaLimits::default()
        }
    }

    fn gallery_url(&self, gid: &str) -> String {
        format!("{}/pics/g/{gid}", self.config.base_url)
    }

    fn image_view(&self, i: &ImageRecord) -> ImageView {
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

    fn live_gallery(&self, gid: &str, now: Timestamp) -> AppResult<GalleryRecord> {
        match self.ports.repo.get(&gallery_storage_key(gid))? {
            Some(Object::Gallery(g)) if g.lifetime.is_live(now) => Ok(g),
            _ => Err(StoreError::not_found().into()),
        }
    }

    fn image(&self, id: &str) -> AppResult<Option<ImageRecord>> {
        Ok(match self.ports.repo.get(&image_storage_key(id))? {
            Some(Object::Image(i)) => Some(i),
            _ => None,
        })
    }

    fn visible_image(&self, id: &str, now: Timestamp) -> AppResult<ImageRecord> {
        match self.image(id)? {
            Some(i) if i.is_visible(now) => Ok(i),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// Whether `secret` administers `g`: its own token or the superadmin's,
    /// compared as digests in constant time.
    fn is_admin(&self, g: &GalleryRecord, secret: &str) -> bool {
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
    pub fn create_gallery(
        &self,
        name: Option<&str>,
        listed: bool,
    ) -> AppResult<(GalleryCreated, bool)> {
        let now = self.now();
        let name = name.map(str::trim).filter(|n| !n.is_empty());
        if let Some(n) = name {
            if n.chars().count() > GALLERY_DISPLAY_NAME_CHARS_MAX || n.chars().any(char::is_control)
            {
                return Err(StoreError::bad_request(format!(
                    "a gallery name is at most {GALLERY_DISPLAY_NAME_CHARS_MAX} characters"
                ))
                .into());
            }
        }
        let keyed = name.filter(|n| validate_memorable_name(&self.config.limits, n).is_ok());
        let gid = keyed.map_or_else(|| ids::dir_id(self.ports.random.as_ref()), str::to_string);
        let key = gallery_storage_key(&gid);
        let _guard = self.lock(&[&key])?;
        match self.ports.repo.get(&key)? {
            Some(Object::Gallery(g)) if g.lifetime.is_live(now) => {
                return Ok((
                    GalleryCreated {
                        id: g.gid.clone(),
                        url: self.gallery_url(&g.gid),
                        admin_url: None,
                        token: None,
                        existed: Some(true),
                        expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
                        name: g.name.clone(),
                    },
                    false,
                ));
            }
            Some(old) => self.remove_object(&key, &old)?,
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
        let url = self.gallery_url(&gid);
        Ok((
            GalleryCreated {
                admin_url: Some(format!("{url}/{token}")),
                id: gid,
                url,
                token: Some(token),
                existed: None,
                expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
                name: g.name,
            },
            true,
        ))
    }

    /// GET /pics: listed, live galleries, most recently updated first.
    pub fn list_galleries(&self) -> AppResult<Vec<GalleryEntry>> {
        let now = self.now();
        let mut out = vec![];
        self.ports.repo.listed(Listing::Galleries, &mut |_, obj| {
            if let Object::Gallery(g) = obj {
                if g.listed && g.lifetime.is_live(now) {
                    out.push((
                        g.updated_at,
                        GalleryEntry {
                            id: g.gid.clone(),
                            url: self.gallery_url(&g.gid),
                            name: g.name.clone(),
                            images: g.images.len(),
                            updated_at: g.updated_at.to_string(),
                            expires_at: g.lifetime.expires_at().map(|t| t.to_string()),
                        },
                    ));
                }
            }
            std::ops::ControlFlow::Continue(())
        })?;
        out.sort_by_key(|e| std::cmp::Reverse(e.0));
        out.truncate(self.config.limits.browse_results_max);
        Ok(out.into_iter().map(|(_, e)| e).collect())
    }

    /// The gallery for visitors (or, with `admin`, with hidden images too).
    /// `stars` come first, unknown, hidden or expired ones skipped.
    pub fn gallery(
        &self,
        gid: &str,
        page: usize,
        stars: &[String],
        admin: Option<&str>,
    ) -> AppResult<GalleryView> {
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
        let shown: Vec<ImageView> = images
            .iter()
            .skip((page - 1) * IMAGES_PER_PAGE)
            .take(IMAGES_PER_PAGE)
            .map(|i| self.image_view(i))
            .collect();
        let url = self.gallery_url(&g.gid);
        let pool = self.ledgers.usage(Pool::Pics)?;
        let l = &self.config.limits;
        Ok(GalleryView {
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
        })
    }

    /// POST /pics/g/<gid>: one image through the pipeline into the gallery.
    pub fn upload_image(
        &self,
        gid: &str,
        name: Option<&str>,
        staged: Staged,
    ) -> AppResult<ImageView> {
        let mut bytes = Vec::with_capacity(staged.size() as usize);
        let reader = self.open_blob_staged(&staged)?;
        std::io::Read::take(reader, self.config.limits.pics_upload_bytes_max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| store_core::StorageError::from_io("reading an upload", &e))?;
        drop(staged);
        self.add_image_bytes(gid, name, bytes)
    }

    fn open_blob_staged(&self, staged: &Staged) -> AppResult<Box<dyn store_core::BlobReader>> {
        Ok(self.ports.blobs.open(staged.blob_id())?)
    }

    /// POST /pics/g/<gid>?url=: images from public hosts only.
    pub fn import_image(&self, gid: &str, url: &str, name: Option<&str>) -> AppResult<ImageView> {
        self.live_gallery(gid, self.now())?;
        let limit = self.config.limits.pics_import_bytes_max;
        let fetched = self.ports.fetcher.fetch(url, limit).map_err(fetch_error)?;
        let mut bytes = vec![];
        fetched
            .body
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| fetch_error(store_core::FetchError::Refused))?;
        if bytes.len() as u64 > limit {
            return Err(StoreError::too_large(limit).into());
        }
        let name = self.fetched_name(
            name.map(str::to_string),
            fetched.disposition_name,
            &fetched.final_url,
        );
        self.add_image_bytes(gid, name.as_deref(), bytes)
    }

    fn add_image_bytes(
        &self,
        gid: &str,
        name: Option<&str>,
        bytes: Vec<u8>,
    ) -> AppResult<ImageView> {
        let now = self.now();
        self.live_gallery(gid, now)?;
        if bytes.len() as u64 > self.config.limits.pics_upload_bytes_max {
            return Err(StoreError::too_large(self.config.limits.pics_upload_bytes_max).into());
        }
        let limits = self.media_limits();
        let processed = self
            .media_slots
            .run(|| store_media::process(&bytes, &limits))
            .map_err(media_error)?;
        drop(bytes);
        let size = processed.bytes.len() as u64;
        let Some(reservation) = self.try_reserve(Pool::Pics, size)? else {
            return Err(StoreError::PoolFull {
                message: "the pics pool is full; it never evicts: wait for images to expire, or ask an admin to delete some".into(),
                retry_after_secs: self.config.limits.pool_full_retry_after_secs,
            }
            .into());
        };
        let mut writer = self.ports.blobs.create()?;
        writer.write(&processed.bytes)?;
        let blob = writer.commit()?;
        let stem = name
            .and_then(|n| {
                store_core::names::validate_file_name(&self.config.limits, n)
                    .ok()
                    .map(|()| n)
            })
            .map(|n| n.rsplit_once('.').map_or(n, |(s, _)| s).to_string())
            .unwrap_or_else(|| "image".into());
        let image = ImageRecord {
            id: ids::object_id(self.ports.random.as_ref()),
            gallery: gid.to_string(),
            name: format!("{stem}.{}", processed.format.extension()),
            content_type: processed.format.mime().to_string(),
            size,
            width: processed.width,
            height: processed.height,
            blob,
            created_at: now,
            lifetime: Lifetime::fixed(now, self.config.limits.pics_lifetime_secs),
            hidden: false,
            likes: Default::default(),
            thumbs: Default::default(),
        };
        // Under the gallery's lock: the image record first, then the gallery
        // that lists it. A crash between the two leaves an unlisted image
        // that expires on its own; a refusal undoes the image here.
        let key = gallery_storage_key(gid);
        let ikey = image_storage_key(&image.id);
        let _guard = self.lock(&[&key])?;
        // The reservation, dropped on the way out of a refusal, gives the
        // bytes back.
        let undo = |app: &App, written: bool| {
            if written {
                let _ = app.ports.repo.remove(&ikey);
            }
            let _ = app.ports.blobs.remove(&image.blob);
        };
        let mut g = match self.live_gallery(gid, now) {
            Ok(g) => g,
            Err(e) => {
                undo(self, false);
                return Err(e);
            }
        };
        let settled = reservation.settled();
        if let Err(e) = self
            .ports
            .repo
            .put_settled(&ikey, &Object::Image(image.clone()), settled)
        {
            undo(self, true);
            return Err(e.into());
        }
        reservation.keep();
        g.images.push(image.id.clone());
        g.extend_for_upload(&self.config.limits, now);
        // A failed gallery write may still have landed: keep the image then
        // (at worst it is unlisted and expires on its own).
        self.ports.repo.put(&key, &Object::Gallery(g))?;
        Ok(self.image_view(&image))
    }

    /// GET /pics/i/<id>[?thumb=]: hidden or expired images answer 404.
    pub fn open_image(&self, id: &str, thumb: Option<&str>) -> AppResult<Download> {
        let now = self.now();
        let image = self.visible_image(id, now)?;
        let Some(thumb) = thumb else {
            return Ok(Download {
                name: image.name.clone(),
                content_type: image.content_type.clone(),
                text: false,
                once: false,
                link: false,
                blob: image.blob.clone(),
                modified: image.created_at,
                reader: self.open_record_blob(&image.blob)?,
            });
        };
        let size = thumb_box(thumb)?;
        let blob = self.thumb_blob(&image_storage_key(id), &image.blob, size, |obj| match obj {
            Object::Image(i) => Some(&mut i.thumbs),
            _ => None,
        })?;
        Ok(Download {
            name: format!(
                "{}-{size}.webp",
                image
                    .name
                    .rsplit_once('.')
                    .map_or(image.name.as_str(), |(s, _)| s)
            ),
            content_type: "image/webp".into(),
            text: false,
            once: false,
            link: false,
            modified: image.created_at,
            reader: self.open_record_blob(&blob)?,
            blob,
        })
    }

    /// A cached preview, made on first request: every size of
    /// `THUMB_SIZES` is generated from one decode on the media slots (the
    /// decode is most of the work), stored as blobs, and recorded on the
    /// object under its lock. Answers the blob of `size`.
    pub(crate) fn thumb_blob(
        &self,
        key: &str,
        source: &BlobId,
        size: u32,
        thumbs: impl Fn(&mut Object) -> Option<&mut store_core::Thumbs>,
    ) -> AppResult<BlobId> {
        let current = || -> AppResult<Object> {
            self.ports
                .repo
                .get(key)?
                .ok_or_else(|| StoreError::not_found().into())
        };
        let cached = |obj: &mut Object, s: u32| thumbs(obj).and_then(|t| t.get(&s).cloned());
        if let Some(b) = cached(&mut current()?, size) {
            return Ok(b);
        }
        let mut bytes = vec![];
        self.open_record_blob(source)?
            .read_to_end(&mut bytes)
            .map_err(|e| store_core::StorageError::from_io("reading an image", &e))?;
        let limits = self.media_limits();
        let made = self
            .media_slots
            .run(|| store_media::thumbnails(&bytes, &THUMB_SIZES, &limits))
            .map_err(media_error)?;
        let mut blobs = Vec::with_capacity(made.len());
        for (s, thumb) in THUMB_SIZES.iter().zip(made) {
            let stored = (|| {
                let mut writer = self.ports.blobs.create()?;
                writer.write(&thumb)?;
                writer.commit()
            })();
            match stored {
                Ok(b) => blobs.push((*s, b)),
                Err(e) => {
                    for (_, b) in &blobs {
                        let _ = self.ports.blobs.remove(b);
                    }
                    return Err(e.into());
                }
            }
        }
        let _guard = self.lock(&[key])?;
        // Re-read under the lock: a concurrent request may have made the
        // same previews meanwhile; keep theirs, drop ours.
        let mut obj = match current() {
            Ok(obj) => obj,
            Err(e) => {
                for (_, b) in &blobs {
                    let _ = self.ports.blobs.remove(b);
                }
                return Err(e);
            }
        };
        let mut answer = None;
        let mut inserted = vec![];
        for (s, b) in blobs {
            match cached(&mut obj, s) {
                Some(existing) => {
                    let _ = self.ports.blobs.remove(&b);
                    if s == size {
                        answer = Some(existing);
                    }
                }
                None => {
                    if let Some(t) = thumbs(&mut obj) {
                        t.insert(s, b.clone());
                        inserted.push(b.clone());
                    }
                    if s == size {
                        answer = Some(b);
                    }
                }
            }
        }
        if !inserted.is_empty() {
            if let Err(e) = self.ports.repo.put(key, &obj) {
                // Nothing points at the new previews: do not leave them.
                for b in &inserted {
                    let _ = self.ports.blobs.remove(b);
                }
                return Err(e.into());
            }
        }
        answer.ok_or_else(|| StoreError::not_found().into())
    }

    /// POST /pics/i/<id>?like=1: toggles this visitor's like.
    pub fn like_image(&self, id: &str, visitor: &Visitor) -> AppResult<LikeView> {
        let now = self.now();
        let key = image_storage_key(id);
        let _guard = self.lock(&[&key])?;
        let mut image = self.visible_image(id, now)?;
        let g = self.live_gallery(&image.gallery, now)?;
        let fp = fingerprint(&g.fingerprint_key, &visitor.ip, &visitor.user_agent);
        let liked = toggle_like(&mut image.likes, &fp);
        self.ports.repo.put(&key, &Object::Image(image.clone()))?;
        Ok(LikeView {
            id: id.to_string(),
            likes: image.likes.len(),
            liked,
            gallery: image.gallery,
        })
    }

    /// GET /pics/g/<gid>?likes=1.
    pub fn counters(&self, gid: &str) -> AppResult<Counters> {
        let now = self.now();
        let g = self.live_gallery(gid, now)?;
        let mut likes = BTreeMap::new();
        for id in &g.images {
            if let Some(i) = self.image(id)? {
                if i.is_visible(now) {
                    likes.insert(i.id.clone(), i.likes.len());
                }
            }
        }
        Ok(Counters {
            likes,
            cl: g
                .comments
                .iter()
                .map(|c| (c.id.clone(), c.likes.len()))
                .collect(),
            comments: g.comments.len(),
        })
    }

    /// POST /pics/g/<gid>?comment=1.
    pub fn comment(
        &self,
        gid: &str,
        visitor: &Visitor,
        name: Option<&str>,
        text: &str,
    ) -> AppResult<CommentView> {
        let now = self.now();
        let (name, text) = validate_comment(&self.config.limits, name, text)?;
        let key = gallery_storage_key(gid);
        let _guard = self.lock(&[&key])?;
        let mut g = self.live_gallery(gid, now)?;
        let fp = fingerprint(&g.fingerprint_key, &visitor.ip, &visitor.user_agent);
        let id = ids::object_id(self.ports.random.as_ref());
        let view =
            CommentView::from(g.add_comment(&self.config.limits, now, &fp, (id, name, text))?);
        self.ports.repo.put(&key, &Object::Gallery(g))?;
        Ok(view)
    }

    /// POST /pics/g/<gid>?clike=<cid>.
    pub fn like_comment(&self, gid: &str, cid: &str, visitor: &Visitor) -> AppResult<LikeView> {
        let now = self.now();
        let key = gallery_storage_key(gid);
        let _guard = self.lock(&[&key])?;
        let mut g = self.live_gallery(gid, now)?;
        let fp = fingerprint(&g.fingerprint_key, &visitor.ip, &visitor.user_agent);
        let c = g
            .comments
            .iter_mut()
            .find(|c| c.id == cid)
            .ok_or_else(StoreError::not_found)?;
        let liked = toggle_like(&mut c.likes, &fp);
        let view = LikeView {
            id: cid.to_string(),
            likes: c.likes.len(),
            liked,
            gallery: gid.to_string(),
        };
        self.ports.repo.put(&key, &Object::Gallery(g))?;
        Ok(view)
    }

    /// POST /pics/g/<gid>/<secret>: a wrong secret is a 404, exactly like
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
        let mut g = self.live_gallery(gid, now)?;
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
                let Some(mut image) = self.image(target)? else {
                    // A listed id without a record (an image that expired
                    // and was swept): deleting it just drops the id.
                    if action == AdminAction::Delete {
                        g.images.retain(|i| i != target);
                        self.ports.repo.put(&key, &Object::Gallery(g))?;
                        return Ok(());
                    }
                    return Err(StoreError::not_found().into());
                };
                if action == AdminAction::Delete {
                    g.images.retain(|i| i != target);
                    self.ports.repo.put(&key, &Object::Gallery(g))?;
                    self.ports.repo.remove(&ikey)?;
                    self.ledgers.freed(Pool::Pics, image.size);
                    for b in Object::Image(image).blobs() {
                        self.ports.blobs.remove(b)?;
                    }
                    return Ok(());
                }
                image.hidden = action == AdminAction::Hide;
                self.ports.repo.put(&ikey, &Object::Image(image))?;
            }
        }
        self.ports.repo.put(&key, &Object::Gallery(g))?;
        Ok(())
    }

    /// `GET /<id>?thumb=`: a cached WebP preview of a single file that is a
    /// raster image. `None` for anything else (and for burn-after-reading
    /// files, which a preview must not spend): the caller serves the
    /// original bytes, as SPEC.md says.
    pub fn file_thumb(&self, id: &str, thumb: &str) -> AppResult<Option<Download>> {
        let now = self.now();
        let size = thumb_box(thumb)?;
        let file = match self.ports.repo.get(id)? {
            Some(Object::File(f)) if f.lifetime.is_live(now) => f,
            _ => return Ok(None),
        };
        let raster = matches!(
            store_core::content::essence(&file.content_type).as_str(),
            "image/jpeg" | "image/png" | "image/webp" | "image/gif" | "image/heic"
        );
        if file.once || !raster {
            return Ok(None);
        }
        let blob = self.thumb_blob(id, &file.blob, size, |obj| match obj {
            Object::File(f) => Some(&mut f.thumbs),
            _ => None,
        })?;
        Ok(Some(Download {
            name: format!(
                "{}-{size}.webp",
                file.name
                    .rsplit_once('.')
                    .map_or(file.name.as_str(), |(s, _)| s)
            ),
            content_type: "image/webp".into(),
            text: false,
            once: false,
            link: false,
            modified: file.updated_at,
            reader: self.open_record_blob(&blob)?,
            blob,
        }))
    }

    /// Whether `GET /pics/i/<id>?thumb=` can be answered without an image
    /// job (the preview exists, or there is nothing to make), so that the
    /// HTTP layer queues only the requests that need one.
    pub fn image_preview_made(&self, id: &str, thumb: &str) -> AppResult<bool> {
        self.preview_made(&image_storage_key(id), thumb)
    }

    /// Whether `GET /<id>?thumb=` can be answered without an image job.
    pub fn file_preview_made(&self, id: &str, thumb: &str) -> AppResult<bool> {
        self.preview_made(id, thumb)
    }

    fn preview_made(&self, key: &str, thumb: &str) -> AppResult<bool> {
        let size = thumb_box(thumb)?;
        Ok(match self.ports.repo.get(key)? {
            Some(Object::Image(i)) => i.thumbs.get(&size).is_some(),
            Some(Object::File(f)) => f.thumbs.get(&size).is_some() || f.once,
            _ => true,
        })
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

#[cfg(test)]
mod slot_tests {
    use super::Slots;
    use std::sync::mpsc;
    use std::sync::Arc;

    /// Waits (a bounded while) until `slots` shows `load`.
    fn wait_for(slots: &Slots, load: (u64, u64)) {
        for _ in 0..500 {
            if slots.load() == load {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert_eq!(slots.load(), load);
    }

    #[test]
    fn slots_count_running_and_waiting_jobs() {
        let slots = Arc::new(Slots::new(1));
        assert_eq!(slots.load(), (0, 0));
        let (release, held) = mpsc::channel::<()>();
        let first = {
            let slots = Arc::clone(&slots);
            std::thread::spawn(move || slots.run(|| held.recv().unwrap()))
        };
        wait_for(&slots, (1, 0));
        let second = {
            let slots = Arc::clone(&slots);
            std::thread::spawn(move || slots.run(|| ()))
        };
        wait_for(&slots, (1, 1));
        release.send(()).unwrap();
        first.join().unwrap();
        second.join().unwrap();
        assert_eq!(slots.load(), (0, 0));
    }
}
