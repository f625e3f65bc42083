use std::sync::Arc;

use store_core::content::{Utf8Check, SNIFF_BYTES};
use store_core::digest::{RunningSha256, Sha256};
use store_core::ports::{BlobStore, BlobWriter, Scan};
use store_core::{BlobId, StoreError};

use crate::AppResult;

/// A body being received into a new blob, with its limit enforced on every
/// chunk (the whole body is never held in memory). It remembers what the
/// use case needs to decide the file's type: the first bytes and whether
/// the whole is UTF-8 text. Dropped before [`Upload::finish`], it leaves
/// nothing behind.
pub struct Upload {
    writer: Box<dyn BlobWriter>,
    blobs: Arc<dyn BlobStore>,
    limit_bytes: u64,
    size: u64,
    head: Vec<u8>,
    utf8: Utf8Check,
    /// The SHA-256 as the bytes pass, when the server moderates (the
    /// admin's search and the blocklist are its only readers).
    digest: Option<RunningSha256>,
    /// The virus scan the bytes also go to, when scanning is on.
    scan: Option<Box<dyn Scan>>,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("size", &self.size)
            .field("limit_bytes", &self.limit_bytes)
            .finish()
    }
}

impl Upload {
    pub(crate) fn new(
        writer: Box<dyn BlobWriter>,
        blobs: Arc<dyn BlobStore>,
        limit_bytes: u64,
    ) -> Self {
        Self {
            writer,
            blobs,
            limit_bytes,
            size: 0,
            head: Vec::new(),
            utf8: Utf8Check::new(),
            digest: None,
            scan: None,
        }
    }

    /// The same upload, its bytes also going to `scan`, and hashed when
    /// `hashed`.
    pub(crate) fn scanned(self, scan: Option<Box<dyn Scan>>, hashed: bool) -> Self {
        Self {
            scan,
            digest: hashed.then(RunningSha256::default),
            ..self
        }
    }

    /// Appends a chunk; refuses it with 413 once the limit would be passed.
    pub fn push(&mut self, chunk: &[u8]) -> AppResult<()> {
        let size = self.size + chunk.len() as u64;
        if size > self.limit_bytes {
            return Err(StoreError::too_large(self.limit_bytes).into());
        }
        if self.head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        self.utf8.push(chunk);
        if let Some(digest) = &mut self.digest {
            digest.update(chunk);
        }
        if let Some(scan) = &mut self.scan {
            scan.write(chunk)?;
        }
        self.writer.write(chunk)?;
        self.size = size;
        Ok(())
    }

    /// Makes the bytes durable as a blob that no record references yet.
    /// The writer's file is closed here, so a request with many parts
    /// holds one open file at a time, not one per part.
    pub fn finish(self) -> AppResult<Staged> {
        // The verdict comes first: refused, the writer is dropped and its
        // bytes with it.
        crate::scanning::verdict(self.scan)?;
        let blob = self.writer.commit()?;
        Ok(Staged {
            blob: Some(blob),
            blobs: self.blobs,
            size: self.size,
            head: self.head,
            utf8_text: self.utf8.is_text(),
            sha256: self.digest.map(RunningSha256::finish),
        })
    }
}

/// A received body, durable as a blob but not yet referenced by a record.
/// Dropped without being taken into a record, its blob is removed, so an
/// upload refused late (bad name, full pool) leaves nothing behind.
pub struct Staged {
    blob: Option<BlobId>,
    blobs: Arc<dyn BlobStore>,
    size: u64,
    head: Vec<u8>,
    utf8_text: bool,
    sha256: Option<Sha256>,
}

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staged")
            .field("blob", &self.blob)
            .field("size", &self.size)
            .finish()
    }
}

impl Staged {
    /// The body's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The first bytes, for type detection.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Valid UTF-8 without NUL bytes.
    pub fn is_utf8_text(&self) -> bool {
        self.utf8_text
    }

    /// The SHA-256 of the bytes, when the server moderates.
    pub fn sha256(&self) -> Option<Sha256> {
        self.sha256
    }

    /// The blob, for reading it back before it is handed on.
    pub(crate) fn blob_id(&self) -> &BlobId {
        self.blob
            .as_ref()
            .expect("a staged blob is present until taken")
    }

    /// Hands the blob to a record: from here on the record owns it.
    pub(crate) fn into_blob(mut self) -> BlobId {
        self.blob.take().expect("a staged blob is taken once")
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(blob) = self.blob.take() {
            // Best effort: a blob left behind is an orphan, collected after
            // the next start.
            let _ = self.blobs.remove(&blob);
        }
    }
}

/// One received file of a multipart body.
#[derive(Debug)]
pub struct Part {
    /// The part's file name (or the name chosen for it).
    pub name: Option<String>,
    /// The part's declared Content-Type.
    pub declared_type: Option<String>,
    /// The part's bytes, received into a blob no record references yet.
    pub body: Staged,
}
