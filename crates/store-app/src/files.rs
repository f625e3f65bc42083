//! Single files: upload, read (with burn after reading), delete, tags,
//! replace, append, retain and browse.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::ControlFlow;

use store_core::auth::{authorize_retain, authorize_write, lifetime_for_new};
use store_core::content::{self, is_text_type};
use store_core::names::{
    apply_tags, default_file_name, validate_file_name, validate_memorable_name,
};
use store_core::ports::BlobReader;
use store_core::views::{BrowseEntry, FileView, PersistenceType, RetainView};
use store_core::{
    ids, ttl, FileRecord, Lifetime, Object, ReadDecision, ReadIntent, RetainAuth, StoreError,
};

use crate::{App, AppResult, Upload};

/// An upload's parameters, checked before its body is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewFile {
    /// `name=`, or the multipart part's file name.
    pub name: Option<String>,
    /// The type the client declared (request or part Content-Type).
    pub declared_type: Option<String>,
    /// Requested lifetime in seconds, before clamping.
    pub ttl_secs: Option<u64>,
    pub once: bool,
    pub tags: Vec<String>,
    /// `share=<name>`: store into the named dir instead.
    pub share: Option<String>,
}

impl NewFile {
    /// Every rule that does not need the bytes: file name, tags, share name,
    /// and the once/share combination.
    pub fn validate(&self) -> Result<(), StoreError> {
        if let Some(name) = &self.name {
            validate_file_name(name)?;
        }
        apply_tags(&[], &self.tags, &[])?;
        if let Some(share) = &self.share {
            if self.once {
                return Err(StoreError::bad_request(
                    "once=1 cannot be combined with share: burn after reading applies to single files only",
                ));
            }
            validate_memorable_name(share)?;
            return Err(StoreError::Unsupported(
                "share=<name> stores into a named dir; dirs are not available in this build yet"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// A file ready to be streamed out. For a burnt file the record is already
/// gone: `reader` holds the last handle to its bytes.
pub struct FileDownload {
    pub record: FileRecord,
    pub reader: Box<dyn BlobReader>,
}

impl std::fmt::Debug for FileDownload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileDownload")
            .field("record", &self.record)
            .finish()
    }
}

/// GET /browse's sort keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BrowseSort {
    #[default]
    Created,
    Name,
    Size,
    Expires,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    Asc,
    #[default]
    Desc,
}

/// GET /browse's filters: every tag must be present (AND), and `q` must be
/// a substring of the name or of a tag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrowseQuery {
    pub tags: Vec<String>,
    pub q: Option<String>,
    pub sort: BrowseSort,
    pub order: SortOrder,
}

impl App {
    fn view(&self, file: &FileRecord, now: store_core::Timestamp) -> FileView {
        FileView::new(file, &self.config.base_url, now)
    }

    /// Loads a live single file, or answers 404.
    fn live_file(&self, id: &str, now: store_core::Timestamp) -> AppResult<FileRecord> {
        match self.ports.repo.get(id)? {
            Some(Object::File(f)) if f.lifetime.is_live(now) => Ok(f),
            _ => Err(StoreError::not_found().into()),
        }
    }

    /// POST /: stores a received body as a new single file.
    pub fn create_file(
        &self,
        req: &NewFile,
        upload: Upload,
        auth: RetainAuth,
    ) -> AppResult<FileView> {
        let now = self.now();
        req.validate()?;
        let tags = apply_tags(&[], &req.tags, &[])?;
        let lifetime = lifetime_for_new(auth, Lifetime::fixed(now, ttl::file_ttl(req.ttl_secs)))?;
        let utf8 = upload.is_utf8_text();
        let content_type = content::decide(
            upload.head(),
            req.name.as_deref().unwrap_or(""),
            req.declared_type.as_deref(),
            utf8,
        );
        let name = req
            .name
            .clone()
            .unwrap_or_else(|| default_file_name(&content_type));
        let size = upload.size();
        let reservation = self.reserve(size)?;
        let blob = upload.commit()?;
        let mut record = FileRecord {
            id: String::new(),
            name,
            text: utf8 && is_text_type(&content_type),
            content_type,
            size,
            blob,
            created_at: now,
            updated_at: now,
            lifetime,
            once: req.once,
            tags,
        };
        // 71 random bits make a collision all but impossible; the loop turns
        // "all but" into "never".
        loop {
            record.id = ids::object_id(self.ports.random.as_ref());
            match self
                .ports
                .repo
                .insert_new(&record.id, &Object::File(record.clone()))
            {
                Ok(true) => break,
                Ok(false) => continue,
                Err(e) => {
                    self.ports.blobs.remove(&record.blob)?;
                    return Err(e.into());
                }
            }
        }
        reservation.keep();
        Ok(self.view(&record, now))
    }

