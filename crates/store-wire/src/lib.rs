//! # store-wire
//!
//! The wire contract of storesrv, as pure functions and data: what a
//! request means and what an answer looks like, with no I/O and no
//! runtime (no tokio, no hyper server, no storage). store-http, the
//! server, reads requests off connections, asks this crate what they mean
//! ([`router::route`]), runs the use case of store-app, and asks this crate
//! again how to say the outcome ([`views`], [`pages`]).
//!
//! - [`routes`]: every route as data, the one table the router, `/api`,
//!   `/help`, `/openapi.json`, the metrics' route names and every URL the
//!   service builds ([`router::url_for`]) are read from.
//! - [`router`] and [`query`]: method, path and query string to an
//!   [`router::Endpoint`], and malformed values to a 400.
//! - [`params`]: each endpoint's parameters, typed, read once by name
//!   here so that no handler reads one.
//! - [`negotiate`]: agent or browser.
//! - [`views`]: every JSON answer, each with its JSON Schema.
//! - [`pages`], [`assets`] and [`qr`]: the HTML for people, its stylesheet
//!   and script, and the QR codes of shared links.
//! - [`api`], [`help`] and [`openapi`]: the self-description.
//! - [`mcp`]: the Model Context Protocol at `POST /mcp`, its tools made
//!   from the route table.
//!
//! Architecture invariant (scripts/check-invariants.sh): this crate
//! depends on no runtime, no server and no storage adapter, and no other
//! crate spells a route's path.

#![warn(missing_docs)]

pub mod api;
pub mod assets;
pub mod body_head;
pub mod client;
pub mod credentials;
pub mod disposition;
pub mod gate;
pub mod headers;
pub mod help;
pub mod mcp;
pub mod metrics;
pub mod negotiate;
pub mod openapi;
pub mod pages;
pub mod params;
pub mod part_headers;
pub mod qr;
pub mod query;
pub mod ranges;
pub mod raw;
pub mod router;
pub mod routes;
pub mod strict;
pub mod tus;
pub mod views;

pub use api::{contract, SPEC_VERSION};
