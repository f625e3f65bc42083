//! A read cache of small blobs in front of any [`BlobStore`].
//!
//! Blobs are immutable: an edit writes a new blob and points the record at
//! it. So a cached copy can never be stale; it can only outlive its record,
//! which costs memory until it is evicted (or removed with the blob). A
//! small file served from here costs no open, stat, read or close; big
//! files always stream from the store.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use store_core::ports::{BlobReader, BlobStore, BlobWriter, StagedWriter, StorageResult};
use store_core::resumable::Staging;
use store_core::BlobId;

#[derive(Debug, Default)]
struct Lru {
    /// Blob to its bytes and the tick of its last use.
    entries: HashMap<BlobId, (Arc<[u8]>, u64)>,
    /// Tick of last use to blob: the first entry is the least recent.
    order: BTreeMap<u64, BlobId>,
    tick: u64,
    bytes: u64,
}

impl Lru {
    fn get(&mut self, id: &BlobId) -> Option<Arc<[u8]>> {
        self.tick += 1;
        let tick = self.tick;
        let (bytes, used) = self.entries.get_mut(id)?;
        self.order.remove(used);
        *used = tick;
        self.order.insert(tick, id.clone());
        Some(Arc::clone(bytes))
    }

    fn insert(&mut self, id: BlobId, bytes: Arc<[u8]>, capacity: u64) {
        self.remove(&id);
        self.tick += 1;
        self.bytes += bytes.len() as u64;
        self.order.insert(self.tick, id.clone());
        self.entries.insert(id, (bytes, self.tick));
        while self.bytes > capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((b, _)) = self.entries.remove(&oldest) {
                self.bytes -= b.len() as u64;
            }
        }
    }

    fn remove(&mut self, id: &BlobId) {
        if let Some((b, used)) = self.entries.remove(id) {
            self.order.remove(&used);
            self.bytes -= b.len() as u64;
        }
    }
}

/// Caches blobs up to `item_max` bytes each, `capacity` bytes in all.
pub struct CachedBlobs {
    inner: Arc<dyn BlobStore>,
    lru: Mutex<Lru>,
    item_max: u64,
    capacity: u64,
    /// Reads served from memory, and reads that went to the store.
    hits: AtomicU64,
    misses: AtomicU64,
}

/// How well the cache serves, for an operator sizing it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Reads (whole or ranged) served from memory.
    pub hits: u64,
    /// Reads that went to the store beneath.
    pub misses: u64,
    /// Bytes held now.
    pub bytes: u64,
}