    /// GET or HEAD /<id>. A once file is burnt by the first GET: the record
    /// goes under the key's lock, so concurrent readers cannot both get it.
    pub fn open_file(&self, id: &str, intent: ReadIntent) -> AppResult<FileDownload> {
        let now = self.now();
        let _guard = self.locks.lock(id);
        let record = self.live_file(id, now)?;
        let decision = record.decide_read(now, intent)?;
        let reader = self.ports.blobs.open(&record.blob)?;
        if decision == ReadDecision::ServeAndBurn {
            self.remove_object(id, &Object::File(record.clone()))?;
        }
        Ok(FileDownload { record, reader })
    }

    /// The record of a live file, for pages and metadata.
    pub fn file_info(&self, id: &str) -> AppResult<FileView> {
        let now = self.now();
        let record = self.live_file(id, now)?;
        Ok(self.view(&record, now))
    }

    /// DELETE /<id>.
    pub fn delete_file(&self, id: &str, auth: RetainAuth) -> AppResult<()> {
        let now = self.now();
        let _guard = self.locks.lock(id);
        let record = self.live_file(id, now)?;
        authorize_write(&record.lifetime, auth)?;
        self.remove_object(id, &Object::File(record))
    }

    /// POST /<id>?tag=..&untag=..: tags change, content and expiry do not.
    pub fn tag_file(
        &self,
        id: &str,
        add: &[String],
        remove: &[String],
        auth: RetainAuth,
    ) -> AppResult<FileView> {
        let now = self.now();
        let _guard = self.locks.lock(id);
        let mut record = self.live_file(id, now)?;
        authorize_write(&record.lifetime, auth)?;
        record.tags = apply_tags(&record.tags, add, remove)?;
        self.ports.repo.put(id, &Object::File(record.clone()))?;
        Ok(self.view(&record, now))
    }

    /// POST /<id>?retain=1: idempotent.
    pub fn retain_file(&self, id: &str, auth: RetainAuth) -> AppResult<RetainView> {
        let now = self.now();
        let _guard = self.locks.lock(id);
        let mut record = self.live_file(id, now)?;
        authorize_retain(auth)?;
        if !record.lifetime.is_retained() {
            record.lifetime = Lifetime::Indefinite;
            record.updated_at = now;
            self.ports.repo.put(id, &Object::File(record.clone()))?;
        }
        Ok(RetainView::new(
            id,
            format!("{}/{id}", self.config.base_url),
            PersistenceType::Single,
        ))
    }

    /// Checks that a PUT or PATCH may go ahead before its body is read, so
    /// that a refused edit costs the client no upload.
    pub fn check_edit(&self, id: &str, auth: RetainAuth) -> AppResult<()> {
        let record = self.live_file(id, self.now())?;
        authorize_write(&record.lifetime, auth)?;
        record.ensure_editable()?;
        Ok(())
    }

