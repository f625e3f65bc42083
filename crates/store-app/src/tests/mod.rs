//! Use-case tests over the in-memory ports and a manual clock: the shared
//! world and helpers here, one module per concern.

use std::io::Read;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use proptest::prelude::*;
use store_core::{ErrorCode, FileRecord, Limits, ReadIntent, RetainAuth, RetainTokens, Timestamp};
use store_testkit::{ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};

use super::*;

const T0: i64 = 1_795_359_845;

struct World {
    app: App,
    clock: Arc<ManualClock>,
    blobs: Arc<MemoryBlobStore>,
    repo: Arc<MemoryRepository>,
}

fn world_with(pool_bytes: u64) -> World {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let blobs = Arc::new(MemoryBlobStore::new());
    let repo = Arc::new(MemoryRepository::new());
    let (app, _) = App::open(ports(&clock, &blobs, &repo), config(pool_bytes)).unwrap();
    World {
        app,
        clock,
        blobs,
        repo,
    }
}

fn ports(
    clock: &Arc<ManualClock>,
    blobs: &Arc<MemoryBlobStore>,
    repo: &Arc<MemoryRepository>,
) -> Ports {
    Ports {
        repo: repo.clone(),
        blobs: blobs.clone(),
        clock: clock.clone(),
        random: Arc::new(SeededRandom::new(42)),
        fetcher: Arc::new(store_testkit::FakeFetcher::new()),
        coordination: Default::default(),
    }
}

fn config(pool_bytes: u64) -> AppConfig {
    AppConfig {
        limits: Limits {
            pool_bytes,
            ..Limits::default()
        },
        retain_tokens: RetainTokens::from_csv("secret"),
        ..AppConfig::new("http://test")
    }
}

fn world() -> World {
    world_with(store_core::Limits::DEFAULT.pool_bytes)
}

fn upload(app: &App, bytes: &[u8]) -> Staged {
    let mut u = app
        .begin_upload(app.config().limits.file_bytes_max)
        .unwrap();
    u.push(bytes).unwrap();
    u.finish().unwrap()
}

fn put_file(
    app: &App,
    name: &str,
    bytes: &[u8],
    req: NewFile,
    auth: RetainAuth,
) -> Created<FileRecord> {
    let req = NewFile {
        name: Some(name.into()),
        ..req
    };
    app.create_file(&req, upload(app, bytes), auth).unwrap()
}

/// A file uploaded with no parameters and no token.
fn put_plain(app: &App, name: &str, bytes: &[u8]) -> Created<FileRecord> {
    put_file(app, name, bytes, NewFile::default(), RetainAuth::Absent)
}

/// Seconds the file has left as the use case saw it: the `expires_in`
/// an answer shows.
fn expires_in(v: &Created<FileRecord>) -> Option<u64> {
    v.lifetime.expires_at().map(|at| v.now.secs_until(at))
}

fn read(app: &App, id: &str) -> AppResult<Vec<u8>> {
    let Opened::File(mut d) = app.read(id, ReadIntent::Get, &crate::ReadKey::NONE)? else {
        panic!("{id} is not a single file");
    };
    let mut out = vec![];
    d.reader.read_to_end(&mut out).unwrap();
    Ok(out)
}

fn code(r: AppResult<impl std::fmt::Debug>) -> ErrorCode {
    match r {
        Err(AppError::Domain(e)) => e.code(),
        other => panic!("expected a domain error, got {other:?}"),
    }
}

mod containers;
mod diskcache;
mod fenced;
mod fetched;
mod files;
mod imports;
mod model;
mod moderation;
mod owners;
mod pics;
mod resumable;
mod upkeep;

/// Memory blobs that say their reads wait, as a bucket's do.
#[derive(Debug)]
struct Remote(Arc<MemoryBlobStore>, std::sync::atomic::AtomicUsize);

impl Remote {
    fn new(memory: Arc<MemoryBlobStore>) -> Self {
        Self(memory, Default::default())
    }

    /// Blobs opened so far, whole or in part.
    fn opens(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl store_core::ports::BlobStore for Remote {
    fn create(&self) -> store_core::ports::StorageResult<Box<dyn store_core::ports::BlobWriter>> {
        self.0.create()
    }
    fn create_with_id(
        &self,
        id: &store_core::BlobId,
    ) -> store_core::ports::StorageResult<Box<dyn store_core::ports::BlobWriter>> {
        self.0.create_with_id(id)
    }
    fn open(
        &self,
        id: &store_core::BlobId,
    ) -> store_core::ports::StorageResult<Box<dyn store_core::ports::BlobReader>> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.open(id)
    }
    fn remove(&self, id: &store_core::BlobId) -> store_core::ports::StorageResult<()> {
        self.0.remove(id)
    }
    fn list(&self) -> store_core::ports::StorageResult<Vec<store_core::BlobId>> {
        self.0.list()
    }
    fn ping(&self) -> store_core::ports::StorageResult<()> {
        self.0.ping()
    }
    fn reads_wait(&self) -> bool {
        true
    }
    fn stages(&self) -> bool {
        false
    }
    fn stage(&self) -> store_core::ports::StorageResult<store_core::resumable::Staging> {
        self.0.stage()
    }
    fn resume(
        &self,
        staging: &store_core::resumable::Staging,
        offset: u64,
    ) -> store_core::ports::StorageResult<Box<dyn store_core::ports::StagedWriter>> {
        self.0.resume(staging, offset)
    }
    fn discard(
        &self,
        staging: &store_core::resumable::Staging,
    ) -> store_core::ports::StorageResult<()> {
        self.0.discard(staging)
    }
}
