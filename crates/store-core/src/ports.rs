//! The ports: what the domain needs from the world, as traits. Adapters
//! (sled and the file system, memory for tests) implement them; nothing in
//! this crate performs I/O itself.
//!
//! The ports are synchronous on purpose. The HTTP shell runs use cases on a
//! blocking pool, which keeps the domain free of any async runtime and lets
//! embedders call it from plain threads.

use std::io::Read;
use std::ops::{ControlFlow, Range};
use std::time::Duration;

use crate::blob::BlobId;
use crate::digest::Sha256;
use crate::events::{Claimed, Event};
use crate::moderation::{AdminCursor, Block, Report};
use crate::pool::Totals;
use crate::record::{Listing, Object};
use crate::resumable::Staging;
use crate::time::Timestamp;

/// A storage fault: the disk, the database, a corrupt record. Never the
/// client's fault, so it is not a [`crate::StoreError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("storage error: {message}")]
pub struct StorageError {
    /// What kind of fault, which decides the answer to the client.
    pub kind: StorageErrorKind,
    /// What failed, for the server log.
    pub message: String,
}

/// What kind of storage fault, where the answer to the client differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageErrorKind {
    /// The disk is full: the client may retry later (507).
    Full,
    /// Bytes a record points at are gone (404, and a log line).
    Missing,
    /// A record or index entry cannot be read: the database is damaged
    /// (500 and a log line; the server stops rather than run on it).
    Corrupt,
    /// The database or the bucket cannot be reached now (refused, timed
    /// out): the client may retry shortly (503, and a log line).
    Unavailable,
    /// A conditional write found the record at another revision than the
    /// one it was read at (or gone): someone else wrote it meanwhile,
    /// which only happens when this process lost its lock on the key (a
    /// lost database session, a freeze). Nothing was written; the client
    /// may retry shortly (503, and a log line).
    Conflict,
    /// Anything else (500, and a log line).
    Other,
}

impl StorageError {
    /// A fault of kind `Other`, with `msg` as its message.
    pub fn new(msg: impl std::fmt::Display) -> Self {
        Self::of(StorageErrorKind::Other, msg)
    }

    /// A fault of `kind`, with `msg` as its message.
    pub fn of(kind: StorageErrorKind, msg: impl std::fmt::Display) -> Self {
        Self {
            kind,
            message: msg.to_string(),
        }
    }

    /// The fault of a conditional write of `key` that found the record
    /// changed or gone since it was read ([`StorageErrorKind::Conflict`]).
    pub fn conflict(key: &str) -> Self {
        Self::of(
            StorageErrorKind::Conflict,
            format!(
                "the record {key:?} changed since it was read (its lock was lost): nothing written"
            ),
        )
    }

    /// Classifies an I/O error: ENOSPC and EDQUOT are "full", ENOENT is
    /// "missing".
    pub fn from_io(context: impl std::fmt::Display, e: &std::io::Error) -> Self {
        let kind = match e.kind() {
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
                StorageErrorKind::Full
            }
            std::io::ErrorKind::NotFound => StorageErrorKind::Missing,
            _ if e.raw_os_error() == Some(28) => StorageErrorKind::Full,
            _ => StorageErrorKind::Other,
        };
        Self::of(kind, format!("{context}: {e}"))
    }
}

/// The result of a storage operation.
pub type StorageResult<T> = Result<T, StorageError>;

/// The time source. The real one reads the system clock; tests move a
/// manual one.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// A source of unpredictable bytes for ids and tokens.
pub trait Random: Send + Sync {
    /// Fills `buf` with unpredictable bytes.
    fn fill(&self, buf: &mut [u8]);
}

/// The revision of a record as its repository stored it. It changes
/// whenever the record changes, and a record removed and created again
/// with other contents never gets a revision it had before; so a write
/// conditioned on the revision it read ([`Repository::replace`],
/// [`Repository::remove_at`]) finds out whether anyone changed the record
/// in between. (An adapter may give equal contents equal revisions, as
/// sled's hash does: a write decided on a record is still right for an
/// equal one.) It is the fencing token that keeps a
/// process that lost its lock (a lost database session, a freeze) from
/// writing over newer state. Opaque: only the repository that answered it
/// knows what the number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rev(pub u64);

