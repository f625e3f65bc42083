//! # store-testkit
//!
//! Everything needed to run the whole domain without a disk or a clock:
//! [`ManualClock`], [`SeededRandom`], [`MemoryRepository`] and
//! [`MemoryBlobStore`]. Property tests use them, and so can embedders.
//!
//! [`suite`] holds the adapter conformance tests: every repository and blob
//! store adapter (memory here, sled in store-sled) runs the same suite.
//!
//! ## Start here
//!
//! A clock a test moves by hand, so that nothing sleeps:
//!
//! ```
//! use store_core::ports::Clock;
//! use store_core::Timestamp;
//! use store_testkit::ManualClock;
//!
//! let clock = ManualClock::new(Timestamp::from_secs(1_800_000_000));
//! clock.advance_secs(4 * 3600);
//! assert_eq!(clock.now(), Timestamp::from_secs(1_800_000_000 + 4 * 3600));
//! ```
//!
//! An adapter of your own passes the same conformance suite as the memory
//! adapters and store-sled's, from one of its tests:
//!
//! ```
//! use store_testkit::{suite, MemoryBlobStore, MemoryRepository};
//!
//! // Replace the memory adapters with yours.
//! suite::repository(&|| Box::new(MemoryRepository::new()));
//! suite::blob_store(&|| Box::new(MemoryBlobStore::new()));
//! ```

#![warn(missing_docs)]

pub mod coordination;
pub mod faults;
pub mod origin;
pub mod pg;
pub mod pin;
pub mod s3;
pub mod suite;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use store_core::events::{change_event, event_id, removal, Change, Claimed, Event, EventData};
use store_core::ports::{
    BlobReader, BlobStore, BlobWriter, Clock, Random, Repository, Rev, StagedWriter, StorageResult,
};
use store_core::resumable::Staging;
use store_core::{BlobId, FetchError, Fetched, Fetcher, Listing, Object, StorageError, Timestamp};

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock that reads `start` until it is set or advanced.
    pub fn new(start: Timestamp) -> Self {
        Self(AtomicI64::new(start.as_millis()))
    }

    /// Moves the clock to `t`, forwards or backwards.
    pub fn set(&self, t: Timestamp) {
        self.0.store(t.as_millis(), Ordering::SeqCst);
    }

    /// Moves the clock forwards by `secs` seconds.
    pub fn advance_secs(&self, secs: u64) {
        self.set(self.now().plus_secs(secs));
    }

    /// Moves the clock by `ms` milliseconds (backwards when negative).
    pub fn advance_millis(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.0.load(Ordering::SeqCst))
    }
}

/// A deterministic random source (splitmix64), for reproducible tests.
/// Never use it for real tokens.
#[derive(Debug)]
pub struct SeededRandom(AtomicU64);

impl SeededRandom {
    /// A source whose bytes follow from `seed` alone: the same seed gives the
    /// same ids and tokens.
    pub fn new(seed: u64) -> Self {
        Self(AtomicU64::new(seed))
    }
}

