//! Single files: upload, read (with burn after reading), delete, tags,
//! replace, append, retain and browse.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::ControlFlow;

use store_core::auth::{authorize_retain, lifetime_for_new};
use store_core::content::{self, check_appended_text, is_text_file};
use store_core::digest::Sha256;
use store_core::encryption::ENCRYPTED_CONTENT_TYPE;
use store_core::names::{apply_tags, default_file_name};
use store_core::ports::{BlobReader, Pool, Rev};
use store_core::{
    ids, ttl, BundleRecord, FileRecord, Lifetime, Listing, Object, Owner, ReadDecision, ReadIntent,
    RetainAuth, StoreError,
};

use crate::{Access, App, AppError, AppResult, AsOf, Created, ReadKey, Staged};

/// What an upload made: a single file, or a bundle of its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uploaded {
    /// One part: a single file.
    File(Created<FileRecord>),
    /// Two or more parts: a bundle.
    Bundle(Created<BundleRecord>),
}

pub use store_core::requests::NewFile;

/// What a new file's body told as it arrived: its first bytes (for its
/// type), whether it is UTF-8 text, and its size in bytes; or, before any
/// of it has arrived, only its size ([`Body::unseen`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Body<'a> {
    pub(crate) head: &'a [u8],
    pub(crate) utf8: bool,
    pub(crate) size: u64,
    /// Whether `head` and `utf8` were read from the bytes.
    pub(crate) seen: bool,
}

impl Body<'_> {
    /// A body of `size` bytes not sent yet: what a resumable upload's
    /// creation knows of it. Every rule the bytes decide waits for them.
    pub(crate) fn unseen(size: u64) -> Self {
        Body {
            head: &[],
            utf8: false,
            size,
            seen: false,
        }
    }
}

/// A new single file's record, checked, waiting for its bytes and owner.
#[derive(Debug)]
pub(crate) struct FileDraft(FileRecord);

impl FileDraft {
    /// The record, pointing at `blob` whose bytes have digest `sha256`,
    /// made by `owner`.
    pub(crate) fn into_record(
        self,
        (blob, sha256): (store_core::BlobId, Option<Sha256>),
        owner: Owner,
    ) -> FileRecord {
        FileRecord {
            blob,
            sha256,
            owner: Some(owner),
            ..self.0
        }
    }
}

/// A file ready to be streamed out: a single file, or one file of a bundle
/// or dir. For a burnt file the record is already gone: `reader` holds the
/// last handle to its bytes.
pub struct Download {
    /// The file's name.
    pub name: String,
    /// The file's Content-Type, as decided when it was stored.
    pub content_type: String,
    /// Text (CONTRACT.md), served with `charset=utf-8`.
    pub text: bool,
    /// A file whose downloads are counted (`once=1` or `max_downloads`):
    /// never cache it, never serve a part of it.
    pub once: bool,
    /// A `link=1` document: browsers are sent on to its target.
    pub link: bool,
    /// Ciphertext its client made (`encrypted=`): browsers get the page
    /// that decrypts it.
    pub encrypted: bool,
    /// The blob holding the bytes: immutable, so its id is a strong
    /// validator (an edit writes a new blob), and a range of it can be
    /// opened with [`App::open_blob_range`].
    pub blob: store_core::BlobId,
    /// When these bytes were last written.
    pub modified: store_core::Timestamp,
    /// The file's bytes, open for reading; for a burnt file, the last handle
    /// to them.
    pub reader: Box<dyn BlobReader>,
}

/// A read let past its gates ([`App::admit_read`]).
pub(crate) enum Admitted {
    /// A file, and how the read is served.
    File(FileRecord, ReadDecision),
    /// A bundle's record.
    Bundle(BundleRecord),
}

