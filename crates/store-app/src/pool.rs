//! Reserving room in the pools, evicting from the store pool when it is
//! short.

use store_core::ports::Pool;
use store_core::StoreError;

use crate::{App, AppError, AppResult};

/// Candidates read from the expiry index per round of eviction.
const EVICTION_BATCH: usize = 64;

/// Bytes taken from a pool for a write in progress. Dropped without
/// [`Reservation::keep`], it gives them back, so that a failed write
/// cannot leak pool space.
#[must_use]
pub(crate) struct Reservation<'a> {
    app: &'a App,
    pool: Pool,
    bytes: u64,
}

impl Reservation<'_> {
    /// What a record write settles of it ([`App::put_keeping`]).
    pub(crate) fn settled(&self) -> store_core::Settled {
        store_core::Settled {
            pool: self.pool,
            bytes: self.bytes,
        }
    }

    /// The record holding the bytes has been written: the pool now counts
    /// them through it.
    pub(crate) fn keep(mut self) {
        self.app.ledgers.settle(self.pool, self.bytes);
        self.bytes = 0;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.app.ledgers.cancel(self.pool, self.bytes);
        }
    }
}

impl App {
    /// Writes `object` under `key` and keeps `reservation` for it, settling
    /// it in the record's own transaction where the repository can
    /// (PostgreSQL: no moment counts the bytes twice, so no writer short of
    /// room evicts for bytes already recorded). Kept even when the write
    /// failed in a way that may have landed (the next start reads the
    /// totals kept with the records and collects orphan blobs); given back
    /// when it was refused as a conflict, which wrote nothing.
    /// The write is conditional on the record being at `rev` (the one the
    /// caller read under the key's lock).
    /// `doomed` are the blobs the record stops naming (see
    /// [`store_core::Repository::replace`]).
    pub(crate) fn put_keeping(
        &self,
        at: (&str, store_core::Rev),
        object: &store_core::Object,
        doomed: &[store_core::BlobId],
        reservation: Reservation<'_>,
    ) -> Result<store_core::Rev, store_core::StorageError> {
        let written = self
            .ports
            .repo
            .replace_settled(at, object, doomed, reservation.settled());
        match &written {
            // Not written: the reservation goes back with the guard.
            Err(e) if e.kind == store_core::StorageErrorKind::Conflict => {}
            _ => reservation.keep(),
        }
        written
    }

    /// Takes `bytes` from the pool, evicting live non-retained objects
    /// soonest-expiring first (CONTRACT.md "Pools and eviction") until they
    /// fit, or answers 507 when nothing more can go.
    ///
    /// Eviction only *tries* each key's lock: the caller may hold a lock
    /// itself (a PUT growing a file), and waiting here could deadlock. A
    /// busy object is in use anyway, so it is skipped this time.
    pub(crate) fn reserve(&self, bytes: u64) -> AppResult<Reservation<'_>> {
        let full = || {
            StoreError::PoolFull {
            message: format!(
                "the store pool is full: {bytes} more bytes do not fit even after evicting every object that may go"
            ),
            retry_after_secs: self.config.limits.pool_full_retry_after_secs,
        }
        };
        if bytes > self.config.limits.pool_bytes {
            return Err(full().into());
        }
        loop {
            if let Some(r) = self.try_reserve(Pool::Store, bytes)? {
                return Ok(r);
            }
            // Evictions are decided one at a time, over every process:
            // two writers short of room must not both evict for the same
            // shortfall. The room is checked again under the lock.
            let _eviction = self.locks.lock_eviction()?;
            let shortfall = match self.ledgers.try_reserve(Pool::Store, bytes)? {
                Ok(()) => return Ok(self.reservation(Pool::Store, bytes)),
                Err(shortfall) => shortfall,
            };
            // Never destroy objects for a write that would be refused anyway.
            if !self.can_free(shortfall)? || self.evict(shortfall)? == 0 {
                return Err(full().into());
            }
        }
    }

    fn reservation(&self, pool: Pool, bytes: u64) -> Reservation<'_> {
        Reservation {
            app: self,
            pool,
            bytes,
        }
    }

    /// Takes `bytes` from `pool` if they fit as it stands.
    pub(crate) fn try_reserve(&self, pool: Pool, bytes: u64) -> AppResult<Option<Reservation<'_>>> {
        Ok(self
            .ledgers
            .try_reserve(pool, bytes)?
            .ok()
            .map(|()| self.reservation(pool, bytes)))
    }

    /// Takes `bytes` from the pool as [`App::reserve`] does when `room`
    /// allows eviction; otherwise only if they fit in the free room (a
    /// show-dir's anonymous writer never evicts anyone).
    pub(crate) fn reserve_in(
        &self,
        room: store_core::container::Room,
        bytes: u64,
    ) -> AppResult<Reservation<'_>> {
        if room == store_core::container::Room::MayEvict {
            return self.reserve(bytes);
        }
        if let Some(r) = self.try_reserve(Pool::Store, bytes)? {
            return Ok(r);
        }
        Err(StoreError::PoolFull {
            message: format!(
                "the store pool has no free room for {bytes} more bytes, and writes to a show-dir without the retain token never evict other objects"
            ),
            retry_after_secs: self.config.limits.pool_full_retry_after_secs,
        }
        .into())
    }

    /// Whether evicting could free `needed` bytes. It reads the expiry
    /// index in growing pages and stops as soon as the answer is yes, so
    /// the usual case (a pool full of evictable files) stays cheap.
    fn can_free(&self, needed: u64) -> AppResult<bool> {
        let mut page = EVICTION_BATCH;
        loop {
            let entries = self.ports.repo.expiring(page)?;
            let mut total = 0u64;
            for (_, key) in &entries {
                if let Some(obj) = self.ports.repo.get(key)? {
                    if obj.is_evictable() {
                        total = total.saturating_add(obj.pool_bytes());
                        if total >= needed {
                            return Ok(true);
                        }
                    }
                }
            }
            if entries.len() < page {
                return Ok(false);
            }
            page = page.saturating_mul(4);
        }
    }

    /// Evicts until `needed` bytes are freed or no candidate is left;
    /// returns the bytes freed.
    fn evict(&self, needed: u64) -> AppResult<u64> {
        let mut freed = 0u64;
        // Only objects with an expiry are in the index: retained objects can
        // never be chosen. Each round re-reads the index head, since evicted
        // entries leave it; skipped (busy) keys are remembered.
        let mut skipped = std::collections::HashSet::new();
        while freed < needed {
            let candidates: Vec<String> = self
                .ports
                .repo
                .expiring(EVICTION_BATCH + skipped.len())?
                .into_iter()
                .map(|(_, k)| k)
                .filter(|k| !skipped.contains(k))
                .collect();
            if candidates.is_empty() {
                break;
            }
            for key in candidates {
                let tried = self.locks.try_lock_many(vec![key.clone()])?;
                if tried.locked.is_empty() {
                    skipped.insert(key);
                    continue;
                }
                match self.ports.repo.load(&key)? {
                    Some((obj, rev)) if obj.is_evictable() => {
                        match self.remove_object(&key, rev, &obj) {
                            Ok(()) => freed += obj.pool_bytes(),
                            // Changed since it was read: in use, so it
                            // stays this time.
                            Err(AppError::Storage(e))
                                if e.kind == store_core::StorageErrorKind::Conflict =>
                            {
                                skipped.insert(key);
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    _ => {
                        skipped.insert(key);
                    }
                }
                if freed >= needed {
                    break;
                }
            }
        }
        Ok(freed)
    }
}
