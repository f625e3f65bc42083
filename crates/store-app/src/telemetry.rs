//! What an operator graphs: events the use cases count as they happen,
//! and a snapshot of the store read when asked (a metrics scrape). Nothing
//! here knows an exposition format; the HTTP layer renders it.

use std::sync::atomic::{AtomicU64, Ordering};

use store_core::ports::{Pool, PoolUsage};
use store_core::Totals;

use crate::{App, AppResult};

/// Events counted since the process started.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Expired objects the sweeper removed.
    pub sweep_removed: AtomicU64,
    /// Imports refused by the fetch guard or its limits (a private
    /// address, a body too large, a connection that failed).
    pub import_refused: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// The store as an operator sees it at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Telemetry {
    /// The store pool: bytes the live objects and writes in progress hold.
    pub store_pool: PoolUsage,
    /// The pics pool, likewise.
    pub pics_pool: PoolUsage,
    /// The live records, by kind.
    pub totals: Totals,
    /// Expired objects removed by the sweeper since start.
    pub sweep_removed: u64,
    /// Imports refused since start.
    pub import_refused: u64,
    /// How long ago the oldest record still stored expired: 0 while the
    /// sweeper keeps up, growing while it falls behind or stands still.
    pub sweep_lag_secs: u64,
    /// Image jobs decoding or encoding now.
    pub media_jobs_running: u64,
    /// Image jobs waiting for a slot.
    pub media_jobs_waiting: u64,
}

impl App {
    /// Reads what an operator graphs: the pools, the records by kind, the
    /// sweeper's lag (one read of the expiry index) and the counters.
    pub fn telemetry(&self) -> AppResult<Telemetry> {
        let now = self.now();
        let sweep_lag_secs = self
            .ports
            .repo
            .expiring(1)?
            .first()
            .map_or(0, |(at, _)| at.secs_until(now));
        let (media_jobs_running, media_jobs_waiting) = self.media_slots.load();
        Ok(Telemetry {
            store_pool: self.ledgers.usage(Pool::Store)?,
            pics_pool: self.ledgers.usage(Pool::Pics)?,
            totals: self.ports.repo.totals()?,
            sweep_removed: self.counters.sweep_removed.load(Ordering::Relaxed),
            import_refused: self.counters.import_refused.load(Ordering::Relaxed),
            sweep_lag_secs,
            media_jobs_running,
            media_jobs_waiting,
        })
    }
}
