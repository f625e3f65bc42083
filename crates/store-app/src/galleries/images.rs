//! Gallery images: uploads and imports through the media pipeline, the
//! bytes and previews served, and the previews of plain files.

use std::io::Read;

use store_core::digest::Sha256;
use store_core::gallery::{thumb_box, ImageRecord, THUMB_SIZES};
use store_core::record::{gallery_storage_key, image_storage_key};
use store_core::{ids, BlobId, Lifetime, Object, Pool, StoreError, Timestamp};
use store_media::{MediaError, MediaLimits};

use crate::files::Download;
use crate::import::fetch_error;
use crate::pool::Reservation;
use crate::{App, AppResult, Staged};

fn media_error(e: MediaError) -> crate::AppError {
    match e {
        MediaError::TooLarge(msg) => {
            StoreError::TooLarge(format!("the image is too large: {msg}")).into()
        }
        e => StoreError::bad_request(e.to_string()).into(),
    }
}

impl App {
    pub(super) fn media_limits(&self) -> MediaLimits {
        MediaLimits {
            downscale_px: self.config.limits.pics_downscale_px,
            target_bytes: self.config.limits.pics_target_bytes,
            ..MediaLimits::default()
        }
    }

    /// POST `/pics/g/<gid>`: one image through the pipeline into the gallery.
    pub fn upload_image(
        &self,
        gid: &str,
        name: Option<&str>,
        staged: Staged,
    ) -> AppResult<ImageRecord> {
        let mut bytes = Vec::with_capacity(staged.size() as usize);
        let reader = self.open_blob_staged(&staged)?;
        std::io::Read::take(reader, self.config.limits.pics_upload_bytes_max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| store_core::StorageError::from_io("reading an upload", &e))?;
        drop(staged);
        self.add_image_bytes(gid, name, bytes)
    }

    pub(super) fn open_blob_staged(
        &self,
        staged: &Staged,
    ) -> AppResult<Box<dyn store_core::BlobReader>> {
        Ok(self.ports.blobs.open(staged.blob_id())?)
    }

