//! The store pool ledger: how many bytes live objects hold, against the
//! configured capacity. Which objects to evict is decided by the use-case
//! layer from the expiry index; this type only keeps the count honest.

use crate::record::{Object, ObjectKind};

/// What the live records hold, summed: the numbers a restart needs before
/// it can answer. A repository keeps them in the same atomic change as the
/// records (see [`crate::Repository::totals`]), so that opening a store of
/// a million records reads one value instead of every record, and no crash
/// can make the sums drift from the records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Totals {
    /// Live records, of every kind.
    pub objects: u64,
    /// Bytes counted against the store pool ([`Object::pool_bytes`]).
    pub pool_bytes: u64,
    /// Bytes counted against the pics pool ([`Object::pics_bytes`]).
    pub pics_bytes: u64,
    /// Records of each kind, in [`ObjectKind::ALL`]'s order; they add up
    /// to `objects`.
    #[serde(default)]
    pub by_kind: [u64; ObjectKind::ALL.len()],
}

impl Totals {
    /// Counts a record that was added.
    pub fn add(&mut self, object: &Object) {
        self.objects = self.objects.saturating_add(1);
        let kind = &mut self.by_kind[object.kind().index()];
        *kind = kind.saturating_add(1);
        self.pool_bytes = self.pool_bytes.saturating_add(object.pool_bytes());
        self.pics_bytes = self.pics_bytes.saturating_add(object.pics_bytes());
    }

    /// Uncounts a record that was removed.
    pub fn remove(&mut self, object: &Object) {
        self.objects = self.objects.saturating_sub(1);
        let kind = &mut self.by_kind[object.kind().index()];
        *kind = kind.saturating_sub(1);
        self.pool_bytes = self.pool_bytes.saturating_sub(object.pool_bytes());
        self.pics_bytes = self.pics_bytes.saturating_sub(object.pics_bytes());
    }

    /// Counts every record `other` counted (a batch loaded at once).
    pub fn add_all(&mut self, other: &Totals) {
        self.objects = self.objects.saturating_add(other.objects);
        self.pool_bytes = self.pool_bytes.saturating_add(other.pool_bytes);
        self.pics_bytes = self.pics_bytes.saturating_add(other.pics_bytes);
        for (mine, theirs) in self.by_kind.iter_mut().zip(other.by_kind) {
            *mine = mine.saturating_add(theirs);
        }
    }

    /// Live records of `kind`.
    pub fn of_kind(&self, kind: ObjectKind) -> u64 {
        self.by_kind[kind.index()]
    }

    /// Counts a record replaced by another under the same key.
    pub fn replace(&mut self, old: &Object, new: &Object) {
        self.remove(old);
        self.add(new);
    }
}

/// Bytes in use against a capacity. `used` may exceed `capacity` only if
/// the capacity was lowered between runs; new reservations then wait for
/// evictions like any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLedger {
    capacity_bytes: u64,
    used_bytes: u64,
}

impl PoolLedger {
    /// A ledger of `capacity_bytes`, of which `used_bytes` are already in use.
    pub fn new(capacity_bytes: u64, used_bytes: u64) -> Self {
        Self {
            capacity_bytes,
            used_bytes,
        }
    }

    /// Bytes in use.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// The capacity, in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Bytes that must be freed before `bytes` more fit (0 if they fit).
    pub fn shortfall(&self, bytes: u64) -> u64 {
        self.used_bytes
            .saturating_add(bytes)
            .saturating_sub(self.capacity_bytes)
    }

    /// Takes `bytes` if they fit.
    pub fn try_reserve(&mut self, bytes: u64) -> bool {
        if self.shortfall(bytes) == 0 {
            self.used_bytes += bytes;
            true
        } else {
            false
        }
    }

    /// Gives back `bytes` taken earlier.
    pub fn release(&mut self, bytes: u64) {
        debug_assert!(bytes <= self.used_bytes, "pool released more than it held");
        self.used_bytes = self.used_bytes.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn reservations_never_pass_capacity(cap in 0u64..1000, ops in prop::collection::vec((any::<bool>(), 0u64..300), 0..50)) {
            let mut p = PoolLedger::new(cap, 0);
            let mut held: Vec<u64> = vec![];
            for (reserve, n) in ops {
                if reserve {
                    if p.try_reserve(n) { held.push(n); }
                } else if let Some(n) = held.pop() {
                    p.release(n);
                }
                prop_assert!(p.used_bytes() <= cap);
                prop_assert_eq!(p.used_bytes(), held.iter().sum::<u64>());
            }
        }
    }
}
