//! Collecting orphan blobs (bytes no record points at) without delaying
//! the start, and without taking bytes in flight.
//!
//! A crash between a write's two steps (bytes committed, then the record)
//! leaves an orphan. Finding them means reading every record, which takes
//! seconds in a large store, so the server runs [`App::collect_orphans`] in
//! the background while it already answers requests.
//!
//! What makes that safe is the rule that a record only ever points at
//! blobs committed by the request that writes it (no use case moves bytes
//! from one record to another), or, for a resumable upload's staged blob,
//! at a blob whose bytes follow its record; so the danger is only a blob
//! committed and not yet recorded, or staged after the records were read.
//! Two guards cover it (a staged blob is noted, and its intent
//! registered, when it is staged):
//!
//! - One process alone ([`crate::Coordination::Local`]): from
//!   [`App::open`] until the first collection ends, every blob this
//!   process commits is noted, and the collector spares noted blobs. A
//!   blob of a previous process that no record points at is a true
//!   orphan: that process is gone. Only that first collection runs.
//! - Processes sharing the store: each upload registers an intent in the
//!   repository before it writes its first byte, renews it while it writes
//!   and as it commits ([`INTENT_LEASE_SECS`], renewed once
//!   [`INTENT_RENEW_SECS`] passed), and the collector reads
//!   the intents after listing the bytes and before reading the records.
//!   A listed blob was committed before the listing; if its record was not
//!   written before the intents were read, its intent still held then, so
//!   it is spared; if it was, the records read after show it (or its
//!   record changed since, and the deletion queue holds it). Collections
//!   then run again and again ([`crate::upkeep::ORPHAN_PERIOD`]).

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use store_core::ports::{
    BlobReader, BlobStore, BlobWriter, Clock, Random, Repository, StagedWriter, StorageResult,
};
use store_core::resumable::Staging;
use store_core::{BlobId, Timestamp};

use crate::{App, AppResult};

/// Noted blobs kept at most. A collection that would need more (a store
/// taking a flood of uploads while it reads its records) gives up instead
/// of growing without bound: its orphans wait for the next start.
const NOTED_MAX: usize = 1_000_000;

/// How long an upload's intent holds after it was last renewed. It must
/// outlast the pause between a blob's commit and its record (a lock wait
/// and a few statements, each bounded at seconds) by far: a collection
/// that read the intents in that pause must still find this one.
pub const INTENT_LEASE_SECS: u64 = 600;

/// An upload renews its intent when it writes after this long: a body
/// arriving slowly for hours keeps its intent.
pub const INTENT_RENEW_SECS: u64 = 60;

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
        self.note_held(&id);
        Ok(id)
    }

    /// Notes a blob that a record points at before its bytes exist (a
    /// resumable upload's): a collection that read the records before
    /// that record was written must spare the bytes that follow.
    fn note(&self, id: &BlobId) {
        let _shared = self.gate.read().unwrap_or_else(|e| e.into_inner());
        self.note_held(id);
    }

    /// Notes `id`, with the gate held shared.
    fn note_held(&self, id: &BlobId) {
        let mut state = self.state();
        if let State::Noting(set) = &mut *state {
            if set.len() >= NOTED_MAX {
                *state = State::Overflowed;
            } else {
                set.insert(id.clone());
            }
        }
    }

    fn finish(&self) {
        *self.state() = State::Done;
    }
}

/// What a writer needs to register and renew its upload's intent (only
/// when processes share the store).
#[derive(Clone)]
pub(crate) struct Intents {
    pub(crate) repo: Arc<dyn Repository>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) random: Arc<dyn Random>,
}

impl Intents {
    /// Registers or renews the intent of `blob`; answers when.
    fn renew(&self, blob: &BlobId) -> StorageResult<Timestamp> {
        let now = self.clock.now();
        self.repo.intend(blob, now.plus_secs(INTENT_LEASE_SECS))?;
        Ok(now)
    }
}

/// The blob store as the use cases see it: commits are noted for the
/// collector, and, when processes share the store, every new blob's
/// intent is registered before its first byte.
pub(crate) struct NotingBlobs {
    inner: Arc<dyn BlobStore>,
    fresh: Arc<Fresh>,
    intents: Option<Intents>,
}

impl NotingBlobs {
    pub(crate) fn new(
        inner: Arc<dyn BlobStore>,
        fresh: Arc<Fresh>,
        intents: Option<Intents>,
    ) -> Self {
        Self {
            inner,
            fresh,
            intents,
        }
    }

    /// A writer of `id` (minted here when processes share the store: the
    /// intent must name the blob before it exists).
    fn writer(&self, id: Option<&BlobId>) -> StorageResult<Box<dyn BlobWriter>> {
        let Some(intents) = &self.intents else {
            let inner = match id {
                Some(id) => self.inner.create_with_id(id)?,
                None => self.inner.create()?,
            };
            return Ok(Box::new(NotingWriter {
                inner,
                fresh: Arc::clone(&self.fresh),
                intent: None,
            }));
        };
        let id = id
            .cloned()
            .unwrap_or_else(|| store_core::ids::blob_id(&*intents.random));
        let renewed = intents.renew(&id)?;
        Ok(Box::new(NotingWriter {
            inner: self.inner.create_with_id(&id)?,
            fresh: Arc::clone(&self.fresh),
            intent: Some((intents.clone(), id, renewed)),
        }))
    }
}

