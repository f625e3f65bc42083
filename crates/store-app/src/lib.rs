//! # store-app
//!
//! The use-case layer. Each public method of [`App`] runs one request:
//! read the clock once, take the key's lock, load, decide with store-core,
//! commit through the ports. It is synchronous and runtime-free; the HTTP
//! shell calls it on a blocking pool.
//!
//! Write order, everywhere: bytes first (committed blob), then the record;
//! on delete, the record first, then the bytes. A crash between the two
//! steps leaves at worst an unreferenced blob, which [`App::open`] collects.

mod blobcache;
mod bundles;
mod dirs;
mod error;
mod files;
mod galleries;
mod import;
mod locks;
mod pool;
pub mod system;
mod upload;

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use store_core::pool::PoolLedger;
use store_core::ports::{BlobStore, Clock, Random, Repository};
use store_core::{Limits, Object, RetainAuth, RetainTokens, Timestamp};

pub use blobcache::CachedBlobs;
pub use bundles::Part;
pub use dirs::{DirAccess, DirQuery, DirSort, NewDir, WriteRequest};
pub use error::{AppError, AppResult};
pub use files::{BrowseQuery, BrowseSort, Download, NewFile, Opened, SortOrder};
pub use galleries::{AdminAction, GalleryCreated, GalleryEntry, GalleryView, ImageView, Visitor};
pub use import::ImportRequest;
pub use upload::{Staged, Upload};

/// The ports an [`App`] runs on.
#[derive(Clone)]
pub struct Ports {
    pub repo: Arc<dyn Repository>,
    pub blobs: Arc<dyn BlobStore>,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn Random>,
    pub fetcher: Arc<dyn store_core::Fetcher>,
}

impl std::fmt::Debug for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ports { .. }")
    }
}

/// What the operator configured.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Prefix of every URL handed out, without a trailing slash.
    pub base_url: String,
    pub limits: Limits,
    pub retain_tokens: RetainTokens,
    /// STORE_SUPERADMIN_TOKEN: administers every gallery.
    pub superadmin_token: Option<String>,
}

/// What one sweep did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepReport {
    pub removed: usize,
    /// The next moment something expires, if anything does.
    pub next_expiry: Option<Timestamp>,
}

/// What start-up recovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    pub objects: usize,
    pub pool_used_bytes: u64,
    pub orphan_blobs_removed: usize,
}

/// The service's use cases over a set of ports.
#[derive(Debug)]
pub struct App {
    ports: Ports,
    config: AppConfig,
    locks: locks::KeyLocks,
    pool: Mutex<PoolLedger>,
    /// The pics pool: counted apart, and never evicted.
    pics_pool: Mutex<PoolLedger>,
    /// Image decoding and encoding at once, at most: a burst of 30 MB
    /// uploads waits here instead of exhausting memory.
    media_slots: galleries::Slots,
}

impl App {
    /// Opens the service over its ports: recomputes the pool from the
    /// records (so that no crash can make it drift) and removes blobs no
    /// record points at (left by a crash between the two steps of a write).
    pub fn open(ports: Ports, config: AppConfig) -> AppResult<(Self, Recovery)> {
        let mut used = 0u64;
        let mut pics_used = 0u64;
        let mut objects = 0usize;
        let mut referenced = HashSet::new();
        ports.repo.for_each(&mut |_, obj| {
            objects += 1;
            used = used.saturating_add(obj.pool_bytes());
            pics_used = pics_used.saturating_add(obj.pics_bytes());
            referenced.extend(obj.blobs().into_iter().cloned());
            ControlFlow::Continue(())
        })?;
        let mut orphan_blobs_removed = 0;
        for blob in ports.blobs.list()? {
            if !referenced.contains(&blob) {
                ports.blobs.remove(&blob)?;
                orphan_blobs_removed += 1;
            }
        }
        let app = Self {
            pool: Mutex::new(PoolLedger::new(config.limits.pool_bytes, used)),
            pics_pool: Mutex::new(PoolLedger::new(config.limits.pics_pool_bytes, pics_used)),
            media_slots: galleries::Slots::new(galleries::MEDIA_JOBS_MAX),
            ports,
            config,
            locks: locks::KeyLocks::default(),
        };
        let recovery = Recovery {
            objects,
            pool_used_bytes: used,
            orphan_blobs_removed,
        };
        Ok((app, recovery))
    }

    pub fn config(&self) -> &AppConfig {
        &self.config
    }

    pub fn now(&self) -> Timestamp {
        self.ports.clock.now()
    }

    /// Checks a presented retain token against the configured ones.
    pub fn retain_auth(&self, presented: Option<&str>) -> RetainAuth {
        self.config.retain_tokens.check(presented)
    }

