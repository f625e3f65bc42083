//! # store-http
//!
//! The HTTP server of storesrv over raw hyper 1.x: connections and their
//! guards, fair shares and lanes, bodies streamed with their limits
//! enforced, deadlines, ranges, zips, metrics, and the handlers, which
//! glue three things together: `store_wire` says what a request means
//! (the route table, typed query parsing, negotiation) and how an answer
//! looks (views, pages), store-app runs the use case, and this crate moves
//! the bytes. The store's upkeep (sweeper, orphan collection) is
//! store-app's: `App::start_upkeep`.
//!
//! Architecture invariant: this crate decides no domain rule and holds no
//! wire rule. It reads, calls a use case of store-app, and writes what
//! store-wire renders.
//!
//! ## Start here
//!
//! Two ways to serve an [`store_app::App`]:
//!
//! - [`serve`] runs the whole server on a listener of its own, with the
//!   per-connection guards of docs/RELIABILITY.md, until a future
//!   resolves. The storesrv binary does this.
//! - [`StoreService`] is the request handler alone, a hyper `Service`, for
//!   a host server that accepts its own connections and may mount it under
//!   a path such as `/files` (`examples/mounted.rs`).
//!
//! Neither starts the sweeper or the orphan collection:
//! `App::start_upkeep` does, if the caller wants it.
//!
//! ```
//! # fn app(base_url: String) -> store_app::App {
//! #     use std::sync::Arc;
//! #     use store_testkit::*;
//! #     let ports = store_app::Ports {
//! #         repo: Arc::new(MemoryRepository::new()),
//! #         blobs: Arc::new(MemoryBlobStore::new()),
//! #         clock: Arc::new(ManualClock::new(store_core::Timestamp::from_secs(1_800_000_000))),
//! #         random: Arc::new(SeededRandom::new(1)),
//! #         fetcher: Arc::new(FakeFetcher::new()),
//! #         coordination: Default::default(),
//! #     };
//! #     store_app::App::open(ports, store_app::AppConfig::new(base_url)).unwrap().0
//! # }
//! use std::sync::Arc;
//! use store_http::{serve, ServeOptions};
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! // The base URL prefixes every URL the service answers with.
//! let app = Arc::new(app(format!("http://{}", listener.local_addr()?)));
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let server = tokio::spawn(serve(listener, app, ServeOptions::default(), async {
//!     let _ = stopped.await;
//! }));
//! // ...serve until it is time to stop, then let requests in flight finish.
//! let _ = stop.send(());
//! server.await??;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

// body is public for a fuzz target (fuzz/), not for embedders: hidden
// from the docs, free to change. The route table, router and query
// parsing are store-wire's public API.
#[doc(hidden)]
pub mod body;
// Who the client is, read from the peer and X-Forwarded-For, is a wire
// rule and lives in store-wire; the binary names it through this crate.
pub use store_wire::client;
mod deadline;
mod fair;
mod handlers;
pub mod lanes;
mod linger;
mod metrics;
mod partguard;
mod refusals;
mod respond;
mod server;
mod service;
mod shared;
mod stream;
mod zip;

pub use metrics::serve_metrics;
pub use respond::{content_disposition, Res, ResBody};
pub use server::serve;
pub use service::{MountError, PeerAddr, StoreService};
pub use shared::ServeOptions;
pub use store_wire::metrics::{CommitStats, Metrics, METRICS_CONTENT_TYPE};
pub use store_wire::{contract, SPEC_VERSION};
