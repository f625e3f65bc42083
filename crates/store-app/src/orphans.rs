//! Collecting orphan blobs (bytes no record points at) without delaying
//! the start.
//!
//! A crash between a write's two steps (bytes committed, then the record)
//! leaves an orphan. Finding them means reading every record, which takes
//! seconds in a large store, so the server runs [`App::collect_orphans`] in
//! the background while it already answers requests.
//!
//! What makes that safe is the rule that a record only ever points at
//! blobs committed by the request that writes it (no use case moves bytes
//! from one record to another). From [`App::open`] until the collection
//! ends, every blob this process commits is noted; the collector removes
//! only blobs that are neither referenced by a record it read nor noted.
//! A blob committed but not yet recorded is therefore never taken, and a
//! blob of a previous process that no record points at is a true orphan:
//! that process is gone, and nothing will record it any more.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use store_core::ports::{BlobReader, BlobStore, BlobWriter, StorageResult};
use store_core::BlobId;

use crate::{App, AppResult};

/// Noted blobs kept at most. A collection that would need more (a store
/// taking a flood of uploads while it reads its records) gives up instead
/// of growing without bound: its orphans wait for the next start.
const NOTED_MAX: usize = 1_000_000;

/// Orphans removed per hold of the exclusive lock, so that commits waiting
/// behind the collector wait for a short batch of unlinks at most.
const REMOVAL_BATCH: usize = 256;

#[derive(Debug)]
enum State {
    /// The collection has not ended: commits are noted.
    Noting(HashSet<BlobId>),
    /// Too many commits to note: this run collects nothing.
    Overflowed,
    /// The collection ended (or gave up): nothing is noted any more.
    Done,
}

/// The blobs committed since [`App::open`], until the collection ends.
///
/// A commit holds `gate` shared across the commit and its note, so commits
/// never wait for one another; the collector holds it exclusively while it
/// checks and removes, so at that moment no blob can be visible on disk
/// and not yet noted.
#[derive(Debug)]
pub(crate) struct Fresh {
    gate: RwLock<()>,
    state: Mutex<State>,
}

impl Default for Fresh {
    fn default() -> Self {
        Self {
            gate: RwLock::new(()),
            state: Mutex::new(State::Noting(HashSet::new())),
        }
    }
}

impl Fresh {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn commit(&self, writer: Box<dyn BlobWriter>) -> StorageResult<BlobId> {
        if matches!(*self.state(), State::Done | State::Overflowed) {
            return writer.commit();
        }
        let _shared = self.gate.read().unwrap_or_else(|e| e.into_inner());
        let id = writer.commit()?;
        let mut state = self.state();
        if let State::Noting(set) = &mut *state {
            if set.len() >= NOTED_MAX {
                *state = State::Overflowed;
            } else {
                set.insert(id.clone());
            }
        }
        Ok(id)
    }

    fn finish(&self) {
        *self.state() = State::Done;
    }
}

/// The blob store as the use cases see it: commits are noted for the
/// collector.
pub(crate) struct NotingBlobs {
    inner: Arc<dyn BlobStore>,
    fresh: Arc<Fresh>,
}

impl NotingBlobs {
    pub(crate) fn new(inner: Arc<dyn BlobStore>, fresh: Arc<Fresh>) -> Self {
        Self { inner, fresh }
    }
}

struct NotingWriter {
    inner: Box<dyn BlobWriter>,
    fresh: Arc<Fresh>,
}

impl BlobWriter for NotingWriter {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        self.inner.write(chunk)
    }

    fn commit(self: Box<Self>) -> StorageResult<BlobId> {
        self.fresh.commit(self.inner)
    }
}

