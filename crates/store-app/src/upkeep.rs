//! The store's upkeep while it serves: the expiry sweeper, the orphan
//! collection (after a start, and every [`ORPHAN_PERIOD`] when processes
//! share the store) and the deletion queue's drainer, each on a plain
//! thread of its own. The store
//! owns them (as mini-redis's `Db` owns its purge task), not the HTTP
//! shell: an embedder that serves some other way, or none, starts them the
//! same way, with or without an async runtime.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use store_core::Timestamp;

use crate::{App, AppError};

/// Expired records the sweeper removes per round.
pub const SWEEP_BATCH: usize = 1000;

/// The sweeper sleeps at most this long, so objects created after it went
/// to sleep (here or in another process) are collected without delay worth
/// noticing. Reads answer 404 from the moment of expiry regardless: the
/// sweep only reclaims space.
pub const SWEEP_IDLE_MAX: Duration = Duration::from_secs(60);

/// What the upkeep's threads sleep on between rounds: the App's, shared
/// by every [`Upkeep`] it starts. Each upkeep has its own stop flag; the
/// drainers are also woken by writes that queued deletes due at once.
#[derive(Debug, Default)]
pub(crate) struct Signals {
    /// Whether a write queued deletes due at once since a drainer last
    /// looked.
    deletes_queued: Mutex<bool>,
    /// The drainers sleep here; the sweepers and collectors on `others`,
    /// so that a write wakes no thread but a drainer.
    drainers: Condvar,
    others: Condvar,
}

impl Signals {
    /// Wakes the drainer for deletes a write just queued with no grace:
    /// they are done now rather than on its next round, up to
    /// [`DRAIN_IDLE`] later. Deletes with a grace wait for their round.
    pub(crate) fn deletes_queued(&self) {
        *self.lock() = true;
        self.drainers.notify_all();
    }

