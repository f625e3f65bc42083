//! storesrv's bytes in an S3-compatible object store (Garage, MinIO, AWS
//! S3), so that several processes on several machines serve one store.
//!
//! [`S3Blobs`] is a [`BlobStore`]: the same port, and the same conformance
//! suite, as the local files of store-sled. Its shape:
//!
//! - Each blob is one object, `<prefix>/blobs/<id>`, with an id minted
//!   here from 128 random bits. Nothing relies on conditional writes (Garage
//!   ignores `If-None-Match` on PUT): an id is unique because it is random,
//!   and a record that points at it lives in the database.
//! - Bytes stream in: a writer holds at most one part ([`S3Config::part_bytes`])
//!   in memory, a body that fits in one part is one PUT, and a larger one a
//!   multipart upload whose parts go out as they fill. A resumable upload's
//!   PATCH holds at most two parts (`staged.rs`).
//! - Bytes stream out, from an offset when a range is asked for.
//! - A resumable upload's bytes (staged.rs) are a multipart upload that
//!   any process goes on with: its parts' ETags live in the upload's
//!   record, and the bytes short of a part wait under `<prefix>/staging/`.
//! - The bucket is listed by [`BlobStore::list`] alone, which only the
//!   orphan collection calls, once per pass.
//! - `<prefix>/storesrv` is a marker object written at start: it proves the
//!   credentials may write, and [`BlobStore::ping`] reads its metadata to
//!   tell whether the bucket can be reached.
//!
//! The client is `object_store` on a runtime of this crate's own
//! ([`store_bridge::Bridge`]); the port is synchronous and called from
//! blocking threads.
//!
//! ## Start here
//!
//! `S3Blobs::connect` takes an [`S3Config`] (endpoint, bucket, region,
//! keys, an optional key prefix) and a source of randomness for blob ids,
//! and goes in `Ports::blobs`. Processes that share a bucket share their
//! records too (store-pg), so that each knows which blobs are referenced.
//! The storesrv binary's `bins/storesrv/src/stores.rs` shows the wiring;
//! the conformance suite runs against Garage (`STORE_TEST_S3_*`).

mod reader;
mod staged;
mod writer;

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};
use store_bridge::Bridge;
use store_core::ports::{BlobReader, BlobStore, BlobWriter, Random, StagedWriter, StorageResult};
use store_core::resumable::Staging;
use store_core::{BlobId, StorageError, StorageErrorKind};

pub use reader::S3Reader;

/// The part size of multipart uploads unless configured: the smallest
/// part S3 accepts (every part but the last must be at least this big).
pub const PART_BYTES_DEFAULT: usize = 5 * 1024 * 1024;

/// How long connecting to the endpoint may take before the attempt fails.
const CONNECT_TIMEOUT_SECS: u64 = 5;

/// How long a request may wait for its next bytes. There is no limit on a
/// whole request: a download streams at the pace of its client.
const READ_TIMEOUT_SECS: u64 = 10;

/// How long a readiness ping may take: a store that hangs is not ready,
/// and a load balancer's probe must get its answer before its own timeout.
const PING_TIMEOUT_MS: u64 = 2000;

/// Attempts after the first for a request that failed in a way worth
/// retrying (a connection refused, a 5xx). Few: a store that is down must
/// answer the client with a clear error in seconds, not minutes.
const RETRIES_MAX: usize = 2;

/// The longest a request spends retrying before it gives up.
const RETRY_TIMEOUT_SECS: u64 = 5;

/// The marker object's name under the prefix.
const MARKER: &str = "storesrv";
/// The start of the marker's line that names the database owning the
/// prefix ([`S3Blobs::claim`]).
const MARKER_OWNER: &str = "owner: ";

