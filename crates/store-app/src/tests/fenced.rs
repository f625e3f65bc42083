//! Fenced writes and deferred deletes under faults, with two apps (two
//! "processes") over one repository and one blob store, each with its own
//! in-process locks. A lost lock is made deterministic: the repository
//! runs the second app's whole use case right after the first one read
//! the record it will write, which is what another process does when the
//! first one's lock session is gone. The promises are CONTRACT.md's
//! "Faults in a cluster": a once file is served at most once, an
//! acknowledged write is never lost or undone, a deleted object never
//! comes back, and a failed delete of bytes never fails a request.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use store_core::ports::{
    BlobReader, BlobStore, BlobWriter, Repository, Rev, StagedWriter, StorageResult,
};
use store_core::resumable::Staging;
use store_core::{BlobId, Listing, Object, StorageError, StorageErrorKind, Timestamp};

use super::*;

type Hook = Box<dyn FnOnce() + Send>;

/// A repository that runs a hook once, right after the next `load`: the
/// moment a use case holds a record it will write back; and another once,
/// right after the next walk over every record (the orphan collection's).
struct Interleaving {
    inner: MemoryRepository,
    hook: Mutex<Option<Hook>>,
    scan_hook: Mutex<Option<Hook>>,
}

impl Repository for Interleaving {
    fn get(&self, key: &str) -> StorageResult<Option<Object>> {
        self.inner.get(key)
    }
    fn load(&self, key: &str) -> StorageResult<Option<(Object, Rev)>> {
        let loaded = self.inner.load(key);
        let hook = self.hook.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        loaded
    }
    fn insert_new(&self, key: &str, object: &Object) -> StorageResult<bool> {
        self.inner.insert_new(key, object)
    }
    fn replace(&self, key: &str, rev: Rev, obj: &Object, doomed: &[BlobId]) -> StorageResult<Rev> {
        self.inner.replace(key, rev, obj, doomed)
    }
    fn remove_at(&self, key: &str, rev: Rev, doomed: &[BlobId]) -> StorageResult<()> {
        self.inner.remove_at(key, rev, doomed)
    }
    fn expiring(&self, limit: usize) -> StorageResult<Vec<(Timestamp, String)>> {
        self.inner.expiring(limit)
    }
    fn keys_with_tag(&self, tag: &str) -> StorageResult<Vec<String>> {
        self.inner.keys_with_tag(tag)
    }
    fn listed(
        &self,
        listing: Listing,
        visit: &mut dyn FnMut(&str, &Object) -> std::ops::ControlFlow<()>,
    ) -> StorageResult<()> {
        self.inner.listed(listing, visit)
    }
    fn searched(
        &self,
        term: &str,
        after: Option<&store_core::moderation::AdminCursor>,
        visit: &mut dyn FnMut(&str, &Object) -> std::ops::ControlFlow<()>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.searched(term, after, visit)
    }
    fn block(
        &self,
        block: &store_core::moderation::Block,
        event: Option<&store_core::events::Event>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.block(block, event)
    }
    fn blocked(
        &self,
        digests: &[store_core::digest::Sha256],
    ) -> store_core::ports::StorageResult<Option<store_core::moderation::Block>> {
        self.inner.blocked(digests)
    }
    fn report(
        &self,
        report: &store_core::moderation::Report,
        event: Option<&store_core::events::Event>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.report(report, event)
    }
    fn keep_events(&self, on: bool) {
        self.inner.keep_events(on)
    }
    fn claim_events(
        &self,
        now: store_core::Timestamp,
        lease_ms: u64,
        limit: usize,
    ) -> store_core::ports::StorageResult<Vec<store_core::events::Claimed>> {
        self.inner.claim_events(now, lease_ms, limit)
    }
    fn event_delivered(&self, seq: u64) -> store_core::ports::StorageResult<()> {
        self.inner.event_delivered(seq)
    }
    fn event_failed(
        &self,
        seq: u64,
        next: Option<store_core::Timestamp>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.event_failed(seq, next)
    }
    fn reports(
        &self,
        limit: usize,
    ) -> store_core::ports::StorageResult<Vec<store_core::moderation::Report>> {
        self.inner.reports(limit)
    }
    fn clear_report(&self, id: &str) -> store_core::ports::StorageResult<bool> {
        self.inner.clear_report(id)
    }
    fn blocks(&self) -> store_core::ports::StorageResult<Vec<store_core::moderation::Block>> {
        self.inner.blocks()
    }
    fn for_each(
        &self,
        visit: &mut dyn FnMut(&str, &Object) -> std::ops::ControlFlow<()>,
    ) -> StorageResult<()> {
        self.inner.for_each(visit)?;
        let hook = self.scan_hook.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        Ok(())
    }
    fn keeps_intents(&self) -> bool {
        self.inner.keeps_intents()
    }
    fn intend(&self, blob: &BlobId, until: Timestamp) -> StorageResult<()> {
        self.inner.intend(blob, until)
    }
    fn intended(&self, now: Timestamp) -> StorageResult<Vec<BlobId>> {
        self.inner.intended(now)
    }
}