    /// Wakes every sleeping thread, to see whether its upkeep stopped.
    /// The lock is taken between the stop flag's store and the wake, so
    /// that a thread that has just found the flag unset is asleep before
    /// it is woken.
    fn wake_all(&self) {
        drop(self.lock());
        self.drainers.notify_all();
        self.others.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, bool> {
        self.deletes_queued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Which thread sleeps: only the drainer wakes for queued deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sleeper {
    Drainer,
    Other,
}

/// Whether a `sleeper` of an upkeep that is `stopped` (or not) ends its
/// sleep, with deletes queued (or not).
fn ends_sleep(sleeper: Sleeper, stopped: bool, deletes_queued: bool) -> bool {
    stopped || (sleeper == Sleeper::Drainer && deletes_queued)
}

/// How an upkeep thread sleeps: on its App's signals, until its own
/// upkeep's stop.
#[derive(Debug, Clone)]
struct Sleep {
    signals: Arc<Signals>,
    stop: Arc<AtomicBool>,
}

/// The running upkeep; [`Upkeep::stop`] ends it.
#[derive(Debug)]
pub struct Upkeep {
    /// This upkeep's stop flag and its App's signals: set, then every
    /// sleeping round is woken. The orphan collection also reads the flag
    /// between batches.
    sleep: Sleep,
    threads: Vec<JoinHandle<()>>,
}

impl App {
    /// Starts the sweeper, the orphan collection and, where the records
    /// keep a deletion queue, its drainer. A record the
    /// collection cannot read means the store is damaged: `on_damage` is
    /// told why, once, and the caller should stop serving (running on it
    /// would hide the damage).
    pub fn start_upkeep(
        self: &Arc<Self>,
        on_damage: impl FnOnce(String) + Send + 'static,
    ) -> std::io::Result<Upkeep> {
        let sleep = Sleep {
            signals: Arc::clone(&self.upkeep_signals),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let sweeper = {
            let (app, sleep) = (Arc::clone(self), sleep.clone());
            std::thread::Builder::new()
                .name("store-sweeper".into())
                .spawn(move || sweep_until_stopped(&app, &sleep))?
        };
        let collector = {
            let (app, sleep) = (Arc::clone(self), sleep.clone());
            let mut on_damage = Some(on_damage);
            std::thread::Builder::new()
                .name("store-orphans".into())
                .spawn(move || {
                    if !app.intents_kept {
                        return collect_orphans_once(&app, &sleep.stop, &mut on_damage);
                    }
                    rounds_until_stopped(&sleep, Sleeper::Other, || {
                        collect_orphans_once(&app, &sleep.stop, &mut on_damage);
                        ORPHAN_PERIOD
                    });
                })?
        };
        let mut threads = vec![sweeper, collector];
        let deliverers = if self.delivers_webhooks() {
            crate::webhooks::DELIVERERS
        } else {
            0
        };
        for i in 0..deliverers {
            let (app, sleep) = (Arc::clone(self), sleep.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("store-webhooks-{i}"))
                    .spawn(move || {
                        if let Some(webhook) = app.webhook.get() {
                            (webhook.deliverer_setup)();
                        }
                        deliver_until_stopped(&app, &sleep);
                    })?,
            );
        }
        if self.ports.repo.queues_deletes() || self.intents_kept {
            let (app, sleep) = (Arc::clone(self), sleep.clone());
            threads.push(
                std::thread::Builder::new()
                    .name("store-deletes".into())
                    .spawn(move || drain_until_stopped(&app, &sleep))?,
            );
        }
        Ok(Upkeep { sleep, threads })
    }
}

impl Upkeep {
    /// Stops its threads and waits for them: a round or a batch of the
    /// collection in progress finishes first. Blocks; from async code, call
    /// it on a blocking thread.
    pub fn stop(self) {
        self.sleep.stop.store(true, Ordering::SeqCst);
        self.sleep.signals.wake_all();
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// How often each process collects orphans when processes share the
/// store: a crashed process's orphans are gone within this, and a bucket
/// of a million blobs is listed (a thousand requests) no more often.
pub const ORPHAN_PERIOD: Duration = Duration::from_secs(3600);

/// Queued deletes done per round (see [`App::drain_deletes`]).
pub const DRAIN_BATCH: usize = 256;

/// How long the deletion queue's drainer sleeps when nothing is due: one
/// indexed lookup per process this often, so that a delete the bucket
/// refused is retried soon after it comes due again.
pub const DRAIN_IDLE: Duration = Duration::from_secs(2);

/// Ended intents forgotten per round of the drainer: at most a round every
/// [`DRAIN_IDLE`], so a store keeps up with 2,500 uploads a second, each
/// round one short statement.
pub const INTENTS_FORGOTTEN_BATCH: usize = 5_000;

/// Deletes queued blobs as they come due, and forgets ended intents,
/// until told to stop.
fn drain_until_stopped(app: &App, sleep: &Sleep) {
    rounds_until_stopped(sleep, Sleeper::Drainer, || {
        let drained = match app.drain_deletes(DRAIN_BATCH) {
            Ok(n) => n == DRAIN_BATCH,
            Err(e) => {
                tracing::error!(error = %e, "draining the deletion queue failed");
                false
            }
        };
        let forgot = match app.forget_ended_intents(INTENTS_FORGOTTEN_BATCH) {
            Ok(n) => n == INTENTS_FORGOTTEN_BATCH,
            Err(e) => {
                tracing::error!(error = %e, "forgetting ended intents failed");
                false
            }
        };
        // A full batch of either: more may be waiting.
        if drained || forgot {
            Duration::ZERO
        } else {
            DRAIN_IDLE
        }
    });
}

/// Delivers webhook events round after round, sleeping
/// [`crate::webhooks::DELIVER_IDLE`] when none was due, until told to stop.
fn deliver_until_stopped(app: &App, sleep: &Sleep) {
    rounds_until_stopped(sleep, Sleeper::Other, || match app.deliver_round() {
        Ok(0) => crate::webhooks::DELIVER_IDLE,
        Ok(_) => Duration::ZERO,
        Err(e) => {
            tracing::error!(error = %e, "could not claim webhook events");
            crate::webhooks::DELIVER_IDLE
        }
    });
}

/// Sweeps expired objects, sleeping until the next expiry (or at most
/// [`SWEEP_IDLE_MAX`]) in between, until told to stop.
fn sweep_until_stopped(app: &App, sleep: &Sleep) {
    rounds_until_stopped(sleep, Sleeper::Other, || {
        resweep_blocks(app);
        sweep_round(app)
    });
}

/// The blocks' second sweep (`moderation::BLOCK_RESWEEP_SECS`).
fn resweep_blocks(app: &App) {
    match app.resweep_recent_blocks() {
        Ok(removed) if !removed.is_empty() => {
            tracing::info!(
                removed = removed.len(),
                "blocked bytes found again and removed"
            );
        }
        Ok(_) => {}
        Err(e) => tracing::error!(error = %e, "the blocks' second sweep failed"),
    }
}

/// One round of the expiry sweep, answering the pause before the next.
fn sweep_round(app: &App) -> Duration {
    match app.sweep(SWEEP_BATCH) {
        Ok(report) if report.removed == SWEEP_BATCH => Duration::ZERO,
        Ok(report) => {
            if report.removed > 0 {
                tracing::info!(removed = report.removed, "expired objects swept");
            }
            next_pause(app.now(), report.next_expiry)
        }
        Err(e) => {
            tracing::error!(error = %e, "sweep failed");
            SWEEP_IDLE_MAX
        }
    }
}

/// Runs `round` again and again, each time sleeping the pause it answers,
/// until told to stop (which also cuts a sleep short). The drainer's
/// sleep is cut short by deletes queued due at once, too.
fn rounds_until_stopped(sleep: &Sleep, sleeper: Sleeper, mut round: impl FnMut() -> Duration) {
    let signals = &*sleep.signals;
    let condvar = match sleeper {
        Sleeper::Drainer => &signals.drainers,
        Sleeper::Other => &signals.others,
    };
    let stopped = || sleep.stop.load(Ordering::SeqCst);
    loop {
        let pause = round();
        let (mut queued, _) = condvar
            .wait_timeout_while(signals.lock(), pause, |queued| {
                !ends_sleep(sleeper, stopped(), *queued)
            })
            .unwrap_or_else(PoisonError::into_inner);
        if stopped() {
            return;
        }
        if sleeper == Sleeper::Drainer {
            *queued = false;
        }
    }
}

/// How long the sweeper may sleep at `now`: until the next expiry, at most
/// [`SWEEP_IDLE_MAX`].
fn next_pause(now: Timestamp, next_expiry: Option<Timestamp>) -> Duration {
    next_expiry.map_or(SWEEP_IDLE_MAX, |at| {
        let ms = at.as_millis().saturating_sub(now.as_millis()).max(0) as u64;
        Duration::from_millis(ms).min(SWEEP_IDLE_MAX)
    })
}

/// Removes orphan blobs (left by a crash mid-write) while the store
/// already serves: reading every record of a large store takes seconds,
/// which a restart should not wait for (docs/PERFORMANCE.md, scenario 9).
/// `on_damage` is taken at the first damage found.
fn collect_orphans_once<F: FnOnce(String)>(
    app: &App,
    stop: &AtomicBool,
    on_damage: &mut Option<F>,
) {
    let started = Instant::now();
    match app.collect_orphans(stop) {
        Ok(r) if r.gave_up => {
            tracing::info!(removed = r.removed, "orphan collection stopped early")
        }
        Ok(r) => tracing::info!(
            removed = r.removed,
            ms = started.elapsed().as_millis() as u64,
            "orphan collection done"
        ),
        Err(AppError::Storage(e)) if e.kind == store_core::StorageErrorKind::Corrupt => {
            tracing::error!(error = %e, "the store is damaged; stopping");
            let Some(on_damage) = on_damage.take() else {
                return;
            };
            on_damage(format!(
                "the database holds a record that cannot be read ({e}); restore the data dir from a backup or remove that record"
            ));
        }
        Err(e) => tracing::error!(error = %e, "orphan collection failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweeper_sleeps_until_the_next_expiry_and_never_long() {
        let now = Timestamp::from_millis(1_000_000);
        assert_eq!(next_pause(now, None), SWEEP_IDLE_MAX);
        assert_eq!(
            next_pause(now, Some(now.plus_secs(5))),
            Duration::from_secs(5)
        );
        assert_eq!(next_pause(now, Some(now.plus_secs(3600))), SWEEP_IDLE_MAX);
        assert_eq!(
            next_pause(now, Some(Timestamp::from_millis(0))),
            Duration::ZERO,
            "overdue: at once"
        );
    }

    /// A thread of rounds that each answer an hour's pause, counting them.
    fn hourly(
        sleep: &Sleep,
        sleeper: Sleeper,
    ) -> (Arc<std::sync::atomic::AtomicUsize>, JoinHandle<()>) {
        let rounds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (counted, sleep) = (Arc::clone(&rounds), sleep.clone());
        let thread = std::thread::spawn(move || {
            rounds_until_stopped(&sleep, sleeper, || {
                counted.fetch_add(1, Ordering::SeqCst);
                Duration::from_secs(3600)
            });
        });
        (rounds, thread)
    }

    /// Polls (for at most a minute, so that a broken wake fails instead of
    /// hanging) until `rounds` reaches `n`.
    fn wait_for(rounds: &std::sync::atomic::AtomicUsize, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while rounds.load(Ordering::SeqCst) < n {
            assert!(Instant::now() < deadline, "round {n} never came");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn sleep_on(signals: &Arc<Signals>) -> Sleep {
        Sleep {
            signals: Arc::clone(signals),
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    #[test]
    fn only_the_drainer_ends_its_sleep_for_queued_deletes() {
        for sleeper in [Sleeper::Drainer, Sleeper::Other] {
            assert!(ends_sleep(sleeper, true, false), "a stop ends every sleep");
            assert!(!ends_sleep(sleeper, false, false));
        }
        assert!(ends_sleep(Sleeper::Drainer, false, true));
        assert!(!ends_sleep(Sleeper::Other, false, true));
    }

    #[test]
    fn queued_deletes_wake_the_drainer_and_a_stop_only_its_own_upkeep() {
        let signals = Arc::new(Signals::default());
        let (mine, other) = (sleep_on(&signals), sleep_on(&signals));
        let (drained, drainer) = hourly(&mine, Sleeper::Drainer);
        let (swept, sweeper) = hourly(&mine, Sleeper::Other);
        let (_, other_sweeper) = hourly(&other, Sleeper::Other);
        wait_for(&drained, 1);
        wait_for(&swept, 1);
        signals.deletes_queued();
        wait_for(&drained, 2);
        signals.deletes_queued();
        wait_for(&drained, 3);
        mine.stop.store(true, Ordering::SeqCst);
        signals.wake_all();
        drainer.join().unwrap();
        sweeper.join().unwrap();
        assert_eq!(
            swept.load(Ordering::SeqCst),
            1,
            "a stop ends the sleep without a round"
        );
        assert_eq!(drained.load(Ordering::SeqCst), 3, "one round per wake");
        assert!(!other_sweeper.is_finished(), "the other upkeep runs on");
        other.stop.store(true, Ordering::SeqCst);
        signals.wake_all();
        other_sweeper.join().unwrap();
    }
}
