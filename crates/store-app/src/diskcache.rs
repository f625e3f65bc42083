//! Large blobs of a bucket kept on local disk (issue 37), in front of any
//! [`BlobStore`] whose reads wait on the network.
//!
//! Blobs are immutable by id (an edit writes a new blob), so a copy is
//! never stale: it can only outlive its record, and a blob is only ever
//! opened for a record that names it and that the use case found live.
//! The copy is made as the first reader reads the bytes (they go to the
//! reader and to a local file at once), so a blob is read from the bucket
//! no more often than before; a reader that stops early leaves no copy.
//! The bytes of a burnt or counted file are never copied
//! ([`BlobStore::open_once`]): they are not read again, and they should
//! not outlive their record on this disk.
//!
//! The copies live in a store of their own (store-sled's
//! `FsBlobStore::open_cache`: wiped at start, commits not fsynced), whose
//! contents this process's index, an LRU by bytes, alone decides: it is
//! never authoritative and safe to wipe.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use store_core::ports::{BlobReader, BlobStore, BlobWriter, StagedWriter, StorageResult};
use store_core::resumable::Staging;
use store_core::BlobId;

/// The copies held, least recently used first.
#[derive(Debug, Default)]
struct Index {
    /// Blob to its length and the tick of its last use.
    entries: HashMap<BlobId, (u64, u64)>,
    /// Tick of last use to blob: the first entry is the least recent.
    order: BTreeMap<u64, BlobId>,
    tick: u64,
    bytes: u64,
}

impl Index {
    /// Marks `id` used now; whether there is a copy of it.
    fn touch(&mut self, id: &BlobId) -> bool {
        self.tick += 1;
        let tick = self.tick;
        let Some((_, used)) = self.entries.get_mut(id) else {
            return false;
        };
        self.order.remove(used);
        *used = tick;
        self.order.insert(tick, id.clone());
        true
    }

    /// Notes a copy of `len` bytes, and answers the copies to remove so
    /// that the rest fit in `capacity_bytes`.
    fn admit(&mut self, id: BlobId, len: u64, capacity_bytes: u64) -> Vec<BlobId> {
        self.forget(&id);
        self.tick += 1;
        self.bytes += len;
        self.order.insert(self.tick, id.clone());
        self.entries.insert(id, (len, self.tick));
        let mut evicted = Vec::new();
        while self.bytes > capacity_bytes {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((len, _)) = self.entries.remove(&oldest) {
                self.bytes -= len;
            }
            evicted.push(oldest);
        }
        evicted
    }

    fn forget(&mut self, id: &BlobId) {
        if let Some((len, used)) = self.entries.remove(id) {
            self.order.remove(&used);
            self.bytes -= len;
        }
    }
}

/// What the cache and the copies it is making share.
struct Copies {
    local: Arc<dyn BlobStore>,
    index: Mutex<Index>,
    capacity_bytes: u64,
}

impl Copies {
    fn index(&self) -> MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The copy of `id`, if there is one that opens.
    fn open(&self, id: &BlobId) -> Option<Box<dyn BlobReader>> {
        if !self.index().touch(id) {
            return None;
        }
        match self.local.open(id) {
            Ok(reader) => Some(reader),
            Err(e) => {
                tracing::warn!(error = %e, blob = %id.0, "a cached copy did not open; reading the store");
                self.drop_copy(id);
                None
            }
        }
    }

    /// A copy of `len` bytes of `id` is complete: it counts now, and the
    /// least recently used go to make room.
    fn admit(&self, id: BlobId, len: u64) {
        let evicted = self.index().admit(id, len, self.capacity_bytes);
        for old in evicted {
            self.remove_file(&old);
        }
    }

    fn drop_copy(&self, id: &BlobId) {
        self.index().forget(id);
        self.remove_file(id);
    }

    fn remove_file(&self, id: &BlobId) {
        // A reader of the copy keeps reading it: files outlive their name.
        if let Err(e) = self.local.remove(id) {
            tracing::warn!(error = %e, blob = %id.0, "a cached copy could not be removed");
        }
    }
}

/// Keeps copies of the blobs of `inner` above `item_min_bytes` (smaller
/// ones are the memory cache's) and up to an eighth of the capacity each,
/// `capacity_bytes` in all, in `local`.
pub struct DiskCachedBlobs {
    inner: Arc<dyn BlobStore>,
    copies: Arc<Copies>,
    item_min_bytes: u64,
}

impl std::fmt::Debug for DiskCachedBlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskCachedBlobs")
            .field("capacity_bytes", &self.copies.capacity_bytes)
            .field("item_min_bytes", &self.item_min_bytes)
            .finish_non_exhaustive()
    }
}