/// A blob store whose deletes fail while `refusing` is set: a bucket that
/// answers errors to DELETE.
struct Refusing {
    inner: MemoryBlobStore,
    refusing: bool,
}

impl BlobStore for Refusing {
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        self.inner.create()
    }
    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        self.inner.create_with_id(id)
    }
    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        self.inner.open(id)
    }
    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        if self.refusing {
            return Err(StorageError::of(StorageErrorKind::Unavailable, "refused"));
        }
        self.inner.remove(id)
    }
    fn list(&self) -> StorageResult<Vec<BlobId>> {
        self.inner.list()
    }
    fn ping(&self) -> StorageResult<()> {
        self.inner.ping()
    }
    fn reads_wait(&self) -> bool {
        false
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

/// Two apps over one interleaving repository and one blob store.
struct Two {
    a: App,
    b: Arc<App>,
    repo: Arc<Interleaving>,
    clock: Arc<ManualClock>,
}

fn two(refusing_deletes: bool) -> Two {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let repo = Arc::new(Interleaving {
        inner: MemoryRepository::new(),
        hook: Mutex::new(None),
        scan_hook: Mutex::new(None),
    });
    let blobs = Arc::new(Refusing {
        inner: MemoryBlobStore::new(),
        refusing: refusing_deletes,
    });
    // One pool ledger, as processes sharing a store share it; locks of
    // their own, so that one app never waits for the other's.
    let limits = Limits::DEFAULT;
    let ledgers: Arc<dyn store_core::Ledgers> = Arc::new(store_core::local::LocalLedgers::new(
        store_core::pool::PoolLedger::new(limits.pool_bytes, 0),
        store_core::pool::PoolLedger::new(limits.pics_pool_bytes, 0),
    ));
    let open = |seed| {
        let ports = Ports {
            repo: repo.clone(),
            blobs: blobs.clone(),
            clock: clock.clone(),
            random: Arc::new(SeededRandom::new(seed)),
            fetcher: Arc::new(store_testkit::FakeFetcher::new()),
            coordination: Coordination::Shared {
                locks: Arc::new(store_core::local::StripedLocks::default()),
                ledgers: Arc::clone(&ledgers),
            },
        };
        App::open(ports, config(Limits::DEFAULT.pool_bytes))
            .unwrap()
            .0
    };
    Two {
        a: open(1),
        b: Arc::new(open(2)),
        repo,
        clock,
    }
}

impl Two {
    /// Runs `then` on the second app right after the first one's next
    /// read of a record it may write: its lock is lost at that moment.
    fn when_lost(&self, then: impl FnOnce(&App) + Send + 'static) {
        let b = Arc::clone(&self.b);
        *self.repo.hook.lock().unwrap() = Some(Box::new(move || then(&b)));
    }
}

/// A write to a text file, as either process may send it.
#[derive(Debug, Clone)]
enum Op {
    Append(u8),
    Tag,
    Delete,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u8>().prop_map(Op::Append),
        1 => Just(Op::Tag),
        1 => Just(Op::Delete),
    ]
}

fn line(n: u8, who: char) -> String {
    format!("{who}{n}\n")
}

