//! Multipart bodies of any shape: no panic, every file part within its
//! limit, never more parts than allowed, and nothing left behind when the
//! body is refused.
#![no_main]
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use store_app::{App, AppConfig, Ports};
use store_core::Timestamp;
use store_testkit::{FakeFetcher, ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};

const FILE_LIMIT: u64 = 64;
const FILES_MAX: usize = 3;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap())
}

fuzz_target!(|data: &[u8]| {
    let blobs = Arc::new(MemoryBlobStore::new());
    let ports = Ports {
        repo: Arc::new(MemoryRepository::new()),
        blobs: blobs.clone(),
        clock: Arc::new(ManualClock::new(Timestamp::EPOCH)),
        random: Arc::new(SeededRandom::new(1)),
        fetcher: Arc::new(FakeFetcher::new()),
        coordination: Default::default(),
    };
    let config = AppConfig::new("http://f");
    let (app, _) = App::open(ports, config).unwrap();
    let intake = store_http::body::Intake::unhurried(Arc::new(app));
    let body = bytes::Bytes::copy_from_slice(data);
    let stream = futures_stream(body);
    let rules = store_http::body::PartRules::new(FILE_LIMIT, FILES_MAX, &store_core::ServerLimits::DEFAULT);
    let result = runtime().block_on(store_http::body::read_multipart(&intake, stream, "XyZ".into(), rules));
    match result {
        Ok(mp) => {
            assert!(mp.files.len() <= FILES_MAX);
            assert!(mp.files.iter().all(|p| p.body.size() <= FILE_LIMIT));
            drop(mp);
        }
        Err(_) => {}
    }
    assert_eq!(blobs.count(), 0, "staged parts are removed once dropped");
});

/// A one-chunk stream without pulling in a stream utility crate.
fn futures_stream(b: bytes::Bytes) -> OneChunk {
    OneChunk(Some(b))
}

struct OneChunk(Option<bytes::Bytes>);

impl futures_core_shim::Stream for OneChunk {
    type Item = Result<bytes::Bytes, std::io::Error>;
    fn poll_next(mut self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Option<Self::Item>> {
        std::task::Poll::Ready(self.0.take().map(Ok))
    }
}

use futures_core as futures_core_shim;
