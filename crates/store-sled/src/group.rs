//! Group commit: many writers, one fsync.
//!
//! Every change must be durable before it is acknowledged, and a flush of
//! sled is an fsync of its log. Done one writer at a time, fsyncs queue up
//! and the store does as many writes per second as the disk does fsyncs.
//! Here a writer that needs durability takes a ticket; if no flush is
//! running it becomes the leader and flushes everything applied so far,
//! which covers every ticket taken before the flush began; otherwise it
//! waits for the running flush, and for the next one if its ticket came
//! too late for it. One fsync then serves every writer that arrived while
//! the previous one ran, so throughput grows with concurrency while each
//! acknowledgement still follows a flush that began after its change.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

#[derive(Debug, Default)]
struct State {
    /// The last ticket handed out.
    issued: u64,
    /// Every ticket up to this one is durable.
    durable: u64,
    /// A leader is flushing right now.
    flushing: bool,
    /// Flushes done, for tests and metrics.
    flushes: u64,
}

/// Coalesces concurrent requests for durability into shared flushes.
#[derive(Debug, Default)]
pub struct GroupCommit {
    state: Mutex<State>,
    done: Condvar,
}

impl GroupCommit {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking flush leaves the counters consistent: recover them.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Returns once a call of `flush` that began after this call did has
    /// succeeded. The caller's change must already be applied: whatever
    /// `flush` persists at that moment is what the ticket covers.
    pub fn commit<E>(&self, flush: impl Fn() -> Result<(), E>) -> Result<(), E> {
        let mut st = self.lock();
        st.issued += 1;
        let ticket = st.issued;
        loop {
            if st.durable >= ticket {
                return Ok(());
            }
            if st.flushing {
                st = self.done.wait(st).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            // Lead: everything issued so far was applied before its ticket
            // was taken, so one flush from now covers all of it.
            st.flushing = true;
            let covers = st.issued;
            drop(st);
            let result = flush();
            st = self.lock();
            st.flushing = false;
            st.flushes += 1;
            self.done.notify_all();
            match result {
                Ok(()) => st.durable = st.durable.max(covers),
                // Only the leader sees its error; waiters whose tickets it
                // covered loop and lead a flush of their own, so each of
                // them learns the truth about its own change.
                Err(e) => return Err(e),
            }
        }
    }

    /// How many flushes ran.
    pub fn flushes(&self) -> u64 {
        self.lock().flushes
    }

    /// How many changes asked for durability: over [`Self::flushes`], the
    /// mean number of changes one flush served.
    pub fn commits(&self) -> u64 {
        self.lock().issued
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    #[test]
    fn a_lone_writer_flushes_once_per_commit() {
        let g = GroupCommit::default();
        for _ in 0..3 {
            g.commit(|| Ok::<(), ()>(())).unwrap();
        }
        assert_eq!(g.flushes(), 3);
        assert_eq!(g.commits(), 3);
    }

    /// A fake log: `applied` counts changes made, `persisted` what the last
    /// flush saw. Every writer checks that its own change was persisted by
    /// the time its commit returned.
    #[test]
    fn every_commit_returns_after_a_flush_that_saw_its_change() {
        let g = Arc::new(GroupCommit::default());
        let applied = Arc::new(AtomicU64::new(0));
        let persisted = Arc::new(AtomicU64::new(0));
        let threads = 16;
        let per_thread = 50;
        let start = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (g, applied, persisted, start) =
                    (g.clone(), applied.clone(), persisted.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    for _ in 0..per_thread {
                        let mine = applied.fetch_add(1, Ordering::SeqCst) + 1;
                        g.commit(|| {
                            let seen = applied.load(Ordering::SeqCst);
                            std::thread::sleep(Duration::from_micros(300));
                            persisted.fetch_max(seen, Ordering::SeqCst);
                            Ok::<(), ()>(())
                        })
                        .unwrap();
                        // Changes are numbered in order, and a flush
                        // persists a prefix: mine must be inside it.
                        assert!(persisted.load(Ordering::SeqCst) >= mine);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let total = (threads * per_thread) as u64;
        assert_eq!(persisted.load(Ordering::SeqCst), total);
        // Sharing happened: far fewer flushes than commits.
        assert!(g.flushes() < total / 2, "{} flushes", g.flushes());
        assert_eq!(g.commits(), total, "every commit counted once");
    }

    #[test]
    fn a_failed_flush_fails_its_leader_and_others_retry() {
        let g = Arc::new(GroupCommit::default());
        let calls = AtomicU64::new(0);
        // The first flush fails, later ones succeed.
        let flush = || {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                Err("disk error")
            } else {
                Ok(())
            }
        };
        assert_eq!(g.commit(flush), Err("disk error"));
        assert_eq!(g.commit(flush), Ok(()));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