/// A record read that awaits ([`Repository::get_async`]).
pub type AsyncGet =
    std::pin::Pin<Box<dyn std::future::Future<Output = StorageResult<Option<Object>>> + Send>>;

/// Records and their indexes. Each method is atomic on its own: a record
/// and its index entries change together or not at all, and a method that
/// returns `Ok` has made its change durable.
///
/// Use cases change records only conditionally: they [`Repository::load`]
/// a record with its [`Rev`] under the key's lock, and write it back with
/// [`Repository::replace`] or [`Repository::remove_at`] at that revision.
/// The lock keeps writers from colliding; the revision makes the
/// repository the arbiter when a lock was lost anyway.
pub trait Repository: Send + Sync {
    /// The record under `key`, or `None` if there is none. Expired records are
    /// answered too: the caller checks the lifetime.
    fn get(&self, key: &str) -> StorageResult<Option<Object>>;

    /// [`Repository::get`] with the record's revision, for a use case that
    /// will write the record back.
    fn load(&self, key: &str) -> StorageResult<Option<(Object, Rev)>>;

    /// Inserts a record under a key nobody holds; `Ok(false)` if the key is
    /// taken (the caller picks another id, or treats it as create-or-get).
    fn insert_new(&self, key: &str, object: &Object) -> StorageResult<bool>;

    /// Replaces the record under `key` if it is still at `rev`, updating
    /// its index entries, and answers its new revision. A record changed
    /// or removed since is a [`StorageErrorKind::Conflict`] error, and
    /// nothing is written. `doomed` are the blobs the record stops naming:
    /// a repository that [`Repository::queues_deletes`] queues them in the
    /// same transaction; any other ignores them.
    fn replace(
        &self,
        key: &str,
        rev: Rev,
        object: &Object,
        doomed: &[BlobId],
    ) -> StorageResult<Rev>;

    /// Removes the record under `key` and its index entries if it is still
    /// at `rev`; otherwise a [`StorageErrorKind::Conflict`] error, and
    /// nothing is removed. `doomed` are its blobs, as for
    /// [`Repository::replace`].
    fn remove_at(&self, key: &str, rev: Rev, doomed: &[BlobId]) -> StorageResult<()>;

    /// Whether this repository keeps a durable queue of blobs to delete
    /// (PostgreSQL): a write's `doomed` blobs join it in the write's own
    /// transaction, and [`Repository::deletes_due`] hands them out once
    /// their grace is over, so that a reader who read the old record can
    /// still read the bytes it names, and a bucket that refuses a delete
    /// never fails a request that committed. Without one, the use case
    /// deletes them itself once its write is done.
    fn queues_deletes(&self) -> bool {
        false
    }

    /// How long a queued blob waits before it comes due (see
    /// [`Repository::queues_deletes`]). With none, a write that queues
    /// deletes wakes the process's drainer at once. A repository that
    /// queues deletes says its grace; the default, unbounded, never wakes
    /// the drainer before its round.
    fn delete_grace(&self) -> Duration {
        Duration::MAX
    }

    /// Up to `limit` queued blobs whose grace is over, claimed for a while
    /// (another process does not get them meanwhile; unless
    /// [`Repository::deletes_done`] follows, they come due again later).
    fn deletes_due(&self, _limit: usize) -> StorageResult<Vec<BlobId>> {
        Ok(vec![])
    }

    /// Takes blobs that are deleted off the queue.
    fn deletes_done(&self, _blobs: &[BlobId]) -> StorageResult<()> {
        Ok(())
    }

    /// Puts blobs whose delete failed back in the queue, due again after a
    /// pause that grows with each failure.
    fn deletes_failed(&self, _blobs: &[BlobId]) -> StorageResult<()> {
        Ok(())
    }

    /// Whether `blob` waits in the queue: the orphan collection leaves
    /// such blobs to the queue and its grace.
    fn is_queued(&self, _blob: &BlobId) -> StorageResult<bool> {
        Ok(false)
    }