    /// POST `/pics/g/<gid>?url=`: images from public hosts only.
    pub fn import_image(&self, gid: &str, url: &str, name: Option<&str>) -> AppResult<ImageRecord> {
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

    /// Processes an image for gallery `gid` (downscaled and re-encoded as
    /// needed), stores its bytes in the pics pool and lists it.
    pub(super) fn add_image_bytes(
        &self,
        gid: &str,
        name: Option<&str>,
        bytes: Vec<u8>,
    ) -> AppResult<ImageRecord> {
        let now = self.now();
        self.live_gallery(gid, now)?;
        if bytes.len() as u64 > self.config.limits.pics_upload_bytes_max {
            return Err(StoreError::too_large(self.config.limits.pics_upload_bytes_max).into());
        }
        let limits = self.media_limits();
        let digest = |b: &[u8]| self.moderates().then(|| Sha256::of(b));
        self.refuse_blocked(digest(&bytes).as_slice())?;
        self.scan_bytes(&bytes)?;
        let processed = self
            .media_slots
            .run(|| store_media::process(&bytes, &limits))
            .map_err(media_error)?;
        drop(bytes);
        // What is stored may differ from what came (downscaled, or
        // re-encoded): the admin blocks what they saw, the stored bytes.
        let stored = digest(&processed.bytes);
        self.refuse_blocked(stored.as_slice())?;
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
        let mut image = self.new_image_record(gid, name, &processed, blob, now);
        image.sha256 = stored;
        self.add_to_gallery(image, reservation, now)
    }

    /// The record of a new image of gallery `gid`: named after the upload's
    /// file name (if it is a valid one) with the extension of the format
    /// it was stored in, or "image".
    fn new_image_record(
        &self,
        gid: &str,
        name: Option<&str>,
        processed: &store_media::Processed,
        blob: BlobId,
        now: Timestamp,
    ) -> ImageRecord {
        let stem = name
            .filter(|n| store_core::names::validate_file_name(&self.config.limits, n).is_ok())
            .map(|n| n.rsplit_once('.').map_or(n, |(s, _)| s).to_string())
            .unwrap_or_else(|| "image".into());
        ImageRecord {
            id: ids::object_id(self.ports.random.as_ref()),
            gallery: gid.to_string(),
            name: format!("{stem}.{}", processed.format.extension()),
            content_type: processed.format.mime().to_string(),
            size: processed.bytes.len() as u64,
            width: processed.width,
            height: processed.height,
            blob,
            created_at: now,
            lifetime: Lifetime::fixed(now, self.config.limits.pics_lifetime_secs),
            hidden: false,
            likes: Default::default(),
            thumbs: Default::default(),
            sha256: None,
        }
    }

    /// Records `image`, whose bytes `reservation` holds room for, and lists
    /// it in its gallery. Under the gallery's lock: the image record first,
    /// then the gallery that lists it. A crash between the two leaves an
    /// unlisted image that expires on its own; a refusal undoes the image
    /// here.
    fn add_to_gallery(
        &self,
        image: ImageRecord,
        reservation: Reservation<'_>,
        now: Timestamp,
    ) -> AppResult<ImageRecord> {
        let key = gallery_storage_key(&image.gallery);
        let ikey = image_storage_key(&image.id);
        let _guard = self.lock(&[&key])?;
        // The reservation, dropped on the way out of a refusal, gives the
        // bytes back.
        let (mut g, rev) = match self.loaded_gallery(&image.gallery, now) {
            Ok(loaded) => loaded,
            Err(e) => {
                let _ = self.ports.blobs.remove(&image.blob);
                return Err(e);
            }
        };
        let settled = reservation.settled();
        match self
            .ports
            .repo
            .insert_new_settled(&ikey, &Object::Image(image.clone()), settled)
        {
            Ok(true) => {}
            Ok(false) => {
                // 71 random bits clashed: a broken random source.
                let _ = self.ports.blobs.remove(&image.blob);
                return Err(store_core::StorageError::new("image id collision").into());
            }
            // Maybe written, maybe not: an unlisted image expires on its
            // own, and its bytes go with it (or with the orphan collection).
            // Its room stays taken as if it was: the next start counts the
            // records again.
            Err(e) => {
                reservation.keep();
                return Err(e.into());
            }
        }
        reservation.keep();
        g.images.push(image.id.clone());
        g.extend_for_upload(&self.config.limits, now);
        // A failed gallery write may still have landed: keep the image then
        // (at worst it is unlisted and expires on its own).
        self.ports
            .repo
            .replace(&key, rev, &Object::Gallery(g), &[])?;
        Ok(image)
    }

    /// GET `/pics/i/<id>[?thumb=]`: hidden or expired images answer 404.
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
                encrypted: false,
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
            encrypted: false,
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
        let blobs = self.make_thumbs(source)?;
        let _guard = self.lock(&[key])?;
        // Re-read under the lock: a concurrent request may have made the
        // same previews meanwhile; keep theirs, drop ours.
        let Some((mut obj, rev)) = self.ports.repo.load(key)? else {
            self.remove_blobs(blobs.iter().map(|(_, b)| b));
            return Err(StoreError::not_found().into());
        };
        let mut answer = None;
        let mut inserted = vec![];
        for (s, b) in blobs {
            match cached(&mut obj, s) {
                Some(existing) => {
                    let _ = self.ports.blobs.remove(&b);
                    answer = answer.or((s == size).then_some(existing));
                }
                None => {
                    if let Some(t) = thumbs(&mut obj) {
                        t.insert(s, b.clone());
                        inserted.push(b.clone());
                    }
                    answer = answer.or((s == size).then_some(b));
                }
            }
        }
        if !inserted.is_empty() {
            if let Err(e) = self.ports.repo.replace(key, rev, &obj, &[]) {
                // Nothing points at the new previews if the write was
                // refused; any other failure may have landed, and then the
                // record names them.
                for b in &inserted {
                    self.discard_if_unwritten(&e, b);
                }
                return Err(e.into());
            }
        }
        answer.ok_or_else(|| StoreError::not_found().into())
    }

    /// Every preview size of `THUMB_SIZES` made from the image in `source`,
    /// in one decode on the media slots, each stored as a blob. On a
    /// failure, none is left behind.
    fn make_thumbs(&self, source: &BlobId) -> AppResult<Vec<(u32, BlobId)>> {
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
                    self.remove_blobs(blobs.iter().map(|(_, b)| b));
                    return Err(e.into());
                }
            }
        }
        Ok(blobs)
    }

    /// Removes blobs nothing points at, best effort: what a failure leaves
    /// is collected by the orphan collection at the next start.
    fn remove_blobs<'b>(&self, blobs: impl IntoIterator<Item = &'b BlobId>) {
        for b in blobs {
            let _ = self.ports.blobs.remove(b);
        }
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
        // A protected file has no previews: they would be its bytes
        // without its password. Its read (and its gate) serves it whole.
        if file.once || !raster || file.password.is_some() {
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
            encrypted: false,
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

    pub(super) fn preview_made(&self, key: &str, thumb: &str) -> AppResult<bool> {
        let size = thumb_box(thumb)?;
        Ok(match self.ports.repo.get(key)? {
            Some(Object::Image(i)) => i.thumbs.get(&size).is_some(),
            Some(Object::File(f)) => {
                f.thumbs.get(&size).is_some() || f.once || f.password.is_some()
            }
            _ => true,
        })
    }
}
