//! The in-process forms of the coordination ports: key locks, pool
//! ledgers and the rate limiter, for a store that one process owns (sled
//! locks its directory, so nothing else can write its records). They hold
//! memory and mutexes only: no I/O, no clock.
//!
//! Adapters that share records between processes (PostgreSQL) keep their
//! own cross-process forms, and may put these in front as a first line.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::pool::PoolLedger;
use crate::ports::{
    KeyLocks, Ledgers, LockGuard, Pool, PoolUsage, RateLimits, StorageResult, TryLocked,
};
use crate::ratelimit::{RateLimiter, RATE_KEYS_MAX};
use crate::time::Timestamp;

/// Stripes of the lock table: enough that two busy keys rarely collide.
const STRIPES: usize = 256;

/// Shards of the rate limiter, so that clients rarely wait for each other.
const LIMITER_SHARDS: usize = 16;

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded values are flags and counters that every holder leaves
    // consistent, so a panic elsewhere cannot poison them in a way that
    // matters.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One lock of the table: a flag and the waiters for it. Guards own their
/// table (an `Arc`), so they can cross the port as [`LockGuard`]s.
#[derive(Debug, Default)]
struct Slot {
    held: Mutex<bool>,
    freed: Condvar,
}

impl Slot {
    fn acquire(&self) {
        let mut held = relock(&self.held);
        while *held {
            held = self.freed.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        *held = true;
    }

    fn try_acquire(&self) -> bool {
        let mut held = relock(&self.held);
        !std::mem::replace(&mut *held, true)
    }

    fn release(&self) {
        *relock(&self.held) = false;
        self.freed.notify_one();
    }
}

/// Per-key mutual exclusion inside one process. Keys hash onto a fixed set
/// of stripes: memory stays bounded whatever the number of keys, at the
/// cost of unrelated keys sometimes sharing a stripe. Several keys named
/// in one call are taken stripe by stripe in index order, each stripe
/// once, so two keys that share a stripe never deadlock their holder.
#[derive(Debug, Clone)]
pub struct StripedLocks {
    /// `STRIPES` key stripes, then the eviction lock.
    slots: Arc<[Slot]>,
}

impl Default for StripedLocks {
    fn default() -> Self {
        Self {
            slots: (0..=STRIPES).map(|_| Slot::default()).collect(),
        }
    }
}

struct Held {
    slots: Arc<[Slot]>,
    indices: Vec<usize>,
}

impl Drop for Held {
    fn drop(&mut self) {
        for &i in &self.indices {
            self.slots[i].release();
        }
    }
}

impl StripedLocks {
    fn stripe_index(key: &str) -> usize {
        let mut h = DefaultHasher::new();
        key.hash(&mut h);
        (h.finish() as usize) % STRIPES
    }

    fn held(&self, indices: Vec<usize>) -> LockGuard {
        LockGuard::new(Held {
            slots: Arc::clone(&self.slots),
            indices,
        })
    }

    /// [`KeyLocks::lock`] without the `Result`: it cannot fail.
    pub fn lock_now(&self, keys: &[&str]) -> LockGuard {
        let mut indices: Vec<usize> = keys.iter().map(|k| Self::stripe_index(k)).collect();
        indices.sort_unstable();
        indices.dedup();
        for &i in &indices {
            self.slots[i].acquire();
        }
        self.held(indices)
    }

    /// [`KeyLocks::try_lock_many`] without the `Result`: it cannot fail.
    pub fn try_lock_now(&self, keys: Vec<String>) -> TryLocked {
        #[derive(Clone, Copy, PartialEq)]
        enum Stripe {
            Untried,
            Held,
            Busy,
        }
        let mut stripes = vec![Stripe::Untried; STRIPES];
        let (mut indices, mut locked, mut busy) = (vec![], vec![], vec![]);
        for key in keys {
            let i = Self::stripe_index(&key);
            if stripes[i] == Stripe::Untried {
                stripes[i] = if self.slots[i].try_acquire() {
                    indices.push(i);
                    Stripe::Held
                } else {
                    Stripe::Busy
                };
            }
            match stripes[i] {
                Stripe::Held => locked.push(key),
                _ => busy.push(key),
            }
        }
        TryLocked {
            guard: self.held(indices),
            locked,
            busy,
        }
    }
}

impl KeyLocks for StripedLocks {
    fn lock(&self, keys: &[&str]) -> StorageResult<LockGuard> {
        Ok(self.lock_now(keys))
    }

    fn try_lock_many(&self, keys: Vec<String>) -> StorageResult<TryLocked> {
        Ok(self.try_lock_now(keys))
    }

