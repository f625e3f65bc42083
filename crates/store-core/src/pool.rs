//! The store pool ledger: how many bytes live objects hold, against the
//! configured capacity. Which objects to evict is decided by the use-case
//! layer from the expiry index; this type only keeps the count honest.

/// Bytes in use against a capacity. `used` may exceed `capacity` only if
/// the capacity was lowered between runs; new reservations then wait for
/// evictions like any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLedger {
    capacity_bytes: u64,
    used_bytes: u64,
}

impl PoolLedger {
    pub fn new(capacity_bytes: u64, used_bytes: u64) -> Self {
        Self {
            capacity_bytes,
            used_bytes,
        }
    }

    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

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