/// Where the bytes live and how to reach them. `Debug` never shows the
/// secret.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Config {
    /// The endpoint URL, e.g. `http://127.0.0.1:3900`.
    pub endpoint: String,
    /// The bucket; it must exist.
    pub bucket: String,
    /// The region the endpoint expects in signatures.
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// A key prefix, so that several services can share a bucket; empty
    /// for none. Slashes at either end are ignored.
    pub prefix: String,
    /// The part size of uploads: the most a writer holds in memory. S3
    /// needs at least [`PART_BYTES_DEFAULT`]; Garage takes smaller parts.
    pub part_bytes: usize,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"(hidden)")
            .field("prefix", &self.prefix)
            .field("part_bytes", &self.part_bytes)
            .finish()
    }
}

/// The bytes of a store in an S3 bucket. Cheap to clone: clones share the
/// client and its runtime.
#[derive(Clone)]
pub struct S3Blobs {
    shared: Arc<Shared>,
}

struct Shared {
    store: Arc<AmazonS3>,
    /// `<prefix>/blobs`: the parent of every blob.
    blobs: Path,
    /// `<prefix>/staging`: resumable uploads' bytes short of a part
    /// (staged.rs), apart from the blobs that orphan collection lists.
    staging: Path,
    /// `<prefix>/storesrv`.
    marker: Path,
    random: Arc<dyn Random>,
    part_bytes: usize,
    /// Said in errors: where the bytes are, never how to get in.
    place: String,
    /// Last, so that the client is dropped before its runtime.
    bridge: Bridge,
}

impl std::fmt::Debug for S3Blobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Blobs")
            .field("place", &self.shared.place)
            .field("part_bytes", &self.shared.part_bytes)
            .finish_non_exhaustive()
    }
}

impl S3Blobs {
    /// Connects to the bucket and writes the marker object, which proves
    /// that the bucket exists and the credentials may write to it.
    pub fn connect(config: &S3Config, random: Arc<dyn Random>) -> StorageResult<Self> {
        // reqwest's TLS is rustls without a default provider (Cargo.toml
        // says why): install ring's unless the process already chose one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = build(config)?;
        let root = Path::from(config.prefix.trim_matches('/'));
        let place = format!("bucket {} at {}", config.bucket, config.endpoint);
        let blobs = Self {
            shared: Arc::new(Shared {
                store: Arc::new(store),
                blobs: root.clone().join("blobs"),
                staging: root.clone().join("staging"),
                marker: root.join(MARKER),
                random,
                part_bytes: config.part_bytes.max(1),
                place,
                bridge: Bridge::new("store-s3")?,
            }),
        };
        if blobs.marker_owner()?.is_none() {
            blobs.write_marker(None)?;
        }
        Ok(blobs)
    }

    /// Claims the prefix for the store whose records' database is `owner`
    /// (its id): the marker object names it from now on. A prefix that
    /// another database already owns is refused, so that two services
    /// never share one prefix (each would collect the other's bytes as
    /// orphans). A marker that names no owner (written before owners
    /// were named, or by a store without a database) is taken over.
    pub fn claim(&self, owner: &str) -> StorageResult<()> {
        match self.marker_owner()?.flatten() {
            Some(other) if other != owner => Err(StorageError::new(format!(
                "the key prefix of {} belongs to another store (database {other}): two services \
                 on one prefix would delete each other's bytes; give this one a STORE_S3_PREFIX \
                 of its own",
                self.shared.place
            ))),
            Some(_) => Ok(()),
            None => self.write_marker(Some(owner)),
        }
    }

