//! Resumable uploads (CONTRACT.md, "Resumable uploads: tus 1.0.0"): one
//! is created with its length and options, goes on PATCH by PATCH on
//! whichever process each reaches, and its last byte makes it the single
//! file a plain upload would have made, under the same key.
//!
//! Everything an upload is between two requests is in its record (offset,
//! options, owner, the staged blob's state): no process keeps any of it.
//! A PATCH takes the upload by writing a lease into the record (at its
//! revision, so that of two PATCHes one wins and the other is refused),
//! renews it while its body comes ([`App::renew_patch`], four times per
//! `Limits::upload_lease_secs`), and gives it back with the new offset, which it
//! writes only while it still holds the lease. A process that dies
//! mid-PATCH leaves the lease to run out within `upload_lease_secs`, and
//! the bytes past the recorded offset to be written over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sha1::Digest as _;
use store_core::ports::{Rev, StagedWriter};
use store_core::requests::NewFile;
use store_core::resumable::{Lease, UploadRecord};
use store_core::{ids, FileRecord, Object, Owner, RetainAuth, StoreError};

use crate::files::Body;
use crate::{App, AppError, AppResult, Created};

/// A checksum a PATCH's bytes must match (the tus checksum extension).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checksum {
    /// SHA-1, with the digest expected.
    Sha1(Vec<u8>),
    /// SHA-256, with the digest expected.
    Sha256(Vec<u8>),
}

/// The running digest of a PATCH's bytes.
enum Hasher {
    None,
    Sha1(sha1::Sha1, Vec<u8>),
    Sha256(sha2::Sha256, Vec<u8>),
}

impl Hasher {
    fn new(expected: Option<Checksum>) -> Self {
        match expected {
            None => Self::None,
            Some(Checksum::Sha1(d)) => Self::Sha1(sha1::Sha1::new(), d),
            Some(Checksum::Sha256(d)) => Self::Sha256(sha2::Sha256::new(), d),
        }
    }

    fn update(&mut self, chunk: &[u8]) {
        match self {
            Self::None => {}
            Self::Sha1(h, _) => h.update(chunk),
            Self::Sha256(h, _) => h.update(chunk),
        }
    }

    /// Whether the bytes match (always, without a checksum).
    fn matches(self) -> bool {
        match self {
            Self::None => true,
            Self::Sha1(h, d) => h.finalize().as_slice() == d.as_slice(),
            Self::Sha256(h, d) => h.finalize().as_slice() == d.as_slice(),
        }
    }
}

/// One PATCH in progress: the upload taken for it (as `holder`), and its
/// bytes going to the staged blob. Dropped without
/// [`App::finish_patch`], it leaves the upload to its lease's end.
pub struct Patch {
    record: UploadRecord,
    holder: u64,
    /// Set once a renewal found the upload taken by another PATCH: no
    /// byte is written after that.
    lost: Arc<AtomicBool>,
    writer: Box<dyn StagedWriter>,
    hasher: Hasher,
    /// Bytes this PATCH may bring (its Content-Length).
    body_len: u64,
    written: u64,
}

impl std::fmt::Debug for Patch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Patch")
            .field("id", &self.record.id)
            .field("offset", &self.record.offset)
            .field("written", &self.written)
            .finish()
    }
}

/// Which PATCH holds which upload: what renewing its lease takes, apart
/// from the PATCH itself (which is busy writing).
#[derive(Debug, Clone)]
pub struct PatchTicket {
    id: String,
    holder: u64,
    lost: Arc<AtomicBool>,
}

impl PatchTicket {
    /// Whether a renewal found the upload taken by another PATCH, or
    /// gone: the PATCH is over, whatever its body does.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }
}

impl Patch {
    /// What renews this PATCH's lease ([`App::renew_patch`]).
    pub fn ticket(&self) -> PatchTicket {
        PatchTicket {
            id: self.record.id.clone(),
            holder: self.holder,
            lost: Arc::clone(&self.lost),
        }
    }

