//! `storesrv migrate --from-data DIR`: opens a stopped sled store as the
//! source and the configured PostgreSQL database and blob store (an S3
//! bucket, or a directory) as the target, and runs `store_app::migrate`
//! between them.

use std::path::Path;
use std::sync::Arc;

use store_app::migrate::{migrate, Side};
use store_app::system::OsRandom;
use store_core::{BlobStore, Random};
use store_sled::{FsBlobStore, SledRepository};

use crate::config::Config;

/// Runs the move and answers its report, as one line of JSON.
pub fn run(config: &Config, from_data: &Path) -> Result<String, String> {
    // sled would create an empty store where there is none, and the move
    // would then report nothing to do: a wrong path must say so.
    if !from_data.join("db").is_dir() {
        return Err(format!(
            "{} holds no sled store (no db directory)",
            from_data.display()
        ));
    }
    let source = SledRepository::open(from_data).map_err(|e| {
        format!(
            "{} (is a server still running on it? stop it first)",
            e.message
        )
    })?;
    let random: Arc<dyn Random> = Arc::new(OsRandom);
    // Shared mode on both sides: neither removes young temp files, which
    // may be uploads of servers already running on the target directory.
    let source_blobs =
        FsBlobStore::open_shared(from_data, Arc::clone(&random)).map_err(|e| e.message)?;
    let url = &config
        .database_url
        .as_ref()
        .ok_or("STORE_DATABASE_URL is not set")?
        .0;
    let pg = store_pg::PgStore::connect(url)
        .map_err(|e| format!("STORE_DATABASE_URL: {}", e.message))?;
    let target = pg.repository();
    let target_blobs = target_blobs(config, random)?;
    let report = migrate(
        Side {
            repo: &source,
            blobs: &source_blobs,
        },
        Side {
            repo: &target,
            blobs: target_blobs.as_ref(),
        },
    )
    .map_err(|e| e.message)?;
    serde_json::to_string(&report).map_err(|e| e.to_string())
}

/// The configured blob store: the bucket of STORE_S3_*, or files under
/// `--data` in shared mode.
fn target_blobs(config: &Config, random: Arc<dyn Random>) -> Result<Box<dyn BlobStore>, String> {
    if let Some(s3) = &config.s3 {
        return Ok(Box::new(crate::stores::s3_blobs(s3, random)?));
    }
    std::fs::create_dir_all(&config.data)
        .map_err(|e| format!("cannot create the data dir {}: {e}", config.data.display()))?;
    let blobs = FsBlobStore::open_shared(&config.data, random).map_err(|e| e.message)?;
    Ok(Box::new(blobs))
}
