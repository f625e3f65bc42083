//! Dirs and show-dirs: named or unnamed mutable collections with a sliding
//! lifetime, write gates, history and retention.

use std::cmp::Ordering;
use std::ops::ControlFlow;

use store_core::auth::authorize_retain;
use store_core::auth::hash_token;
use store_core::container::validate_member_names;
use store_core::names::{apply_tags, validate_file_name};
use store_core::{
    dir_storage_key, ids, ttl, DirAction, DirRecord, DirWrite, HistoryEntry, Lifetime, Listing,
    MemberFile, Object, Owner, OwnerProof, RetainAuth, StoreError, Timestamp,
};

use crate::files::{Download, SortOrder};
use crate::upload::Part;
use crate::{Access, App, AppResult, DirMade, ReadKey, Staged};
use store_core::digest::Sha256;
use store_core::{Pool, Rev};

pub use store_core::requests::{NewDir, WriteRequest};

/// What a new dir gets beyond its request, prepared before its key's
/// lock: when it is made, its password's hash, its drop link's secret.
struct Prepared {
    now: Timestamp,
    protection: Option<store_core::password::Protection>,
    drop_secret: Option<String>,
}

/// GET /d's sort keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirSort {
    /// By creation time.
    #[default]
    Created,
    /// By time of the last change.
    Updated,
    /// By key: the name, or the id of an unnamed dir.
    Name,
}

/// GET /d's filters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirQuery {
    /// Text to find, lowercased, in the dir's key or one of its tags; None
    /// matches every dir.
    pub q: Option<String>,
    /// Only dirs created after this moment (in whole seconds); None sets no
    /// bound.
    pub created_after: Option<Timestamp>,
    /// Only dirs created before this moment (in whole seconds); None sets no
    /// bound.
    pub created_before: Option<Timestamp>,
    /// Only dirs last changed after this moment (in whole seconds); None sets
    /// no bound.
    pub updated_after: Option<Timestamp>,
    /// Only dirs last changed before this moment (in whole seconds); None sets
    /// no bound.
    pub updated_before: Option<Timestamp>,
    /// What the dirs are sorted by.
    pub sort: DirSort,
    /// Sort direction; descending by default.
    pub order: SortOrder,
}

