//! # store-app
//!
//! The use-case layer. Each public method of [`App`] runs one request:
//! read the clock once, take the key's lock, load, decide with store-core,
//! commit through the ports. It is synchronous and runtime-free; the HTTP
//! shell calls it on a blocking pool.
//!
//! Write order, everywhere: bytes first (committed blob), then the record;
//! on delete, the record first, then the bytes. A crash between the two
//! steps leaves at worst an unreferenced blob, which
//! [`App::collect_orphans`] removes after the next start.
//!
//! ## Start here
//!
//! An [`App`] is opened on [`Ports`]: a repository for records, a blob
//! store for bytes, a clock, a source of randomness and a fetcher. The
//! embedded default is store-sled's; store-testkit has memory adapters and
//! a manual clock, which is all this needs:
//!
//! ```
//! use std::sync::Arc;
//! use store_app::{App, AppConfig, NewFile, Ports, ReadKey};
//! use store_core::{RetainAuth, Timestamp};
//! use store_testkit::{FakeFetcher, ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};
//!
//! let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
//! let ports = Ports {
//!     repo: Arc::new(MemoryRepository::new()),
//!     blobs: Arc::new(MemoryBlobStore::new()),
//!     clock: clock.clone(),
//!     random: Arc::new(SeededRandom::new(1)),
//!     fetcher: Arc::new(FakeFetcher::new()),
//!     coordination: Default::default(),
//! };
//! let (app, _recovery) = App::open(ports, AppConfig::new("http://files.example"))?;
//!
//! // Bytes are staged first, then the record is written.
//! let mut upload = app.begin_upload(app.config().limits.file_bytes_max)?;
//! upload.push(b"hello")?;
//! let request = NewFile { name: Some("hello.txt".into()), ..NewFile::default() };
//! let file = app.create_file(&request, upload.finish()?, RetainAuth::Absent)?;
//! // A read shows its key to the password gate: none is needed here.
//! assert!(app.file_info(&file.id, &ReadKey::NONE).is_ok());
//!
//! // Four hours later (the default lifetime) it is gone.
//! clock.advance_secs(4 * 3600);
//! assert!(app.file_info(&file.id, &ReadKey::NONE).is_err());
//! # Ok::<(), store_app::AppError>(())
//! ```
//!
//! `examples/in_memory.rs` goes on with dirs and the sweeper, and
//! store-sled's `examples/plain_thread.rs` runs this on disk.

#![warn(missing_docs)]

mod access;
mod blobcache;
mod bundles;
mod dirs;
mod diskcache;
mod drops;
mod error;
mod fetched;
mod files;
mod galleries;
mod gates;
mod import;
pub mod migrate;
mod moderation;
mod orphans;
mod outcomes;
pub mod passwords;
mod pool;
mod resumable;
mod scanning;
pub mod system;
mod telemetry;
mod upkeep;
mod upload;
mod webhooks;

use std::sync::Arc;

use store_core::local::{LocalLedgers, StripedLocks};
use store_core::pool::PoolLedger;
use store_core::ports::{BlobStore, Clock, KeyLocks, Ledgers, LockGuard, Pool, Random, Repository};
use store_core::{Limits, Object, RetainAuth, RetainTokens, StoreError, Timestamp, UploadToken};

pub use access::Access;
pub use blobcache::{CacheStats, CachedBlobs};
pub use dirs::{DirQuery, DirSort, NewDir, WriteRequest};
pub use diskcache::DiskCachedBlobs;
pub use drops::{DropRoom, Dropped};
pub use error::{AppError, AppResult};
pub use fetched::FetchedRead;
pub use files::{
    BrowseQuery, BrowseSort, Download, NewFile, Opened, SortOrder, TextPreview, Uploaded,
};
pub use galleries::{AdminAction, Visitor, MEDIA_JOBS_MAX};
pub use gates::{Gated, ReadKey};
pub use import::ImportRequest;
pub use moderation::{AdminPage, Blocked, BLOCK_RESWEEP_SECS};
pub use orphans::OrphanReport;
pub use outcomes::{AsOf, Created, DirMade, GalleryMade, GalleryPage, GalleryTally, Liked};
pub use resumable::{Checksum, Patch, PatchTicket, Patched, UploadState};
pub use telemetry::Telemetry;
pub use upkeep::{Upkeep, SWEEP_BATCH, SWEEP_IDLE_MAX};
pub use upload::{Part, Staged, Upload};
pub use webhooks::{Webhook, DELIVERERS};

