use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use store_core::ports::{BlobReader, BlobWriter, StagedWriter};
use store_core::resumable::Staging;
use store_testkit::suite::{sample_dir, sample_file};
use store_testkit::{MemoryBlobStore, MemoryRepository};

use super::*;

/// A memory store: records and bytes.
struct Store {
    repo: MemoryRepository,
    blobs: Arc<MemoryBlobStore>,
}

impl Store {
    fn new() -> Self {
        Self {
            repo: MemoryRepository::new(),
            blobs: Arc::new(MemoryBlobStore::new()),
        }
    }

    fn side(&self) -> Side<'_> {
        Side {
            repo: &self.repo,
            blobs: self.blobs.as_ref(),
        }
    }

    /// A file record under `key` whose bytes are `body`.
    fn file(&self, key: &str, body: &[u8]) -> Object {
        let mut w = self.blobs.create().unwrap();
        w.write(body).unwrap();
        let blob = w.commit().unwrap();
        let Object::File(mut f) = sample_file(key, Some(100), &[]) else {
            unreachable!()
        };
        f.blob = blob;
        f.size = body.len() as u64;
        let obj = Object::File(f);
        self.repo.put(key, &obj).unwrap();
        obj
    }

    fn bytes(&self, id: &BlobId) -> Vec<u8> {
        let mut out = vec![];
        self.blobs.open(id).unwrap().read_to_end(&mut out).unwrap();
        out
    }
}

/// A source of three files (one whose bytes are lost) and a dir.
fn source() -> Store {
    let s = Store::new();
    s.file("a", b"alpha");
    s.file("b", b"bravo bravo");
    let lost = s.file("c", b"charlie");
    s.blobs.remove(lost.blobs()[0]).unwrap();
    s.repo.put("d/x", &sample_dir("x", true)).unwrap();
    s
}

#[test]
fn everything_moves_with_its_ids_and_a_second_run_copies_nothing() {
    let (from, to) = (source(), Store::new());
    let report = migrate(from.side(), to.side()).unwrap();
    assert_eq!(
        (
            report.records,
            report.records_copied,
            report.records_present
        ),
        (4, 4, 0)
    );
    assert_eq!(
        (report.blobs, report.blobs_copied, report.blobs_missing),
        (3, 2, 1)
    );
    assert_eq!(report.blob_bytes, 5 + 11);
    assert_eq!(report.pool_bytes, 5 + 11 + 7, "the lost file still counts");
    from.repo
        .for_each(&mut |key, obj| {
            assert_eq!(to.repo.get(key).unwrap().as_ref(), Some(obj), "{key}");
            ControlFlow::Continue(())
        })
        .unwrap();
    let a = from.repo.get("a").unwrap().unwrap();
    assert_eq!(to.bytes(a.blobs()[0]), b"alpha", "bytes under the same id");

    let again = migrate(from.side(), to.side()).unwrap();
    assert_eq!((again.records_copied, again.records_present), (0, 4));
    assert_eq!((again.blobs_copied, again.blobs_present), (0, 2));
    assert_eq!(again.blob_bytes, report.blob_bytes);
}

/// The target's bytes, failing or losing bytes as told.
struct Faulty {
    inner: Arc<MemoryBlobStore>,
    /// Commits left before every commit fails.
    commits_left: AtomicUsize,
    /// Whether each blob loses its last byte on the way.
    truncate: bool,
}

impl Faulty {
    fn new(inner: &Arc<MemoryBlobStore>, commits_left: usize, truncate: bool) -> Self {
        Self {
            inner: Arc::clone(inner),
            commits_left: AtomicUsize::new(commits_left),
            truncate,
        }
    }
}

struct FaultyWriter<'a> {
    inner: Box<dyn BlobWriter>,
    store: &'a Faulty,
    held: Vec<u8>,
}

impl BlobWriter for FaultyWriter<'static> {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        self.held.extend_from_slice(chunk);
        Ok(())
    }

    fn commit(mut self: Box<Self>) -> StorageResult<BlobId> {
        let left = self.store.commits_left.load(Ordering::SeqCst);
        if left == 0 {
            return Err(StorageError::new("the disk went away"));
        }
        self.store.commits_left.store(left - 1, Ordering::SeqCst);
        if self.store.truncate {
            self.held.pop();
        }
        self.inner.write(&self.held)?;
        self.inner.commit()
    }
}

impl BlobStore for &'static Faulty {
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        unreachable!("a move keeps ids")
    }

    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        Ok(Box::new(FaultyWriter {
            inner: self.inner.create_with_id(id)?,
            store: self,
            held: vec![],
        }))
    }

    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        self.inner.open(id)
    }

    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        self.inner.remove(id)
    }

    fn list(&self) -> StorageResult<Vec<BlobId>> {
        self.inner.list()
    }

    fn ping(&self) -> StorageResult<()> {
        Ok(())
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

fn leak(f: Faulty) -> &'static Faulty {
    Box::leak(Box::new(f))
}

#[test]
fn a_move_that_fails_midway_completes_when_run_again() {
    let (from, to) = (source(), Store::new());
    let failing = leak(Faulty::new(&to.blobs, 1, false));
    let side = Side {
        repo: &to.repo,
        blobs: &failing,
    };
    let err = migrate(from.side(), side).unwrap_err();
    assert!(err.message.contains("went away"), "{err}");
    assert_eq!(
        to.repo.get("a").unwrap(),
        from.repo.get("a").unwrap(),
        "a moved"
    );
    assert_eq!(
        to.repo.get("b").unwrap(),
        None,
        "no record before its bytes"
    );

    let report = migrate(from.side(), to.side()).unwrap();
    assert_eq!((report.records_copied, report.records_present), (3, 1));
    assert_eq!((report.blobs_copied, report.blobs_present), (1, 1));
}

#[test]
fn the_check_fails_when_the_target_lost_bytes() {
    let (from, to) = (source(), Store::new());
    let lossy = leak(Faulty::new(&to.blobs, usize::MAX, true));
    let side = Side {
        repo: &to.repo,
        blobs: &lossy,
    };
    let err = migrate(from.side(), side).unwrap_err();
    assert!(err.message.contains("check after the move failed"), "{err}");
    assert!(err.message.contains("is short"), "{err}");
}

#[test]
fn a_record_changed_in_the_target_is_kept() {
    let (from, to) = (source(), Store::new());
    let newer = to.file("a", b"newer bytes");
    let report = migrate(from.side(), to.side()).unwrap();
    assert_eq!(report.records_changed, 1);
    assert_eq!(to.repo.get("a").unwrap(), Some(newer), "never overwritten");
    assert_eq!(
        report.blob_bytes, 11,
        "only the bytes of records moved as they are"
    );
}

#[test]
fn an_upload_in_progress_stays_behind() {
    let from = Store::new();
    from.file("a", b"alpha");
    let staging = from.blobs.stage().unwrap();
    let upload = store_core::resumable::UploadRecord::new(
        "u".into(),
        10,
        store_core::requests::NewFile::default(),
        store_core::Owner::new("t", false),
        staging,
        store_core::Timestamp::from_secs(1),
    );
    from.repo.put("u", &Object::Upload(upload)).unwrap();
    let to = Store::new();
    let report = migrate(from.side(), to.side()).unwrap();
    assert_eq!((report.records, report.uploads_left), (1, 1));
    assert!(to.repo.get("a").unwrap().is_some());
    assert!(
        to.repo.get("u").unwrap().is_none(),
        "its client starts it again"
    );
}