impl App {
    /// Reads a live dir, or answers 404.
    fn live_dir(&self, storage_key: &str, now: Timestamp) -> AppResult<DirRecord> {
        match self.ports.repo.get(storage_key)? {
            Some(Object::Dir(d)) if d.is_live(now) => Ok(d),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// [`App::live_dir`] with its revision, for a use case that will write
    /// it back (under the key's lock).
    pub(crate) fn loaded_dir(
        &self,
        storage_key: &str,
        now: Timestamp,
    ) -> AppResult<(DirRecord, Rev)> {
        match self.ports.repo.load(storage_key)? {
            Some((Object::Dir(d), rev)) if d.is_live(now) => Ok((d, rev)),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// POST /?dir=1 (and share=): create-or-get. Flags apply only when the
    /// dir is created; parts posted to an existing named dir are added to
    /// it (gates apply).
    pub fn create_dir(
        &self,
        req: &NewDir,
        parts: Vec<Part>,
        access: &Access,
    ) -> AppResult<DirMade> {
        let now = self.now();
        req.validate(&self.config.limits)?;
        if access.retain == RetainAuth::Invalid {
            return Err(StoreError::write_denied().into());
        }
        validate_member_names(
            &self.config.limits,
            parts.iter().filter_map(|p| p.name.as_deref()),
        )?;
        let key = match &req.name {
            Some(name) => name.clone(),
            None => ids::dir_id(self.ports.random.as_ref()),
        };
        // Hashed before the lock: the hash is slow, and the lock's stripe
        // is shared with other keys.
        let prepared = Prepared {
            now,
            protection: self.protection_for(req.password.as_ref(), None)?,
            drop_secret: req
                .drop
                .map(|_| ids::drop_secret(self.ports.random.as_ref())),
        };
        let storage_key = dir_storage_key(&key);
        let _guard = self.lock(&[&storage_key])?;
        match self.ports.repo.load(&storage_key)? {
            Some((Object::Dir(d), rev)) if d.is_live(now) => {
                // A password or a drop link asked for and quietly not made
                // would leave the dir open while its maker believes it
                // closed, or without the link they think they have.
                if prepared.protection.is_some() || prepared.drop_secret.is_some() {
                    return Err(StoreError::Conflict(
                        "this dir exists: a password or a drop link is set when a dir is made (the owner changes a password with POST /d/<key>?password=1)".into(),
                    )
                    .into());
                }
                let d = if parts.is_empty() {
                    d
                } else {
                    self.add_locked((d, rev), parts, access, (DirWrite::File, now))?
                };
                return Ok(DirMade {
                    dir: d,
                    created: false,
                    write_token: None,
                    owner_token: None,
                    drop_token: None,
                });
            }
            Some((expired, rev)) => {
                // Expired but not swept yet: it is gone for every reader, so
                // the name is free again.
                self.remove_object(&storage_key, rev, &expired)?;
            }
            None => {}
        }
        self.make_dir(req, key, parts, access, prepared)
    }

    /// Makes the dir `key` that `req` asks for, holding `parts`, with what
    /// was prepared for it. The caller holds the key's lock and found no
    /// live dir there.
    fn make_dir(
        &self,
        req: &NewDir,
        key: String,
        parts: Vec<Part>,
        access: &Access,
        prepared: Prepared,
    ) -> AppResult<DirMade> {
        let now = prepared.now;
        if req.show {
            authorize_retain(access.retain).map_err(|_| {
                StoreError::WriteDenied("creating a show-dir needs the retain token".into())
            })?;
        }
        let write_token = match &req.write {
            None => None,
            Some(WriteRequest::Generate) => Some(ids::token(self.ports.random.as_ref())),
            Some(WriteRequest::Custom(t)) => Some(t.clone()),
        };
        let tags = apply_tags(&self.config.limits, &[], &req.tags, &[])?;
        let total: u64 = parts.iter().map(|p| p.body.size()).sum();
        let reservation = self.reserve(total)?;
        let files = self.commit_parts(parts, now)?;
        let mut dir = self.new_dir_record(req, key, files, now);
        dir.tags = tags;
        dir.write_token_hash = write_token.as_deref().map(hash_token);
        let owner_token = ids::token(self.ports.random.as_ref());
        dir.owner = Some(Owner::new(&owner_token, false));
        dir.password = prepared.protection;
        let drop_token = match (req.drop, prepared.drop_secret) {
            (Some(asked), Some(secret)) => {
                dir.drop = Some(asked.open_box(&secret, &self.config.limits));
                Some(store_core::drops::drop_token(&secret, &dir.key))
            }
            _ => None,
        };
        let settled = reservation.settled();
        let storage_key = dir_storage_key(&dir.key);
        match self
            .ports
            .repo
            .insert_new_settled(&storage_key, &Object::Dir(dir.clone()), settled)
        {
            Ok(true) => {}
            Ok(false) => {
                // Unnamed ids have 128 random bits; a clash means a broken
                // random source, not bad luck.
                self.discard_members(&dir.files);
                return Err(store_core::StorageError::new("dir id collision").into());
            }
            Err(e) => {
                // Maybe written, maybe not: leave blobs and pool bytes to
                // the next start (see `App::open`).
                reservation.keep();
                return Err(e.into());
            }
        }
        reservation.keep();
        Ok(DirMade {
            dir,
            created: true,
            write_token,
            owner_token: Some(owner_token),
            drop_token,
        })
    }

    /// The record of a new dir holding `files` (each in its history as
    /// added), without tags or write token; a show-dir is made open and
    /// indefinite.
    fn new_dir_record(
        &self,
        req: &NewDir,
        key: String,
        files: Vec<MemberFile>,
        now: Timestamp,
    ) -> DirRecord {
        let ttl_secs = ttl::dir_ttl(&self.config.limits, req.ttl_secs);
        let history = files
            .iter()
            .rev()
            .map(|f| HistoryEntry {
                ts: now,
                file: f.name.clone(),
                action: DirAction::Add,
                bytes: f.size,
            })
            .collect();
        let mut dir = DirRecord {
            key,
            name: req.name.clone(),
            created_at: now,
            updated_at: now,
            lifetime: Lifetime::sliding(now, ttl_secs),
            ttl_secs,
            listed: req.listed,
            open: false,
            tags: vec![],
            write_token_hash: None,
            files,
            history,
            owner: None,
            password: None,
            drop: None,
        };
        if req.show {
            dir.make_show();
        }
        dir
    }

    /// Adds parts to a loaded, live dir whose lock the caller holds.
    pub(crate) fn add_locked(
        &self,
        (mut dir, rev): (DirRecord, Rev),
        parts: Vec<Part>,
        access: &Access,
        (op, now): (DirWrite, Timestamp),
    ) -> AppResult<DirRecord> {
        access.check(&dir, op)?;
        validate_member_names(
            &self.config.limits,
            parts.iter().filter_map(|p| p.name.as_deref()),
        )?;
        // Replaced files give their bytes back: reserve only the growth.
        let incoming: u64 = parts.iter().map(|p| p.body.size()).sum();
        let replaced: u64 = parts
            .iter()
            .filter_map(|p| p.name.as_deref().and_then(|n| dir.file(n)))
            .map(|f| f.size)
            .sum();
        let size_after = (dir.size() + incoming).saturating_sub(replaced);
        let room = dir.room_for(&self.config.limits, access.retain, size_after)?;
        let reservation = self.reserve_in(room, incoming.saturating_sub(replaced))?;
        let members = self.commit_parts(parts, now)?;
        let mut old = Vec::new();
        for m in members.iter().cloned() {
            match dir.upsert_file(&self.config.limits, now, m) {
                Ok(Some(o)) => old.push(o),
                Ok(None) => {}
                Err(e) => {
                    self.discard_members(&members);
                    return Err(e.into());
                }
            }
        }
        // From here a failure may or may not have been written: keep the
        // reservation and leave blobs to the next start's orphan collection.
        let doomed = crate::owned(old.iter().map(|o| &o.blob));
        let written = self.put_keeping(
            (&dir_storage_key(&dir.key), rev),
            &Object::Dir(dir.clone()),
            &doomed,
            reservation,
        );
        if let Err(e) = written {
            for m in &members {
                self.discard_if_unwritten(&e, &m.blob);
            }
            return Err(e.into());
        }
        // New content smaller than what it replaced gives the difference back.
        if replaced > incoming {
            self.ledgers.freed(Pool::Store, replaced - incoming);
        }
        self.release_blobs(&doomed);
        Ok(dir)
    }

    /// POST `/d/<key>`: adds (or replaces) files.
    pub fn add_to_dir(&self, key: &str, parts: Vec<Part>, access: &Access) -> AppResult<DirRecord> {
        let now = self.now();
        if parts.is_empty() {
            return Err(StoreError::bad_request(
                "no file to add: send multipart file parts, or a body with name=",
            )
            .into());
        }
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let dir = self.loaded_dir(&storage_key, now)?;
        let dir = self.add_locked(dir, parts, access, (DirWrite::File, now))?;
        Ok(dir)
    }

    /// Checks a dir write before its body is read.
    pub fn check_dir_write(&self, key: &str, file: Option<&str>, access: &Access) -> AppResult<()> {
        let dir = self.live_dir(&dir_storage_key(key), self.now())?;
        access.check(&dir, DirWrite::File)?;
        if let Some(name) = file {
            validate_file_name(&self.config.limits, name)?;
            if let Some(f) = dir.file(name) {
                if !f.text {
                    return Err(StoreError::forbidden(
                        "only text files can be replaced or appended to (PUT/PATCH)",
                    )
                    .into());
                }
            }
        }
        Ok(())
    }

    /// GET `/d/<key>`, by a reader showing `read` to its password gate.
    pub fn get_dir(&self, key: &str, read: &ReadKey) -> AppResult<DirRecord> {
        self.readable_dir(&dir_storage_key(key), read)
    }

    /// GET `/d/<key>/history`: newest first.
    pub fn dir_history(&self, key: &str, read: &ReadKey) -> AppResult<Vec<HistoryEntry>> {
        Ok(self.readable_dir(&dir_storage_key(key), read)?.history)
    }

    /// A live dir that `read` may read: a drop dir only by its owner (as
    /// if it did not exist for anyone else), a protected one with its
    /// password.
    fn readable_dir(&self, storage_key: &str, read: &ReadKey) -> AppResult<DirRecord> {
        let now = self.now();
        let d = self.live_dir(storage_key, now)?;
        let owner = OwnerProof::of(d.owner.as_ref(), read.owner.as_deref());
        store_core::drops::authorize_drop_dir(d.drop.as_ref(), owner, RetainAuth::Absent)?;
        self.check_read(
            storage_key,
            (d.password.as_ref(), d.owner.as_ref()),
            read,
            now,
        )?;
        Ok(d)
    }

    /// GET `/d/<key>/<file>`.
    pub fn open_dir_file(&self, key: &str, name: &str, read: &ReadKey) -> AppResult<Download> {
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let d = self.readable_dir(&storage_key, read)?;
        let f = d.file(name).ok_or_else(StoreError::not_found)?;
        Ok(Download {
            name: f.name.clone(),
            content_type: f.content_type.clone(),
            text: f.text,
            once: false,
            link: false,
            encrypted: false,
            blob: f.blob.clone(),
            modified: f.updated_at,
            reader: self.open_record_blob(&f.blob)?,
        })
    }

    /// PUT `/d/<key>/<file>`: replaces a text file, or creates it.
    pub fn put_dir_file(
        &self,
        key: &str,
        name: &str,
        upload: Staged,
        access: &Access,
    ) -> AppResult<DirRecord> {
        let now = self.now();
        validate_file_name(&self.config.limits, name)?;
        if !upload.is_utf8_text() {
            return Err(StoreError::bad_request("PUT takes UTF-8 text").into());
        }
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (dir, rev) = self.loaded_dir(&storage_key, now)?;
        if dir.file(name).is_some_and(|f| !f.text) {
            return Err(StoreError::forbidden("only text files can be replaced (PUT)").into());
        }
        let part = Part {
            name: Some(name.to_string()),
            declared_type: None,
            body: upload,
        };
        let dir = self.add_locked((dir, rev), vec![part], access, (DirWrite::File, now))?;
        Ok(dir)
    }

    /// PATCH `/d/<key>/<file>`: appends text to a text file.
    pub fn append_dir_file(
        &self,
        key: &str,
        name: &str,
        text: &[u8],
        access: &Access,
    ) -> AppResult<DirRecord> {
        let now = self.now();
        store_core::content::check_appended_text(text)?;
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (mut dir, rev) = self.loaded_dir(&storage_key, now)?;
        access.check(&dir, DirWrite::File)?;
        let file = dir.file(name).ok_or_else(StoreError::not_found)?.clone();
        if !file.text {
            return Err(StoreError::forbidden("only text files can be appended to (PATCH)").into());
        }
        let new_size = self.appended_size(file.size, text.len())?;
        let room = dir.room_for(
            &self.config.limits,
            access.retain,
            dir.size() + text.len() as u64,
        )?;
        let reservation = self.reserve_in(room, text.len() as u64)?;
        let (blob, sha256) = self.concat_blob(&file.blob, text)?;
        if let Err(e) = self.refuse_blocked(sha256.as_slice()) {
            let _ = self.ports.blobs.remove(&blob);
            return Err(e);
        }
        let slot = dir
            .files
            .iter_mut()
            .find(|f| f.name == name)
            .expect("the file was found above");
        slot.blob = blob.clone();
        slot.sha256 = sha256;
        slot.size = new_size;
        slot.updated_at = now;
        dir.record_activity(
            &self.config.limits,
            now,
            name,
            DirAction::Append,
            text.len() as u64,
        );
        let doomed = [file.blob];
        let written = self.put_keeping(
            (&storage_key, rev),
            &Object::Dir(dir.clone()),
            &doomed,
            reservation,
        );
        if let Err(e) = written {
            self.discard_if_unwritten(&e, &blob);
            return Err(e.into());
        }
        self.release_blobs(&doomed);
        Ok(dir)
    }

    /// A new blob holding `old`'s bytes followed by `tail`, and its
    /// SHA-256, computed as the bytes are copied (and scanned, when
    /// scanning is on: the result is new bytes).
    pub(crate) fn concat_blob(
        &self,
        old: &store_core::BlobId,
        tail: &[u8],
    ) -> AppResult<(store_core::BlobId, Option<Sha256>)> {
        // The copy is an upload of its own: hashed and scanned as any is
        // (the caller checked the size against the limit already).
        let mut upload = self.begin_upload(u64::MAX)?;
        let mut reader = self.open_record_blob(old)?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = std::io::Read::read(&mut reader, &mut buf)
                .map_err(store_core::StorageError::new)?;
            if n == 0 {
                break;
            }
            upload.push(&buf[..n])?;
        }
        upload.push(tail)?;
        let staged = upload.finish()?;
        let sha256 = staged.sha256();
        Ok((staged.into_blob(), sha256))
    }

    /// DELETE `/d/<key>/<file>`.
    pub fn delete_dir_file(&self, key: &str, name: &str, access: &Access) -> AppResult<DirRecord> {
        let now = self.now();
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (mut dir, rev) = self.loaded_dir(&storage_key, now)?;
        access.check(&dir, DirWrite::File)?;
        let old = dir.remove_file(&self.config.limits, now, name)?;
        let doomed = [old.blob];
        self.ports
            .repo
            .replace(&storage_key, rev, &Object::Dir(dir.clone()), &doomed)?;
        self.ledgers.freed(Pool::Store, old.size);
        self.release_blobs(&doomed);
        Ok(dir)
    }

    /// DELETE `/d/<key>`: the whole dir.
    pub fn delete_dir(&self, key: &str, access: &Access) -> AppResult<()> {
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (dir, rev) = self.loaded_dir(&storage_key, self.now())?;
        access.check(&dir, DirWrite::WholeDir)?;
        self.remove_object(&storage_key, rev, &Object::Dir(dir))
    }

    /// POST `/d/<key>?retain=1`: idempotent. Answers the retained dir.
    pub fn retain_dir(&self, key: &str, retain: RetainAuth) -> AppResult<DirRecord> {
        let now = self.now();
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (mut dir, rev) = self.loaded_dir(&storage_key, now)?;
        authorize_retain(retain)?;
        if !dir.lifetime.is_retained() {
            dir.lifetime = Lifetime::Indefinite;
            dir.updated_at = now;
            self.ports
                .repo
                .replace(&storage_key, rev, &Object::Dir(dir.clone()), &[])?;
        }
        Ok(dir)
    }

    /// POST `/d/<key>?ttl=`: the owner gives the dir a new sliding lifetime
    /// of `ttl_secs` (clamped as at creation) counted from now. A retained
    /// dir (or a show-dir) keeps its lifetime.
    pub fn set_dir_ttl(&self, key: &str, ttl_secs: u64, access: &Access) -> AppResult<DirRecord> {
        let now = self.now();
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (mut dir, rev) = self.loaded_dir(&storage_key, now)?;
        access.check_owner(dir.owner.as_ref())?;
        if !dir.lifetime.is_retained() {
            let secs = ttl::dir_ttl(&self.config.limits, Some(ttl_secs));
            dir.lifetime = dir.lifetime.renewed(now, secs);
            dir.ttl_secs = secs;
            dir.updated_at = now;
            self.ports
                .repo
                .replace(&storage_key, rev, &Object::Dir(dir.clone()), &[])?;
        }
        Ok(dir)
    }

    /// POST `/d/<key>?show=1`: flips a dir to a show-dir; idempotent.
    pub fn show_dir(&self, key: &str, retain: RetainAuth) -> AppResult<DirRecord> {
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (mut dir, rev) = self.loaded_dir(&storage_key, self.now())?;
        authorize_retain(retain).map_err(|_| {
            StoreError::WriteDenied("making a show-dir needs the retain token".into())
        })?;
        if !dir.open {
            dir.make_show();
            self.ports
                .repo
                .replace(&storage_key, rev, &Object::Dir(dir.clone()), &[])?;
        }
        Ok(dir)
    }

    /// GET /d: live dirs created with listed=1, filtered and sorted, at
    /// most `browse_results_max` of them.
    pub fn list_dirs(&self, query: &DirQuery) -> AppResult<Vec<DirRecord>> {
        let now = self.now();
        let q = query.q.as_deref().map(str::to_lowercase);
        // Records show whole seconds, so filters compare whole seconds: a
        // client passing back a `created_at` it was shown gets exact bounds.
        let within = |t: Timestamp, after: Option<Timestamp>, before: Option<Timestamp>| {
            let t = Timestamp::from_secs(t.as_secs());
            after.is_none_or(|a| t > a) && before.is_none_or(|b| t < b)
        };
        let mut hits: Vec<DirRecord> = Vec::new();
        self.ports.repo.listed(Listing::Dirs, &mut |_, obj| {
            if let Object::Dir(d) = obj {
                let matches = d.is_listed()
                    && d.is_live(now)
                    && within(d.created_at, query.created_after, query.created_before)
                    && within(d.updated_at, query.updated_after, query.updated_before)
                    && q.as_deref()
                        .is_none_or(|q| d.key.contains(q) || d.tags.iter().any(|t| t.contains(q)));
                if matches {
                    hits.push(d.clone());
                }
            }
            ControlFlow::Continue(())
        })?;
        let key = |a: &DirRecord, b: &DirRecord| -> Ordering {
            match query.sort {
                DirSort::Created => a.created_at.cmp(&b.created_at),
                DirSort::Updated => a.updated_at.cmp(&b.updated_at),
                DirSort::Name => a.key.cmp(&b.key),
            }
            .then_with(|| a.key.cmp(&b.key))
        };
        self.sort_and_cap(&mut hits, query.order, key);
        Ok(hits)
    }
}