    fn lock_eviction(&self) -> StorageResult<LockGuard> {
        self.slots[STRIPES].acquire();
        Ok(self.held(vec![STRIPES]))
    }
}

/// The pools' ledgers of one process: every reservation and every record
/// change passes through it, so one counter per pool is the whole truth.
#[derive(Debug)]
pub struct LocalLedgers {
    store: Mutex<PoolLedger>,
    pics: Mutex<PoolLedger>,
}

impl LocalLedgers {
    /// Starts from what the records hold (the repository's totals).
    pub fn new(store: PoolLedger, pics: PoolLedger) -> Self {
        Self {
            store: Mutex::new(store),
            pics: Mutex::new(pics),
        }
    }

    fn of(&self, pool: Pool) -> MutexGuard<'_, PoolLedger> {
        relock(match pool {
            Pool::Store => &self.store,
            Pool::Pics => &self.pics,
        })
    }
}

impl Ledgers for LocalLedgers {
    fn try_reserve(&self, pool: Pool, bytes: u64) -> StorageResult<Result<(), u64>> {
        let mut ledger = self.of(pool);
        if ledger.try_reserve(bytes) {
            Ok(Ok(()))
        } else {
            Ok(Err(ledger.shortfall(bytes)))
        }
    }

    fn cancel(&self, pool: Pool, bytes: u64) {
        self.of(pool).release(bytes);
    }

    /// The reserved bytes were counted as used already.
    fn settle(&self, _pool: Pool, _bytes: u64) {}

    fn freed(&self, pool: Pool, bytes: u64) {
        self.of(pool).release(bytes);
    }

    fn usage(&self, pool: Pool) -> StorageResult<PoolUsage> {
        let ledger = self.of(pool);
        Ok(PoolUsage {
            used_bytes: ledger.used_bytes(),
            capacity_bytes: ledger.capacity_bytes(),
        })
    }
}

/// The rate limiter of one process, sharded by client.
#[derive(Debug)]
pub struct LocalRateLimits {
    shards: Vec<Mutex<RateLimiter<std::net::IpAddr>>>,
}

impl LocalRateLimits {
    /// `per_min` requests per minute and client; 0 turns it off.
    pub fn new(per_min: u32) -> Self {
        Self {
            shards: (0..LIMITER_SHARDS)
                .map(|_| {
                    Mutex::new(RateLimiter::with_capacity(
                        per_min,
                        RATE_KEYS_MAX / LIMITER_SHARDS,
                    ))
                })
                .collect(),
        }
    }
}

impl RateLimits for LocalRateLimits {
    fn check(&self, client: std::net::IpAddr, now: Timestamp) -> StorageResult<Result<(), u64>> {
        let mut h = DefaultHasher::new();
        client.hash(&mut h);
        let shard = (h.finish() as usize) % LIMITER_SHARDS;
        Ok(relock(&self.shards[shard]).check(&client, now))
    }

    fn blocks(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_takes_each_stripe_once_and_reports_busy_keys() {
        let locks = StripedLocks::default();
        let keys: Vec<String> = (0..1000).map(|i| format!("k{i}")).collect();
        let held = locks.lock_now(&["k7"]);
        let many = locks.try_lock_now(keys.clone());
        assert!(many.busy.contains(&"k7".to_string()));
        assert_eq!(many.locked.len() + many.busy.len(), keys.len());
        assert!(
            many.locked.len() > 900,
            "keys sharing a free stripe are all locked"
        );
        let first = many.locked[0].clone();
        assert!(
            locks.try_lock_now(vec![first.clone()]).locked.is_empty(),
            "held while alive"
        );
        drop(many);
        assert_eq!(locks.try_lock_now(vec![first]).locked.len(), 1, "released");
        drop(held);
    }

    #[test]
    fn keys_sharing_a_stripe_are_taken_once() {
        let locks = StripedLocks::default();
        let a = "a".to_string();
        let twin = (0..100_000)
            .map(|i| format!("b{i}"))
            .find(|k| StripedLocks::stripe_index(k) == StripedLocks::stripe_index(&a))
            .expect("some key shares a stripe");
        // Held twice in one call, this would wait for itself forever.
        let both = locks.lock_now(&[&a, &twin]);
        drop(both);
        let again = locks.lock_now(&[&twin]);
        drop(again);
    }

    #[test]
    fn ledgers_count_reservations_and_frees() {
        let l = LocalLedgers::new(PoolLedger::new(100, 40), PoolLedger::new(10, 0));
        assert_eq!(l.try_reserve(Pool::Store, 60).unwrap(), Ok(()));
        assert_eq!(l.try_reserve(Pool::Store, 1).unwrap(), Err(1));
        l.settle(Pool::Store, 60);
        l.freed(Pool::Store, 40);
        assert_eq!(l.usage(Pool::Store).unwrap().used_bytes, 60);
        assert_eq!(l.try_reserve(Pool::Pics, 11).unwrap(), Err(1));
        assert_eq!(l.try_reserve(Pool::Pics, 10).unwrap(), Ok(()));
        l.cancel(Pool::Pics, 10);
        assert_eq!(l.usage(Pool::Pics).unwrap().used_bytes, 0);
    }
}