struct NotingWriter {
    inner: Box<dyn BlobWriter>,
    fresh: Arc<Fresh>,
    /// The intent, the blob it names, and when it was last renewed.
    intent: Option<(Intents, BlobId, Timestamp)>,
}

impl NotingWriter {
    /// Renews the intent if [`INTENT_RENEW_SECS`] passed since it was
    /// last renewed, so that it always holds a lease less a minute ahead.
    fn keep_intent(&mut self) -> StorageResult<()> {
        if let Some((intents, id, renewed)) = &mut self.intent {
            if intents.clock.now() >= renewed.plus_secs(INTENT_RENEW_SECS) {
                *renewed = intents.renew(id)?;
            }
        }
        Ok(())
    }
}

impl BlobWriter for NotingWriter {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        self.keep_intent()?;
        self.inner.write(chunk)
    }

    fn commit(mut self: Box<Self>) -> StorageResult<BlobId> {
        // Kept as it commits, so that the intent outlasts the pause until
        // the record is written by the lease less a minute. (Renewing it
        // at every commit cost a quick upload a second statement, each a
        // commit the database flushes: a sixth of the cluster's uploads
        // per second, docs/PERFORMANCE.md.)
        self.keep_intent()?;
        self.fresh.commit(self.inner)
    }
}

impl BlobStore for NotingBlobs {
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        self.writer(None)
    }

    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        self.writer(Some(id))
    }

    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        self.inner.open(id)
    }

    fn open_at_hand(&self, id: &BlobId) -> Option<StorageResult<Box<dyn BlobReader>>> {
        self.inner.open_at_hand(id)
    }

    fn open_once(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        self.inner.open_once(id)
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

    fn ping(&self) -> StorageResult<()> {
        self.inner.ping()
    }

    fn reads_wait(&self) -> bool {
        self.inner.reads_wait()
    }

    fn stages(&self) -> bool {
        self.inner.stages()
    }

    /// A staged blob is noted, and its intent registered, before its
    /// record is written and long before its first byte.
    fn stage(&self) -> StorageResult<Staging> {
        let staging = self.inner.stage()?;
        self.fresh.note(&staging.blob);
        if let Some(intents) = &self.intents {
            intents.renew(&staging.blob)?;
        }
        Ok(staging)
    }

    fn resume(&self, staging: &Staging, offset: u64) -> StorageResult<Box<dyn StagedWriter>> {
        self.inner.resume(staging, offset)
    }

    fn discard(&self, staging: &Staging) -> StorageResult<()> {
        self.inner.discard(staging)
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
    /// steps of a write). Run it after [`App::open`], alongside serving:
    /// once when this process writes the store alone (until it returns,
    /// the blobs this process commits are remembered so that it spares
    /// them; a second run gives up), again and again when processes share
    /// it (the uploads' intents spare their blobs). Setting `stop` (at
    /// shutdown) makes it give up soon, collecting nothing more.
    pub fn collect_orphans(&self, stop: &AtomicBool) -> AppResult<OrphanReport> {
        let result = self.collect_orphans_inner(stop);
        self.fresh.finish();
        result
    }

    /// Forgets up to `limit` uploads' intents that have ended, answering
    /// how many (each round of the deletion queue's drainer calls it, so
    /// the table holds about one lease of uploads). A no-op where uploads
    /// register none.
    pub fn forget_ended_intents(&self, limit: usize) -> AppResult<usize> {
        if !self.intents_kept {
            return Ok(0);
        }
        Ok(self.ports.repo.forget_intents(self.now(), limit)?)
    }

    /// The blobs to spare: those with an intent, then those the records
    /// name. The order matters (see the module's documentation): the
    /// bytes were listed before, the intents are read next, the records
    /// last. `None` if the collection was stopped.
    fn spared(&self, stop: &AtomicBool) -> AppResult<Option<HashSet<u64>>> {
        let mut spared: HashSet<u64> = self
            .ports
            .repo
            .intended(self.now())?
            .iter()
            .map(digest)
            .collect();
        self.ports.repo.for_each(&mut |_, obj| {
            spared.extend(obj.blobs().into_iter().map(digest));
            if stop.load(Ordering::Relaxed) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        Ok((!stop.load(Ordering::Relaxed)).then_some(spared))
    }

    fn collect_orphans_inner(&self, stop: &AtomicBool) -> AppResult<OrphanReport> {
        let gave_up = |removed| {
            Ok(OrphanReport {
                removed,
                gave_up: true,
            })
        };
        if !self.orphans_collected {
            return gave_up(0);
        }
        let listed = self.ports.blobs.list()?;
        let Some(spared) = self.spared(stop)? else {
            return gave_up(0);
        };
        let candidates: Vec<BlobId> = listed
            .into_iter()
            .filter(|b| !spared.contains(&digest(b)))
            .collect();
        drop(spared);
        let mut removed = 0;
        for batch in candidates.chunks(REMOVAL_BATCH) {
            let _exclusive = self.fresh.gate.write().unwrap_or_else(|e| e.into_inner());
            let state = self.fresh.state();
            let noted = match &*state {
                State::Noting(noted) => Some(noted),
                // Later runs rely on the intents alone.
                State::Done if self.intents_kept => None,
                _ => return gave_up(removed),
            };
            if stop.load(Ordering::Relaxed) {
                return gave_up(removed);
            }
            for blob in batch
                .iter()
                .filter(|b| noted.is_none_or(|n| !n.contains(*b)))
            {
                // A queued blob is the queue's: a download that began
                // before its record changed may still read it.
                if self.ports.repo.is_queued(blob)? {
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