/// The ports an [`App`] runs on.
#[derive(Clone)]
pub struct Ports {
    /// Where the records and their indexes live.
    pub repo: Arc<dyn Repository>,
    /// Where the bytes of files, bundles, dirs and images live.
    pub blobs: Arc<dyn BlobStore>,
    /// The time source; each use case reads it once.
    pub clock: Arc<dyn Clock>,
    /// The source of unpredictable bytes for ids and tokens.
    pub random: Arc<dyn Random>,
    /// Fetches remote documents for imports (`POST /?url=`).
    pub fetcher: Arc<dyn store_core::Fetcher>,
    /// Whether this process writes the store alone or shares it with others.
    pub coordination: Coordination,
}

/// How the processes serving one store agree on keys and pools.
#[derive(Clone, Default)]
pub enum Coordination {
    /// This process alone writes the records (sled locks its directory):
    /// locks and pool ledgers live in its memory.
    #[default]
    Local,
    /// Other processes share the records: locks and ledgers go through
    /// the shared adapter, and uploads register intents in the repository
    /// so that no process's orphan collection takes their bytes
    /// ([`Repository::keeps_intents`]).
    Shared {
        /// The key locks, shared by every process that serves the store.
        locks: Arc<dyn KeyLocks>,
        /// The pools' ledgers, counted over every process.
        ledgers: Arc<dyn Ledgers>,
    },
}

impl std::fmt::Debug for Coordination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Local => f.write_str("Local"),
            Self::Shared { .. } => f.write_str("Shared { .. }"),
        }
    }
}

impl std::fmt::Debug for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ports { .. }")
    }
}

/// What the operator configured.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Prefix of every URL handed out, without a trailing slash. The use
    /// cases never read it (they answer records): it travels here for the
    /// HTTP layer, whose `views` build every URL from it.
    pub base_url: String,
    /// The limits the use cases enforce: sizes in bytes, lifetimes in seconds.
    pub limits: Limits,
    /// STORE_RETAIN_TOKEN: the tokens that may retain objects; none configured
    /// turns retention off.
    pub retain_tokens: RetainTokens,
    /// STORE_SUPERADMIN_TOKEN: administers every gallery.
    pub superadmin_token: Option<String>,
    /// STORE_UPLOAD_TOKEN: when set, creating anything needs it.
    pub upload_token: UploadToken,
    /// STORE_PICS_UPLOADS: whether anyone with a gallery's link may add
    /// images, or only its admin.
    pub gallery_uploads: store_core::gallery::GalleryUploads,
    /// STORE_ADMIN_TOKEN: moderation (issue 36); unset, none of it exists.
    pub admin_token: store_core::moderation::AdminToken,
}

impl AppConfig {
    /// SPEC.md's limits and no token of any kind: what a test or an
    /// embedder starts from, changing what it needs. A trailing slash of
    /// `base_url` is dropped, since every URL appends a path to it.
    pub fn new(base_url: impl Into<String>) -> Self {
        let mut base_url = base_url.into();
        while base_url.ends_with('/') {
            base_url.pop();
        }
        Self {
            base_url,
            limits: Limits::DEFAULT,
            retain_tokens: RetainTokens::default(),
            superadmin_token: None,
            upload_token: UploadToken::default(),
            gallery_uploads: store_core::gallery::GalleryUploads::Open,
            admin_token: Default::default(),
        }
    }
}

/// Expired objects removed in one change of the repository (and under
/// their locks at once) by the sweep: large enough that a thousand cost a
/// few transactions, small enough that the locks are held for a moment.
const SWEEP_TRANSACTION: usize = 128;

/// What one sweep did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepReport {
    /// Expired objects this sweep removed (at most the `batch` asked for).
    pub removed: usize,
    /// The next moment something expires, if anything does.
    pub next_expiry: Option<Timestamp>,
}

/// What opening the store found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Records of every kind the repository held when it was opened.
    pub objects: u64,
    /// Bytes those records hold in the store pool.
    pub pool_used_bytes: u64,
}

