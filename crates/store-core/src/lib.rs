//! # store-core
//!
//! The pure domain of storesrv: records and their lifetimes, naming rules,
//! `ttl`, the state machines of SPEC.md (expiry, burn after reading, sliding
//! lifetime, retention, write gates), limits, errors, and the ports the
//! adapters plug into. How records look on the wire (URLs, JSON fields) is
//! not here: that is store-http's `views`.
//!
//! Architecture invariant: this crate performs no I/O and never reads the
//! clock. Time arrives as a [`Timestamp`] argument, randomness through the
//! [`ports::Random`] port. It depends on serde, thiserror, sha2 and hmac
//! (token digests), unicode-normalization (names) and schemars (the schema
//! of the error list `/api` shows); CI checks that tokio, hyper, sled and
//! image stay out of its tree.

pub mod auth;
pub mod container;
pub mod content;
pub mod error;
pub mod gallery;
pub mod ids;
pub mod import;
pub mod lifetime;
pub mod limits;
pub mod local;
pub mod names;
pub mod pool;
pub mod ports;
pub mod ratelimit;
pub mod record;
pub mod time;
pub mod ttl;

pub use auth::{Owner, OwnerProof, RetainAuth, RetainTokens, UploadToken};
pub use container::{BundleRecord, DirAction, DirRecord, DirWrite, HistoryEntry, MemberFile};
pub use error::{ErrorCode, StoreError};
pub use lifetime::Lifetime;
pub use limits::Limits;
pub use pool::Totals;
pub use ports::{
    BlobReader, BlobStore, BlobWriter, Clock, FetchError, Fetched, Fetcher, KeyLocks, Ledgers,
    LockGuard, Pool, PoolUsage, Random, RateLimits, Repository, Settled, StorageError,
    StorageErrorKind, TryLocked,
};
pub use record::{
    dir_storage_key, BlobId, FileRecord, Listing, Object, ObjectKind, ReadDecision, ReadIntent,
    Thumbs,
};
pub use time::Timestamp;
