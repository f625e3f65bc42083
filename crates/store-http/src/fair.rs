//! Fair shares per client: how many connections one address holds, and how
//! many requests one client has in flight. The rate limiter counts requests
//! over time; these count what a client holds at once, which the rate
//! limiter never sees (a client that opens connections and sends nothing,
//! or starts downloads and reads nothing).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Shards of a tally, so that clients rarely wait for each other.
const TALLY_SHARDS: usize = 16;

/// Which of `shards` shards a client's state lives in (the rate limiter's
/// and the tallies' alike).
pub(crate) fn shard_of(key: &IpAddr, shards: usize) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    (h.finish() as usize) % shards
}

/// A count of what each client holds, with a cap per client.
#[derive(Debug)]
pub struct Tally {
    shards: Vec<Mutex<HashMap<IpAddr, usize>>>,
    per_client_max: usize,
}

/// One unit held by a client; given back when dropped.
#[derive(Debug)]
pub struct Held {
    tally: Arc<Tally>,
    key: IpAddr,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut shard = self.tally.shard(&self.key);
        if let Some(n) = shard.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                shard.remove(&self.key);
            }
        }
    }
}

impl Tally {
    /// A tally allowing `per_client_max` units per client; 0 means no cap.
    pub fn new(per_client_max: usize) -> Arc<Self> {
        Arc::new(Self {
            shards: (0..TALLY_SHARDS).map(|_| Mutex::default()).collect(),
            per_client_max,
        })
    }

    fn shard(&self, key: &IpAddr) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.shards[shard_of(key, TALLY_SHARDS)]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Takes one unit for `key` (a client's rate key), or `None` when the
    /// client already holds its share. Without a cap it always succeeds.
    pub fn take(self: &Arc<Self>, key: IpAddr) -> Option<Held> {
        let mut shard = self.shard(&key);
        let n = shard.entry(key).or_insert(0);
        if self.per_client_max != 0 && *n >= self.per_client_max {
            return None;
        }
        *n += 1;
        drop(shard);
        Some(Held {
            tally: Arc::clone(self),
            key,
        })
    }

    /// Units `key` holds now.
    #[cfg(test)]
    fn held(&self, key: IpAddr) -> usize {
        self.shard(&key).get(&key).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_gets_its_share_and_gives_it_back() {
        let tally = Tally::new(2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let a1 = tally.take(a).expect("first");
        let a2 = tally.take(a).expect("second");
        assert!(tally.take(a).is_none(), "a third is over the share");
        assert!(tally.take(b).is_some(), "another client is not affected");
        drop(a1);
        assert_eq!(tally.held(a), 1);
        let _a3 = tally.take(a).expect("room again");
        drop(a2);
        assert_eq!(tally.held(a), 1);
    }

    #[test]
    fn no_cap_means_no_refusal_and_no_leftovers() {
        let tally = Tally::new(0);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let held: Vec<_> = (0..1000).map(|_| tally.take(a).expect("open")).collect();
        assert_eq!(tally.held(a), 1000);
        drop(held);
        assert_eq!(tally.held(a), 0);
        assert!(tally.shards.iter().all(|s| s.lock().unwrap().is_empty()));
    }
}