impl Download {
    /// The download of `record`'s bytes, open in `reader`; `counted` says
    /// whether its downloads are counted (the record read before a burn
    /// or a count, for the one who spends it).
    pub(crate) fn of(record: FileRecord, counted: bool, reader: Box<dyn BlobReader>) -> Self {
        Self {
            name: record.name,
            content_type: record.content_type,
            text: record.text,
            once: counted,
            link: record.link,
            encrypted: record.encrypted.is_some(),
            blob: record.blob,
            modified: record.updated_at,
            reader,
        }
    }
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("name", &self.name)
            .field("content_type", &self.content_type)
            .finish()
    }
}

/// What `GET /<id>` found: a single file, or a bundle (served as a zip,
/// an index page or a listing by the HTTP layer).
#[derive(Debug)]
pub enum Opened {
    /// A single file, ready to stream.
    File(Download),
    /// A bundle's record.
    Bundle(BundleRecord),
}

/// GET /browse's sort keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BrowseSort {
    /// By creation time.
    #[default]
    Created,
    /// By file name.
    Name,
    /// By size in bytes.
    Size,
    /// By expiry time; retained files, which never expire, sort after every
    /// date.
    Expires,
}

/// Listing order; newest (or largest) first by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// Ascending: oldest, smallest or A to Z first.
    Asc,
    /// Descending: newest, largest or Z to A first (the default).
    #[default]
    Desc,
}

/// GET /browse's filters: every tag must be present (AND), and `q` must be
/// a substring of the name or of a tag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrowseQuery {
    /// Tags every file listed must carry; empty for no tag filter.
    pub tags: Vec<String>,
    /// Text to find in the file name (ignoring case) or in a tag; None
    /// matches every file.
    pub q: Option<String>,
    /// What the files are sorted by.
    pub sort: BrowseSort,
    /// Sort direction; descending by default.
    pub order: SortOrder,
}

impl App {
    /// Sorts a listing by `key` in `order` and keeps at most
    /// `browse_results_max` entries: every listing is bounded.
    pub(crate) fn sort_and_cap<T>(
        &self,
        items: &mut Vec<T>,
        order: SortOrder,
        key: impl Fn(&T, &T) -> Ordering,
    ) {
        items.sort_by(|a, b| match order {
            SortOrder::Asc => key(a, b),
            SortOrder::Desc => key(b, a),
        });
        items.truncate(self.config.limits.browse_results_max);
    }

    /// Reads a live single file or bundle, or answers 404.
    pub(crate) fn live_object(&self, id: &str, now: store_core::Timestamp) -> AppResult<Object> {
        live_file_or_bundle(self.ports.repo.get(id)?, now)
    }

    /// [`App::live_object`] with its revision, for a use case that will
    /// write it back (under the key's lock).
    pub(crate) fn loaded_object(
        &self,
        id: &str,
        now: store_core::Timestamp,
    ) -> AppResult<(Object, Rev)> {
        let Some((obj, rev)) = self.ports.repo.load(id)? else {
            return Err(StoreError::not_found().into());
        };
        Ok((live_file_or_bundle(Some(obj), now)?, rev))
    }

    /// Reads a live single file: 404 if there is none, 403 for a bundle
    /// (which is immutable and carries no tags).
    fn live_file(&self, id: &str, now: store_core::Timestamp) -> AppResult<FileRecord> {
        only_file(self.live_object(id, now)?)
    }

    /// [`App::live_file`] with its revision, for a use case that will
    /// write it back.
    fn loaded_file(&self, id: &str, now: store_core::Timestamp) -> AppResult<(FileRecord, Rev)> {
        let (obj, rev) = self.loaded_object(id, now)?;
        Ok((only_file(obj)?, rev))
    }

    /// POST /: one part makes a single file (named by `name=` or else by
    /// the part), two or more make a bundle (SPEC.md "Bundles").
    pub fn upload_parts(
        &self,
        req: &NewFile,
        mut parts: Vec<crate::Part>,
        auth: RetainAuth,
    ) -> AppResult<Uploaded> {
        if parts.is_empty() {
            return Err(StoreError::bad_request("the upload has no file").into());
        }
        if parts.len() != 1 {
            return Ok(Uploaded::Bundle(self.create_bundle(req, parts, auth)?));
        }
        let part = parts.pop().expect("one part");
        let req = NewFile {
            name: req.name.clone().or(part.name),
            declared_type: part.declared_type,
            ..req.clone()
        };
        Ok(Uploaded::File(self.create_file(&req, part.body, auth)?))
    }