    /// Whether this repository keeps intents (PostgreSQL, and the memory
    /// adapter of tests): the blobs that uploads in progress on any
    /// process are writing, so that no process's orphan collection takes
    /// bytes that a record is about to name. A repository that several
    /// processes share must keep them, or no orphan collection runs on it.
    fn keeps_intents(&self) -> bool {
        false
    }

    /// Registers, or extends, the intent of an upload that writes `blob`
    /// and will record it: no orphan collection that reads the intents
    /// before `until` takes the blob. The writer renews it while it
    /// writes and as it commits, whenever a minute passed since the last
    /// renewal.
    fn intend(&self, _blob: &BlobId, _until: Timestamp) -> StorageResult<()> {
        Ok(())
    }

    /// The blobs whose intent still holds at `now`.
    fn intended(&self, _now: Timestamp) -> StorageResult<Vec<BlobId>> {
        Ok(vec![])
    }

    /// Forgets up to `limit` intents that ended by `now`, answering how
    /// many: called often and in small batches, so that a store taking
    /// hundreds of uploads a second keeps a small table (and no statement
    /// deletes an hour of them at once).
    fn forget_intents(&self, _now: Timestamp, _limit: usize) -> StorageResult<usize> {
        Ok(0)
    }

    /// [`Repository::insert_new`], settling `settled` bytes of this
    /// process's pool reservation in the same transaction when the
    /// repository keeps the pools' ledger itself (PostgreSQL): no moment
    /// then counts the bytes twice, once reserved and once recorded. The
    /// default only inserts; the caller settles the ledger after either way.
    fn insert_new_settled(
        &self,
        key: &str,
        object: &Object,
        _settled: Settled,
    ) -> StorageResult<bool> {
        self.insert_new(key, object)
    }

    /// [`Repository::replace`], settling as [`Repository::insert_new_settled`]
    /// does.
    fn replace_settled(
        &self,
        (key, rev): (&str, Rev),
        object: &Object,
        doomed: &[BlobId],
        _settled: Settled,
    ) -> StorageResult<Rev> {
        self.replace(key, rev, object, doomed)
    }

    /// Writes `object` under `key` whatever is there: for tools and tests
    /// that set a store up. No use case calls it (scripts/check-invariants.sh):
    /// a blind write of something read earlier could undo a newer write.
    fn put(&self, key: &str, object: &Object) -> StorageResult<()> {
        loop {
            let written = match self.load(key)? {
                Some((_, rev)) => self.replace(key, rev, object, &[]).map(drop),
                None if self.insert_new(key, object)? => Ok(()),
                None => continue,
            };
            match written {
                Err(e) if e.kind == StorageErrorKind::Conflict => continue,
                other => return other,
            }
        }
    }

