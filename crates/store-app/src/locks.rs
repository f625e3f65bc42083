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
    fn stripe(&self, key: &str) -> &Mutex<()> {
        let mut h = DefaultHasher::new();
        key.hash(&mut h);
        &self.stripes[(h.finish() as usize) % STRIPES]
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
}