    /// Stores a received body as a new single file.
    pub fn create_file(
        &self,
        req: &NewFile,
        upload: Staged,
        auth: RetainAuth,
    ) -> AppResult<Created<FileRecord>> {
        self.store_file(req, upload, auth, false)
    }

    /// Stores a received body as a new single file; `link` marks a
    /// `link=1` redirect document.
    pub(crate) fn store_file(
        &self,
        req: &NewFile,
        upload: Staged,
        auth: RetainAuth,
        link: bool,
    ) -> AppResult<Created<FileRecord>> {
        let now = self.now();
        let body = Body {
            head: upload.head(),
            utf8: upload.is_utf8_text(),
            size: upload.size(),
            seen: true,
        };
        let draft = self.draft_file(req, body, auth, link, now)?;
        self.refuse_blocked(upload.sha256().as_slice())?;
        let password = self.protection_for(req.password.as_ref(), None)?;
        let reservation = self.reserve(body.size)?;
        let owner_token = ids::token(self.ports.random.as_ref());
        let sha256 = upload.sha256();
        let owner = Owner::new(&owner_token, req.protect);
        let mut record = draft.into_record((upload.into_blob(), sha256), owner);
        record.password = password;
        // The reservation is kept even when the insert failed: the record
        // may have been written before a failed flush. The next start reads
        // the pool totals kept with the records and collects orphan blobs,
        // so both settle either way.
        self.insert_with_fresh_id(reservation, |id| {
            record.id = id.to_string();
            Object::File(record.clone())
        })?;
        Ok(Created {
            record,
            now,
            owner_token,
        })
    }

    /// Every check and choice of a new single file that its body and
    /// options decide (tags, lifetime, download limit, type, name): what a
    /// plain upload and a resumable upload's last byte both make.
    pub(crate) fn draft_file(
        &self,
        req: &NewFile,
        body: Body<'_>,
        auth: RetainAuth,
        link: bool,
        now: store_core::Timestamp,
    ) -> AppResult<FileDraft> {
        req.validate(&self.config.limits)?;
        let tags = apply_tags(&self.config.limits, &[], &req.tags, &[])?;
        let lifetime = lifetime_for_new(
            auth,
            Lifetime::fixed(now, ttl::file_ttl(&self.config.limits, req.ttl_secs)),
        )?;
        let downloads = req.downloads(&self.config.limits)?;
        let (content_type, name) = type_and_name(req, body)?;
        Ok(FileDraft(FileRecord {
            id: String::new(),
            name,
            text: req.encrypted.is_none() && is_text_file(body.utf8, &content_type),
            content_type,
            size: body.size,
            blob: store_core::BlobId(String::new()),
            created_at: now,
            updated_at: now,
            lifetime,
            once: downloads == Some(1),
            downloads_left: downloads.filter(|&n| n > 1),
            tags,
            link,
            thumbs: Default::default(),
            owner: None,
            encrypted: req.encrypted,
            password: None,
            sha256: None,
        }))
    }

    /// GET or HEAD `/<id>`. A once file is burnt by the first GET, and a
    /// download-limited file counts each GET and is burnt by its last:
    /// under the key's lock, so concurrent readers never get more
    /// downloads than it allows.
    pub fn read(&self, id: &str, intent: ReadIntent, key: &ReadKey) -> AppResult<Opened> {
        self.read_inner(id, intent, true, key)
            .map(|opened| opened.expect("a read that may write always opens"))
    }

    /// The same read, but only if it writes nothing: `None` when serving
    /// would burn or count a download, which the caller then does with
    /// [`read`].
    /// It never flushes or fsyncs, so a server may run it on its async
    /// executor and keep the blocking pool for work that waits on the disk,
    /// unless [`App::reads_wait`]: then the record is across a socket.
    ///
    /// [`read`]: App::read
    pub fn read_without_writing(
        &self,
        id: &str,
        intent: ReadIntent,
        key: &ReadKey,
    ) -> AppResult<Option<Opened>> {
        self.read_inner(id, intent, false, key)
    }