    /// Removes whatever record is under `key`, returning it: for tools and
    /// tests, like [`Repository::put`].
    fn remove(&self, key: &str) -> StorageResult<Option<Object>> {
        loop {
            let Some((object, rev)) = self.load(key)? else {
                return Ok(None);
            };
            match self.remove_at(key, rev, &[]) {
                Ok(()) => return Ok(Some(object)),
                Err(e) if e.kind == StorageErrorKind::Conflict => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Removes an object that is already dead (expired), whose removal may
    /// become durable with a later flush instead of before returning. If a
    /// crash loses it, the object comes back still expired: it answers 404
    /// and is swept again. Adapters that flush per change may keep the
    /// default.
    fn remove_dead(&self, key: &str) -> StorageResult<Option<Object>> {
        self.remove(key)
    }

    /// Removes those of `keys` whose record is past its lifetime at `now`
    /// (like [`Repository::remove_dead`]: durable with a later flush),
    /// answering what each removed, in the order given; a key that is
    /// missing or still live answers `None` and is left alone. The check
    /// and the removal are one atomic change in adapters that can make
    /// them so: the sweeper removes expired objects in batches. The caller
    /// holds every key's lock.
    fn remove_dead_many(
        &self,
        keys: &[String],
        now: Timestamp,
    ) -> StorageResult<Vec<Option<Object>>> {
        // Each removal is conditioned on the revision that was found dead:
        // a record renewed in between (by a process that lost its lock) is
        // left alone.
        keys.iter()
            .map(|k| match self.load(k)? {
                Some((obj, rev)) if !obj.lifetime().is_live(now) => match self.remove_at(
                    k,
                    rev,
                    &obj.blobs().into_iter().cloned().collect::<Vec<_>>(),
                ) {
                    Ok(()) => Ok(Some(obj)),
                    Err(e) if e.kind == StorageErrorKind::Conflict => Ok(None),
                    Err(e) => Err(e),
                },
                _ => Ok(None),
            })
            .collect()
    }

    /// The sums over the live records. The default reads every record;
    /// an adapter serving large stores keeps them up to date with each
    /// change instead, so that opening the store costs one read.
    fn totals(&self) -> StorageResult<Totals> {
        self.totals_by_scan()
    }

    /// The sums over the live records, from reading every one: the
    /// reference [`Repository::totals`] must agree with.
    fn totals_by_scan(&self) -> StorageResult<Totals> {
        let mut totals = Totals::default();
        self.for_each(&mut |_, obj| {
            totals.add(obj);
            ControlFlow::Continue(())
        })?;
        Ok(totals)
    }

    /// Up to `limit` (expires_at, key) pairs, soonest first. Retained
    /// objects have no expiry and are never listed.
    fn expiring(&self, limit: usize) -> StorageResult<Vec<(Timestamp, String)>>;

    /// Keys of the records carrying `tag`.
    fn keys_with_tag(&self, tag: &str) -> StorageResult<Vec<String>>;

    /// Visits the records in `listing` (see [`Object::listing`]), in key
    /// order, until the visitor breaks. It reads an index: the work grows
    /// with the listing, not with the store.
    fn listed(
        &self,
        listing: Listing,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()>;

    /// Visits the records carrying the search term `term` (see
    /// [`Object::search_terms`]; [`crate::moderation::ALL_TERM`] for every
    /// record), newest first and then by key, starting just after
    /// `after`, until the visitor breaks. It reads an index: the work
    /// grows with the page, not with the store.
    fn searched(
        &self,
        term: &str,
        after: Option<&AdminCursor>,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()>;

    /// Puts `block` in the blocklist (replacing one for the same digest),
    /// durably, with its `event` in the outbox in the same transaction.
    fn block(&self, block: &Block, event: Option<&Event>) -> StorageResult<()>;

    /// The entry of the first of `digests` the blocklist holds, if any.
    fn blocked(&self, digests: &[Sha256]) -> StorageResult<Option<Block>>;

    /// The whole blocklist, the latest block first.
    fn blocks(&self) -> StorageResult<Vec<Block>>;

    /// Puts `report` in the admin's queue, durably, with its `event` in
    /// the outbox in the same transaction.
    fn report(&self, report: &Report, event: Option<&Event>) -> StorageResult<()>;

    /// Up to `limit` reports of the queue, the oldest first.
    fn reports(&self, limit: usize) -> StorageResult<Vec<Report>>;

    /// Takes the report `id` out of the queue; `false` if it was not
    /// there.
    fn clear_report(&self, id: &str) -> StorageResult<bool>;

    /// Turns the outbox of webhook events on (set once, at start, when a
    /// webhook is configured): from then on each change of a record that
    /// is an event ([`crate::events::change_event`], a removal's kind by
    /// [`crate::events::removal`]) puts it in the outbox in the change's
    /// own transaction. Off, no change writes anything more.
    fn keep_events(&self, on: bool);

    /// Claims up to `limit` events due at `now` for `lease_ms`, so that
    /// no other delivery takes them meanwhile: for each object only its
    /// earliest event, so that an object's events go out in order. An
    /// event whose claim ran out (its deliverer died) is due again.
    fn claim_events(
        &self,
        now: Timestamp,
        lease_ms: u64,
        limit: usize,
    ) -> StorageResult<Vec<Claimed>>;

    /// The event at `seq` was delivered: it leaves the outbox.
    fn event_delivered(&self, seq: u64) -> StorageResult<()>;

    /// The delivery of the event at `seq` failed: it is due again at
    /// `next`, or with `None` (its retries are over) it leaves the outbox.
    fn event_failed(&self, seq: u64, next: Option<Timestamp>) -> StorageResult<()>;

    /// Whether a read may wait on the network (a database across a
    /// socket) rather than answer from this process's memory or disk
    /// cache. Callers on an async executor move such reads to a blocking
    /// thread: a round trip there would stall every connection the
    /// executor serves, and an unreachable database would freeze them.
    fn reads_wait(&self) -> bool {
        false
    }

    /// [`Repository::get`] as a future that waits without holding a
    /// thread, where the store has one (a database across a socket whose
    /// client is asynchronous): a server awaits it on its executor, where
    /// a blocking read would need a blocking thread (and, for PostgreSQL,
    /// the adapter's own runtime) for each read. `None`: there is no such
    /// read here, or not from this thread; call [`Repository::get`],
    /// moved off the executor if [`Repository::reads_wait`].
    ///
    /// The future is bounded as `get` is: a database that stops answering
    /// fails it within the store's own time-outs. A store may tie its
    /// connections to the runtime the first read ran on: a server awaits
    /// these on one runtime, which keeps running.
    fn get_async(&self, key: &str) -> Option<AsyncGet> {
        let _ = key;
        None
    }

    /// Whether the records can be reached now, for readiness probes. The
    /// default reads one key.
    fn ping(&self) -> StorageResult<()> {
        self.get("").map(drop)
    }

    /// Visits every record, in key order, until the visitor breaks. For
    /// background work (the orphan collection, tools), never for a request.
    fn for_each(
        &self,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()>;
}

/// The virus scanner (`STORE_CLAMD`, issue 36): an upload's bytes go to
/// it as they arrive, and its verdict comes before anything is committed.
/// A scanner that cannot be reached is an [`StorageErrorKind::Unavailable`]
/// error, and the upload is refused (fail closed).
pub trait Scanner: Send + Sync + std::fmt::Debug {
    /// Starts scanning one upload's bytes.
    fn begin(&self) -> StorageResult<Box<dyn Scan>>;
}

/// One upload being scanned.
pub trait Scan: Send {
    /// The next bytes.
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()>;
    /// The verdict once every byte was written: `None` when clean, or the
    /// name of the signature found.
    fn finish(self: Box<Self>) -> StorageResult<Option<String>>;
}

/// Where webhook deliveries go (`STORE_WEBHOOK_URL`, issue 36): one
/// signed POST at a time, answered by whether the receiver took it.
pub trait WebhookSender: Send + Sync {
    /// POSTs the JSON `body` with `headers`; `Ok` when the receiver
    /// answered 2xx, otherwise why not (never a secret).
    fn post(&self, headers: &[(&'static str, String)], body: &[u8]) -> Result<(), String>;
}

/// Where bytes live. Ids are minted by the store; records only point at
/// them, so the bytes can move without touching a record.
pub trait BlobStore: Send + Sync {
    /// Starts a new blob. Bytes written are invisible until
    /// [`BlobWriter::commit`]; a writer dropped uncommitted leaves nothing.
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>>;

    /// Starts a blob that commits under `id`, an id some store minted:
    /// how bytes move between stores with their ids, so that the records
    /// pointing at them move unchanged. Committing over a blob that
    /// exists replaces it whole.
    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>>;

    /// Opens a committed blob. An open reader keeps working even if the
    /// blob is removed meanwhile (burn after reading relies on that). A
    /// blob that is not there is a [`StorageErrorKind::Missing`] error.
    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>>;

    /// Opens the bytes of `range` of a committed blob, clamped to its
    /// length (a range past the end reads nothing): what an HTTP Range
    /// request reads. The reader's [`BlobReader::len`] is the clamped
    /// range's. The default reads and drops the bytes before the range;
    /// stores that can seek, or ask for a range, do better.
    fn open_range(&self, id: &BlobId, range: Range<u64>) -> StorageResult<Box<dyn BlobReader>> {
        let mut whole = self.open(id)?;
        let Range { start, end } = clamp_range(range, whole.len());
        let skipped = std::io::copy(&mut (&mut whole).take(start), &mut std::io::sink())
            .map_err(|e| StorageError::from_io(format!("cannot read blob {}", id.0), &e))?;
        if skipped < start {
            return Err(StorageError::new(format!(
                "blob {} ended at {skipped} bytes, before its length",
                id.0
            )));
        }
        Ok(Box::new(Window {
            inner: whole.take(end - start),
            len: end - start,
        }))
    }

    /// [`BlobStore::open`] for bytes that will not be read again through
    /// their record (a burnt or counted download): a cache in front
    /// serves what it holds but keeps no copy of them. The default opens.
    fn open_once(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        self.open(id)
    }

    /// [`BlobStore::open`], if it needs no wait on the network: `None`
    /// when the bytes are across a socket and not in this process's
    /// memory, and the caller should open them where waiting is allowed
    /// (see [`BlobStore::reads_wait`]). The default opens whenever reads
    /// do not wait; a cache in front of a bucket answers what it holds.
    fn open_at_hand(&self, id: &BlobId) -> Option<StorageResult<Box<dyn BlobReader>>> {
        (!self.reads_wait()).then(|| self.open(id))
    }

    /// Removes a blob; removing a missing blob is not an error.
    fn remove(&self, id: &BlobId) -> StorageResult<()>;

    /// Every committed blob, for orphan collection.
    fn list(&self) -> StorageResult<Vec<BlobId>>;

    /// Whether the bytes can be reached now, for readiness probes. No
    /// default: a wrapper that forgot to pass it on would answer for
    /// itself.
    fn ping(&self) -> StorageResult<()>;

    /// Whether opening or reading a blob may wait on the network (a
    /// bucket) rather than on a local disk, like
    /// [`Repository::reads_wait`]: callers on an async executor then move
    /// such reads to a blocking thread, so that a bucket that hangs delays
    /// only the requests that read it. No default, as for
    /// [`BlobStore::ping`].
    fn reads_wait(&self) -> bool;

    /// Whether [`BlobStore::stage`] is supported: resumable uploads are
    /// refused up front (501) where it is not.
    fn stages(&self) -> bool;

    /// Starts a blob written across requests, each of which may reach
    /// another process (a resumable upload). Nothing is written yet: the
    /// answer is what [`BlobStore::resume`] needs to go on, which the
    /// caller keeps with its record. No default, as for
    /// [`BlobStore::ping`]: a wrapper must pass the three on.
    fn stage(&self) -> StorageResult<Staging>;

    /// Goes on with a staged blob whose first `offset` bytes are kept.
    /// Anything stored past `offset` (a request that died midway, or
    /// whose bytes were refused) is replaced by what is written now.
    /// Fewer than `offset` bytes kept is an error: they are lost.
    fn resume(&self, staging: &Staging, offset: u64) -> StorageResult<Box<dyn StagedWriter>>;

    /// Drops a staged blob that will not be completed (its upload was
    /// ended or expired). Dropping one that is gone is not an error.
    fn discard(&self, staging: &Staging) -> StorageResult<()>;
}

/// A staged blob being written by one request (see [`BlobStore::stage`]).
pub trait StagedWriter: Send {
    /// Appends `chunk`.
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()>;

    /// Makes the bytes written so far durable: the answer is where the
    /// staged blob stands now, for the next request to go on from.
    fn pause(self: Box<Self>) -> StorageResult<Staging>;

    /// The last bytes are written: makes the whole a committed blob,
    /// readable under the staging's blob id.
    fn complete(self: Box<Self>) -> StorageResult<BlobId>;
}

/// A blob being written.
pub trait BlobWriter: Send {
    /// Appends `chunk` to the blob.
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()>;

    /// Makes the bytes durable and visible under a new id.
    fn commit(self: Box<Self>) -> StorageResult<BlobId>;
}

/// A committed blob being read.
pub trait BlobReader: std::io::Read + Send {
    /// Length in bytes, known before reading.
    fn len(&self) -> u64;

    /// Whether the blob holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Narrows a reader that has read nothing yet to `range` of its bytes
    /// (clamped as [`clamp_range`] does), if it can move within them (a
    /// seek in a file, a slice of bytes in memory); answers whether it
    /// did. A reader that cannot (a stream over the network) is left as
    /// it was, and the caller opens the range with
    /// [`BlobStore::open_range`] instead.
    fn narrow(&mut self, _range: Range<u64>) -> std::io::Result<bool> {
        Ok(false)
    }
}

/// `range` clamped to bytes of `len`, as [`BlobStore::open_range`] reads
/// it: a range past the end becomes empty, never an error.
pub fn clamp_range(range: Range<u64>, len: u64) -> Range<u64> {
    let end = range.end.min(len);
    range.start.min(end)..end
}

/// A part of a blob's bytes, read from a reader of the whole.
struct Window<R> {
    inner: std::io::Take<R>,
    len: u64,
}

impl<R: std::io::Read> std::io::Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<R: std::io::Read + Send> BlobReader for Window<R> {
    fn len(&self) -> u64 {
        self.len
    }
}

/// Why a fetch for an import failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL itself is malformed or of a kind import never takes (scheme,
    /// user info). Safe to explain: it says nothing about the network.
    #[error("{0}")]
    InvalidUrl(String),
    /// Blocked address or port, DNS failure, refused connection, time-out,
    /// an error status, too many redirects: one answer for all, so that
    /// import cannot be used to probe a network.
    #[error(
        "the URL could not be imported: it is not allowed, or it did not answer with a document"
    )]
    Refused,
    /// The document is larger than the limit.
    #[error("the document is larger than the import limit of {0} bytes")]
    TooLarge(u64),
    /// The document is not of an accepted kind (pics import takes images only).
    #[error("{0}")]
    WrongKind(String),
}

/// A document being fetched: its metadata, and its (decoded) bytes to read.
pub struct Fetched {
    /// The URL that answered, after redirects.
    pub final_url: String,
    /// The Content-Type the server sent.
    pub content_type: Option<String>,
    /// The file name of a Content-Disposition header, if any.
    pub disposition_name: Option<String>,
    /// The body; reading past the limit is the caller's to refuse.
    pub body: Box<dyn std::io::Read + Send>,
}

impl std::fmt::Debug for Fetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetched")
            .field("final_url", &self.final_url)
            .field("content_type", &self.content_type)
            .finish()
    }
}

/// Fetches remote documents for import, refusing every address that is not
/// allowed. Blocking: the use case runs it off the async executor.
pub trait Fetcher: Send + Sync {
    /// Fetches `url`, following redirects, and refuses a declared length
    /// over `max_bytes` before reading the body.
    fn fetch(&self, url: &str, max_bytes: u64) -> Result<Fetched, FetchError>;
}

/// Held while a use case owns some keys (or the eviction decision); the
/// locks are released when it is dropped. What it holds depends on the
/// adapter: a mutex stripe in one process, a database session's advisory
/// lock across processes.
pub struct LockGuard(#[allow(dead_code)] Box<dyn Send>);

impl LockGuard {
    /// A guard that holds `held` (whatever keeps the locks) until it is dropped.
    pub fn new(held: impl Send + 'static) -> Self {
        Self(Box::new(held))
    }
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LockGuard")
    }
}

/// What [`KeyLocks::try_lock_many`] took: the guard, the keys it covers
/// and the keys that were busy.
#[derive(Debug)]
pub struct TryLocked {
    /// Holds the locks taken; dropping it releases them.
    pub guard: LockGuard,
    /// The keys that were free and are now held.
    pub locked: Vec<String>,
    /// The keys that were busy and are not held.
    pub busy: Vec<String>,
}

/// Mutual exclusion of the writers of one key, in every process that
/// shares the records. A read-modify-write use case (a PATCH, a burn after
/// reading, a sweep) holds its key for the whole change.
///
/// Rules that keep every adapter free of deadlock: a caller waits for at
/// most one call of [`KeyLocks::lock`] at a time (naming all its keys at
/// once, in any order), and while it holds keys it only ever *tries* other
/// keys. [`KeyLocks::lock_eviction`] may be waited for while holding keys:
/// its holder never waits for a key.
pub trait KeyLocks: Send + Sync + std::fmt::Debug {
    /// Waits until the caller alone holds every one of `keys`.
    fn lock(&self, keys: &[&str]) -> StorageResult<LockGuard>;

    /// Takes those of `keys` that are free, without waiting.
    fn try_lock_many(&self, keys: Vec<String>) -> StorageResult<TryLocked>;

    /// The one lock under which eviction is decided and done, so that two
    /// writers short of room never evict for each other's shortfall. An
    /// adapter whose holder may freeze (another process) may stop waiting
    /// after a short bound and answer a guard that excludes this process's
    /// evictors only: a frozen holder must not stop every upload that
    /// needs room, at the cost of a rare eviction of more than needed.
    fn lock_eviction(&self) -> StorageResult<LockGuard>;
}

/// Bytes of a pool reservation that a record write turns into the
/// record's own ([`Repository::replace_settled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// The pool the bytes were reserved in.
    pub pool: Pool,
    /// How many reserved bytes the record now holds.
    pub bytes: u64,
}

/// The two pools SPEC.md counts apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pool {
    /// Single files, bundles and dirs; full means evict.
    Store,
    /// Gallery images; never evicted.
    Pics,
}

/// Bytes in use in a pool, against its capacity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Bytes held by records plus bytes reserved by writes in progress.
    pub used_bytes: u64,
    /// The pool's capacity, in bytes.
    pub capacity_bytes: u64,
}

/// The pools' ledgers: bytes the records hold (kept by the repository in
/// the same change as each record) plus bytes reserved by writes still in
/// progress, in every process, against each pool's capacity.
///
/// A write reserves first; once the repository has written the record
/// that holds the bytes, the write [`Ledgers::settle`]s the reservation;
/// a failed write [`Ledgers::cancel`]s it. A record change that frees
/// bytes (a removal, a file that shrank) is told with [`Ledgers::freed`]
/// after the repository made it.
pub trait Ledgers: Send + Sync + std::fmt::Debug {
    /// Takes `bytes` if they fit, or answers how many bytes are short.
    fn try_reserve(&self, pool: Pool, bytes: u64) -> StorageResult<Result<(), u64>>;