/// The service's use cases over a set of ports.
#[derive(Debug)]
pub struct App {
    ports: Ports,
    config: AppConfig,
    locks: Arc<dyn KeyLocks>,
    /// The store pool and the pics pool (counted apart, never evicted).
    ledgers: Arc<dyn Ledgers>,
    /// Whether uploads register intents (processes share the store, and
    /// its repository keeps them): the orphan collection may then run
    /// again and again.
    intents_kept: bool,
    /// Whether the orphan collection runs at all: not on a shared store
    /// whose repository keeps no intents, where it could take bytes an
    /// upload of another process is about to record.
    orphans_collected: bool,
    /// Image decoding and encoding at once, at most: a burst of 30 MB
    /// uploads waits here instead of exhausting memory.
    media_slots: galleries::Slots,
    /// Blobs committed since opening, spared by the orphan collection.
    fresh: Arc<orphans::Fresh>,
    /// Events an operator graphs ([`App::telemetry`]).
    counters: telemetry::Counters,
    /// What the upkeep's threads sleep on ([`App::start_upkeep`]).
    upkeep_signals: Arc<upkeep::Signals>,
    /// Where webhook events go, once turned on ([`App::deliver_webhooks`]).
    webhook: std::sync::OnceLock<webhooks::Webhook>,
    /// The virus scanner, once turned on ([`App::scan_uploads`]).
    scanner: std::sync::OnceLock<Arc<dyn store_core::ports::Scanner>>,
}

impl App {
    /// Opens the service over its ports. It reads the pools' totals, which
    /// the repository keeps in the same atomic change as the records (so
    /// no crash can make them drift), and nothing else: a store of a
    /// million objects answers at once. Orphan blobs are removed later, by
    /// [`App::collect_orphans`].
    pub fn open(mut ports: Ports, config: AppConfig) -> AppResult<(Self, Recovery)> {
        let totals = ports.repo.totals()?;
        let fresh = Arc::new(orphans::Fresh::default());
        let shared = matches!(ports.coordination, Coordination::Shared { .. });
        let intents_kept = shared && ports.repo.keeps_intents();
        let intents = intents_kept.then(|| orphans::Intents {
            repo: Arc::clone(&ports.repo),
            clock: Arc::clone(&ports.clock),
            random: Arc::clone(&ports.random),
        });
        ports.blobs = Arc::new(orphans::NotingBlobs::new(
            ports.blobs,
            Arc::clone(&fresh),
            intents,
        ));
        let (locks, ledgers) = match &ports.coordination {
            Coordination::Local => (
                Arc::new(StripedLocks::default()) as Arc<dyn KeyLocks>,
                Arc::new(LocalLedgers::new(
                    PoolLedger::new(config.limits.pool_bytes, totals.pool_bytes),
                    PoolLedger::new(config.limits.pics_pool_bytes, totals.pics_bytes),
                )) as Arc<dyn Ledgers>,
            ),
            Coordination::Shared { locks, ledgers } => (Arc::clone(locks), Arc::clone(ledgers)),
        };
        let app = Self {
            media_slots: galleries::Slots::new(galleries::MEDIA_JOBS_MAX),
            ports,
            config,
            locks,
            ledgers,
            intents_kept,
            orphans_collected: !shared || intents_kept,
            fresh,
            counters: telemetry::Counters::default(),
            upkeep_signals: Arc::default(),
            webhook: std::sync::OnceLock::new(),
            scanner: std::sync::OnceLock::new(),
        };
        let recovery = Recovery {
            objects: totals.objects,
            pool_used_bytes: totals.pool_bytes,
        };
        Ok((app, recovery))
    }

    /// The configuration this app was opened with.
    pub fn config(&self) -> &AppConfig {
        &self.config
    }

    /// The current time, read from the clock port (milliseconds since the Unix
    /// epoch).
    pub fn now(&self) -> Timestamp {
        self.ports.clock.now()
    }

    /// Checks a presented retain token against the configured ones.
    pub fn retain_auth(&self, presented: Option<&str>) -> RetainAuth {
        // The upload token travels where a retain token does; it is not a
        // wrong retain token, which would be refused.
        if self.config.upload_token.matches(presented) {
            return RetainAuth::Absent;
        }
        // The admin may do whatever the retain token allows: delete any
        // file, bundle or dir by its usual URL (issue 36).
        if self.config.admin_token.is_set() && self.config.admin_token.matches(presented) {
            return RetainAuth::Valid;
        }
        self.config.retain_tokens.check(presented)
    }

    /// Whether a request that presented `presented` may create something
    /// (STORE_UPLOAD_TOKEN; open when it is unset).
    pub fn authorize_create(&self, presented: Option<&str>) -> Result<(), StoreError> {
        if !self.config.upload_token.is_required() {
            // Open: no token to digest on every upload.
            return Ok(());
        }
        let retain = self.retain_auth(presented);
        store_core::auth::authorize_create(&self.config.upload_token, presented, retain)
    }

