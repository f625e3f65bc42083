//! Per-key mutual exclusion across processes: session advisory locks.
//!
//! A use case that holds keys holds one connection of the lock pool, on
//! which it took `pg_advisory_lock` of each key's 64-bit hash; dropping
//! the guard unlocks them and gives the connection back. If the process
//! dies, its sessions end and PostgreSQL releases their locks: a killed
//! process never leaves a key locked.
//!
//! In front of the database sits the in-process [`StripedLocks`]: writers
//! of one key in one process queue in memory, so that a burst of writes to
//! one dir holds one connection, not one per waiting request.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Object, Pool, Timeouts};
use store_core::local::StripedLocks;
use store_core::ports::{KeyLocks, LockGuard, StorageResult, TryLocked};

use crate::{db_error, pool_error, Inner};

/// The advisory lock (two-key form) under which eviction is decided.
const EVICTION_LOCK: (i32, i32) = (crate::ADVISORY_CLASS, 2);

/// Cross-process key locks in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgLocks {
    inner: Arc<Inner>,
    local: StripedLocks,
}

/// What a guard holds: the local stripes, and the session with the
/// advisory locks.
struct Held {
    inner: Arc<Inner>,
    session: Option<Object>,
    _local: LockGuard,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(session) = self.session.take() else {
            return;
        };
        // Unlocking is not waited for: the next holder waits in
        // PostgreSQL until it is done. A session that cannot say it
        // unlocked is closed instead, which releases its locks too.
        self.inner.bridge.spawn(async move {
            if session
                .batch_execute("SELECT pg_advisory_unlock_all()")
                .await
                .is_err()
            {
                drop(Object::take(session));
            }
        });
    }
}

impl PgLocks {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Self {
            inner,
            local: StripedLocks::default(),
        }
    }

    fn guard(&self, session: Object, local: LockGuard) -> LockGuard {
        LockGuard::new(Held {
            inner: Arc::clone(&self.inner),
            session: Some(session),
            _local: local,
        })
    }

    /// Takes a session from `pool` and waits on it for each of `keys`'
    /// locks, in sorted order (two callers naming the same keys take them
    /// in the same order, so they cannot deadlock).
    fn lock_keys(&self, pool: &Pool, mut keys: Vec<String>) -> StorageResult<Object> {
        keys.sort();
        keys.dedup();
        let pool = pool.clone();
        self.inner.bridge.run(async move {
            let session = pool.get().await.map_err(pool_error)?;
            for key in &keys {
                session
                    .execute("SELECT pg_advisory_lock(hashtextextended($1, 0))", &[key])
                    .await
                    .map_err(db_error)?;
            }
            Ok(session)
        })
    }
}

impl KeyLocks for PgLocks {
    fn lock(&self, keys: &[&str]) -> StorageResult<LockGuard> {
        let local = self.local.lock_now(keys);
        let keys = keys.iter().map(|k| k.to_string()).collect();
        let session = self.lock_keys(&self.inner.locks, keys)?;
        Ok(self.guard(session, local))
    }

    fn try_lock_many(&self, keys: Vec<String>) -> StorageResult<TryLocked> {
        let mut tried = self.local.try_lock_now(keys);
        if tried.locked.is_empty() {
            return Ok(tried);
        }
        let pool = self.inner.locks.clone();
        let wanted = std::mem::take(&mut tried.locked);
        // The keys come back either way, so that each ends up locked or
        // busy.
        let (session, wanted) = self.inner.bridge.run(async move {
            // Without waiting for a connection either: a busy pool makes
            // every key busy this time.
            let now = Timeouts {
                wait: Some(Duration::ZERO),
                ..pool.timeouts()
            };
            let Ok(session) = pool.timeout_get(&now).await else {
                return Ok((None, wanted));
            };
            let rows = session
                .query(
                    "SELECT k FROM unnest($1::text[]) AS k
                     WHERE pg_try_advisory_lock(hashtextextended(k, 0))",
                    &[&wanted],
                )
                .await
                .map_err(db_error)?;
            let got: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
            Ok::<_, store_core::StorageError>((Some((session, got)), wanted))
        })?;
        let TryLocked {
            guard: local,
            mut busy,
            ..
        } = tried;
        let Some((session, got)) = session else {
            busy.extend(wanted);
            return Ok(TryLocked {
                guard: local,
                locked: vec![],
                busy,
            });
        };
        busy.extend(wanted.into_iter().filter(|k| !got.contains(k)));
        Ok(TryLocked {
            guard: self.guard(session, local),
            locked: got,
            busy,
        })
    }

    fn lock_eviction(&self) -> StorageResult<LockGuard> {
        // One evictor per process waits in memory; it then takes the one
        // eviction session of this process (never a key session, so that
        // writers holding every key session cannot starve it).
        let local = self.local.lock_eviction()?;
        let pool = self.inner.eviction.clone();
        let session = self.inner.bridge.run(async move {
            let session = pool.get().await.map_err(pool_error)?;
            session
                .execute(
                    "SELECT pg_advisory_lock($1, $2)",
                    &[&EVICTION_LOCK.0, &EVICTION_LOCK.1],
                )
                .await
                .map_err(db_error)?;
            Ok::<_, store_core::StorageError>(session)
        })?;
        Ok(self.guard(session, local))
    }
}