    /// The owner the marker names: `None` without a marker, `Some(None)`
    /// for a marker that names none.
    fn marker_owner(&self) -> StorageResult<Option<Option<String>>> {
        let store = Arc::clone(&self.shared.store);
        let marker = self.shared.marker.clone();
        let read = self.run(async move { store.get(&marker).await?.bytes().await });
        let body = match read {
            Ok(body) => body,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.error("cannot read the marker object of", e)),
        };
        let owner = String::from_utf8_lossy(&body)
            .lines()
            .find_map(|l| l.strip_prefix(MARKER_OWNER).map(|o| o.trim().to_string()));
        Ok(Some(owner))
    }

    fn write_marker(&self, owner: Option<&str>) -> StorageResult<()> {
        let store = Arc::clone(&self.shared.store);
        let marker = self.shared.marker.clone();
        let mut text = String::from("storesrv keeps its blobs under blobs/ next to this object\n");
        if let Some(owner) = owner {
            text.push_str(&format!("{MARKER_OWNER}{owner}\n"));
        }
        let body = PutPayload::from(text.into_bytes());
        self.run(async move { store.put(&marker, body).await.map(drop) })
            .map_err(|e| self.error("cannot write the marker object to", e))
    }

    /// Runs a request on the adapter's runtime and waits for it.
    fn run<T: Send + 'static>(
        &self,
        job: impl std::future::Future<Output = object_store::Result<T>> + Send + 'static,
    ) -> object_store::Result<T> {
        self.shared.bridge.run(job)
    }

    /// The key of a blob; ids of another shape are refused
    /// ([`store_core::ids::minted_blob_name`]).
    fn path(&self, id: &BlobId) -> StorageResult<Path> {
        let name = store_core::ids::minted_blob_name(id)?;
        Ok(self.shared.blobs.clone().join(name))
    }

    /// A client error as a storage fault: a missing object is `Missing`,
    /// a store that cannot be reached or answers 5xx is `Unavailable`.
    /// object_store's messages name the URL, never the credentials.
    fn error(&self, what: &str, e: object_store::Error) -> StorageError {
        let kind = match &e {
            object_store::Error::NotFound { .. } => StorageErrorKind::Missing,
            e if unreachable(e) => StorageErrorKind::Unavailable,
            _ => StorageErrorKind::Other,
        };
        StorageError::of(kind, format!("{what} the {}: {e}", self.shared.place))
    }

    fn writer(&self, id: Option<BlobId>) -> Box<dyn BlobWriter> {
        Box::new(writer::S3Writer::new(self.clone(), id))
    }
}

/// Whether an error says the store could not be reached (refused, reset,
/// timed out) rather than that a request was wrong. object_store keeps its
/// own error types private, so the causes are walked for the HTTP
/// client's and the socket's.
fn unreachable(e: &object_store::Error) -> bool {
    let object_store::Error::Generic { source, .. } = e else {
        return false;
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(source.as_ref());
    while let Some(c) = cause {
        if let Some(r) = c.downcast_ref::<reqwest::Error>() {
            if r.is_connect() || r.is_timeout() {
                return true;
            }
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::ConnectionRefused | K::ConnectionReset | K::NotConnected | K::TimedOut
            ) {
                return true;
            }
        }
        cause = c.source();
    }
    false
}

fn build(config: &S3Config) -> StorageResult<AmazonS3> {
    let client = ClientOptions::new()
        .with_allow_http(true)
        .with_connect_timeout(Duration::from_secs(CONNECT_TIMEOUT_SECS))
        .with_timeout_disabled()
        .with_read_timeout(Duration::from_secs(READ_TIMEOUT_SECS));
    let retry = RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: RETRIES_MAX,
        retry_timeout: Duration::from_secs(RETRY_TIMEOUT_SECS),
    };
    AmazonS3Builder::new()
        .with_endpoint(&config.endpoint)
        .with_bucket_name(&config.bucket)
        .with_region(&config.region)
        .with_access_key_id(&config.access_key_id)
        .with_secret_access_key(&config.secret_access_key)
        .with_virtual_hosted_style_request(false)
        .with_client_options(client)
        .with_retry(retry)
        .build()
        .map_err(|e| {
            StorageError::new(format!(
                "cannot use the bucket {} at {}: {e}",
                config.bucket, config.endpoint
            ))
        })
}