    /// Writes the next bytes of the body to the staged blob.
    pub fn push(&mut self, chunk: &[u8]) -> AppResult<()> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(StoreError::Conflict(
                "this PATCH lost its hold on the upload to another one; ask for its offset with HEAD, then go on".into(),
            )
            .into());
        }
        if self.written + chunk.len() as u64 > self.body_len {
            return Err(
                StoreError::bad_request("the body is longer than its Content-Length").into(),
            );
        }
        self.writer.write(chunk)?;
        self.hasher.update(chunk);
        self.record.take(chunk);
        self.record.check_start()?;
        self.written += chunk.len() as u64;
        Ok(())
    }
}

/// How a PATCH ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Patched {
    /// Bytes are still to come: the upload, at its new offset.
    Progress(UploadRecord),
    /// That was the last byte: the file it made.
    Complete(FileRecord),
}

/// What `GET /uploads/<id>` finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadState {
    /// Still receiving bytes.
    InProgress(UploadRecord),
    /// Complete: the file it made (live).
    Complete(FileRecord),
}

impl App {
    /// `POST /uploads`: a new upload of `length` bytes with the options of
    /// a plain upload, checked now; the length is reserved in the pool
    /// (507 when it cannot fit) and counts there until the upload ends.
    /// `metadata` is kept as the client sent it, to be shown back.
    pub fn create_upload(
        &self,
        req: &NewFile,
        length: u64,
        metadata: String,
    ) -> AppResult<Created<UploadRecord>> {
        if !self.ports.blobs.stages() {
            return Err(StoreError::Unsupported(
                "resumable uploads are not available on this server's storage yet: upload in one request".into(),
            )
            .into());
        }
        let now = self.now();
        let limit = self.config.limits.file_bytes_max;
        if length > limit {
            return Err(StoreError::too_large(limit).into());
        }
        // The checks the last byte will make again (the request's own
        // rules, tags, ttl, download limit), made now with what is known,
        // so that an upload is never refused after its bytes have all
        // been sent.
        self.draft_file(req, Body::unseen(length), RetainAuth::Absent, false, now)?;
        let reservation = self.reserve(length)?;
        let staging = self.ports.blobs.stage()?;
        let owner_token = ids::token(self.ports.random.as_ref());
        let owner = Owner::new(&owner_token, req.protect);
        let mut kept = req.clone();
        // The record keeps the password's hash, never the password.
        if let Some(password) = kept.password.take() {
            kept.password_hash = self.protection_for(Some(&password), None)?.map(|p| p.hash);
        }
        let mut record = UploadRecord::new(String::new(), length, kept, owner, staging, now);
        record.metadata = metadata;
        // Hashed as its PATCHes come only when the server moderates.
        if !self.moderates() {
            record.digest = None;
        }
        self.insert_with_fresh_id(reservation, |id| {
            record.id = id.to_string();
            Object::Upload(record.clone())
        })?;
        Ok(Created {
            record,
            now,
            owner_token,
        })
    }

