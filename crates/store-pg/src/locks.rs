//! Per-key mutual exclusion across processes: session advisory locks with
//! a lease.
//!
//! A use case that holds keys holds one connection of the lock pool, on
//! which it took `pg_advisory_lock` of each key's 64-bit hash; dropping
//! the guard unlocks them and gives the connection back. If the process
//! dies, its sessions end and PostgreSQL releases their locks: a killed
//! process never leaves a key locked.
//!
//! A process that is frozen (SIGSTOP, a stalled VM) or cut off keeps its
//! sessions open, and the kernel still answers TCP keepalives for it; so
//! each lock session is a lease: the server ends a session idle for
//! [`LOCK_LEASE`] (`idle_session_timeout`), and a live holder keeps its
//! session busy with a heartbeat every [`LOCK_HEARTBEAT`]. A frozen holder
//! sends none, loses its session and with it its locks. When it wakes, its
//! writes are refused by the records' revisions (the fence, see
//! `Repository::replace`), never applied over what others wrote.
//!
//! Waiting is bounded too: for the keys' stripes in this process and for
//! the advisory locks in the database, [`LOCK_WAIT`] in all, after which
//! the request fails with 503 `unavailable` and may be retried.
//!
//! Eviction is the exception: an evictor waits for the cross-process
//! eviction lock one second at most, then evicts under its own process's
//! lock alone, since a frozen evictor must not stop every upload that
//! needs room (CONTRACT.md, "Faults in a cluster").
//!
//! In front of the database sits the in-process [`StripedLocks`]: writers
//! of one key in one process queue in memory, so that a burst of writes to
//! one dir holds one connection, not one per waiting request.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool_postgres::{Object, Pool, Timeouts};
use store_core::local::StripedLocks;
use store_core::ports::{KeyLocks, LockGuard, StorageResult, TryLocked};
use store_core::{StorageError, StorageErrorKind};
use tokio::sync::oneshot;

use crate::{db_error, pool_error, Inner};

/// The advisory lock (two-key form) under which eviction is decided.
const EVICTION_LOCK: (i32, i32) = (crate::ADVISORY_CLASS, 2);

/// How long a writer waits for a key held elsewhere, in this process and
/// in the database together, before its request fails (503).
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(5);
/// A lock session idle this long is ended by the server, which releases
/// its locks: how long a frozen holder keeps others from a key, at most.
const LOCK_LEASE: Duration = Duration::from_secs(10);
/// How long an evictor waits for the cross-process eviction lock before it
/// evicts under this process's lock alone (see [`PgLocks::lock_eviction`]).
const EVICTION_WAIT: Duration = Duration::from_secs(1);
/// The pause between two tries of the eviction lock.
const EVICTION_RETRY: Duration = Duration::from_millis(25);
/// The lease, set on a lock session in the statements that take its
/// locks: the server ends the session once it stays idle [`LOCK_LEASE`]
/// (`idle_session_timeout`), which releases its locks. Set per holding
/// rather than per connection, so that idle sessions in the pool are not
/// ended (and reconnected) every ten seconds.
fn lease_on() -> String {
    format!(
        "set_config('idle_session_timeout', '{}', false)",
        LOCK_LEASE.as_millis()
    )
}
/// Lifts the lease when the locks are given back.
const LEASE_OFF: &str = "set_config('idle_session_timeout', '0', false)";
/// How often a live holder shows the server its session is in use.
const LOCK_HEARTBEAT: Duration = Duration::from_secs(2);
/// The first pause between two tries of a busy stripe in this process;
/// it doubles up to [`LOCAL_RETRY_MAX`].
const LOCAL_RETRY_FIRST: Duration = Duration::from_millis(1);
const LOCAL_RETRY_MAX: Duration = Duration::from_millis(50);

/// Cross-process key locks in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgLocks {
    inner: Arc<Inner>,
    local: StripedLocks,
}

/// What a guard holds: the local stripes, and the word that lets the lock
/// session's keeper (which owns the session) unlock it.
struct Held {
    release: Option<oneshot::Sender<()>>,
    _local: LockGuard,
}

impl Drop for Held {
    fn drop(&mut self) {
        // The keeper unlocks without being waited for: the next holder
        // waits in PostgreSQL until it is done.
        if let Some(release) = self.release.take() {
            let _ = release.send(());
        }
    }
}

/// Keeps a lock session alive while its guard is held, then unlocks it
/// and gives it back to the pool. A session that cannot answer (lost,
/// ended by the server) is closed instead, which releases its locks too.
async fn keep(session: Object, mut release: oneshot::Receiver<()>) {
    loop {
        match tokio::time::timeout(LOCK_HEARTBEAT, &mut release).await {
            // Released, or the guard is gone without a word: unlock.
            Ok(_) => break,
            Err(_) => {
                let beat = tokio::time::timeout(
                    crate::STATEMENT_DEADLINE,
                    session.batch_execute("SELECT 1"),
                )
                .await;
                if !matches!(beat, Ok(Ok(()))) {
                    tracing::warn!("a key lock's database session was lost while held");
                    drop(Object::take(session));
                    return;
                }
            }
        }
    }
    // Unlocked, the session is an idle one of the pool again: no lease.
    let unlocked = tokio::time::timeout(
        crate::STATEMENT_DEADLINE,
        session.batch_execute(&format!("SELECT pg_advisory_unlock_all(), {LEASE_OFF}")),
    )
    .await;
    if !matches!(unlocked, Ok(Ok(()))) {
        drop(Object::take(session));
    }
}

