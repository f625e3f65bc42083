//! The per-client rate limit, as a pure state machine over `now`.
//!
//! GCRA (the generic cell rate algorithm): each key keeps one instant, its
//! "theoretical arrival time". A full minute's allowance may come at once,
//! after which requests are admitted at the sustained rate. The 101st
//! request inside a minute (at the default of 100) is refused, and the
//! answer says how long until one more would be admitted.

use std::collections::HashMap;
use std::hash::Hash;

use crate::time::Timestamp;

/// Keys tracked at most. Past it, keys whose allowance is fully restored
/// (they carry no information) are dropped; if none is, an arbitrary one
/// is, so memory stays bounded under any number of distinct clients.
pub const RATE_KEYS_MAX: usize = 100_000;

const WINDOW_MS: i64 = 60_000;

/// A per-key rate limiter (GCRA): each key may make `per_min` requests a minute,
/// a full minute's allowance at once, and keys tracked stay bounded.
#[derive(Debug)]
pub struct RateLimiter<K> {
    /// Requests per minute; 0 turns the limiter off.
    per_min: u32,
    keys_max: usize,
    tat: HashMap<K, i64>,
}

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// A limiter admitting `per_min` requests per minute per key (0 turns it off),
    /// tracking at most [`RATE_KEYS_MAX`] keys.
    pub fn new(per_min: u32) -> Self {
        Self::with_capacity(per_min, RATE_KEYS_MAX)
    }

    /// As [`RateLimiter::new`], tracking at most `keys_max` keys (at least 1).
    pub fn with_capacity(per_min: u32, keys_max: usize) -> Self {
        Self {
            per_min,
            keys_max: keys_max.max(1),
            tat: HashMap::new(),
        }
    }

    /// How many keys the limiter tracks now.
    pub fn tracked(&self) -> usize {
        self.tat.len()
    }

    /// Admits a request from `key` at `now`, or says how many whole seconds
    /// (at least 1) to wait.
    pub fn check(&mut self, key: &K, now: Timestamp) -> Result<(), u64> {
        if self.per_min == 0 {
            return Ok(());
        }
        let now = now.as_millis();
        let new_tat = gcra_step(self.tat.get(key).copied(), now, self.per_min)?;
        if !self.tat.contains_key(key) && self.tat.len() >= self.keys_max {
            self.make_room(now);
        }
        self.tat.insert(key.clone(), new_tat);
        Ok(())
    }

    /// Drops keys whose allowance is fully restored; if that frees less
    /// than an eighth of the table, drops arbitrary keys down to seven
    /// eighths. Each call then buys room for many inserts, so the cost is
    /// constant per request on average even under a flood of new keys.
    /// A dropped active key merely starts afresh: under such a flood the
    /// limiter degrades towards letting requests through rather than
    /// growing without bound.
    fn make_room(&mut self, now: i64) {
        self.tat.retain(|_, tat| *tat > now);
        let target = self.keys_max - self.keys_max / 8;
        if self.tat.len() > target {
            let excess = self.tat.len() - target;
            let victims: Vec<K> = self.tat.keys().take(excess).cloned().collect();
            for k in victims {
                self.tat.remove(&k);
            }
        }
    }
}

/// One step of GCRA for one key: given the key's theoretical arrival time
/// (`None` for a key never seen), admits a request at `now_ms` and answers
/// the new arrival time, or answers the whole seconds (at least 1) to wait.
/// Every adapter that keeps limiter state elsewhere (PostgreSQL) computes
/// exactly this; `per_min` must not be 0.
pub fn gcra_step(tat: Option<i64>, now_ms: i64, per_min: u32) -> Result<i64, u64> {
    // Milliseconds per request at the sustained rate, and how far ahead of
    // now the arrival time may run (a full minute minus one request).
    let interval = WINDOW_MS / i64::from(per_min.max(1));
    let tolerance = WINDOW_MS - interval;
    let tat = tat.unwrap_or(now_ms).max(now_ms);
    if tat - now_ms > tolerance {
        let wait_ms = tat - tolerance - now_ms;
        return Err(u64::try_from((wait_ms + 999) / 1000).unwrap_or(1).max(1));
    }
    Ok(tat + interval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_101st_request_in_a_minute_is_refused() {
        let mut rl = RateLimiter::new(100);
        let t0 = Timestamp::from_secs(1000);
        for i in 0..100 {
            assert_eq!(rl.check(&"a", t0), Ok(()), "request {i}");
        }
        assert_eq!(rl.check(&"a", t0), Err(1));
        assert_eq!(rl.check(&"b", t0), Ok(()), "keys are independent");
        // One more is admitted per 600 ms.
        assert_eq!(
            rl.check(&"a", Timestamp::from_millis(t0.as_millis() + 600)),
            Ok(())
        );
        assert!(rl
            .check(&"a", Timestamp::from_millis(t0.as_millis() + 600))
            .is_err());
        assert_eq!(rl.check(&"a", t0.plus_secs(60)), Ok(()));
    }

    #[test]
    fn retry_after_says_when_it_would_pass() {
        let mut rl = RateLimiter::new(2);
        let t0 = Timestamp::from_secs(0);
        rl.check(&1, t0).unwrap();
        rl.check(&1, t0).unwrap();
        assert_eq!(rl.check(&1, t0), Err(30));
        assert_eq!(rl.check(&1, t0.plus_secs(29)), Err(1));
        assert_eq!(rl.check(&1, t0.plus_secs(30)), Ok(()));
    }

    #[test]
    fn zero_turns_it_off() {
        let mut rl = RateLimiter::new(0);
        for _ in 0..10_000 {
            assert!(rl.check(&"a", Timestamp::EPOCH).is_ok());
        }
        assert_eq!(rl.tracked(), 0);
    }

    #[test]
    fn memory_stays_bounded() {
        let mut rl = RateLimiter::with_capacity(100, 1000);
        let t0 = Timestamp::from_secs(5);
        // A hundred times the capacity, all new keys at one instant (none
        // expires): the table is made room in 800 times over. A million
        // proved no more, at ten times the time of an unoptimised build.
        for k in 0..100_000u32 {
            let _ = rl.check(&k, t0);
        }
        assert!(rl.tracked() <= 1000);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Over any span of time a key is admitted at most its burst (one
        /// minute's allowance) plus what the sustained rate refills in
        /// that span; and a full burst is always admitted to a new key.
        #[test]
        fn admissions_follow_burst_plus_rate(limit in 1u32..50, gaps in prop::collection::vec(0i64..3000, 1..160)) {
            let mut rl = RateLimiter::new(limit);
            let interval = 60_000 / i64::from(limit);
            let mut now = 0i64;
            let mut admitted: Vec<i64> = vec![];
            for g in gaps {
                now += g;
                if rl.check(&0, Timestamp::from_millis(now)).is_ok() {
                    admitted.push(now);
                }
            }
            for i in 0..admitted.len() {
                for j in i..admitted.len() {
                    let span = admitted[j] - admitted[i];
                    // GCRA's exact bound: the burst tolerance plus the span,
                    // in whole intervals, plus the request that opens it.
                    let allowed = (span + 60_000 - interval) / interval + 1;
                    prop_assert!((j - i + 1) as i64 <= allowed, "{} admitted over {span} ms at limit {limit}", j - i + 1);
                }
            }
            let mut fresh = RateLimiter::new(limit);
            for _ in 0..limit {
                prop_assert!(fresh.check(&1, Timestamp::EPOCH).is_ok());
            }
            prop_assert!(fresh.check(&1, Timestamp::EPOCH).is_err());
        }
    }
}