/// Runs `op` by `who` on the file `id`: whether it was acknowledged.
fn run(app: &App, id: &str, op: &Op, who: char) -> bool {
    let access = Access::retain_only(RetainAuth::Absent);
    let done = match op {
        Op::Append(n) => app
            .append_file(id, line(*n, who).as_bytes(), &access)
            .map(drop),
        Op::Tag => app
            .tag_file(id, &[format!("t{who}")], &[], &access)
            .map(drop),
        Op::Delete => app.delete(id, &access),
    };
    match done {
        Ok(()) => true,
        // Refused: fenced (its lock was lost), or the file is gone.
        Err(AppError::Storage(e)) => {
            assert_eq!(e.kind, StorageErrorKind::Conflict, "{e}");
            false
        }
        Err(AppError::Domain(e)) => {
            assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
            false
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Whatever two writers do to one text file, and whether or not the
    /// first one's lock is lost while it works: every acknowledged append
    /// is in the file exactly once, an acknowledged delete is final, and
    /// of two writers that overlapped only one is acknowledged. Deletes of
    /// bytes that fail never fail a write.
    #[test]
    fn fenced_writers_lose_nothing_acknowledged(
        first in op(),
        second in op(),
        lost in any::<bool>(),
        refusing_deletes in any::<bool>(),
    ) {
        let t = two(refusing_deletes);
        let id = put_plain(&t.a, "log.txt", b"start\n").record.id;
        let acked_second = Arc::new(Mutex::new(None));
        let run_second = {
            let (id, second, acked) = (id.clone(), second.clone(), Arc::clone(&acked_second));
            move |b: &App| *acked.lock().unwrap() = Some(run(b, &id, &second, 'b'))
        };
        let acked_first = if lost {
            t.when_lost(run_second);
            run(&t.a, &id, &first, 'a')
        } else {
            let acked = run(&t.a, &id, &first, 'a');
            run_second(&t.b);
            acked
        };
        let acked_second = acked_second.lock().unwrap().expect("the second writer ran");
        let deleted = matches!((&first, acked_first), (Op::Delete, true))
            || matches!((&second, acked_second), (Op::Delete, true));
        let content = read(&t.a, &id).ok().map(|b| String::from_utf8(b).unwrap());
        prop_assert_eq!(content.is_none(), deleted, "a delete is final, and only a delete removes");
        let content = content.unwrap_or_default();
        for (op, acked, who) in [(&first, acked_first, 'a'), (&second, acked_second, 'b')] {
            if let (Op::Append(n), false) = (op, deleted) {
                let times = content.matches(&line(*n, who)).count();
                prop_assert_eq!(times, usize::from(acked), "{:?} by {}: {:?}", op, who, content);
            }
        }
        if lost {
            // The second wrote while the first held a record it had read:
            // the first's write cannot have landed over it.
            prop_assert!(!(acked_first && acked_second), "both overlapping writes acknowledged");
        }
    }

    /// A once file is served at most once in total, whether or not the
    /// first reader's lock is lost while it reads, and served at all when
    /// the bytes' delete fails.
    #[test]
    fn a_once_file_is_served_at_most_once(lost in any::<bool>(), refusing_deletes in any::<bool>()) {
        let t = two(refusing_deletes);
        let req = NewFile { once: true, ..NewFile::default() };
        let id = put_file(&t.a, "once.txt", b"secret", req, RetainAuth::Absent).record.id;
        let second = Arc::new(Mutex::new(None));
        let read_second = {
            let (id, second) = (id.clone(), Arc::clone(&second));
            move |b: &App| *second.lock().unwrap() = Some(read(b, &id).is_ok())
        };
        let first = if lost {
            t.when_lost(read_second);
            read(&t.a, &id)
        } else {
            let first = read(&t.a, &id);
            read_second(&t.b);
            first
        };
        let second = second.lock().unwrap().expect("the second reader ran");
        if let Ok(bytes) = &first {
            prop_assert_eq!(bytes.as_slice(), b"secret");
        }
        let served = usize::from(first.is_ok()) + usize::from(second);
        prop_assert_eq!(served, 1, "served once in total (first: {:?})", first.map(drop));
    }
}

/// Promise: bytes in flight are never collected, however long the
/// collection takes. An upload on one process commits its bytes before
/// another process's collection lists the bucket, and writes its record
/// while that collection reads the records, by then long after the
/// upload's intent ran out: the collection, which read the intents
/// between the listing and the records, keeps the bytes.
#[test]
fn a_slow_collection_spares_bytes_recorded_while_it_reads() {
    let t = two(false);
    let mut upload = t.b.begin_upload(1_000).unwrap();
    upload.push(b"in flight").unwrap();
    let staged = upload.finish().unwrap();
    let (b, clock) = (Arc::clone(&t.b), Arc::clone(&t.clock));
    let recorded = Arc::new(Mutex::new(None));
    let id = Arc::clone(&recorded);
    *t.repo.scan_hook.lock().unwrap() = Some(Box::new(move || {
        clock.advance_secs(3 * crate::orphans::INTENT_LEASE_SECS);
        let req = NewFile {
            name: Some("late.txt".into()),
            ..NewFile::default()
        };
        let view = b.create_file(&req, staged, RetainAuth::Absent).unwrap();
        *id.lock().unwrap() = Some(view.record.id);
    }));
    // The collection's first run spares what this process noted: only the
    // other process's upload is at stake.
    let report = t.a.collect_orphans(&AtomicBool::new(false)).unwrap();
    assert_eq!(report.removed, 0, "{report:?}");
    let id = recorded.lock().unwrap().take().expect("the hook ran");
    assert_eq!(read(&t.a, &id).unwrap(), b"in flight");
}
