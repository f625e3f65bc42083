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

/// What the upkeep's threads sleep on between rounds: told to stop (all
/// of them), or told that a write queued deletes that are due at once
/// (the drainer).
#[derive(Debug, Default)]
pub(crate) struct Signals {
    state: Mutex<SignalState>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct SignalState {
    stopping: bool,
    deletes_queued: bool,
}

impl Signals {
    /// Wakes the drainer for deletes a write just queued with no grace:
    /// they are done now rather than on its next round, up to
    /// [`DRAIN_IDLE`] later. Deletes with a grace wait for their round.
    pub(crate) fn deletes_queued(&self) {
        self.lock().deletes_queued = true;
        self.wake.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SignalState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Which thread sleeps: only the drainer wakes for queued deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sleeper {
    Drainer,
    Other,
}

/// The running upkeep; [`Upkeep::stop`] ends it.
#[derive(Debug)]
pub struct Upkeep {
    /// Told to stop; every sleeping round is woken through it.
    signals: Arc<Signals>,
    /// Read by the orphan collection between batches.
    collection_stop: Arc<AtomicBool>,
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
        let stopping = Arc::clone(&self.upkeep_signals);
        stopping.lock().stopping = false;
        let collection_stop = Arc::new(AtomicBool::new(false));
        let sweeper = {
            let (app, stopping) = (Arc::clone(self), Arc::clone(&stopping));
            std::thread::Builder::new()
                .name("store-sweeper".into())
                .spawn(move || sweep_until_stopped(&app, &stopping))?
        };
        let collector = {
            let (app, stop) = (Arc::clone(self), Arc::clone(&collection_stop));
            let stopping = Arc::clone(&stopping);
            let mut on_damage = Some(on_damage);
            std::thread::Builder::new()
                .name("store-orphans".into())
                .spawn(move || {
                    if !app.intents_kept {
                        return collect_orphans_once(&app, &stop, &mut on_damage);
                    }
                    rounds_until_stopped(&stopping, Sleeper::Other, || {
                        collect_orphans_once(&app, &stop, &mut on_damage);
                        ORPHAN_PERIOD
                    });
                })?
        };
        let mut threads = vec![sweeper, collector];
        if self.ports.repo.queues_deletes() || self.intents_kept {
            let (app, stopping) = (Arc::clone(self), Arc::clone(&stopping));
            threads.push(
                std::thread::Builder::new()
                    .name("store-deletes".into())
                    .spawn(move || drain_until_stopped(&app, &stopping))?,
            );
        }
        Ok(Upkeep {
            signals: stopping,
            collection_stop,
            threads,
        })
    }
}

impl Upkeep {
    /// Stops both and waits for them: a sweep round or a batch of the
    /// collection in progress finishes first. Blocks; from async code, call
    /// it on a blocking thread.
    pub fn stop(self) {
        self.collection_stop.store(true, Ordering::Relaxed);
        self.signals.lock().stopping = true;
        self.signals.wake.notify_all();
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
fn drain_until_stopped(app: &App, signals: &Signals) {
    rounds_until_stopped(signals, Sleeper::Drainer, || {
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

/// Sweeps expired objects, sleeping until the next expiry (or at most
/// [`SWEEP_IDLE_MAX`]) in between, until told to stop.
fn sweep_until_stopped(app: &App, signals: &Signals) {
    rounds_until_stopped(signals, Sleeper::Other, || match app.sweep(SWEEP_BATCH) {
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
    });
}

/// Runs `round` again and again, each time sleeping the pause it answers,
/// until told to stop (which also cuts a sleep short). The drainer's
/// sleep is cut short by deletes queued due at once, too.
fn rounds_until_stopped(signals: &Signals, sleeper: Sleeper, mut round: impl FnMut() -> Duration) {
    let woken =
        |s: &mut SignalState| s.stopping || (sleeper == Sleeper::Drainer && s.deletes_queued);
    loop {
        let pause = round();
        let (mut state, _) = signals
            .wake
            .wait_timeout_while(signals.lock(), pause, |s| !woken(s))
            .unwrap_or_else(PoisonError::into_inner);
        if state.stopping {
            return;
        }
        if sleeper == Sleeper::Drainer {
            state.deletes_queued = false;
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
        signals: &Arc<Signals>,
        sleeper: Sleeper,
    ) -> (Arc<std::sync::atomic::AtomicUsize>, JoinHandle<()>) {
        let rounds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (counted, signals) = (Arc::clone(&rounds), Arc::clone(signals));
        let thread = std::thread::spawn(move || {
            rounds_until_stopped(&signals, sleeper, || {
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

    #[test]
    fn queued_deletes_wake_the_drainer_and_a_stop_wakes_every_thread() {
        let signals = Arc::new(Signals::default());
        let (drained, drainer) = hourly(&signals, Sleeper::Drainer);
        let (swept, sweeper) = hourly(&signals, Sleeper::Other);
        wait_for(&drained, 1);
        wait_for(&swept, 1);
        signals.deletes_queued();
        wait_for(&drained, 2);
        signals.deletes_queued();
        wait_for(&drained, 3);
        signals.lock().stopping = true;
        signals.wake.notify_all();
        drainer.join().unwrap();
        sweeper.join().unwrap();
        assert_eq!(
            swept.load(Ordering::SeqCst),
            1,
            "only the drainer wakes for deletes"
        );
        assert_eq!(drained.load(Ordering::SeqCst), 3, "each wake is one round");
    }
}