    /// Bytes the live objects hold in the store pool.
    pub fn pool_used_bytes(&self) -> u64 {
        self.ledger().used_bytes()
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, PoolLedger> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a committed blob, for streaming a bundle's or dir's zip. The
    /// blob may be gone if its file was replaced or deleted meanwhile.
    pub fn open_blob(
        &self,
        blob: &store_core::BlobId,
    ) -> AppResult<Box<dyn store_core::BlobReader>> {
        Ok(self.ports.blobs.open(blob)?)
    }

    /// Opens the bytes a live record points at. Bytes that are gone (a
    /// damaged disk, a hand-deleted file) make the object answer 404, and
    /// the fault is logged: a reader is never shown a 500 for it.
    pub(crate) fn open_record_blob(
        &self,
        blob: &store_core::BlobId,
    ) -> AppResult<Box<dyn store_core::BlobReader>> {
        self.ports.blobs.open(blob).map_err(|e| {
            if e.kind == store_core::StorageErrorKind::Missing {
                eprintln!("storesrv: a record points at missing bytes ({e}); answering 404");
                AppError::Domain(store_core::StoreError::not_found())
            } else {
                AppError::Storage(e)
            }
        })
    }

    /// Starts receiving a body of at most `limit_bytes`.
    pub fn begin_upload(&self, limit_bytes: u64) -> AppResult<Upload> {
        Ok(Upload::new(
            self.ports.blobs.create()?,
            Arc::clone(&self.ports.blobs),
            limit_bytes,
        ))
    }

    /// Removes objects whose time has come, at most `batch` of them, and
    /// says when the next one is due. It walks the expiry index from its
    /// start, so its cost follows the number of expired objects, not the
    /// number stored.
    pub fn sweep(&self, batch: usize) -> AppResult<SweepReport> {
        let now = self.now();
        // Most sweeps find nothing due: look at the soonest expiry alone
        // before reading a whole batch of the index.
        match self.ports.repo.expiring(1)?.first() {
            None => {
                return Ok(SweepReport {
                    removed: 0,
                    next_expiry: None,
                })
            }
            Some((at, _)) if *at > now => {
                return Ok(SweepReport {
                    removed: 0,
                    next_expiry: Some(*at),
                })
            }
            Some(_) => {}
        }
        let mut removed = 0;
        for (at, key) in self.ports.repo.expiring(batch)? {
            if at > now {
                return Ok(SweepReport {
                    removed,
                    next_expiry: Some(at),
                });
            }
            let _guard = self.locks.lock(&key);
            // Re-read under the lock: the object may have been retained or
            // deleted since the index was read.
            if let Some(obj) = self.ports.repo.get(&key)? {
                if !obj.lifetime().is_live(now) {
                    // Dead already: its removal need not wait for a flush
                    // (see Repository::remove_dead).
                    let gone = self.ports.repo.remove_dead(&key)?;
                    self.release_removed(gone.is_some(), &obj)?;
                    removed += 1;
                }
            }
        }
        let next_expiry = self.ports.repo.expiring(1)?.first().map(|(at, _)| *at);
        Ok(SweepReport {
            removed,
            next_expiry,
        })
    }

    /// Inserts a new object under a fresh random id and returns the id.
    /// 71 random bits make a collision all but impossible; the loop turns
    /// "all but" into "never".
    pub(crate) fn insert_with_fresh_id(
        &self,
        mut object: impl FnMut(&str) -> Object,
    ) -> Result<String, store_core::StorageError> {
        loop {
            let id = store_core::ids::object_id(self.ports.random.as_ref());
            if self.ports.repo.insert_new(&id, &object(&id))? {
                return Ok(id);
            }
        }
    }

    /// The size a text file would grow to by appending `extra` bytes, or
    /// 413 past the file size limit.
    pub(crate) fn appended_size(&self, current: u64, extra: usize) -> AppResult<u64> {
        let limit = self.config.limits.file_bytes_max;
        let new_size = current + extra as u64;
        if new_size > limit {
            return Err(store_core::StoreError::TooLarge(format!(
                "the file would grow to {new_size} bytes, over the limit of {limit}"
            ))
            .into());
        }
        Ok(new_size)
    }

    /// Deletes a record, then its bytes, then gives its pool bytes back.
    /// The caller holds the key's lock.
    fn remove_object(&self, key: &str, obj: &Object) -> AppResult<()> {
        let gone = self.ports.repo.remove(key)?;
        self.release_removed(gone.is_some(), obj)
    }

    /// What follows a record's removal: its pool bytes go back (only if
    /// this call removed it, so a racing remover cannot release twice),
    /// then its bytes are deleted.
    fn release_removed(&self, was_there: bool, obj: &Object) -> AppResult<()> {
        if was_there {
            self.ledger().release(obj.pool_bytes());
        }
        for blob in obj.blobs() {
            self.ports.blobs.remove(blob)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