impl BlobStore for S3Blobs {
    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        Ok(self.writer(None))
    }

    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        self.path(id)?;
        Ok(self.writer(Some(id.clone())))
    }

    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        let path = self.path(id)?;
        Ok(Box::new(S3Reader::open(self, path, None)?))
    }

    /// A ranged GET; a HEAD first learns the length, so that the range is
    /// clamped as the port says (S3 refuses a range that starts past the
    /// end, and `object_store` one that is empty).
    fn open_range(
        &self,
        id: &BlobId,
        range: std::ops::Range<u64>,
    ) -> StorageResult<Box<dyn BlobReader>> {
        let path = self.path(id)?;
        let whole = self.head(&path)?.size;
        let std::ops::Range { start, end } = store_core::ports::clamp_range(range, whole);
        if start == end {
            return Ok(Box::new(S3Reader::empty()));
        }
        Ok(Box::new(S3Reader::open(self, path, Some(start..end))?))
    }

    /// S3's DELETE succeeds for a missing key; a NotFound from a store
    /// that says otherwise is success too.
    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        let path = self.path(id)?;
        let store = Arc::clone(&self.shared.store);
        match self.run(async move { store.delete(&path).await }) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error("cannot remove a blob from", e)),
        }
    }

    /// One listing of the blobs' prefix: only the orphan collection calls
    /// it, once per pass.
    fn list(&self) -> StorageResult<Vec<BlobId>> {
        use futures_util::TryStreamExt;
        let store = Arc::clone(&self.shared.store);
        let prefix = self.shared.blobs.clone();
        let metas = self
            .run(async move { store.list(Some(&prefix)).try_collect::<Vec<_>>().await })
            .map_err(|e| self.error("cannot list the blobs of", e))?;
        let mut ids: Vec<BlobId> = metas
            .into_iter()
            .filter_map(|m| m.location.filename().map(|n| BlobId(n.to_string())))
            .filter(|id| self.path(id).is_ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    fn ping(&self) -> StorageResult<()> {
        let store = Arc::clone(&self.shared.store);
        let marker = self.shared.marker.clone();
        let limit = Duration::from_millis(PING_TIMEOUT_MS);
        let answer = self
            .shared
            .bridge
            .run(async move { tokio::time::timeout(limit, store.head(&marker)).await });
        match answer {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(self.error("cannot read the marker object of", e)),
            Err(_) => Err(StorageError::of(
                StorageErrorKind::Unavailable,
                format!(
                    "the {} did not answer within {PING_TIMEOUT_MS} ms",
                    self.shared.place
                ),
            )),
        }
    }

    /// Every read is a request to the bucket.
    fn reads_wait(&self) -> bool {
        true
    }

    /// Resumable uploads: multipart uploads whose parts outlive a
    /// process (staged.rs).
    fn stages(&self) -> bool {
        true
    }

    fn stage(&self) -> StorageResult<Staging> {
        self.stage_new()
    }

    fn resume(&self, staging: &Staging, offset: u64) -> StorageResult<Box<dyn StagedWriter>> {
        Ok(Box::new(self.resume_staged(staging, offset)?))
    }

    fn discard(&self, staging: &Staging) -> StorageResult<()> {
        self.discard_staged(staging)
    }
}

impl S3Blobs {
    /// Deletes the marker object, after which [`BlobStore::ping`] fails
    /// until the next [`S3Blobs::connect`] writes it again: what tests use
    /// to show a bucket that is no longer the service's.
    pub fn remove_marker(&self) -> StorageResult<()> {
        let store = Arc::clone(&self.shared.store);
        let marker = self.shared.marker.clone();
        self.run(async move { store.delete(&marker).await })
            .map_err(|e| self.error("cannot remove the marker object from", e))
    }

    fn head(&self, path: &Path) -> StorageResult<object_store::ObjectMeta> {
        let store = Arc::clone(&self.shared.store);
        let p = path.clone();
        self.run(async move { store.head(&p).await })
            .map_err(|e| self.error("cannot read an object's metadata in", e))
    }
}

#[cfg(test)]
mod tests;