    fn read_inner(
        &self,
        id: &str,
        intent: ReadIntent,
        may_write: bool,
        key: &ReadKey,
    ) -> AppResult<Option<Opened>> {
        let now = self.now();
        // Only a burn needs the key's lock (two readers must not both get a
        // once file). A read that writes nothing sees one atomic snapshot of
        // the record and must not wait: lock stripes are shared, and a
        // writer holding one across an fsync would stall it.
        let _guard = may_write.then(|| self.lock(&[id])).transpose()?;
        // A read that may write reads the revision it will write at.
        let (object, rev) = if may_write {
            let (obj, rev) = self.loaded_object(id, now)?;
            (obj, Some(rev))
        } else {
            (self.live_object(id, now)?, None)
        };
        let (record, decision) = match self.admit_read(id, object, intent, key, now)? {
            Admitted::File(record, decision) => (record, decision),
            Admitted::Bundle(b) => return Ok(Some(Opened::Bundle(b))),
        };
        if decision != ReadDecision::Serve && !may_write {
            return Ok(None);
        }
        let counted = record.is_counted();
        let reader = self.open_file_blob(&record.blob, counted)?;
        // The burn or the count is a write at the revision read: only if it
        // took effect are the bytes served, so a process whose lock was
        // lost meanwhile serves nothing (its write fails) and a once file
        // goes out once in total.
        match (decision, rev) {
            (ReadDecision::ServeAndBurn, Some(rev)) => {
                self.remove_object(id, rev, &Object::File(record.clone()))?
            }
            (ReadDecision::ServeAndCount, Some(rev)) => {
                // Under the key's lock: concurrent readers count one by
                // one, in this process and (with shared locks) in others.
                let mut counted = record.clone();
                counted.count_download();
                self.ports
                    .repo
                    .replace(id, rev, &Object::File(counted), &[])?;
            }
            (ReadDecision::Serve, _) => {}
            (_, None) => unreachable!("a read that writes was refused above without may_write"),
        }
        Ok(Some(Opened::File(Download::of(record, counted, reader))))
    }

    /// A live file or bundle past its gates, and for a file how a read
    /// of `intent` is served. Before anything is counted: a read the
    /// password gate refuses spends nothing.
    pub(crate) fn admit_read(
        &self,
        id: &str,
        object: Object,
        intent: ReadIntent,
        key: &ReadKey,
        now: store_core::Timestamp,
    ) -> AppResult<Admitted> {
        self.check_read(id, (object.protection(), object.owner()), key, now)?;
        match object {
            Object::File(f) => {
                let decision = f.decide_read(now, intent)?;
                Ok(Admitted::File(f, decision))
            }
            Object::Bundle(b) => Ok(Admitted::Bundle(b)),
            Object::Dir(_) | Object::Gallery(_) | Object::Image(_) | Object::Upload(_) => {
                unreachable!("reads admit only live files and bundles")
            }
        }
    }

    /// The record of a live file, for pages and metadata.
    pub fn file_info(&self, id: &str, key: &ReadKey) -> AppResult<AsOf<FileRecord>> {
        let now = self.now();
        let record = self.live_file(id, now)?;
        self.check_read(
            id,
            (record.password.as_ref(), record.owner.as_ref()),
            key,
            now,
        )?;
        Ok(AsOf { record, now })
    }

