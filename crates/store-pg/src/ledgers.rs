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

use store_core::ports::{Ledgers, Pool, PoolUsage, Random, StorageResult};

use crate::Inner;

/// How often a process says it is alive (refreshing its rows' `seen_at`).
/// Rows older than a minute (schema: `store_reserve`) do not count, so a
/// killed process's reservations free themselves within a minute.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// Rate-limiter rows whose allowance has been whole for this long are
/// deleted by the heartbeat.
const RATE_ROWS_KEPT_MS: i64 = 120_000;

/// What a pool holds: its records, and the live reservations of every
/// process ($1 names the pool).
const USED_STORE: &str = "SELECT ((SELECT coalesce(sum(pool_bytes), 0) FROM store_totals)
    + (SELECT coalesce(sum(bytes), 0) FROM store_reservations
        WHERE pool = $1 AND seen_at > now() - interval '60 seconds'))::bigint";
const USED_PICS: &str = "SELECT ((SELECT coalesce(sum(pics_bytes), 0) FROM store_totals)
    + (SELECT coalesce(sum(bytes), 0) FROM store_reservations
        WHERE pool = $1 AND seen_at > now() - interval '60 seconds'))::bigint";

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
        random: &dyn Random,
    ) -> Self {
        let process = store_core::ids::token(random);
        start_heartbeat(&inner, process.clone());
        Self {
            inner,
            process,
            capacity: [store_bytes, pics_bytes],
            mine: Mutex::new([0, 0]),
        }
    }

    fn mine(&self) -> MutexGuard<'_, [u64; 2]> {
        self.mine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes this process's count for `pool` to its row. Called with the
    /// local count locked, so rows are written in the order counts change.
    fn publish(&self, pool: Pool, bytes: u64) {
        let written = self.inner.query(
            "UPDATE store_reservations SET bytes = $3, seen_at = now()
             WHERE process = $1 AND pool = $2",
            vec![
                Box::new(self.process.clone()),
                Box::new(name(pool)),
                Box::new(as_i64(bytes)),
            ],
        );
        // A lost update only overstates this process's reservations (the
        // safe side) until its next reservation writes the row again.
        if let Err(e) = written {
            tracing::warn!(error = %e, "could not update the pool reservations");
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
        let held = mine[i];
        let short: i64 = self
            .inner
            .query_one(
                "SELECT store_reserve($1, $2, $3, $4, $5)",
                vec![
                    Box::new(name(pool)),
                    Box::new(self.process.clone()),
                    Box::new(as_i64(held)),
                    Box::new(as_i64(bytes)),
                    Box::new(as_i64(self.capacity[i])),
                ],
            )?
            .get(0);
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
        let sql = match pool {
            Pool::Store => USED_STORE,
            Pool::Pics => USED_PICS,
        };
        let used: i64 = self
            .inner
            .query_one(sql, vec![Box::new(name(pool))])?
            .get(0);
        Ok(PoolUsage {
            used_bytes: u64::try_from(used).unwrap_or(0),
            capacity_bytes: self.capacity[index(pool)],
        })
    }
}