    /// Bytes the live objects (and writes in progress) hold in the store
    /// pool.
    pub fn pool_used_bytes(&self) -> AppResult<u64> {
        Ok(self.ledgers.usage(Pool::Store)?.used_bytes)
    }

    /// Whether reading a record or its bytes may wait on the network
    /// (records in PostgreSQL, bytes in a bucket): then no read belongs on
    /// an async executor.
    pub fn reads_wait(&self) -> bool {
        self.ports.repo.reads_wait() || self.ports.blobs.reads_wait()
    }

    /// Whether the store can serve now: its records and its bytes answer
    /// (`GET /readyz`).
    pub fn ready(&self) -> AppResult<()> {
        self.records_ready()?;
        self.bytes_ready()
    }

    /// Whether the records can be reached now: half of [`App::ready`], for
    /// a probe that asks both halves at once.
    pub fn records_ready(&self) -> AppResult<()> {
        Ok(self.ports.repo.ping()?)
    }

    /// Whether the bytes can be reached now: the other half of
    /// [`App::ready`].
    pub fn bytes_ready(&self) -> AppResult<()> {
        Ok(self.ports.blobs.ping()?)
    }

    /// Waits until this use case alone holds `keys` (see
    /// [`KeyLocks::lock`] for the rules that keep it free of deadlock).
    pub(crate) fn lock(&self, keys: &[&str]) -> AppResult<LockGuard> {
        Ok(self.locks.lock(keys)?)
    }

    /// Opens a committed blob, for streaming a bundle's or dir's zip. The
    /// blob may be gone if its file was replaced or deleted meanwhile.
    pub fn open_blob(
        &self,
        blob: &store_core::BlobId,
    ) -> AppResult<Box<dyn store_core::BlobReader>> {
        Ok(self.ports.blobs.open(blob)?)
    }

    /// Opens `range` of a blob a [`Download`] named (clamped to its
    /// length): what an HTTP Range request reads, through the store's own
    /// ranged read (a seek, a ranged GET). Bytes gone since are 404.
    pub fn open_blob_range(
        &self,
        blob: &store_core::BlobId,
        range: std::ops::Range<u64>,
    ) -> AppResult<Box<dyn store_core::BlobReader>> {
        self.ports.blobs.open_range(blob, range).map_err(|e| {
            if e.kind == store_core::StorageErrorKind::Missing {
                AppError::Domain(store_core::StoreError::not_found())
            } else {
                AppError::Storage(e)
            }
        })
    }

    /// Opens the bytes a live record points at. Bytes that are gone (a
    /// damaged disk, a hand-deleted file) make the object answer 404, and
    /// the fault is logged: a reader is never shown a 500 for it.
    pub(crate) fn open_record_blob(
        &self,
        blob: &store_core::BlobId,
    ) -> AppResult<Box<dyn store_core::BlobReader>> {
        self.ports.blobs.open(blob).map_err(blob_error)
    }

    /// [`App::open_record_blob`] for a file whose downloads are counted:
    /// its bytes are not read again, so no cache keeps them.
    pub(crate) fn open_file_blob(
        &self,
        blob: &store_core::BlobId,
        counted: bool,
    ) -> AppResult<Box<dyn store_core::BlobReader>> {
        if counted {
            return self.ports.blobs.open_once(blob).map_err(blob_error);
        }
        self.open_record_blob(blob)
    }

    /// [`App::open_file_blob`] if it needs no wait on the network
    /// ([`store_core::BlobStore::open_at_hand`]); `None` otherwise.
    pub(crate) fn file_blob_at_hand(
        &self,
        blob: &store_core::BlobId,
        counted: bool,
    ) -> Option<AppResult<Box<dyn store_core::BlobReader>>> {
        let blobs = &self.ports.blobs;
        let opened = if counted {
            (!blobs.reads_wait()).then(|| blobs.open_once(blob))?
        } else {
            blobs.open_at_hand(blob)?
        };
        Some(opened.map_err(blob_error))
    }

    /// Starts receiving a body of at most `limit_bytes`.
    pub fn begin_upload(&self, limit_bytes: u64) -> AppResult<Upload> {
        let scan = self.begin_scan()?;
        Ok(Upload::new(
            self.ports.blobs.create()?,
            Arc::clone(&self.ports.blobs),
            limit_bytes,
        )
        .scanned(scan, self.moderates()))
    }