    /// The first `max_bytes` of a text file whose record the caller has
    /// just read ([`App::file_info`]), cut at a character's end, for its
    /// info page: browsers download text types they cannot show (CSV,
    /// YAML...), so the page shows them itself. `None` for a file that is
    /// not text, and for one whose downloads are counted, whose bytes only
    /// a counted download may read.
    pub fn text_preview(
        &self,
        record: &FileRecord,
        max_bytes: u64,
    ) -> AppResult<Option<TextPreview>> {
        if !record.text || record.is_counted() || record.link {
            return Ok(None);
        }
        let mut reader = self.open_blob_range(&record.blob, 0..max_bytes.min(record.size))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut bytes).map_err(|e| {
            AppError::Storage(store_core::StorageError::from_io(
                "reading a text preview",
                &e,
            ))
        })?;
        let valid = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) => e.valid_up_to(),
        };
        bytes.truncate(valid);
        Ok(Some(TextPreview {
            text: String::from_utf8(bytes).unwrap_or_default(),
            whole: valid as u64 == record.size,
        }))
    }

    /// The record of a live file or bundle, read without counting a
    /// download: for what only needs to know it exists (its QR code).
    pub fn object_info(&self, id: &str) -> AppResult<AsOf<Object>> {
        let now = self.now();
        let record = self.live_object(id, now)?;
        Ok(AsOf { record, now })
    }

    /// DELETE `/<id>`: a single file or a whole bundle.
    pub fn delete(&self, id: &str, access: &Access) -> AppResult<()> {
        let now = self.now();
        let _guard = self.lock(&[id])?;
        let (obj, rev) = self.loaded_object(id, now)?;
        access.check_owned(obj.lifetime(), obj.owner())?;
        self.remove_object(id, rev, &obj)
    }

    /// POST `/<id>?tag=..&untag=`..: tags change, content and expiry do not.
    pub fn tag_file(
        &self,
        id: &str,
        add: &[String],
        remove: &[String],
        access: &Access,
    ) -> AppResult<AsOf<FileRecord>> {
        let now = self.now();
        let _guard = self.lock(&[id])?;
        let (mut record, rev) = self.loaded_file(id, now)?;
        access.check_owned(&record.lifetime, record.owner.as_ref())?;
        record.tags = apply_tags(&self.config.limits, &record.tags, add, remove)?;
        self.ports
            .repo
            .replace(id, rev, &Object::File(record.clone()), &[])?;
        Ok(AsOf { record, now })
    }

    /// POST `/<id>?retain=1` on a single file or a bundle: idempotent.
    /// Answers the retained object.
    pub fn retain(&self, id: &str, auth: RetainAuth) -> AppResult<Object> {
        let now = self.now();
        let _guard = self.lock(&[id])?;
        let (mut obj, rev) = self.loaded_object(id, now)?;
        authorize_retain(auth)?;
        match &mut obj {
            Object::File(f) => {
                f.lifetime = Lifetime::Indefinite;
                f.updated_at = now;
            }
            Object::Bundle(b) => {
                b.lifetime = Lifetime::Indefinite;
                b.updated_at = now;
            }
            Object::Dir(_) | Object::Gallery(_) | Object::Image(_) | Object::Upload(_) => {
                unreachable!("live_object only returns files and bundles")
            }
        }
        self.ports.repo.replace(id, rev, &obj, &[])?;
        Ok(obj)
    }

    /// POST `/<id>?ttl=`: the owner gives a single file or a bundle a new
    /// lifetime of `ttl_secs` (clamped as at upload) counted from now. A
    /// retained object keeps its lifetime. Answers the object.
    pub fn set_ttl(&self, id: &str, ttl_secs: u64, access: &Access) -> AppResult<AsOf<Object>> {
        let now = self.now();
        let _guard = self.lock(&[id])?;
        let (mut obj, rev) = self.loaded_object(id, now)?;
        access.check_owner(obj.owner())?;
        if !obj.lifetime().is_retained() {
            let secs = ttl::file_ttl(&self.config.limits, Some(ttl_secs));
            let (lifetime, updated_at) = match &mut obj {
                Object::File(f) => (&mut f.lifetime, &mut f.updated_at),
                Object::Bundle(b) => (&mut b.lifetime, &mut b.updated_at),
                _ => unreachable!("live_object only returns files and bundles"),
            };
            *lifetime = lifetime.renewed(now, secs);
            *updated_at = now;
            self.ports.repo.replace(id, rev, &obj, &[])?;
        }
        Ok(AsOf { record: obj, now })
    }

    /// Checks that a PUT or PATCH may go ahead before its body is read, so
    /// that a refused edit costs the client no upload.
    pub fn check_edit(&self, id: &str, access: &Access) -> AppResult<()> {
        let record = self.live_file(id, self.now())?;
        access.check_owned(&record.lifetime, record.owner.as_ref())?;
        record.ensure_editable()?;
        Ok(())
    }

    /// PUT `/<id>`: replaces a text file's content. With the retain token it
    /// also retains the file.
    pub fn replace_file(
        &self,
        id: &str,
        upload: Staged,
        access: &Access,
    ) -> AppResult<AsOf<FileRecord>> {
        let now = self.now();
        if !upload.is_utf8_text() {
            return Err(StoreError::bad_request(
                "the new content of a text file must be UTF-8 text",
            )
            .into());
        }
        let _guard = self.lock(&[id])?;
        let (mut record, rev) = self.loaded_file(id, now)?;
        access.check_owned(&record.lifetime, record.owner.as_ref())?;
        record.ensure_editable()?;
        let new_size = upload.size();
        let sha256 = upload.sha256();
        self.refuse_blocked(sha256.as_slice())?;
        let grow = self.reserve(new_size.saturating_sub(record.size))?;
        let blob = upload.into_blob();
        self.swap_content(
            (id, rev),
            &mut record,
            (blob, new_size, sha256),
            grow,
            access.retain,
            now,
        )?;
        Ok(AsOf { record, now })
    }

    /// PATCH `/<id>`: appends text to a text file, up to the file size limit.
    pub fn append_file(
        &self,
        id: &str,
        text: &[u8],
        access: &Access,
    ) -> AppResult<AsOf<FileRecord>> {
        let now = self.now();
        check_appended_text(text)?;
        let _guard = self.lock(&[id])?;
        let (mut record, rev) = self.loaded_file(id, now)?;
        access.check_owned(&record.lifetime, record.owner.as_ref())?;
        record.ensure_editable()?;
        let new_size = self.appended_size(record.size, text.len())?;
        let grow = self.reserve(text.len() as u64)?;
        let (blob, sha256) = self.concat_blob(&record.blob, text)?;
        if let Err(e) = self.refuse_blocked(sha256.as_slice()) {
            let _ = self.ports.blobs.remove(&blob);
            return Err(e);
        }
        self.swap_content(
            (id, rev),
            &mut record,
            (blob, new_size, sha256),
            grow,
            access.retain,
            now,
        )?;
        Ok(AsOf { record, now })
    }

    /// Points a file at new bytes (`content`: the blob, its size and its
    /// digest),
    /// then frees the old ones. Pool bytes of growth were reserved by the
    /// caller (`grow`) and are settled with the record; shrinkage is given
    /// back here. If the record write fails, nothing is freed: the write
    /// may have landed, and the next start settles blobs and pool (totals
    /// kept with the records, then the orphan collection).
    fn swap_content(
        &self,
        (id, rev): (&str, Rev),
        record: &mut FileRecord,
        (blob, new_size, sha256): (store_core::BlobId, u64, Option<Sha256>),
        grow: crate::pool::Reservation<'_>,
        retain: RetainAuth,
        now: store_core::Timestamp,
    ) -> AppResult<()> {
        let old_blob = std::mem::replace(&mut record.blob, blob);
        let old_size = std::mem::replace(&mut record.size, new_size);
        record.sha256 = sha256;
        record.updated_at = now;
        if retain == RetainAuth::Valid {
            record.lifetime = Lifetime::Indefinite;
        }
        let doomed = [old_blob.clone()];
        if let Err(e) = self.put_keeping((id, rev), &Object::File(record.clone()), &doomed, grow) {
            self.discard_if_unwritten(&e, &record.blob);
            return Err(e.into());
        }
        if old_size > new_size {
            self.ledgers.freed(Pool::Store, old_size - new_size);
        }
        self.release_blobs(&doomed);
        Ok(())
    }

    /// GET /browse: live single files that carry at least one tag (tagging
    /// is how a file opts in to being listed), minus burn-after-reading
    /// files, filtered, sorted and capped at `browse_results_max`.
    pub fn browse(&self, query: &BrowseQuery) -> AppResult<Vec<FileRecord>> {
        let now = self.now();
        for tag in &query.tags {
            store_core::names::validate_tag(&self.config.limits, tag)?;
        }
        let q = query.q.as_deref().map(str::to_lowercase);
        let wanted = |f: &FileRecord| {
            f.lifetime.is_live(now)
                && f.is_browsable()
                && query.tags.iter().all(|t| f.tags.contains(t))
                && q.as_deref().is_none_or(|q| {
                    f.name.to_lowercase().contains(q) || f.tags.iter().any(|t| t.contains(q))
                })
        };
        let mut hits: Vec<FileRecord> = Vec::new();
        if let Some(first) = query.tags.first() {
            // The tag index narrows the search to one tag's files.
            let keys: BTreeSet<String> =
                self.ports.repo.keys_with_tag(first)?.into_iter().collect();
            for key in keys {
                if let Some(Object::File(f)) = self.ports.repo.get(&key)? {
                    if wanted(&f) {
                        hits.push(f);
                    }
                }
            }
        } else {
            self.ports.repo.listed(Listing::Browse, &mut |_, obj| {
                if let Object::File(f) = obj {
                    if wanted(f) {
                        hits.push(f.clone());
                    }
                }
                ControlFlow::Continue(())
            })?;
        }
        let key = |a: &FileRecord, b: &FileRecord| -> Ordering {
            match query.sort {
                BrowseSort::Created => a.created_at.cmp(&b.created_at),
                BrowseSort::Name => a.name.cmp(&b.name),
                BrowseSort::Size => a.size.cmp(&b.size),
                // Retained files never expire: they sort after every date.
                BrowseSort::Expires => match (a.lifetime.expires_at(), b.lifetime.expires_at()) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                },
            }
            .then_with(|| a.id.cmp(&b.id))
        };
        self.sort_and_cap(&mut hits, query.order, key);
        Ok(hits)
    }
}

