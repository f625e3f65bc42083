//! An in-process server for store-http's own tests: the real server loop
//! on 127.0.0.1, over an `App` on memory ports with a manual clock, so that
//! a test may set any limit or option the binary's flags do not reach.

use std::net::SocketAddr;
use std::sync::Arc;

use store_app::{App, AppConfig, Ports};
use store_core::{Limits, Timestamp};
use store_http::ServeOptions;
use store_testkit::{FakeFetcher, ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};

/// Serves with `limits` and `options` until the runtime is dropped, and
/// answers the bound address (the base URL is `http://<it>`).
pub fn start(limits: Limits, options: ServeOptions) -> (SocketAddr, tokio::runtime::Runtime) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ports = Ports {
        repo: Arc::new(MemoryRepository::new()),
        blobs: Arc::new(MemoryBlobStore::new()),
        clock: Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000))),
        random: Arc::new(SeededRandom::new(9)),
        fetcher: Arc::new(FakeFetcher::new()),
        coordination: Default::default(),
    };
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let config = AppConfig {
        limits,
        ..AppConfig::new(format!("http://{addr}"))
    };
    let (app, _) = App::open(ports, config).unwrap();
    rt.spawn(store_http::serve(
        listener,
        Arc::new(app),
        options,
        std::future::pending(),
    ));
    (addr, rt)
}