impl std::fmt::Debug for CachedBlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedBlobs")
            .field("item_max", &self.item_max)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl CachedBlobs {
    /// Wraps `inner`, caching blobs of at most `item_max` bytes each and
    /// `capacity` bytes in all; the least recently used go first.
    pub fn new(inner: Arc<dyn BlobStore>, capacity: u64, item_max: u64) -> Self {
        Self {
            inner,
            lru: Mutex::default(),
            item_max,
            capacity,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Reads served from memory and from the store so far, and the bytes
    /// held.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes: self.cached_bytes(),
        }
    }

    fn count(&self, hit: bool) {
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn lru(&self) -> std::sync::MutexGuard<'_, Lru> {
        self.lru.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes held now.
    pub fn cached_bytes(&self) -> u64 {
        self.lru().bytes
    }
}

/// A cached blob being read, from `pos` to `end`.
struct Cached {
    bytes: Arc<[u8]>,
    pos: usize,
    end: usize,
}

impl Cached {
    fn whole(bytes: Arc<[u8]>) -> Self {
        let end = bytes.len();
        Self { bytes, pos: 0, end }
    }
}

impl std::io::Read for Cached {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.bytes[self.pos..self.end];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl BlobReader for Cached {
    fn len(&self) -> u64 {
        (self.end - self.pos) as u64
    }

    fn narrow(&mut self, range: std::ops::Range<u64>) -> std::io::Result<bool> {
        let range = store_core::ports::clamp_range(range, self.len());
        (self.pos, self.end) = (
            self.pos + range.start as usize,
            self.pos + range.end as usize,
        );
        Ok(true)
    }
}

impl BlobStore for CachedBlobs {
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        self.inner.create()
    }

    /// Bytes under an id are otherwise immutable, which is what lets them
    /// be cached: the one way to replace them drops the cached copy.
    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        self.lru().remove(id);
        self.inner.create_with_id(id)
    }

    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        let cached = self.lru().get(id);
        self.count(cached.is_some());
        if let Some(bytes) = cached {
            return Ok(Box::new(Cached::whole(bytes)));
        }
        let mut reader = self.inner.open(id)?;
        let len = reader.len();
        if len > self.item_max || len > self.capacity {
            return Ok(reader);
        }
        let mut bytes = Vec::with_capacity(len as usize);
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut reader, len), &mut bytes)
            .map_err(|e| {
                store_core::StorageError::from_io(format!("cannot read blob {}", id.0), &e)
            })?;
        let bytes: Arc<[u8]> = bytes.into();
        self.lru()
            .insert(id.clone(), Arc::clone(&bytes), self.capacity);
        Ok(Box::new(Cached::whole(bytes)))
    }

    /// Bytes read once are served from memory if they are there, and
    /// otherwise not kept.
    fn open_once(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        let cached = self.lru().get(id);
        self.count(cached.is_some());
        match cached {
            Some(bytes) => Ok(Box::new(Cached::whole(bytes))),
            None => self.inner.open_once(id),
        }
    }

    /// A cached blob is at hand wherever the store keeps it; any other
    /// is as the store says.
    fn open_at_hand(&self, id: &BlobId) -> Option<StorageResult<Box<dyn BlobReader>>> {
        let cached = self.lru().get(id);
        if let Some(bytes) = cached {
            self.count(true);
            return Some(Ok(Box::new(Cached::whole(bytes))));
        }
        if !self.inner.reads_wait() {
            return Some(self.open(id));
        }
        // Bytes across a socket are at hand only where the store beneath
        // keeps a copy (a disk cache, whose blobs are larger than this
        // cache's). Otherwise not counted as a miss: the open that
        // follows, where waiting is allowed, counts it (and fills this
        // cache).
        let copy = self.inner.open_at_hand(id)?;
        self.count(false);
        Some(copy)
    }

    /// A range of a cached blob is served from memory; otherwise the
    /// store reads the range alone, and the cache is left as it was.
    fn open_range(
        &self,
        id: &BlobId,
        range: std::ops::Range<u64>,
    ) -> StorageResult<Box<dyn BlobReader>> {
        let cached = self.lru().get(id);
        self.count(cached.is_some());
        let Some(bytes) = cached else {
            return self.inner.open_range(id, range);
        };
        let len = bytes.len() as u64;
        let clamped = store_core::ports::clamp_range(range, len);
        let (pos, end) = (clamped.start as usize, clamped.end as usize);
        Ok(Box::new(Cached { bytes, pos, end }))
    }

    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        self.lru().remove(id);
        self.inner.remove(id)
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

    // A staged blob is never read before it is complete, and is then
    // read under its id like any other: nothing to cache or forget.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use store_testkit::{suite, MemoryBlobStore};

    fn store(capacity: u64, item_max: u64) -> (Arc<MemoryBlobStore>, CachedBlobs) {
        let inner = Arc::new(MemoryBlobStore::default());
        let cached = CachedBlobs::new(inner.clone(), capacity, item_max);
        (inner, cached)
    }

    fn put(s: &dyn BlobStore, bytes: &[u8]) -> BlobId {
        let mut w = s.create().unwrap();
        w.write(bytes).unwrap();
        w.commit().unwrap()
    }

    fn read(s: &dyn BlobStore, id: &BlobId) -> Vec<u8> {
        let mut out = vec![];
        s.open(id).unwrap().read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn the_cache_passes_the_blob_store_suite() {
        suite::blob_store(&|| Box::new(store(1 << 20, 1024).1));
    }

    #[test]
    fn small_blobs_are_served_from_memory_and_large_ones_are_not() {
        let (inner, cached) = store(1 << 20, 8);
        let small = put(&cached, b"tiny");
        let large = put(&cached, b"more than eight");
        assert_eq!(read(&cached, &small), b"tiny");
        assert_eq!(read(&cached, &large), b"more than eight");
        assert_eq!(cached.cached_bytes(), 4);
        assert_eq!(
            cached.stats(),
            CacheStats {
                hits: 0,
                misses: 2,
                bytes: 4
            },
            "first reads go to the store"
        );
        assert_eq!(read(&cached, &small), b"tiny");
        assert_eq!(read(&cached, &large), b"more than eight");
        assert_eq!((cached.stats().hits, cached.stats().misses), (1, 3));
        // Gone from the store underneath, still served: proof it is cached.
        inner.remove(&small).unwrap();
        assert_eq!(read(&cached, &small), b"tiny");
        // Removing through the cache drops the copy too.
        cached.remove(&small).unwrap();
        assert!(cached.open(&small).is_err());
        assert_eq!(cached.cached_bytes(), 0);
    }

    #[test]
    fn the_least_recently_used_goes_first_and_the_total_is_bounded() {
        let (inner, cached) = store(10, 8);
        let a = put(&cached, b"aaaa");
        let b = put(&cached, b"bbbb");
        read(&cached, &a);
        read(&cached, &b);
        read(&cached, &a); // a is now the most recent.
        let c = put(&cached, b"cccc");
        read(&cached, &c); // 12 bytes > 10: b goes.
        assert!(cached.cached_bytes() <= 10);
        inner.remove(&a).unwrap();
        inner.remove(&b).unwrap();
        assert_eq!(read(&cached, &a), b"aaaa", "a stayed cached");
        assert!(cached.open(&b).is_err(), "b was evicted");
    }
}