    /// Removes objects whose time has come, at most `batch` of them, and
    /// says when the next one is due. It walks the expiry index from its
    /// start, so its cost follows the number of expired objects, not the
    /// number stored.
    pub fn sweep(&self, batch: usize) -> AppResult<SweepReport> {
        let now = self.now();
        // Most sweeps find nothing due: look at the soonest expiry alone
        // before reading a whole batch of the index.
        match self.ports.repo.expiring(1)?.first() {
            None => {
                return Ok(SweepReport {
                    removed: 0,
                    next_expiry: None,
                })
            }
            Some((at, _)) if *at > now => {
                return Ok(SweepReport {
                    removed: 0,
                    next_expiry: Some(*at),
                })
            }
            Some(_) => {}
        }
        let mut next_expiry = None;
        let mut due = vec![];
        for (at, key) in self.ports.repo.expiring(batch)? {
            if at > now {
                next_expiry = Some(at);
                break;
            }
            due.push(key);
        }
        let removed = self.remove_due(&due, now)?;
        telemetry::Counters::add(&self.counters.sweep_removed, removed as u64);
        if removed > 0 || next_expiry.is_none() {
            next_expiry = self.ports.repo.expiring(1)?.first().map(|(at, _)| *at);
        }
        Ok(SweepReport {
            removed,
            next_expiry,
        })
    }