impl Random for SeededRandom {
    fn fill(&self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let mut z = self
                .0
                .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
                .wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in another test thread must not hide this test's result.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Default)]
struct MemoryTables {
    objects: BTreeMap<String, Object>,
    /// Each record's revision: the value of `writes` when it was written,
    /// so a record removed and made again never has a revision it had.
    revs: BTreeMap<String, u64>,
    /// The blocklist, by digest.
    blocked: BTreeMap<store_core::digest::Sha256, store_core::moderation::Block>,
    /// The admin's report queue, oldest first.
    reports: Vec<store_core::moderation::Report>,
    writes: u64,
    expiry: BTreeSet<(Timestamp, String)>,
    tags: BTreeMap<String, BTreeSet<String>>,
    /// Uploads' intents: each blob being written and until when.
    intents: HashMap<BlobId, Timestamp>,
    /// Whether changes put their events in the outbox.
    events: bool,
    /// The outbox: each event by its place, with its tries, when it is
    /// due, and until when a claim holds it.
    outbox: BTreeMap<u64, (Event, u32, Timestamp, Timestamp)>,
    /// The last place given in the outbox.
    outbox_seq: u64,
}

impl MemoryTables {
    /// Stores `obj` under `key` with a fresh revision, replacing (and
    /// unindexing) what was there.
    fn write(&mut self, key: &str, obj: &Object) -> Rev {
        let old = self.objects.remove(key);
        self.event(key, (old.as_ref(), Some(obj)), Change::Written);
        if let Some(old) = old {
            self.unindex(key, &old);
        }
        self.index(key, obj);
        self.objects.insert(key.to_string(), obj.clone());
        self.writes += 1;
        self.revs.insert(key.to_string(), self.writes);
        Rev(self.writes)
    }

    /// Puts the event of a change of `key` in the outbox, if events are
    /// kept and the change is one. The double has no clock: an event's
    /// time, and whether a removal is an expiry, go by the wall clock.
    fn event(&mut self, key: &str, (old, new): (Option<&Object>, Option<&Object>), how: Change) {
        if !self.events {
            return;
        }
        if let Some(kind) = change_event(old, new, how) {
            let object = new.or(old).expect("an event has an object");
            self.add_event(Event::new(kind, wall_now(), EventData::of(key, object)));
        }
    }

    fn add_event(&mut self, event: Event) {
        self.outbox_seq += 1;
        let due = event.at;
        self.outbox
            .insert(self.outbox_seq, (event, 0, due, Timestamp::EPOCH));
    }

    /// Whether the record under `key` is at `rev`.
    fn at(&self, key: &str, rev: Rev) -> bool {
        self.revs.get(key) == Some(&rev.0)
    }

    fn unindex(&mut self, key: &str, obj: &Object) {
        if let Some(at) = obj.lifetime().expires_at() {
            self.expiry.remove(&(at, key.to_string()));
        }
        for tag in obj.tags() {
            if let Some(set) = self.tags.get_mut(tag) {
                set.remove(key);
                if set.is_empty() {
                    self.tags.remove(tag);
                }
            }
        }
    }

    fn index(&mut self, key: &str, obj: &Object) {
        if let Some(at) = obj.lifetime().expires_at() {
            self.expiry.insert((at, key.to_string()));
        }
        for tag in obj.tags() {
            self.tags
                .entry(tag.clone())
                .or_default()
                .insert(key.to_string());
        }
    }
}

/// The wall clock, for the double's events (it has no clock of its own).
fn wall_now() -> Timestamp {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::from_millis(since.as_millis() as i64)
}

/// The repository port in memory.
#[derive(Debug, Default)]
pub struct MemoryRepository(Mutex<MemoryTables>, std::sync::atomic::AtomicUsize);

impl MemoryRepository {
    /// An empty repository.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many times every record was walked ([`Repository::for_each`]):
    /// tests check that a request never does it.
    pub fn full_scans(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Visits a snapshot, so that the visitor may call back into the store.
    fn visit_snapshot(
        &self,
        keep: &dyn Fn(&Object) -> bool,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) {
        let snapshot: Vec<(String, Object)> = lock(&self.0)
            .objects
            .iter()
            .filter(|(_, v)| keep(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in &snapshot {
            if visit(k, v).is_break() {
                break;
            }
        }
    }
}

impl Repository for MemoryRepository {
    fn get(&self, key: &str) -> StorageResult<Option<Object>> {
        Ok(lock(&self.0).objects.get(key).cloned())
    }

    fn load(&self, key: &str) -> StorageResult<Option<(Object, Rev)>> {
        let t = lock(&self.0);
        Ok(t.objects.get(key).map(|o| (o.clone(), Rev(t.revs[key]))))
    }

    fn insert_new(&self, key: &str, object: &Object) -> StorageResult<bool> {
        let mut t = lock(&self.0);
        if t.objects.contains_key(key) {
            return Ok(false);
        }
        t.write(key, object);
        Ok(true)
    }

    fn replace(
        &self,
        key: &str,
        rev: Rev,
        object: &Object,
        _doomed: &[BlobId],
    ) -> StorageResult<Rev> {
        let mut t = lock(&self.0);
        if !t.at(key, rev) {
            return Err(StorageError::conflict(key));
        }
        Ok(t.write(key, object))
    }

    fn remove_at(&self, key: &str, rev: Rev, _doomed: &[BlobId]) -> StorageResult<()> {
        let mut t = lock(&self.0);
        if !t.at(key, rev) {
            return Err(StorageError::conflict(key));
        }
        let old = t
            .objects
            .remove(key)
            .expect("a record at a revision exists");
        t.revs.remove(key);
        t.unindex(key, &old);
        t.event(key, (Some(&old), None), removal(&old, wall_now()));
        Ok(())
    }

    fn keeps_intents(&self) -> bool {
        true
    }

    fn intend(&self, blob: &BlobId, until: Timestamp) -> StorageResult<()> {
        let mut t = lock(&self.0);
        let at = t.intents.entry(blob.clone()).or_insert(until);
        *at = (*at).max(until);
        Ok(())
    }

    fn intended(&self, now: Timestamp) -> StorageResult<Vec<BlobId>> {
        let t = lock(&self.0);
        Ok(t.intents
            .iter()
            .filter(|(_, until)| **until > now)
            .map(|(blob, _)| blob.clone())
            .collect())
    }

    fn forget_intents(&self, now: Timestamp, limit: usize) -> StorageResult<usize> {
        let mut t = lock(&self.0);
        let ended: Vec<BlobId> = t
            .intents
            .iter()
            .filter(|(_, until)| **until <= now)
            .map(|(blob, _)| blob.clone())
            .take(limit)
            .collect();
        for blob in &ended {
            t.intents.remove(blob);
        }
        Ok(ended.len())
    }

    fn expiring(&self, limit: usize) -> StorageResult<Vec<(Timestamp, String)>> {
        Ok(lock(&self.0).expiry.iter().take(limit).cloned().collect())
    }

    fn keys_with_tag(&self, tag: &str) -> StorageResult<Vec<String>> {
        Ok(lock(&self.0)
            .tags
            .get(tag)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default())
    }

    fn listed(
        &self,
        listing: Listing,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        // The test double filters every record: what it must get right is
        // which records a listing holds, not how fast it finds them.
        self.visit_snapshot(&|obj| obj.listing() == Some(listing), visit);
        Ok(())
    }

    fn searched(
        &self,
        term: &str,
        after: Option<&store_core::moderation::AdminCursor>,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        // The test double sorts what it filters: what it must get right is
        // which records a search finds and in what order.
        let mut found: Vec<(String, Object)> = lock(&self.0)
            .objects
            .iter()
            .filter(|(k, o)| {
                o.search_terms().iter().any(|t| t == term)
                    && after.is_none_or(|c| c.precedes(o.created_at(), k))
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        found.sort_by(|(ka, a), (kb, b)| b.created_at().cmp(&a.created_at()).then(ka.cmp(kb)));
        for (k, v) in &found {
            if visit(k, v).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn block(
        &self,
        block: &store_core::moderation::Block,
        event: Option<&Event>,
    ) -> StorageResult<()> {
        let mut t = lock(&self.0);
        t.blocked.insert(block.sha256, block.clone());
        if let Some(e) = event.filter(|_| t.events) {
            t.add_event(e.clone());
        }
        Ok(())
    }

    fn blocked(
        &self,
        digests: &[store_core::digest::Sha256],
    ) -> StorageResult<Option<store_core::moderation::Block>> {
        let t = lock(&self.0);
        Ok(digests.iter().find_map(|d| t.blocked.get(d).cloned()))
    }

    fn report(
        &self,
        report: &store_core::moderation::Report,
        event: Option<&Event>,
    ) -> StorageResult<()> {
        let mut t = lock(&self.0);
        if let Some(e) = event.filter(|_| t.events) {
            t.add_event(e.clone());
        }
        t.reports.push(report.clone());
        t.reports
            .sort_by(|a, b| (a.reported_at, &a.id).cmp(&(b.reported_at, &b.id)));
        Ok(())
    }

    fn reports(&self, limit: usize) -> StorageResult<Vec<store_core::moderation::Report>> {
        Ok(lock(&self.0).reports.iter().take(limit).cloned().collect())
    }

    fn clear_report(&self, id: &str) -> StorageResult<bool> {
        let mut t = lock(&self.0);
        let before = t.reports.len();
        t.reports.retain(|r| r.id != id);
        Ok(t.reports.len() < before)
    }

    fn keep_events(&self, on: bool) {
        lock(&self.0).events = on;
    }

    fn claim_events(
        &self,
        now: Timestamp,
        lease_ms: u64,
        limit: usize,
    ) -> StorageResult<Vec<Claimed>> {
        let mut t = lock(&self.0);
        let mut seen = BTreeSet::new();
        let mut out = vec![];
        for (seq, (event, attempts, due, claimed)) in t.outbox.iter_mut() {
            if out.len() == limit {
                break;
            }
            if !seen.insert(event.data.key.clone()) || *due > now || *claimed > now {
                continue;
            }
            *claimed = Timestamp::from_millis(now.as_millis() + lease_ms as i64);
            let mut event = event.clone();
            event.id = event_id(*seq, event.at);
            out.push(Claimed {
                seq: *seq,
                event,
                attempts: *attempts,
            });
        }
        Ok(out)
    }

    fn event_delivered(&self, seq: u64) -> StorageResult<()> {
        lock(&self.0).outbox.remove(&seq);
        Ok(())
    }

    fn event_failed(&self, seq: u64, next: Option<Timestamp>) -> StorageResult<()> {
        let mut t = lock(&self.0);
        match next {
            None => {
                t.outbox.remove(&seq);
            }
            Some(next) => {
                if let Some((_, attempts, due, claimed)) = t.outbox.get_mut(&seq) {
                    *attempts += 1;
                    *due = next;
                    *claimed = Timestamp::EPOCH;
                }
            }
        }
        Ok(())
    }

    fn blocks(&self) -> StorageResult<Vec<store_core::moderation::Block>> {
        let mut all: Vec<_> = lock(&self.0).blocked.values().cloned().collect();
        all.sort_by_key(|b| std::cmp::Reverse(b.blocked_at));
        Ok(all)
    }

    fn for_each(
        &self,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.visit_snapshot(&|_| true, visit);
        Ok(())
    }
}

/// The blob store port in memory.
#[derive(Debug)]
pub struct MemoryBlobStore {
    blobs: Arc<Mutex<HashMap<BlobId, Arc<Vec<u8>>>>>,
    /// Staged blobs (resumable uploads) being written.
    staged: Arc<Mutex<HashMap<BlobId, Vec<u8>>>>,
    random: Arc<SeededRandom>,
}

impl Default for MemoryBlobStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryBlobStore {
    /// An empty blob store. It mints blob ids from a fixed seed, so every new
    /// store mints the same ids in the same order.
    pub fn new() -> Self {
        Self {
            blobs: Arc::default(),
            staged: Arc::default(),
            random: Arc::new(SeededRandom::new(0xB10B)),
        }
    }

    /// Number of committed blobs, for leak checks in tests.
    pub fn count(&self) -> usize {
        lock(&self.blobs).len()
    }

    /// Number of staged blobs (resumable uploads) not completed or
    /// discarded, for leak checks in tests.
    pub fn staged_count(&self) -> usize {
        lock(&self.staged).len()
    }
}

struct MemoryWriter {
    buf: Vec<u8>,
    /// The id to commit under, or `None` to mint one.
    id: Option<BlobId>,
    blobs: Arc<Mutex<HashMap<BlobId, Arc<Vec<u8>>>>>,
    random: Arc<SeededRandom>,
}

impl BlobWriter for MemoryWriter {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        self.buf.extend_from_slice(chunk);
        Ok(())
    }

    fn commit(self: Box<Self>) -> StorageResult<BlobId> {
        let id = match self.id {
            Some(id) => id,
            None => store_core::ids::blob_id(self.random.as_ref()),
        };
        lock(&self.blobs).insert(id.clone(), Arc::new(self.buf));
        Ok(id)
    }
}

/// A staged blob of [`MemoryBlobStore`], written in place.
struct MemoryStaged {
    staging: Staging,
    staged: Arc<Mutex<HashMap<BlobId, Vec<u8>>>>,
    blobs: Arc<Mutex<HashMap<BlobId, Arc<Vec<u8>>>>>,
}

impl StagedWriter for MemoryStaged {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        lock(&self.staged)
            .entry(self.staging.blob.clone())
            .or_default()
            .extend_from_slice(chunk);
        Ok(())
    }

    fn pause(self: Box<Self>) -> StorageResult<Staging> {
        Ok(self.staging)
    }

    fn complete(self: Box<Self>) -> StorageResult<BlobId> {
        let bytes = lock(&self.staged)
            .remove(&self.staging.blob)
            .unwrap_or_default();
        lock(&self.blobs).insert(self.staging.blob.clone(), Arc::new(bytes));
        Ok(self.staging.blob)
    }
}

struct MemoryReader {
    data: Arc<Vec<u8>>,
    pos: usize,
}

impl Read for MemoryReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.data[self.pos..];
        let n = rest.len().min(out.len());
        out[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl BlobReader for MemoryReader {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
}

impl BlobStore for MemoryBlobStore {
    fn stages(&self) -> bool {
        true
    }

    fn stage(&self) -> StorageResult<Staging> {
        Ok(Staging {
            blob: store_core::ids::blob_id(self.random.as_ref()),
            state: String::new(),
        })
    }

    fn resume(&self, staging: &Staging, offset: u64) -> StorageResult<Box<dyn StagedWriter>> {
        let mut staged = lock(&self.staged);
        let bytes = staged.entry(staging.blob.clone()).or_default();
        if (bytes.len() as u64) < offset {
            return Err(StorageError::new("staged bytes lost"));
        }
        bytes.truncate(offset as usize);
        Ok(Box::new(MemoryStaged {
            staging: staging.clone(),
            staged: Arc::clone(&self.staged),
            blobs: Arc::clone(&self.blobs),
        }))
    }

    fn discard(&self, staging: &Staging) -> StorageResult<()> {
        lock(&self.staged).remove(&staging.blob);
        Ok(())
    }

    fn ping(&self) -> StorageResult<()> {
        Ok(())
    }

    fn reads_wait(&self) -> bool {
        false
    }

    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        Ok(Box::new(MemoryWriter {
            buf: Vec::new(),
            id: None,
            blobs: Arc::clone(&self.blobs),
            random: Arc::clone(&self.random),
        }))
    }

    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        Ok(Box::new(MemoryWriter {
            buf: Vec::new(),
            id: Some(id.clone()),
            blobs: Arc::clone(&self.blobs),
            random: Arc::clone(&self.random),
        }))
    }

    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        let data = lock(&self.blobs).get(id).cloned().ok_or_else(|| {
            StorageError::of(
                store_core::StorageErrorKind::Missing,
                format!("blob {} is missing", id.as_str()),
            )
        })?;
        Ok(Box::new(MemoryReader { data, pos: 0 }))
    }

    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        lock(&self.blobs).remove(id);
        lock(&self.staged).remove(id);
        Ok(())
    }

    fn list(&self) -> StorageResult<Vec<BlobId>> {
        Ok(lock(&self.blobs).keys().cloned().collect())
    }
}

/// What [`FakeFetcher`] answers for one URL: (content type,
/// Content-Disposition name, body), or an error.
pub type FakeResponse = Result<(Option<String>, Option<String>, Vec<u8>), FetchError>;

/// A fetcher answering from a table, for import tests without a network.
#[derive(Debug, Default)]
pub struct FakeFetcher {
    /// The table: each URL with what fetching it answers. A URL not in it is
    /// refused.
    pub responses: Mutex<HashMap<String, FakeResponse>>,
}

impl FakeFetcher {
    /// A fetcher with an empty table: it refuses every URL.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes fetching `url` answer `body`, with an optional Content-Type and
    /// Content-Disposition file name. A body over the fetch's `max_bytes` fails
    /// with `FetchError::TooLarge`.
    pub fn serve(&self, url: &str, content_type: Option<&str>, name: Option<&str>, body: &[u8]) {
        lock(&self.responses).insert(
            url.to_string(),
            Ok((
                content_type.map(String::from),
                name.map(String::from),
                body.to_vec(),
            )),
        );
    }

    /// Makes fetching `url` fail with `error`.
    pub fn fail(&self, url: &str, error: FetchError) {
        lock(&self.responses).insert(url.to_string(), Err(error));
    }
}

impl Fetcher for FakeFetcher {
    fn fetch(&self, url: &str, max_bytes: u64) -> Result<Fetched, FetchError> {
        let (content_type, disposition_name, body) = lock(&self.responses)
            .get(url)
            .cloned()
            .unwrap_or(Err(FetchError::Refused))?;
        if body.len() as u64 > max_bytes {
            return Err(FetchError::TooLarge(max_bytes));
        }
        Ok(Fetched {
            final_url: url.to_string(),
            content_type,
            disposition_name,
            body: Box::new(std::io::Cursor::new(body)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_repository_passes_the_suite() {
        suite::repository(&|| Box::new(MemoryRepository::new()));
    }

    #[test]
    fn striped_locks_pass_the_suite() {
        coordination::key_locks(&|| {
            let locks = std::sync::Arc::new(store_core::local::StripedLocks::default());
            (locks.clone(), locks)
        });
    }

    #[test]
    fn local_ledgers_pass_the_suite() {
        use store_core::pool::PoolLedger;
        coordination::ledgers(&|| {
            let ledgers = std::sync::Arc::new(store_core::local::LocalLedgers::new(
                PoolLedger::new(100, 0),
                PoolLedger::new(10, 0),
            ));
            (
                ledgers.clone(),
                ledgers,
                std::sync::Arc::new(MemoryRepository::new()),
            )
        });
    }

    #[test]
    fn local_rate_limits_pass_the_suite() {
        coordination::rate_limits(&|| {
            let limits = std::sync::Arc::new(store_core::local::LocalRateLimits::new(100));
            (limits.clone(), limits)
        });
    }

    #[test]
    fn memory_blob_store_passes_the_suite() {
        suite::blob_store(&|| Box::new(MemoryBlobStore::new()));
    }

    #[test]
    fn seeded_random_is_deterministic_and_spread() {
        let (a, b) = (SeededRandom::new(1), SeededRandom::new(1));
        let (mut x, mut y) = ([0u8; 16], [0u8; 16]);
        a.fill(&mut x);
        b.fill(&mut y);
        assert_eq!(x, y);
        a.fill(&mut y);
        assert_ne!(x, y);
    }
}