/// The fault of a lock not had within [`LOCK_WAIT`].
fn busy(what: &str) -> StorageError {
    StorageError::of(
        StorageErrorKind::Unavailable,
        format!(
            "{what} stayed locked for {} ms: another process holds it",
            LOCK_WAIT.as_millis()
        ),
    )
}

impl PgLocks {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Self {
            inner,
            local: StripedLocks::default(),
        }
    }

    fn guard(&self, session: Object, local: LockGuard) -> LockGuard {
        let (release, released) = oneshot::channel();
        self.inner.bridge.spawn(keep(session, released));
        LockGuard::new(Held {
            release: Some(release),
            _local: local,
        })
    }

    /// The stripes of `keys` in this process, waiting at most until
    /// `deadline`. Tried, not queued for: a waiter that could wait forever
    /// behind a holder that waits on the database would outlive its
    /// request.
    fn local_within(&self, keys: &[&str], deadline: Instant) -> StorageResult<LockGuard> {
        let owned: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        let mut pause = LOCAL_RETRY_FIRST;
        loop {
            let tried = self.local.try_lock_now(owned.clone());
            if tried.busy.is_empty() {
                return Ok(tried.guard);
            }
            drop(tried.guard);
            if Instant::now() + pause > deadline {
                return Err(busy("a key"));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(LOCAL_RETRY_MAX);
        }
    }

    /// Takes a session from `pool` and waits on it for each of `keys`'
    /// locks, in sorted order (two callers naming the same keys take them
    /// in the same order, so they cannot deadlock), at most until
    /// `deadline` (the session's `lock_timeout` bounds it on the server
    /// too).
    fn lock_keys(
        &self,
        pool: &Pool,
        mut keys: Vec<String>,
        deadline: Instant,
    ) -> StorageResult<Object> {
        keys.sort();
        keys.dedup();
        let pool = pool.clone();
        self.inner.bridge.run(async move {
            // The wait for a connection counts against the same patience.
            let wait = Timeouts {
                wait: Some(deadline.saturating_duration_since(Instant::now())),
                ..pool.timeouts()
            };
            let session = pool.timeout_get(&wait).await.map_err(pool_error)?;
            let patience = deadline.saturating_duration_since(Instant::now());
            let locked = tokio::time::timeout(patience, async {
                let lease = session
                    .prepare_cached(&format!(
                        "SELECT {}, pg_advisory_lock(hashtextextended($1, 0))",
                        lease_on()
                    ))
                    .await
                    .map_err(db_error)?;
                for key in &keys {
                    session.execute(&lease, &[key]).await.map_err(db_error)?;
                }
                Ok(())
            })
            .await;
            match locked {
                Ok(Ok(())) => Ok(session),
                // A lock_timeout, or a lock the client gave up on: this
                // session may hold some of the keys, so it is closed, which
                // releases them.
                Ok(Err(e)) => {
                    drop(Object::take(session));
                    Err(e)
                }
                Err(_) => {
                    drop(Object::take(session));
                    Err(busy("a key"))
                }
            }
        })
    }
}

impl KeyLocks for PgLocks {
    fn lock(&self, keys: &[&str]) -> StorageResult<LockGuard> {
        let deadline = Instant::now() + LOCK_WAIT;
        let local = self.local_within(keys, deadline)?;
        let keys = keys.iter().map(|k| k.to_string()).collect();
        let session = self.lock_keys(&self.inner.locks, keys, deadline)?;
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
            let answer = tokio::time::timeout(crate::STATEMENT_DEADLINE, async {
                let sql = format!(
                    "WITH lease AS (SELECT {})
                     SELECT k FROM lease, unnest($1::text[]) AS k
                     WHERE pg_try_advisory_lock(hashtextextended(k, 0))",
                    lease_on()
                );
                session.query(&sql, &[&wanted]).await.map_err(db_error)
            })
            .await;
            let rows = match answer {
                Ok(Ok(rows)) => rows,
                // The statement may have taken some of the locks before it
                // failed: the session is closed, which releases them.
                Ok(Err(e)) => {
                    drop(Object::take(session));
                    return Err(e);
                }
                Err(_) => return Err(crate::gave_up(session, crate::STATEMENT_DEADLINE)),
            };
            let got: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
            Ok::<_, StorageError>((Some((session, got)), wanted))
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
            let deadline = tokio::time::Instant::now() + EVICTION_WAIT;
            loop {
                let tried = tokio::time::timeout(crate::STATEMENT_DEADLINE, async {
                    session
                        .query_one(
                            &format!(
                                "SELECT got, CASE WHEN got THEN {} END
                                 FROM (SELECT pg_try_advisory_lock($1, $2) AS got) AS t",
                                lease_on()
                            ),
                            &[&EVICTION_LOCK.0, &EVICTION_LOCK.1],
                        )
                        .await
                        .map_err(db_error)
                })
                .await;
                let got: bool = match tried {
                    Ok(row) => row?.get(0),
                    Err(_) => return Err(crate::gave_up(session, crate::STATEMENT_DEADLINE)),
                };
                if got {
                    return Ok(Some(session));
                }
                if tokio::time::Instant::now() + EVICTION_RETRY > deadline {
                    return Ok(None);
                }
                tokio::time::sleep(EVICTION_RETRY).await;
            }
        })?;
        match session {
            Some(session) => Ok(self.guard(session, local)),
            None => {
                // Held elsewhere for longer than a live evictor holds it:
                // most likely by a process that froze. Evicting without it
                // may free one shortfall more than needed when two
                // evictions overlap; waiting would stop every upload that
                // needs room, on every process, for the holder's lease.
                tracing::warn!(
                    "the eviction lock stayed busy for {} ms; evicting without it",
                    EVICTION_WAIT.as_millis()
                );
                Ok(local)
            }
        }
    }
}
