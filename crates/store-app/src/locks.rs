//! Per-key mutual exclusion inside one process.
//!
//! One process owns a data dir (sled locks it), so serialising the writers
//! of one key in memory is enough to make read-modify-write use cases (a
//! PATCH, a burn after reading) atomic. Keys hash onto a fixed set of
//! stripes: memory stays bounded whatever the number of keys, at the cost of
//! unrelated keys sometimes sharing a stripe.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Stripes of the lock table: enough that two busy keys rarely collide.
const STRIPES: usize = 256;

#[derive(Debug)]
pub struct KeyLocks {
    stripes: Vec<Mutex<()>>,
}

impl Default for KeyLocks {
    fn default() -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl KeyLocks {
    fn stripe_index(key: &str) -> usize {
        let mut h = DefaultHasher::new();
        key.hash(&mut h);
        (h.finish() as usize) % STRIPES
    }

    fn stripe(&self, key: &str) -> &Mutex<()> {
        &self.stripes[Self::stripe_index(key)]
    }

    pub fn lock(&self, key: &str) -> MutexGuard<'_, ()> {
        // The guarded value is `()`: a panic while holding it leaves nothing
        // inconsistent behind, so poisoning is safe to ignore.
        self.stripe(key).lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `None` when the stripe is busy (also when this thread holds it), so
    /// that eviction can skip a key instead of waiting for it.
    pub fn try_lock(&self, key: &str) -> Option<MutexGuard<'_, ()>> {
        match self.stripe(key).try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Tries the locks of many keys at once, each stripe once (keys often
    /// share one, and a stripe this thread holds would look busy). Answers
    /// the guards, the keys they cover and the keys whose stripe was busy.
    /// It never waits, so it cannot deadlock with a thread holding one
    /// lock and waiting for another.
    pub fn try_lock_many(&self, keys: Vec<String>) -> Many<'_> {
        #[derive(Clone, Copy)]
        enum Stripe {
            Untried,
            Held,
            Busy,
        }
        let mut stripes = [Stripe::Untried; STRIPES];
        let mut many = Many {
            guards: vec![],
            locked: Vec::with_capacity(keys.len()),
            busy: vec![],
        };
        for key in keys {
            let i = Self::stripe_index(&key);
            if let Stripe::Untried = stripes[i] {
                stripes[i] = match self.stripes[i].try_lock() {
                    Ok(g) => {
                        many.guards.push(g);
                        Stripe::Held
                    }
                    Err(TryLockError::Poisoned(e)) => {
                        many.guards.push(e.into_inner());
                        Stripe::Held
                    }
                    Err(TryLockError::WouldBlock) => Stripe::Busy,
                };
            }
            match stripes[i] {
                Stripe::Held => many.locked.push(key),
                _ => many.busy.push(key),
            }
        }
        many
    }
}

/// What [`KeyLocks::try_lock_many`] took. The locks are held until it is
/// dropped.
pub struct Many<'a> {
    guards: Vec<MutexGuard<'a, ()>>,
    pub locked: Vec<String>,
    pub busy: Vec<String>,
}

impl Many<'_> {
    /// Releases the locks, keeping the lists.
    pub fn release(&mut self) {
        self.guards.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_takes_each_stripe_once_and_reports_busy_keys() {
        let locks = KeyLocks::default();
        let keys: Vec<String> = (0..1000).map(|i| format!("k{i}")).collect();
        let held = locks.lock("k7");
        let mut many = locks.try_lock_many(keys.clone());
        assert!(many.busy.contains(&"k7".to_string()));
        assert_eq!(many.locked.len() + many.busy.len(), keys.len());
        assert!(
            many.locked.len() > 900,
            "keys sharing a free stripe are all locked"
        );
        assert!(
            locks.try_lock(&many.locked[0]).is_none(),
            "held while alive"
        );
        many.release();
        assert!(locks.try_lock(&many.locked[0]).is_some(), "released");
        drop(held);
    }
}