    /// Removes the objects of `due` still past their lifetime at `now`,
    /// and answers how many it removed.
    fn remove_due(&self, due: &[String], now: Timestamp) -> AppResult<usize> {
        // The free keys go in few removals (one transaction each in sled,
        // instead of one per object), under their locks: an object may have
        // been retained or deleted since the index was read, so the
        // repository re-checks each one inside the removal. A busy key is
        // waited for afterwards, alone, so that no lock is held while
        // waiting for another.
        let mut removed = 0;
        let mut busy = vec![];
        for chunk in due.chunks(SWEEP_TRANSACTION) {
            let mut many = self.locks.try_lock_many(chunk.to_vec())?;
            busy.append(&mut many.busy);
            // Dead already: their removal need not wait for a flush (see
            // Repository::remove_dead).
            let gone = self.ports.repo.remove_dead_many(&many.locked, now)?;
            // Once its record is gone, nothing can reach an object's bytes:
            // they are unlinked after the locks are released.
            drop(many.guard);
            for obj in gone.into_iter().flatten() {
                self.release_removed(&obj);
                removed += 1;
            }
        }
        for key in busy {
            let guard = self.lock(&[&key])?;
            let gone = self
                .ports
                .repo
                .remove_dead_many(std::slice::from_ref(&key), now)?;
            drop(guard);
            for obj in gone.into_iter().flatten() {
                self.release_removed(&obj);
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Inserts the object `object` makes for a fresh id, settling
    /// `reservation` with it (see [`App::put_keeping`]); the reservation
    /// is kept even when the insert failed. 71 random bits make a clash
    /// all but impossible; the loop turns "all but" into "never".
    pub(crate) fn insert_with_fresh_id(
        &self,
        reservation: pool::Reservation<'_>,
        mut object: impl FnMut(&str) -> Object,
    ) -> Result<String, store_core::StorageError> {
        let settled = reservation.settled();
        let inserted = loop {
            let id = store_core::ids::object_id(self.ports.random.as_ref());
            match self
                .ports
                .repo
                .insert_new_settled(&id, &object(&id), settled)
            {
                Ok(true) => break Ok(id),
                Ok(false) => {}
                Err(e) => break Err(e),
            }
        };
        reservation.keep();
        inserted
    }

    /// The size a text file would grow to by appending `extra` bytes, or
    /// 413 past the file size limit.
    pub(crate) fn appended_size(&self, current: u64, extra: usize) -> AppResult<u64> {
        let limit = self.config.limits.file_bytes_max;
        let new_size = current + extra as u64;
        if new_size > limit {
            return Err(store_core::StoreError::TooLarge(format!(
                "the file would grow to {new_size} bytes, over the limit of {limit}"
            ))
            .into());
        }
        Ok(new_size)
    }

    /// Deletes a record if it is still at `rev`, then its bytes, then
    /// gives its pool bytes back. The caller holds the key's lock; a
    /// record changed since it was read (the lock was lost) is a conflict,
    /// and nothing is removed.
    fn remove_object(&self, key: &str, rev: store_core::Rev, obj: &Object) -> AppResult<()> {
        self.ports.repo.remove_at(key, rev, &owned(obj.blobs()))?;
        self.release_removed(obj);
        Ok(())
    }

    /// Removes `blob`, staged for a record write that failed with `e`, if
    /// the failure says the write did not land (a conflict). Any other
    /// failure may have written it: the blob is left to the orphan
    /// collection, which removes it only if no record names it.
    pub(crate) fn discard_if_unwritten(
        &self,
        e: &store_core::StorageError,
        blob: &store_core::BlobId,
    ) {
        if e.kind == store_core::StorageErrorKind::Conflict {
            let _ = self.ports.blobs.remove(blob);
        }
    }

    /// What follows a record's removal by this call (so a racing remover
    /// cannot release twice): its pool bytes go back, then its bytes are
    /// deleted. An expired image swept gives its bytes back to the pics
    /// pool.
    fn release_removed(&self, obj: &Object) {
        // An upload's staged bytes may be more than its blob (a bucket's
        // multipart upload and its waiting bytes): the store drops them.
        if let Object::Upload(u) = obj {
            if let Err(e) = self.ports.blobs.discard(&u.staging) {
                tracing::warn!(error = %e, upload = %u.id, "could not drop an upload's staged bytes");
            }
        }
        self.ledgers.freed(Pool::Store, obj.pool_bytes());
        if obj.pics_bytes() > 0 {
            self.ledgers.freed(Pool::Pics, obj.pics_bytes());
        }
        self.release_blobs(obj.blobs());
    }

    /// Deletes blobs that a committed write stopped naming, unless the
    /// repository queued them with the write: then a drainer deletes them
    /// once their grace is over ([`App::drain_deletes`]), so that a reader
    /// who read the old record still finds them. A delete that fails is
    /// logged, never the request's failure: the write committed, and the
    /// orphan collection of a later start finds the bytes.
    pub(crate) fn release_blobs<'b>(
        &self,
        blobs: impl IntoIterator<Item = &'b store_core::BlobId>,
    ) {
        let mut blobs = blobs.into_iter().peekable();
        if self.ports.repo.queues_deletes() {
            if blobs.peek().is_some() && self.ports.repo.delete_grace().is_zero() {
                self.upkeep_signals.deletes_queued();
            }
            return;
        }
        for blob in blobs {
            if let Err(e) = self.ports.blobs.remove(blob) {
                tracing::warn!(error = %e, blob = %blob.0, "could not delete bytes no record names");
            }
        }
    }

    /// Deletes the queued blobs whose grace is over, at most `limit`, and
    /// answers how many went. One that the bucket refuses stays queued and
    /// comes due again (the queue's claim runs out), so deletes are
    /// retried without a restart. A no-op for a repository without a
    /// queue.
    pub fn drain_deletes(&self, limit: usize) -> AppResult<usize> {
        let due = self.ports.repo.deletes_due(limit)?;
        let (mut done, mut failed) = (Vec::with_capacity(due.len()), vec![]);
        for blob in due {
            match self.ports.blobs.remove(&blob) {
                Ok(()) => done.push(blob),
                Err(e) => {
                    tracing::warn!(error = %e, blob = %blob.0, "a queued delete failed; retried later");
                    failed.push(blob);
                }
            }
        }
        self.ports.repo.deletes_done(&done)?;
        self.ports.repo.deletes_failed(&failed)?;
        Ok(done.len() + failed.len())
    }
}

/// A blob that cannot be opened, as a read answers it: bytes a record
/// points at that are gone are a 404 (and a log line), anything else a
/// storage fault.
pub(crate) fn blob_error(e: store_core::StorageError) -> AppError {
    if e.kind == store_core::StorageErrorKind::Missing {
        tracing::warn!(error = %e, "a record points at missing bytes; answering 404");
        AppError::Domain(store_core::StoreError::not_found())
    } else {
        AppError::Storage(e)
    }
}

/// Blob ids owned, as a write's `doomed` list takes them.
pub(crate) fn owned<'b>(
    blobs: impl IntoIterator<Item = &'b store_core::BlobId>,
) -> Vec<store_core::BlobId> {
    blobs.into_iter().cloned().collect()
}

#[cfg(test)]
mod shared_tests;
#[cfg(test)]
mod tests;