    /// `GET /uploads/<id>`: the upload in progress, or the live file it
    /// made.
    pub fn upload_state(&self, id: &str) -> AppResult<UploadState> {
        let now = self.now();
        match self.ports.repo.get(id)? {
            Some(Object::Upload(u)) if u.lifetime.is_live(now) => Ok(UploadState::InProgress(u)),
            Some(Object::File(f)) if f.lifetime.is_live(now) => Ok(UploadState::Complete(f)),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// Starts a PATCH of `body_len` bytes at `offset`: takes the upload
    /// (409 if another PATCH holds it or the offset differs) and opens its
    /// staged blob there.
    pub fn begin_patch(
        &self,
        id: &str,
        offset: u64,
        body_len: u64,
        checksum: Option<Checksum>,
    ) -> AppResult<Patch> {
        let now = self.now();
        let mut holder = [0u8; 8];
        self.ports.random.fill(&mut holder);
        let holder = u64::from_le_bytes(holder);
        let record = {
            let _guard = self.lock(&[id])?;
            let (mut record, rev) = self.loaded_upload(id)?;
            record.begin_patch(offset, body_len, self.lease(holder, now), now)?;
            self.write_upload(id, rev, &record)?;
            record
        };
        let writer = match self.ports.blobs.resume(&record.staging, record.offset) {
            Ok(w) => w,
            Err(e) => {
                let _ = self.give_back(id, holder);
                return Err(e.into());
            }
        };
        Ok(Patch {
            record,
            holder,
            lost: Arc::new(AtomicBool::new(false)),
            writer,
            hasher: Hasher::new(checksum),
            body_len,
            written: 0,
        })
    }

    /// Renews the lease of the PATCH `ticket` names, which is still
    /// receiving its body: 409 if another PATCH took the upload meanwhile,
    /// 404 if the upload went; either way the PATCH writes no more bytes.
    pub fn renew_patch(&self, ticket: &PatchTicket) -> AppResult<()> {
        let renewed = self.renew_lease(ticket);
        if let Err(AppError::Domain(StoreError::Conflict(_) | StoreError::NotFound(_))) = &renewed {
            ticket.lost.store(true, Ordering::SeqCst);
        }
        renewed
    }

    fn renew_lease(&self, ticket: &PatchTicket) -> AppResult<()> {
        let now = self.now();
        let _guard = self.lock(&[ticket.id.as_str()])?;
        let (mut record, rev) = self.loaded_upload(&ticket.id)?;
        record.renew(self.lease(ticket.holder, now), now)?;
        self.write_upload(&ticket.id, rev, &record)?;
        Ok(())
    }

    /// Ends a PATCH: keeps its bytes (all of them, or as many as came
    /// before the connection broke) unless they fail their checksum (460,
    /// nothing kept: a cut body with a checksum fails it), and gives the
    /// upload back at its new offset. The last byte makes the file, in
    /// the same write.
    pub fn finish_patch(&self, patch: Patch) -> AppResult<Patched> {
        let Patch {
            mut record,
            holder,
            writer,
            hasher,
            written,
            ..
        } = patch;
        let id = record.id.clone();
        if !hasher.matches() {
            drop(writer);
            self.give_back(&id, holder)?;
            return Err(StoreError::ChecksumMismatch(format!(
                "the {written} bytes do not match Upload-Checksum; none were kept"
            ))
            .into());
        }
        record.end_patch();
        let kept = self.keep_patch(record, holder, writer);
        if kept.is_err() {
            // The upload is where its record still says: free it for the
            // next PATCH now rather than at its lease's end.
            if let Err(e) = self.give_back(&id, holder) {
                tracing::warn!(error = %e, upload = %id, "could not free an upload after a failed PATCH");
            }
        }
        kept
    }

    /// Makes a PATCH's bytes durable and writes the upload (or the file
    /// its last byte makes), if the PATCH still holds it: one that lost
    /// its lease keeps nothing (another may have gone on from where it
    /// started). The write is at the revision the holder was checked at,
    /// so no other process slips in between.
    fn keep_patch(
        &self,
        mut record: UploadRecord,
        holder: u64,
        writer: Box<dyn StagedWriter>,
    ) -> AppResult<Patched> {
        let id = record.id.clone();
        let _guard = self.lock(&[id.as_str()])?;
        let (stored, rev) = self.loaded_upload(&id)?;
        stored.check_holder(holder, self.now())?;
        if !record.is_complete() {
            record.staging = writer.pause()?;
            self.write_upload(&id, rev, &record)?;
            return Ok(Patched::Progress(record));
        }
        let blob = writer.complete()?;
        Ok(Patched::Complete(self.complete_upload(record, rev, blob)?))
    }

    /// Drops a PATCH that failed before its end (a storage fault, a
    /// refused body) and whose bytes are not kept: the upload stays at
    /// the offset it had, free for the next PATCH at once rather than at
    /// its lease's end.
    pub fn abandon_patch(&self, patch: Patch) {
        let id = patch.record.id.clone();
        let holder = patch.holder;
        drop(patch);
        if let Err(e) = self.give_back(&id, holder) {
            tracing::warn!(error = %e, upload = %id, "could not free an upload after a failed PATCH");
        }
    }

    /// Frees an upload the PATCH `holder` took, at the offset it had then
    /// (unless another holds it by now).
    fn give_back(&self, id: &str, holder: u64) -> AppResult<()> {
        let _guard = self.lock(&[id])?;
        let (mut record, rev) = self.loaded_upload(id)?;
        if record.lease.is_some_and(|l| l.holder == holder) {
            record.end_patch();
            self.write_upload(id, rev, &record)?;
        }
        Ok(())
    }

    /// The last byte came: the upload becomes its file, in one write of
    /// its key. The file's lifetime starts now, as a plain upload's does.
    fn complete_upload(
        &self,
        upload: UploadRecord,
        rev: Rev,
        blob: store_core::BlobId,
    ) -> AppResult<FileRecord> {
        let now = self.now();
        let utf8 = upload.utf8.is_text();
        let body = Body {
            head: &upload.head,
            utf8,
            size: upload.length,
            seen: true,
        };
        let draft = self.draft_file(&upload.request, body, RetainAuth::Absent, false, now)?;
        let sha256 = upload.digest.clone().map(|d| d.finish());
        let refused = self
            .refuse_blocked(sha256.as_slice())
            .and_then(|()| self.scan_blob(&blob));
        if let Err(e) = refused {
            // Blocked or infected bytes are not kept for a retry, nor is
            // an upload whose scan could not run: it ends here.
            self.remove_object(&upload.id, rev, &Object::Upload(upload.clone()))?;
            return Err(e);
        }
        let mut file = draft.into_record((blob, sha256), upload.owner.clone());
        // Hashed when the upload was made: only the hash was kept.
        file.password = self.protection_for(None, upload.request.password_hash.as_deref())?;
        file.id = upload.id.clone();
        self.write_back(&upload.id, rev, &Object::File(file.clone()))?;
        Ok(file)
    }

    /// `DELETE /uploads/<id>` (tus termination): the upload and its bytes
    /// go, and its length is given back to the pool.
    pub fn end_upload(&self, id: &str) -> AppResult<()> {
        let _guard = self.lock(&[id])?;
        let (record, rev) = self.loaded_upload(id)?;
        // Its staged bytes go with it (App::release_removed).
        self.remove_object(id, rev, &Object::Upload(record))?;
        Ok(())
    }

    /// `holder`'s lease from `now`, as long as the limits say.
    fn lease(&self, holder: u64, now: store_core::Timestamp) -> Lease {
        Lease {
            holder,
            until: now.plus_secs(self.config.limits.upload_lease_secs),
        }
    }

    /// A live upload with its revision; 404 otherwise.
    fn loaded_upload(&self, id: &str) -> AppResult<(UploadRecord, Rev)> {
        let now = self.now();
        match self.ports.repo.load(id)? {
            Some((Object::Upload(u), rev)) if u.lifetime.is_live(now) => Ok((u, rev)),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// Writes an upload's record back at `rev`; a record changed since (a
    /// PATCH that took it after this one's lease ran out) is a conflict.
    fn write_upload(&self, id: &str, rev: Rev, record: &UploadRecord) -> AppResult<Rev> {
        self.write_back(id, rev, &Object::Upload(record.clone()))
    }

    /// Writes what the upload at `rev` became (itself, or its file).
    fn write_back(&self, id: &str, rev: Rev, object: &Object) -> AppResult<Rev> {
        match self.ports.repo.replace(id, rev, object, &[]) {
            Err(e) if e.kind == store_core::StorageErrorKind::Conflict => {
                Err(StoreError::Conflict(
                    "the upload changed meanwhile; ask for its offset with HEAD, then go on".into(),
                )
                .into())
            }
            other => Ok(other?),
        }
    }
}
