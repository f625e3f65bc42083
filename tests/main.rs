//! The integration tests of storesrv, one crate: each module starts the
//! real `storesrv` binary (`common::Server`) on 127.0.0.1:0, as CONTRACT.md
//! says an outside suite does, and speaks HTTP to it. One crate instead of
//! one binary per file: the harness is compiled once, and cargo-nextest
//! runs every test in a process of its own (scripts/test).
//!
//! `STORE_TEST_BACKEND` picks the store the servers run on (`sled`, the
//! default; `postgres`; `cluster`: two processes over PostgreSQL and
//! Garage). The fault suite (`faults`) starts clusters of its own and runs
//! once, in a step of its own (`-E 'test(/^faults::/)'`).

mod common;

mod abuse;
mod admin;
mod browser;
mod cluster;
mod containers;
mod crash;
mod drops;
mod faults;
mod hostile;
mod import;
mod mcp;
mod migrate;
mod pages;
mod passwords;
mod pics;
mod private;
mod scanning;
mod selfdesc;
mod server;
mod single_files;
mod tus;
mod webhooks;
