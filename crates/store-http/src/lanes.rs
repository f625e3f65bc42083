//! The blocking pool, shared out by class of work.
//!
//! Disk reads and writes, fsyncs, zips and image jobs all run on tokio's
//! blocking pool, which has a fixed number of threads. Left alone, one
//! class of work could take every thread (a thousand image uploads, or a
//! slow disk under a download flood), and every other request would wait
//! behind it. So each class has a lane: a semaphore on the async side that
//! a job must pass before it is handed to the pool. A job waiting for its
//! lane waits as a future, holding no thread, and the lanes together hold
//! fewer permits than the pool has threads, so no lane can starve another.
//!
//! Image jobs and password checks also have a bounded queue: past it, the answer is 429
//! `rate_limited` with `Retry-After` at once, instead of a wait that grows
//! with the flood.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use store_app::{AppError, AppResult};
use store_core::{StorageError, StoreError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Threads of tokio's blocking pool (the binary builds its runtime with
/// it). The lanes below hold 388 permits together, leaving the rest for
/// the log and whatever else of the process's needs one.
pub const BLOCKING_THREADS_MAX: usize = 448;
/// Chunk reads of downloads and zips at once.
const READ_JOBS_MAX: usize = 128;
/// Use cases, upload batches and their commits (fsync) at once.
const WORK_JOBS_MAX: usize = 224;
/// Zip archives being assembled at once.
const ZIP_JOBS_MAX: usize = 32;
/// Metrics scrapes reading the store at once (their own listener's lane,
/// `metrics.rs`): a scraper asks every few seconds.
pub(crate) const SCRAPE_JOBS_MAX: usize = 1;
/// Image jobs (decode, resize, encode) at once: store-app's own bound, so
/// its slots never make a thread wait.
const MEDIA_JOBS_MAX: usize = store_app::MEDIA_JOBS_MAX;
/// Image jobs waiting for a slot; one more answers 429.
pub const MEDIA_QUEUE_MAX: usize = 32;
/// Password checks at once: one, so that checks take at most one core
/// of the two of the reference machine.
const PASSWORD_JOBS_MAX: usize = 1;
/// Password checks waiting; one more answers 429. With one check taking
/// about 50 ms, the last waits under a second.
pub const PASSWORD_QUEUE_MAX: usize = 16;
/// Seconds a client refused by a full queue is asked to wait.
pub const BUSY_RETRY_AFTER_SECS: u64 = 5;

/// One class of blocking work.
#[derive(Debug, Clone)]
pub struct Lane(Arc<Semaphore>);

impl Lane {
    pub(crate) fn new(permits: usize) -> Self {
        Self(Arc::new(Semaphore::new(permits)))
    }

    /// Runs `f` on the blocking pool once the lane has room.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> AppResult<T> {
        let permit = self.enter().await;
        let out = tokio::task::spawn_blocking(f).await.map_err(worker_failed);
        drop(permit);
        out
    }

    async fn enter(&self) -> OwnedSemaphorePermit {
        Arc::clone(&self.0)
            .acquire_owned()
            .await
            .expect("lanes are never closed")
    }
}

/// Turns a blocking-pool job's panic into a storage fault.
pub fn worker_failed(e: tokio::task::JoinError) -> AppError {
    AppError::Storage(StorageError::new(format!("a worker failed: {e}")))
}

/// The lanes of one server.
#[derive(Debug)]
pub struct Lanes {
    /// Reads of stored bytes for downloads.
    pub reads: Lane,
    /// Use cases: record changes, uploads being written, sweeps.
    pub work: Lane,
    /// Zip archives being written for bundle and dir downloads.
    pub zips: Lane,
    /// Image jobs (decode, resize, encode), with their queue.
    media: Queued,
    /// Password checks (argon2id, about 50 ms of one core each), with
    /// their queue: a flood of wrong passwords takes one core at most and
    /// is refused past the queue, so other requests keep the rest.
    passwords: Queued,
}

impl Default for Lanes {
    fn default() -> Self {
        Self {
            reads: Lane::new(READ_JOBS_MAX),
            work: Lane::new(WORK_JOBS_MAX),
            zips: Lane::new(ZIP_JOBS_MAX),
            media: Queued::new(MEDIA_JOBS_MAX, MEDIA_QUEUE_MAX, "image jobs"),
            passwords: Queued::new(PASSWORD_JOBS_MAX, PASSWORD_QUEUE_MAX, "password checks"),
        }
    }
}

/// A lane with a bounded queue in front of it.
#[derive(Debug)]
struct Queued {
    lane: Lane,
    /// Jobs waiting for, or holding, a permit.
    queued: Arc<AtomicUsize>,
    /// Most jobs running and waiting at once.
    limit: usize,
    /// What the jobs are, for the refusal's message.
    what: &'static str,
}

impl Queued {
    fn new(running_max: usize, waiting_max: usize, what: &'static str) -> Self {
        Self {
            lane: Lane::new(running_max),
            queued: Arc::new(AtomicUsize::new(0)),
            limit: running_max + waiting_max,
            what,
        }
    }

    fn ticket(&self) -> Result<Ticket, StoreError> {
        let limit = self.limit;
        let taken = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            });
        if taken.is_err() {
            return Err(StoreError::Busy {
                message: format!(
                    "{limit} {} are already running or queued; try again shortly",
                    self.what
                ),
                retry_after_secs: BUSY_RETRY_AFTER_SECS,
            });
        }
        Ok(Ticket {
            queued: Arc::clone(&self.queued),
            lane: self.lane.clone(),
        })
    }
}

/// A place in a lane's queue, taken before the work is started (for an
/// image, before its body is read) so that a full queue refuses before
/// anything is spent on the request.
#[derive(Debug)]
pub struct Ticket {
    queued: Arc<AtomicUsize>,
    lane: Lane,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Ticket {
    /// Runs the job once its lane has room.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> AppResult<T> {
        self.lane.run(f).await
    }
}

impl Lanes {
    /// A place in the image queue, or 429 (`StoreError::Busy`) when the queue is full.
    pub fn media_ticket(&self) -> Result<Ticket, StoreError> {
        self.media.ticket()
    }

    /// A place in the password checks' queue, or 429 (`StoreError::Busy`)
    /// when the queue is full.
    pub fn password_ticket(&self) -> Result<Ticket, StoreError> {
        self.passwords.ticket()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lanes_leave_threads_to_spare() {
        let held =
            READ_JOBS_MAX + WORK_JOBS_MAX + ZIP_JOBS_MAX + MEDIA_JOBS_MAX + PASSWORD_JOBS_MAX;
        assert!(held < BLOCKING_THREADS_MAX, "{held} permits");
    }

    #[tokio::test]
    async fn the_media_queue_refuses_past_its_bound() {
        let lanes = Lanes::default();
        let held: Vec<_> = (0..MEDIA_JOBS_MAX + MEDIA_QUEUE_MAX)
            .map(|_| lanes.media_ticket().expect("room"))
            .collect();
        let refused = lanes.media_ticket().expect_err("full");
        assert_eq!(refused.retry_after_secs(), Some(BUSY_RETRY_AFTER_SECS));
        drop(held);
        assert!(lanes.media_ticket().is_ok());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lane_never_runs_more_than_its_permits() {
        let lane = Lane::new(3);
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let jobs = (0..12).map(|_| {
            let (lane, running, peak) = (lane.clone(), running.clone(), peak.clone());
            tokio::spawn(async move {
                lane.run(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
                .await
            })
        });
        for j in jobs.collect::<Vec<_>>() {
            j.await.unwrap().unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 3);
    }
}
