//! The stores a configuration names: the records (sled under `--data`,
//! or PostgreSQL) and the bytes (files under `--data`, or an S3 bucket),
//! with the coordination that goes with them.

use std::sync::Arc;

use store_app::system::OsRandom;
use store_core::{BlobStore, Limits, Random};
use store_s3::{S3Blobs, S3Config};
use store_sled::{FsBlobStore, SledRepository};

use crate::config::Config;

/// Where the records live: sled under `--data` (one process), or
/// PostgreSQL shared by every process configured with it.
pub enum Records {
    Sled(Arc<SledRepository>),
    Pg(store_pg::PgStore),
}

impl Records {
    pub fn open(config: &Config) -> Result<Self, String> {
        match &config.database_url {
            None => Ok(Self::Sled(Arc::new(
                SledRepository::open(&config.data).map_err(|e| e.to_string())?,
            ))),
            Some(url) => {
                let pg = store_pg::PgStore::connect(&url.0)
                    .map_err(|e| format!("STORE_DATABASE_URL: {}", e.message))?;
                pg.set_delete_grace(std::time::Duration::from_secs(config.delete_grace_secs));
                Ok(Self::Pg(pg))
            }
        }
    }

    /// Where the bytes live: the bucket of STORE_S3_*, or files under
    /// `--data` (which other processes may write too when the records
    /// are shared).
    pub fn blob_store(&self, config: &Config) -> Result<Arc<dyn BlobStore>, String> {
        let random = Arc::new(OsRandom);
        if let Some(s3) = &config.s3 {
            let blobs = s3_blobs(s3, random.clone())?;
            // With the records in a database, the prefix is that
            // database's: another service may not share it.
            if let Self::Pg(pg) = self {
                let owner = pg
                    .identity()
                    .map_err(|e| format!("STORE_DATABASE_URL: {}", e.message))?;
                blobs
                    .claim(&owner)
                    .map_err(|e| format!("STORE_S3_PREFIX: {}", e.message))?;
            }
            return disk_cached(Arc::new(blobs), config, random);
        }
        match self {
            Self::Sled(_) => FsBlobStore::open(&config.data, random),
            Self::Pg(_) => FsBlobStore::open_shared(&config.data, random),
        }
        .map(|b| Arc::new(b) as Arc<dyn BlobStore>)
        .map_err(|e| e.to_string())
    }

    /// The clock the use cases decide by: the database's when processes
    /// share the records (CONTRACT.md: one clock), else this machine's.
    pub fn clock(&self) -> Result<Arc<dyn store_core::Clock>, String> {
        match self {
            Self::Sled(_) => Ok(Arc::new(store_app::system::SystemClock)),
            Self::Pg(pg) => pg
                .clock()
                .map(|c| Arc::new(c) as Arc<dyn store_core::Clock>)
                .map_err(|e| format!("STORE_DATABASE_URL: {}", e.message)),
        }
    }

    pub fn repository(&self) -> Arc<dyn store_core::Repository> {
        match self {
            Self::Sled(repo) => repo.clone(),
            Self::Pg(pg) => Arc::new(pg.repository()),
        }
    }

    pub fn coordination(&self, limits: &Limits) -> store_app::Coordination {
        match self {
            Self::Sled(_) => store_app::Coordination::Local,
            Self::Pg(pg) => store_app::Coordination::Shared {
                locks: Arc::new(pg.locks()),
                ledgers: Arc::new(pg.ledgers(limits.pool_bytes, limits.pics_pool_bytes, &OsRandom)),
            },
        }
    }

    pub fn rate_limits(&self, per_min: u32) -> Option<Arc<dyn store_core::RateLimits>> {
        match self {
            Self::Sled(_) => None,
            Self::Pg(pg) => Some(Arc::new(pg.rate_limits(per_min))),
        }
    }

    pub fn describe(&self) -> &'static str {
        match self {
            Self::Sled(_) => "sled",
            Self::Pg(_) => "postgresql",
        }
    }
}

/// The bucket's large blobs copied to `--data/blob-cache/<this process's
/// own>` as they are read, up to STORE_DISK_CACHE_BYTES (issue 37): a GET
/// of a large file read before reads a local file instead of the bucket.
fn disk_cached(
    bucket: Arc<dyn BlobStore>,
    config: &Config,
    random: Arc<OsRandom>,
) -> Result<Arc<dyn BlobStore>, String> {
    if config.disk_cache_bytes == 0 {
        return Ok(bucket);
    }
    let dir = config.data.join("blob-cache");
    // Each process claims a directory of its own under it, so processes
    // sharing one `--data` keep their copies apart. A cache that cannot be
    // opened (a full or read-only disk) is no reason not to serve: then
    // every read goes to the bucket.
    let local = match FsBlobStore::open_cache(&dir, random) {
        Ok(local) => local,
        Err(e) => {
            tracing::warn!(error = %e, "no disk cache: every read goes to the bucket");
            return Ok(bucket);
        }
    };
    Ok(Arc::new(store_app::DiskCachedBlobs::new(
        bucket,
        Arc::new(local),
        config.disk_cache_bytes,
        crate::BLOB_CACHE_ITEM_BYTES,
    )))
}

/// The bucket of the configuration's STORE_S3_* settings.
pub fn s3_blobs(s3: &S3Config, random: Arc<dyn Random>) -> Result<S3Blobs, String> {
    S3Blobs::connect(s3, random).map_err(|e| format!("STORE_S3_*: {}", e.message))
}

/// Where the bytes are, for the start-up line: never a credential.
pub fn describe_bytes(config: &Config) -> String {
    match &config.s3 {
        Some(s3) => format!("s3 bucket {} at {}", s3.bucket, s3.endpoint),
        None => format!("files under {}", config.data.display()),
    }
}