impl DiskCachedBlobs {
    /// Wraps `inner`, keeping copies in `local`, which must start empty.
    pub fn new(
        inner: Arc<dyn BlobStore>,
        local: Arc<dyn BlobStore>,
        capacity_bytes: u64,
        item_min_bytes: u64,
    ) -> Self {
        Self {
            inner,
            copies: Arc::new(Copies {
                local,
                index: Mutex::default(),
                capacity_bytes,
            }),
            item_min_bytes,
        }
    }

    /// Bytes of the copies held now.
    pub fn cached_bytes(&self) -> u64 {
        self.copies.index().bytes
    }

    fn keeps(&self, len: u64) -> bool {
        len > self.item_min_bytes && len <= self.copies.capacity_bytes / 8
    }
}

impl BlobStore for DiskCachedBlobs {
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        self.inner.create()
    }

    /// The one way to replace the bytes of an id: its copy goes first.
    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        self.copies.drop_copy(id);
        self.inner.create_with_id(id)
    }

    /// The copy, or the store's bytes, copied as they are read.
    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        if let Some(copy) = self.copies.open(id) {
            return Ok(copy);
        }
        let reader = self.inner.open(id)?;
        let len = reader.len();
        if !self.keeps(len) {
            return Ok(reader);
        }
        match self.copies.local.create_with_id(id) {
            Ok(writer) => Ok(Box::new(Copying {
                reader,
                writer: Some(writer),
                len,
                left: len,
                id: id.clone(),
                copies: Arc::clone(&self.copies),
            })),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start a cached copy; reading without one");
                Ok(reader)
            }
        }
    }

    fn open_once(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        match self.copies.open(id) {
            Some(copy) => Ok(copy),
            None => self.inner.open_once(id),
        }
    }

    fn open_at_hand(&self, id: &BlobId) -> Option<StorageResult<Box<dyn BlobReader>>> {
        if let Some(copy) = self.copies.open(id) {
            return Some(Ok(copy));
        }
        (!self.inner.reads_wait()).then(|| self.open(id))
    }

    /// A range of a copy is read from the copy; any other from the store,
    /// uncopied.
    fn open_range(&self, id: &BlobId, range: Range<u64>) -> StorageResult<Box<dyn BlobReader>> {
        if self.copies.index().touch(id) {
            if let Ok(reader) = self.copies.local.open_range(id, range.clone()) {
                return Ok(reader);
            }
            self.copies.drop_copy(id);
        }
        self.inner.open_range(id, range)
    }

    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        self.inner.remove(id)?;
        self.copies.drop_copy(id);
        Ok(())
    }

    fn list(&self) -> StorageResult<Vec<BlobId>> {
        self.inner.list()
    }

    fn ping(&self) -> StorageResult<()> {
        self.inner.ping()
    }

    fn reads_wait(&self) -> bool {
        self.inner.reads_wait()
    }

    fn stages(&self) -> bool {
        self.inner.stages()
    }

    fn stage(&self) -> StorageResult<Staging> {
        self.inner.stage()
    }

    fn resume(&self, staging: &Staging, offset: u64) -> StorageResult<Box<dyn StagedWriter>> {
        self.inner.resume(staging, offset)
    }

    fn discard(&self, staging: &Staging) -> StorageResult<()> {
        self.inner.discard(staging)
    }
}

/// The store's bytes on their way to a reader, written to a copy as they
/// pass; the copy counts once its last byte is written. Any failure to
/// write it, or a reader that stops early, drops the copy unmade.
struct Copying {
    reader: Box<dyn BlobReader>,
    writer: Option<Box<dyn BlobWriter>>,
    /// The blob's length, and what is left of it to pass.
    len: u64,
    left: u64,
    id: BlobId,
    copies: Arc<Copies>,
}

impl std::io::Read for Copying {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match self.reader.read(buf) {
            Ok(n) => n,
            Err(e) => {
                self.writer = None;
                return Err(e);
            }
        };
        if let Some(writer) = self.writer.as_mut() {
            if n == 0 || writer.write(&buf[..n]).is_err() {
                self.writer = None;
            }
        }
        self.left = self.left.saturating_sub(n as u64);
        if self.left == 0 {
            self.finish();
        }
        Ok(n)
    }
}

impl Copying {
    /// The last byte passed: the copy is committed and counted.
    fn finish(&mut self) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        match writer.commit() {
            Ok(_) => self.copies.admit(self.id.clone(), self.len),
            Err(e) => tracing::warn!(error = %e, "a cached copy could not be kept"),
        }
    }
}

impl BlobReader for Copying {
    fn len(&self) -> u64 {
        self.len
    }
}
