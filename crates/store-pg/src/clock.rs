//! The database's clock, for every process of a cluster (CONTRACT.md,
//! "Faults in a cluster": one clock). Expiry, sweeps, rate-limit windows
//! and the age of orphaned bytes are decided by the time the use cases
//! read from the `Clock` port; when processes share one database, that
//! port answers the database's time, so a process whose own clock is
//! hours off neither expires objects early nor keeps them late.
//!
//! Reading the time never waits on the database: the clock keeps the
//! database's time of its last reading and the monotonic instant it was
//! taken, and adds the monotonic time since. A task on the adapter's
//! runtime reads the database's time again every [`RESYNC`]; while the
//! database cannot be reached, the clock runs on from its last reading
//! (monotonic time does not jump when the wall clock is set).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use store_core::ports::{Clock, StorageResult};
use store_core::Timestamp;

use crate::Inner;

/// How often the database's time is read again.
const RESYNC: Duration = Duration::from_secs(10);

/// The database's time at a moment, and that moment on the monotonic clock.
#[derive(Debug, Clone, Copy)]
struct Reading {
    db_millis: i64,
    at: Instant,
}

/// The `Clock` port on the database's time.
#[derive(Debug, Clone)]
pub struct PgClock {
    reading: Arc<Mutex<Reading>>,
}

/// Reads the database's clock once, crediting half the round trip.
fn read(inner: &Inner) -> StorageResult<Reading> {
    let sent = Instant::now();
    let row = inner.query_one(
        "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
        vec![],
    )?;
    let answered = Instant::now();
    Ok(Reading {
        db_millis: row.get(0),
        at: sent + (answered - sent) / 2,
    })
}

impl PgClock {
    /// Reads the database's time now, then keeps it up to date in the
    /// background for as long as `inner`'s runtime runs.
    pub(crate) fn start(inner: &Arc<Inner>) -> StorageResult<Self> {
        let reading = Arc::new(Mutex::new(read(inner)?));
        let (kept, weak) = (Arc::clone(&reading), Arc::downgrade(inner));
        inner.bridge.spawn(async move {
            loop {
                tokio::time::sleep(RESYNC).await;
                let Some(inner) = weak.upgrade() else { return };
                // A blocking read on the runtime would stall it: the
                // statement runs on a blocking thread of its own.
                let fresh = tokio::task::spawn_blocking(move || read(&inner)).await;
                match fresh {
                    Ok(Ok(r)) => *kept.lock().unwrap_or_else(|e| e.into_inner()) = r,
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "cannot read the database's clock; running on")
                    }
                    Err(_) => return,
                }
            }
        });
        Ok(Self { reading })
    }
}

impl Clock for PgClock {
    fn now(&self) -> Timestamp {
        let r = *self.reading.lock().unwrap_or_else(|e| e.into_inner());
        let since = i64::try_from(r.at.elapsed().as_millis()).unwrap_or(i64::MAX);
        Timestamp::from_millis(r.db_millis.saturating_add(since))
    }
}
