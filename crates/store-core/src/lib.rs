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
//! [`ports::Random`] port. It depends on serde, serde_json (a webhook's
//! body), thiserror, sha2 and hmac (token digests, webhook signatures),
//! base64 (webhook secrets), unicode-normalization (names) and schemars (the schema
//! of the error list `/api` shows); CI checks that tokio, hyper, sled and
//! image stay out of its tree.
//!
//! ## Start here
//!
//! Every rule takes the time it applies at, so a test (or a property-test
//! harness; see `examples/expiry_properties.rs`) drives it with any clock
//! it likes. A file's lifetime and a dir's sliding one:
//!
//! ```
//! use store_core::{ttl, Lifetime, Limits, Timestamp};
//!
//! let limits = Limits::DEFAULT;
//! let hour_secs = 3600;
//! // No ttl asked for: a file gets the default, four hours. A minute is
//! // raised to the four-hour minimum.
//! assert_eq!(ttl::file_ttl(&limits, None), 4 * hour_secs);
//! assert_eq!(ttl::file_ttl(&limits, Some(60)), 4 * hour_secs);
//! assert_eq!(ttl::parse_ttl("2d")?, 48 * hour_secs);
//!
//! let now = Timestamp::from_secs(1_800_000_000);
//! let file = Lifetime::fixed(now, 4 * hour_secs);
//! assert!(file.is_live(now.plus_secs(4 * hour_secs - 1)));
//! assert!(!file.is_live(now.plus_secs(4 * hour_secs)));
//!
//! // A dir's lifetime slides: each write pushes its expiry on by its ttl,
//! // never past a cap (30 days from the write, by default).
//! let mut dir = Lifetime::sliding(now, 4 * hour_secs);
//! dir.slide(now.plus_secs(3 * hour_secs), limits.dir_sliding_cap_secs);
//! assert_eq!(dir.expires_at(), Some(now.plus_secs(8 * hour_secs)));
//! # Ok::<(), store_core::StoreError>(())
//! ```

#![warn(missing_docs)]

pub mod auth;
pub mod blob;
pub mod container;
pub mod content;
pub mod digest;
pub mod drops;
pub mod encryption;
pub mod error;
pub mod events;
pub mod gallery;
pub mod ids;
pub mod import;
pub mod lifetime;
pub mod limits;
pub mod local;
pub mod moderation;
pub mod names;
pub mod password;
pub mod pool;
pub mod ports;
pub mod ratelimit;
pub mod record;
pub mod requests;
pub mod resumable;
pub mod time;
pub mod ttl;

pub use auth::{Owner, OwnerProof, RetainAuth, RetainTokens, UploadToken};
pub use container::{BundleRecord, DirAction, DirRecord, DirWrite, HistoryEntry, MemberFile};
pub use encryption::Encryption;
pub use error::{ErrorCode, StoreError};
pub use lifetime::Lifetime;
pub use limits::{Limits, ServerLimits};
pub use pool::Totals;
pub use ports::{
    BlobReader, BlobStore, BlobWriter, Clock, FetchError, Fetched, Fetcher, KeyLocks, Ledgers,
    LockGuard, Pool, PoolUsage, Random, RateLimits, Repository, Rev, Settled, StorageError,
    StorageErrorKind, TryLocked,
};
pub use record::{
    dir_storage_key, BlobId, FileRecord, Listing, Object, ObjectKind, ReadDecision, ReadIntent,
    Thumbs,
};
pub use time::Timestamp;
