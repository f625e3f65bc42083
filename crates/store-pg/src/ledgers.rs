//! The pools across processes. What the records hold is summed from
//! `store_totals` (kept by trigger with each record); what writes in
//! progress hold is one row per process and pool in `store_reservations`,
//! which only rows refreshed in the last minute count. A reservation is
//! decided by one call of `store_reserve`, one at a time per pool.
//!
//! This process's own reservations are counted in memory too: the row
//! mirrors that count, written under a local mutex so that the row never
//! says less than the process holds.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use store_core::ports::{Ledgers, Pool, PoolUsage, StorageResult};
use store_core::StorageError;

use crate::{db_error, pool_error, Inner};

/// How often a process says it is alive (refreshing its rows' `seen_at`).
/// Rows older than a minute (schema: `store_reserve`) do not count, so a
/// killed process's reservations free themselves within a minute.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// Rate-limiter rows whose allowance has been whole for this long are
/// deleted by the heartbeat.
const RATE_ROWS_KEPT_MS: i64 = 120_000;

/// The pools' ledgers of one process, shared with every other.
#[derive(Debug)]
pub struct PgLedgers {
    inner: Arc<Inner>,
    process: String,
    capacity: [u64; 2],
    /// Bytes this process has reserved and not settled, per pool.
    mine: Mutex<[u64; 2]>,
}

fn index(pool: Pool) -> usize {
    match pool {
        Pool::Store => 0,
        Pool::Pics => 1,
    }
}

fn name(pool: Pool) -> &'static str {
    match pool {
        Pool::Store => "store",
        Pool::Pics => "pics",
    }
}

fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl PgLedgers {
    pub(crate) fn open(
        inner: Arc<Inner>,
        store_bytes: u64,
        pics_bytes: u64,
    ) -> Result<Self, StorageError> {
        let process = process_id();
        start_heartbeat(&inner, process.clone());
        Ok(Self {
            inner,
            process,
            capacity: [store_bytes, pics_bytes],
            mine: Mutex::new([0, 0]),
        })
    }

    fn mine(&self) -> MutexGuard<'_, [u64; 2]> {
        self.mine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes this process's count for `pool` to its row. Called with the
    /// local count locked, so rows are written in the order counts change.
    fn publish(&self, pool: Pool, bytes: u64) {
        let queries = self.inner.queries.clone();
        let process = self.process.clone();
        let written = self.inner.bridge.run(async move {
            let client = queries.get().await.map_err(pool_error)?;
            client
                .execute(
                    "UPDATE store_reservations SET bytes = $3, seen_at = now()
                     WHERE process = $1 AND pool = $2",
                    &[&process, &name(pool), &as_i64(bytes)],
                )
                .await
                .map_err(db_error)
        });
        // A lost update only overstates this process's reservations (the
        // safe side) until its next reservation writes the row again.
        if let Err(e) = written {
            eprintln!("storesrv: could not update the pool reservations: {e}");
        }
    }

    /// Gives back `bytes` of this process's reservations.
    fn unreserve(&self, pool: Pool, bytes: u64) {
        let mut mine = self.mine();
        let i = index(pool);
        mine[i] = mine[i].saturating_sub(bytes);
        self.publish(pool, mine[i]);
    }
}

/// A random id for this process's rows.
fn process_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    let a = h.finish();
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(a);
    format!("{:016x}{:016x}", a, h.finish())
}

/// Refreshes this process's rows every [`HEARTBEAT`], and clears rows of
/// processes gone for long and rate-limiter rows that carry nothing.
fn start_heartbeat(inner: &Arc<Inner>, process: String) {
    let queries = inner.queries.clone();
    inner.bridge.spawn(async move {
        let mut tick = tokio::time::interval(HEARTBEAT);
        loop {
            tick.tick().await;
            let Ok(client) = queries.get().await else {
                continue;
            };
            let _ = client
                .execute(
                    "UPDATE store_reservations SET seen_at = now() WHERE process = $1",
                    &[&process],
                )
                .await;
            let _ = client
                .batch_execute(&format!(
                    "DELETE FROM store_reservations WHERE seen_at < now() - interval '1 hour';
                     DELETE FROM store_rate
                      WHERE tat < (extract(epoch FROM now()) * 1000)::bigint - {RATE_ROWS_KEPT_MS};"
                ))
                .await;
        }
    });
}

impl Ledgers for PgLedgers {
    fn try_reserve(&self, pool: Pool, bytes: u64) -> StorageResult<Result<(), u64>> {
        let mut mine = self.mine();
        let i = index(pool);
        let queries = self.inner.queries.clone();
        let (process, held, capacity) = (self.process.clone(), mine[i], self.capacity[i]);
        let short: i64 = self.inner.bridge.run(async move {
            let client = queries.get().await.map_err(pool_error)?;
            let row = client
                .query_one(
                    "SELECT store_reserve($1, $2, $3, $4, $5)",
                    &[
                        &name(pool),
                        &process,
                        &as_i64(held),
                        &as_i64(bytes),
                        &as_i64(capacity),
                    ],
                )
                .await
                .map_err(db_error)?;
            Ok::<_, StorageError>(row.get(0))
        })?;
        if short > 0 {
            return Ok(Err(u64::try_from(short).unwrap_or(u64::MAX)));
        }
        mine[i] = held + bytes;
        Ok(Ok(()))
    }

    fn cancel(&self, pool: Pool, bytes: u64) {
        self.unreserve(pool, bytes);
    }

    fn settle(&self, pool: Pool, bytes: u64) {
        self.unreserve(pool, bytes);
    }

    /// The trigger counted the change with the record.
    fn freed(&self, _pool: Pool, _bytes: u64) {}

    fn usage(&self, pool: Pool) -> StorageResult<PoolUsage> {
        let queries = self.inner.queries.clone();
        let used: i64 = self.inner.bridge.run(async move {
            let client = queries.get().await.map_err(pool_error)?;
            let column = match pool {
                Pool::Store => "pool_bytes",
                Pool::Pics => "pics_bytes",
            };
            let row = client
                .query_one(
                    &format!(
                        "SELECT ((SELECT coalesce(sum({column}), 0) FROM store_totals)
                              + (SELECT coalesce(sum(bytes), 0) FROM store_reservations
                                  WHERE pool = $1 AND seen_at > now() - interval '60 seconds'))::bigint"
                    ),
                    &[&name(pool)],
                )
                .await
                .map_err(db_error)?;
            Ok::<_, StorageError>(row.get(0))
        })?;
        Ok(PoolUsage {
            used_bytes: u64::try_from(used).unwrap_or(0),
            capacity_bytes: self.capacity[index(pool)],
        })
    }
}