    /// Gives back a reservation no record took.
    fn cancel(&self, pool: Pool, bytes: u64);

    /// A reservation's bytes are now held by a record.
    fn settle(&self, pool: Pool, bytes: u64);

    /// A record change freed `bytes`.
    fn freed(&self, pool: Pool, bytes: u64);

    /// Bytes in use in `pool`, against its capacity.
    fn usage(&self, pool: Pool) -> StorageResult<PoolUsage>;
}

/// A rate check that awaits ([`RateLimits::check_async`]): what
/// [`RateLimits::check`] answers.
pub type AsyncCheck =
    std::pin::Pin<Box<dyn std::future::Future<Output = StorageResult<Result<(), u64>>> + Send>>;

/// The per-client request rate, counted over every process.
pub trait RateLimits: Send + Sync + std::fmt::Debug {
    /// Admits one request from `client` (an address, IPv6 already cut to
    /// its /64) at `now`, or answers how many whole seconds (at least 1) to
    /// wait.
    fn check(&self, client: std::net::IpAddr, now: Timestamp) -> StorageResult<Result<(), u64>>;

    /// True if [`RateLimits::check`] may wait on the network: callers on
    /// an async executor then run it on a blocking thread, unless
    /// [`RateLimits::check_async`] offers a check to await.
    fn blocks(&self) -> bool;

    /// [`RateLimits::check`] as a future the caller's executor awaits,
    /// holding no thread while the count is read, when the limiter can
    /// give one here (`None` by default, and where it cannot). As with
    /// [`Repository::get_async`], a limiter may tie its connections to
    /// the runtime the first check ran on.
    fn check_async(&self, client: std::net::IpAddr, now: Timestamp) -> Option<AsyncCheck> {
        let _ = (client, now);
        None
    }
}
