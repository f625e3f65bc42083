//! An in-process server for store-http's own tests: the real server loop
//! on 127.0.0.1, over an `App` on memory ports with a manual clock, so that
//! a test may set any limit or option the binary's flags do not reach.

use std::net::SocketAddr;
use std::sync::Arc;

use store_app::{App, AppConfig, Ports};
use store_core::{Limits, Timestamp};
use store_http::ServeOptions;
use store_testkit::{FakeFetcher, ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};

/// A client that reads every status as an answer (no error for 4xx and
/// 5xx), follows no redirect and ignores proxies from the environment.
#[allow(dead_code)] // connections.rs speaks raw TCP instead.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .max_redirects(0)
        .build()
        .into()
}

/// A runtime like the server's, small.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// An app on memory ports and a manual clock, its URLs under `base_url`.
pub fn app(base_url: &str, limits: Limits) -> App {
    let ports = Ports {
        repo: Arc::new(MemoryRepository::new()),
        blobs: Arc::new(MemoryBlobStore::new()),
        clock: Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000))),
        random: Arc::new(SeededRandom::new(9)),
        fetcher: Arc::new(FakeFetcher::new()),
        coordination: Default::default(),
    };
    let config = AppConfig {
        limits,
        ..AppConfig::new(base_url)
    };
    App::open(ports, config).unwrap().0
}

/// Serves with `limits` and `options` until the runtime is dropped, and
/// answers the bound address (the base URL is `http://<it>`).
#[allow(dead_code)] // Not every test file starts the whole server.
pub fn start(limits: Limits, options: ServeOptions) -> (SocketAddr, tokio::runtime::Runtime) {
    let rt = runtime();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = app(&format!("http://{addr}"), limits);
    rt.spawn(store_http::serve(
        listener,
        Arc::new(app),
        options,
        std::future::pending(),
    ));
    (addr, rt)
}
