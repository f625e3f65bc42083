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
//! The client (client.rs) signs requests with rusty-s3 and sends them with
//! hyper, on a runtime of this crate's own ([`store_bridge::Bridge`]); the
//! port is synchronous and called from blocking threads.
//!
//! ## Start here
//!
//! `S3Blobs::connect` takes an [`S3Config`] (endpoint, bucket, region,
//! keys, an optional key prefix) and a source of randomness for blob ids,
//! and goes in `Ports::blobs`. Processes that share a bucket share their
//! records too (store-pg), so that each knows which blobs are referenced.
//! The storesrv binary's `bins/storesrv/src/stores.rs` shows the wiring;
//! the conformance suite runs against Garage (`STORE_TEST_S3_*`).

mod client;
mod reader;
mod staged;
mod writer;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use client::S3Client;
use store_bridge::Bridge;
use store_core::ports::{BlobReader, BlobStore, BlobWriter, Random, StagedWriter, StorageResult};
use store_core::resumable::Staging;
use store_core::{BlobId, StorageError, StorageErrorKind};

pub use reader::S3Reader;

/// The part size of multipart uploads unless configured: the smallest
/// part S3 accepts (every part but the last must be at least this big).
pub const PART_BYTES_DEFAULT: usize = 5 * 1024 * 1024;

/// How long a readiness ping may take: a store that hangs is not ready,
/// and a load balancer's probe must get its answer before its own timeout.
const PING_TIMEOUT_MS: u64 = 2000;

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
    client: Arc<S3Client>,
    /// `<prefix>/blobs`: the parent of every blob.
    blobs: String,
    /// `<prefix>/staging`: resumable uploads' bytes short of a part
    /// (staged.rs), apart from the blobs that orphan collection lists.
    staging: String,
    /// `<prefix>/storesrv`.
    marker: String,
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
        let client = build(config)?;
        let root = root(&config.prefix);
        let place = format!("bucket {} at {}", config.bucket, config.endpoint);
        let blobs = Self {
            shared: Arc::new(Shared {
                client: Arc::new(client),
                blobs: key(&root, "blobs"),
                staging: key(&root, "staging"),
                marker: key(&root, MARKER),
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
        let client = Arc::clone(&self.shared.client);
        let marker = self.shared.marker.clone();
        let read = self.run(async move { client.get_all(&marker).await });
        let body = match read {
            Ok(body) => body,
            Err(client::Error::NotFound) => return Ok(None),
            Err(e) => return Err(self.error("cannot read the marker object of", e)),
        };
        let owner = String::from_utf8_lossy(&body)
            .lines()
            .find_map(|l| l.strip_prefix(MARKER_OWNER).map(|o| o.trim().to_string()));
        Ok(Some(owner))
    }

    fn write_marker(&self, owner: Option<&str>) -> StorageResult<()> {
        let client = Arc::clone(&self.shared.client);
        let marker = self.shared.marker.clone();
        let mut text = String::from("storesrv keeps its blobs under blobs/ next to this object\n");
        if let Some(owner) = owner {
            text.push_str(&format!("{MARKER_OWNER}{owner}\n"));
        }
        let body = Bytes::from(text.into_bytes());
        self.run(async move { client.put(&marker, body).await })
            .map_err(|e| self.error("cannot write the marker object to", e))
    }

    /// Runs a request on the adapter's runtime and waits for it.
    fn run<T: Send + 'static>(
        &self,
        job: impl std::future::Future<Output = client::Result<T>> + Send + 'static,
    ) -> client::Result<T> {
        self.shared.bridge.run(job)
    }

    /// The key of a blob; ids of another shape are refused
    /// ([`store_core::ids::minted_blob_name`]).
    fn path(&self, id: &BlobId) -> StorageResult<String> {
        let name = store_core::ids::minted_blob_name(id)?;
        Ok(key(&self.shared.blobs, name))
    }

    /// A client error as a storage fault: a missing object is `Missing`,
    /// a store that cannot be reached or answers 5xx is `Unavailable`.
    /// The client's messages name neither the URL (whose query holds the
    /// signature) nor the credentials.
    fn error(&self, what: &str, e: client::Error) -> StorageError {
        let kind = match &e {
            client::Error::NotFound => StorageErrorKind::Missing,
            e if e.unavailable() => StorageErrorKind::Unavailable,
            _ => StorageErrorKind::Other,
        };
        StorageError::of(kind, format!("{what} the {}: {e}", self.shared.place))
    }

    fn writer(&self, id: Option<BlobId>) -> Box<dyn BlobWriter> {
        Box::new(writer::S3Writer::new(self.clone(), id))
    }
}

/// The client of the configured bucket.
fn build(config: &S3Config) -> StorageResult<S3Client> {
    S3Client::new(
        &config.endpoint,
        &config.bucket,
        &config.region,
        (&config.access_key_id, &config.secret_access_key),
    )
    .map_err(|e| {
        StorageError::new(format!(
            "cannot use the bucket {} at {}: {e}",
            config.bucket, config.endpoint
        ))
    })
}

/// The prefix's segments, slashes at either end and empty ones dropped:
/// `/svc-a//x/` is `svc-a/x`.
fn root(prefix: &str) -> String {
    prefix
        .split('/')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("/")
}

/// The key of `name` under `parent` (the bucket's root when empty).
fn key(parent: &str, name: &str) -> String {
    match parent {
        "" => name.to_string(),
        _ => format!("{parent}/{name}"),
    }
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
    /// end, and a `Range` header cannot ask for no bytes).
    fn open_range(
        &self,
        id: &BlobId,
        range: std::ops::Range<u64>,
    ) -> StorageResult<Box<dyn BlobReader>> {
        let path = self.path(id)?;
        let whole = self.head(&path)?;
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
        let client = Arc::clone(&self.shared.client);
        self.run(async move { client.delete(&path).await })
            .map_err(|e| self.error("cannot remove a blob from", e))
    }

    /// One listing of the blobs' prefix: only the orphan collection calls
    /// it, once per pass.
    fn list(&self) -> StorageResult<Vec<BlobId>> {
        let client = Arc::clone(&self.shared.client);
        let prefix = format!("{}/", self.shared.blobs);
        let keys = self
            .run(async move { client.list(&prefix).await })
            .map_err(|e| self.error("cannot list the blobs of", e))?;
        let mut ids: Vec<BlobId> = keys
            .into_iter()
            .filter_map(|k| k.rsplit('/').next().map(|n| BlobId(n.to_string())))
            .filter(|id| self.path(id).is_ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    fn ping(&self) -> StorageResult<()> {
        let client = Arc::clone(&self.shared.client);
        let marker = self.shared.marker.clone();
        let limit = Duration::from_millis(PING_TIMEOUT_MS);
        let answer = self
            .shared
            .bridge
            .run(async move { tokio::time::timeout(limit, client.head(&marker)).await });
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
        let client = Arc::clone(&self.shared.client);
        let marker = self.shared.marker.clone();
        self.run(async move { client.delete(&marker).await })
            .map_err(|e| self.error("cannot remove the marker object from", e))
    }

    /// The length of the object `key`.
    fn head(&self, key: &str) -> StorageResult<u64> {
        let client = Arc::clone(&self.shared.client);
        let key = key.to_string();
        self.run(async move { client.head(&key).await })
            .map_err(|e| self.error("cannot read an object's metadata in", e))
    }
}

#[cfg(test)]
mod tests;
