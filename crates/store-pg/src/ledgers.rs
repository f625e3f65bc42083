//! The pools across processes. What the records hold is summed from
//! `store_totals` (kept by trigger with each record); what writes in
//! progress hold is one row per process and pool in `store_reservations`,
//! which only rows refreshed in the last minute count. A reservation is
//! decided by one call of `store_reserve`, one at a time per pool, from
//! the totals and the rows read in one snapshot, and added to the row.
//!
//! A record write takes its reserved bytes off the row in the record's own
//! transaction (migration 3, `PgRepository::replace_settled`): no moment counts
//! them twice, so no writer short of room evicts for bytes already
//! recorded. This process's reservations are counted in memory too
//! ([`Reserved`]); a cancel or a leftover settle writes that count to the
//! row, under a local mutex, so that the row never says less than the
//! process holds.

use std::sync::{Arc, MutexGuard};
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

/// What this process holds, per pool, under one mutex that its ledgers
/// and its record writes share, so that a record write settling its bytes
/// in the record's transaction ([`crate::PgRepository`]) and the
/// reservations of other writes of this process see each other whole.
#[derive(Debug, Default)]
pub(crate) struct Reserved {
    /// Bytes reserved and not settled.
    pub(crate) mine: [u64; 2],
    /// Bytes a record write has settled already, which the ledger's
    /// `settle` for them then only takes off this count.
    pub(crate) settled_by_records: [u64; 2],
    /// Counts this process's writes of its count to its rows (cancels and
    /// settles; a reservation adds to the row instead), so that a record
    /// write can tell whether one happened while its own statement ran.
    pub(crate) row_writes: u64,
}

/// The pools' ledgers of one process, shared with every other.
#[derive(Debug)]
pub struct PgLedgers {
    inner: Arc<Inner>,
    process: String,
    capacity: [u64; 2],
}

pub(crate) fn index(pool: Pool) -> usize {
    match pool {
        Pool::Store => 0,
        Pool::Pics => 1,
    }
}

/// The `pool` column's value for `pool`.
pub(crate) fn pool_name(pool: Pool) -> &'static str {
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
        // One ledger per process: a second one (tests) keeps the first's
        // name for the records' settling, which only ever errs safe.
        let _ = inner.process.set(process.clone());
        start_heartbeat(&inner, process.clone());
        Self {
            inner,
            process,
            capacity: [store_bytes, pics_bytes],
        }
    }

    fn reserved(&self) -> MutexGuard<'_, Reserved> {
        self.inner
            .reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Gives back `bytes` of this process's reservations.
    fn unreserve(&self, pool: Pool, bytes: u64) {
        let mut r = self.reserved();
        let i = index(pool);
        r.mine[i] = r.mine[i].saturating_sub(bytes);
        r.row_writes += 1;
        publish(&self.inner, &self.process, pool, r.mine[i]);
    }
}

/// Writes `process`'s count for `pool` to its row. The caller holds the
/// count's lock, so rows are written in the order counts change.
pub(crate) fn publish(inner: &Inner, process: &str, pool: Pool, bytes: u64) {
    let written = inner.query(
        "UPDATE store_reservations SET bytes = $3, seen_at = now()
         WHERE process = $1 AND pool = $2",
        vec![
            Box::new(process.to_string()),
            Box::new(pool_name(pool)),
            Box::new(as_i64(bytes)),
        ],
    );
    // A lost update only overstates this process's reservations (the safe
    // side) until its next reservation writes the row again.
    if let Err(e) = written {
        tracing::warn!(error = %e, "could not update the pool reservations");
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
        let mut r = self.reserved();
        let i = index(pool);
        let held = r.mine[i];
        let short: i64 = self
            .inner
            .query_one(
                "SELECT store_reserve($1, $2, $3, $4, $5)",
                vec![
                    Box::new(pool_name(pool)),
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
        r.mine[i] = held + bytes;
        Ok(Ok(()))
    }

    fn cancel(&self, pool: Pool, bytes: u64) {
        self.unreserve(pool, bytes);
    }

    /// The record's write took what it could off the row and the count
    /// already (`settled_by_records`); the rest (a write that fell back to
    /// a plain one, or failed and may have landed) is taken off here.
    fn settle(&self, pool: Pool, bytes: u64) {
        let i = index(pool);
        let rest = {
            let mut r = self.reserved();
            let done = bytes.min(r.settled_by_records[i]);
            r.settled_by_records[i] -= done;
            bytes - done
        };
        if rest > 0 {
            self.unreserve(pool, rest);
        }
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
            .query_one(sql, vec![Box::new(pool_name(pool))])?
            .get(0);
        Ok(PoolUsage {
            used_bytes: u64::try_from(used).unwrap_or(0),
            capacity_bytes: self.capacity[index(pool)],
        })
    }
}