/// `obj` if it is a live single file or bundle; else 404.
/// A new file's type and name: from its bytes, name and declared type;
/// or for ciphertext (`encrypted=`), once its bytes are checked to be in
/// the format it names, a type that says nothing of what it holds.
fn type_and_name(req: &NewFile, body: Body<'_>) -> AppResult<(String, String)> {
    if let Some(format) = req.encrypted {
        if body.seen {
            format.check_head(body.head)?;
        }
        let name = req.name.as_deref().unwrap_or(format.default_file_name());
        return Ok((ENCRYPTED_CONTENT_TYPE.to_string(), name.to_string()));
    }
    let content_type = content::decide(
        body.head,
        req.name.as_deref().unwrap_or(""),
        req.declared_type.as_deref(),
        body.utf8,
    );
    let name = req
        .name
        .clone()
        .unwrap_or_else(|| default_file_name(&content_type));
    Ok((content_type, name))
}

pub(crate) fn live_file_or_bundle(
    obj: Option<Object>,
    now: store_core::Timestamp,
) -> AppResult<Object> {
    match obj {
        Some(obj @ (Object::File(_) | Object::Bundle(_))) if obj.lifetime().is_live(now) => Ok(obj),
        _ => Err(StoreError::not_found().into()),
    }
}

/// The file `obj` is; 403 for a bundle (which is immutable and carries no
/// tags).
fn only_file(obj: Object) -> AppResult<FileRecord> {
    match obj {
        Object::File(f) => Ok(f),
        _ => Err(
            StoreError::forbidden("a bundle is immutable: it cannot be edited or tagged").into(),
        ),
    }
}

/// The start of a text file, as its info page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextPreview {
    /// The start of the file, at most the bytes asked for, cut back to whole
    /// UTF-8 characters.
    pub text: String,
    /// Whether that is the whole file.
    pub whole: bool,
}