impl BlobStore for NotingBlobs {
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        Ok(Box::new(NotingWriter {
            inner: self.inner.create()?,
            fresh: Arc::clone(&self.fresh),
        }))
    }

    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        Ok(Box::new(NotingWriter {
            inner: self.inner.create_with_id(id)?,
            fresh: Arc::clone(&self.fresh),
        }))
    }

    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        self.inner.open(id)
    }

    fn open_range(
        &self,
        id: &BlobId,
        range: std::ops::Range<u64>,
    ) -> StorageResult<Box<dyn BlobReader>> {
        self.inner.open_range(id, range)
    }

    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        self.inner.remove(id)
    }

    fn list(&self) -> StorageResult<Vec<BlobId>> {
        self.inner.list()
    }

    fn written_at(&self, id: &BlobId) -> StorageResult<Option<store_core::Timestamp>> {
        self.inner.written_at(id)
    }

    fn ping(&self) -> StorageResult<()> {
        self.inner.ping()
    }

    fn reads_wait(&self) -> bool {
        self.inner.reads_wait()
    }
}

/// What one orphan collection did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanReport {
    /// Blobs removed because no record points at them.
    pub removed: usize,
    /// True if the collection gave up (too many commits to note while it
    /// ran); its orphans stay until the next start.
    pub gave_up: bool,
}

/// A referenced blob, as a 64-bit hash: a million of them take 16 MB
/// instead of 80. Two ids sharing a hash can only make an orphan look
/// referenced, which keeps it: the safe direction.
fn digest(id: &BlobId) -> u64 {
    let mut h = DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

impl App {
    /// Removes blobs no record points at (left by a crash between the two
    /// steps of a write). Run it once after [`App::open`], alongside
    /// serving; until it returns, the blobs this process commits are
    /// remembered so that it spares them. Setting `stop` (at shutdown)
    /// makes it give up soon, collecting nothing more.
    pub fn collect_orphans(&self, stop: &AtomicBool) -> AppResult<OrphanReport> {
        let result = self.collect_orphans_inner(stop);
        self.fresh.finish();
        result
    }

    /// Whether a blob may belong to a write still in progress in another
    /// process (only when processes share the store): written less than
    /// the grace ago, or of unknown age.
    fn is_young(&self, blob: &BlobId) -> AppResult<bool> {
        if self.orphan_grace_secs == 0 {
            return Ok(false);
        }
        let Some(at) = self.ports.blobs.written_at(blob)? else {
            return Ok(true);
        };
        Ok(at.plus_secs(self.orphan_grace_secs) > self.now())
    }

    fn collect_orphans_inner(&self, stop: &AtomicBool) -> AppResult<OrphanReport> {
        let gave_up = |removed| {
            Ok(OrphanReport {
                removed,
                gave_up: true,
            })
        };
        let mut referenced = HashSet::new();
        self.ports.repo.for_each(&mut |_, obj| {
            referenced.extend(obj.blobs().into_iter().map(digest));
            if stop.load(Ordering::Relaxed) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        if stop.load(Ordering::Relaxed) {
            return gave_up(0);
        }
        let candidates: Vec<BlobId> = self
            .ports
            .blobs
            .list()?
            .into_iter()
            .filter(|b| !referenced.contains(&digest(b)))
            .collect();
        drop(referenced);
        let mut removed = 0;
        for batch in candidates.chunks(REMOVAL_BATCH) {
            let _exclusive = self.fresh.gate.write().unwrap_or_else(|e| e.into_inner());
            let state = self.fresh.state();
            let State::Noting(noted) = &*state else {
                return gave_up(removed);
            };
            if stop.load(Ordering::Relaxed) {
                return gave_up(removed);
            }
            for blob in batch.iter().filter(|b| !noted.contains(*b)) {
                // A queued blob is the queue's: a download that began
                // before its record changed may still read it.
                if self.is_young(blob)? || self.ports.repo.is_queued(blob)? {
                    continue;
                }
                self.ports.blobs.remove(blob)?;
                removed += 1;
            }
        }
        Ok(OrphanReport {
            removed,
            gave_up: false,
        })
    }
}
