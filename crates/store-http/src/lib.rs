//! # store-http
//!
//! The HTTP shell of storesrv over raw hyper 1.x: a pure route table
//! ([`router`]), agent/browser negotiation, bodies streamed with their
//! limits enforced, JSON and HTML rendering, errors as SPEC.md's JSON, and
//! the server loop with graceful shutdown. The store's upkeep (sweeper,
//! orphan collection) is store-app's: `App::start_upkeep`.
//!
//! Architecture invariant: this crate decides no domain rule. It parses,
//! calls a use case of store-app, and renders what comes back.

mod api;
mod assets;
pub mod body;
pub mod client;
mod deadline;
mod fair;
mod handlers;
mod help;
pub mod lanes;
mod metrics;
mod negotiate;
mod openapi;
mod pages;
mod partguard;
mod qr;
pub mod query;
mod ranges;
mod respond;
pub mod router;
pub mod routes;
mod server;
mod stream;
mod views;
mod zip;

pub use api::{contract, SPEC_VERSION};
pub use metrics::{serve_metrics, CommitStats, Metrics, METRICS_CONTENT_TYPE};
pub use respond::content_disposition;
pub use server::{serve, BodyPace, ServeOptions};