    /// PUT /<id>: replaces a text file's content. With the retain token it
    /// also retains the file.
    pub fn replace_file(&self, id: &str, upload: Upload, auth: RetainAuth) -> AppResult<FileView> {
        let now = self.now();
        if !upload.is_utf8_text() {
            return Err(StoreError::bad_request(
                "the new content of a text file must be UTF-8 text",
            )
            .into());
        }
        let _guard = self.locks.lock(id);
        let mut record = self.live_file(id, now)?;
        authorize_write(&record.lifetime, auth)?;
        record.ensure_editable()?;
        let new_size = upload.size();
        let grow = self.reserve(new_size.saturating_sub(record.size))?;
        let blob = upload.commit()?;
        self.swap_content(id, &mut record, blob, new_size, auth, now)?;
        grow.keep();
        Ok(self.view(&record, now))
    }

    /// PATCH /<id>: appends text to a text file, up to the file size limit.
    pub fn append_file(&self, id: &str, text: &[u8], auth: RetainAuth) -> AppResult<FileView> {
        let now = self.now();
        if std::str::from_utf8(text).is_err() || text.contains(&0) {
            return Err(StoreError::bad_request("appended content must be UTF-8 text").into());
        }
        let _guard = self.locks.lock(id);
        let mut record = self.live_file(id, now)?;
        authorize_write(&record.lifetime, auth)?;
        record.ensure_editable()?;
        let limit = self.config.limits.file_bytes_max;
        let new_size = record.size + text.len() as u64;
        if new_size > limit {
            return Err(StoreError::TooLarge(format!(
                "the file would grow to {new_size} bytes, over the limit of {limit}"
            ))
            .into());
        }
        let grow = self.reserve(text.len() as u64)?;
        let mut writer = self.ports.blobs.create()?;
        let mut old = self.ports.blobs.open(&record.blob)?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n =
                std::io::Read::read(&mut old, &mut buf).map_err(store_core::StorageError::new)?;
            if n == 0 {
                break;
            }
            writer.write(&buf[..n])?;
        }
        writer.write(text)?;
        let blob = writer.commit()?;
        self.swap_content(id, &mut record, blob, new_size, auth, now)?;
        grow.keep();
        Ok(self.view(&record, now))
    }

    /// Points a file at new bytes, then frees the old ones. Pool bytes of
    /// growth were reserved by the caller; shrinkage is given back here.
    fn swap_content(
        &self,
        id: &str,
        record: &mut FileRecord,
        blob: store_core::BlobId,
        new_size: u64,
        auth: RetainAuth,
        now: store_core::Timestamp,
    ) -> AppResult<()> {
        let old_blob = std::mem::replace(&mut record.blob, blob);
        let old_size = std::mem::replace(&mut record.size, new_size);
        record.updated_at = now;
        if auth == RetainAuth::Valid {
            record.lifetime = Lifetime::Indefinite;
        }
        if let Err(e) = self.ports.repo.put(id, &Object::File(record.clone())) {
            self.ports.blobs.remove(&record.blob)?;
            return Err(e.into());
        }
        if old_size > new_size {
            self.ledger().release(old_size - new_size);
        }
        self.ports.blobs.remove(&old_blob)?;
        Ok(())
    }

    /// GET /browse: live single files that carry at least one tag (tagging
    /// is how a file opts in to being listed), minus burn-after-reading
    /// files, filtered, sorted and capped at `browse_results_max`.
    pub fn browse(&self, query: &BrowseQuery) -> AppResult<Vec<BrowseEntry>> {
        let now = self.now();
        for tag in &query.tags {
            store_core::names::validate_tag(tag)?;
        }
        let q = query.q.as_deref().map(str::to_lowercase);
        let wanted = |f: &FileRecord| {
            f.lifetime.is_live(now)
                && !f.once
                && !f.tags.is_empty()
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
            self.ports.repo.for_each(&mut |_, obj| {
                // Other object kinds (bundles, dirs) are never browsed.
                #[allow(irrefutable_let_patterns)]
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
        hits.sort_by(|a, b| match query.order {
            SortOrder::Asc => key(a, b),
            SortOrder::Desc => key(b, a),
        });
        hits.truncate(self.config.limits.browse_results_max);
        Ok(hits
            .iter()
            .map(|f| BrowseEntry::new(f, &self.config.base_url))
            .collect())
    }
}
