//! Conformance suites of the coordination ports (key locks, pool ledgers,
//! rate limits). Each takes a factory of *two handles on one store*, as
//! two processes would hold: the in-process forms answer the same object
//! twice, the PostgreSQL forms two connections to one database. A rule
//! that holds across the two handles holds across processes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use store_core::ports::{KeyLocks, Ledgers, Pool, RateLimits, Repository};
use store_core::ratelimit::RateLimiter;
use store_core::Timestamp;

use crate::suite::sample_file;

/// Two handles on one store's locks.
pub type LockPair = (Arc<dyn KeyLocks>, Arc<dyn KeyLocks>);

/// Runs every key-lock check.
pub fn key_locks(make: &dyn Fn() -> LockPair) {
    a_held_key_makes_the_other_handle_wait(make());
    try_lock_many_reports_held_keys_busy(make());
    several_keys_at_once(make());
    eviction_is_exclusive(make());
}

fn a_held_key_makes_the_other_handle_wait((a, b): LockPair) {
    let guard = a.lock(&["k"]).unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&released);
    let waiter = std::thread::spawn(move || {
        let _g = b.lock(&["k"]).unwrap();
        seen.load(Ordering::SeqCst)
    });
    // Give the waiter time to block; if the lock did not exclude, it would
    // get the key now and see `released` still false.
    std::thread::sleep(Duration::from_millis(100));
    released.store(true, Ordering::SeqCst);
    drop(guard);
    assert!(
        waiter.join().unwrap(),
        "a held key is not taken by another handle until it is released"
    );
    let _again = a.lock(&["k"]).unwrap();
}

fn try_lock_many_reports_held_keys_busy((a, b): LockPair) {
    let held = a.lock(&["x"]).unwrap();
    let tried = b
        .try_lock_many(vec!["x".into(), "y".into(), "z".into()])
        .unwrap();
    assert_eq!(tried.busy, vec!["x".to_string()], "a held key is busy");
    let mut locked = tried.locked.clone();
    locked.sort();
    assert_eq!(locked, ["y", "z"], "free keys are taken");
    let again = a.try_lock_many(vec!["y".into()]).unwrap();
    assert!(
        again.locked.is_empty(),
        "keys taken by try_lock_many are held"
    );
    drop(again);
    drop(tried);
    drop(held);
    // Released keys can be taken by the other handle (the release of a
    // database session may take a moment, so it is waited for).
    let _x = b.lock(&["x", "y"]).unwrap();
}

fn several_keys_at_once((a, b): LockPair) {
    let both = a.lock(&["g", "i"]).unwrap();
    let tried = b.try_lock_many(vec!["i".into()]).unwrap();
    assert!(tried.locked.is_empty(), "every key named is held");
    drop(tried);
    drop(both);
    let _g = b.lock(&["i", "g"]).unwrap();
}

fn eviction_is_exclusive((a, b): LockPair) {
    let held = a.lock_eviction().unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&released);
    let waiter = std::thread::spawn(move || {
        let _g = b.lock_eviction().unwrap();
        seen.load(Ordering::SeqCst)
    });
    std::thread::sleep(Duration::from_millis(100));
    released.store(true, Ordering::SeqCst);
    drop(held);
    assert!(waiter.join().unwrap(), "one evictor at a time");
}

/// Two handles on one store's ledgers (capacities 100 bytes for the store
/// pool and 10 for pics), and its repository.
pub type LedgerPair = (Arc<dyn Ledgers>, Arc<dyn Ledgers>, Arc<dyn Repository>);

/// Runs every ledger check. The store must start empty.
pub fn ledgers(make: &dyn Fn() -> LedgerPair) {
    let (a, b, repo) = make();
    assert_eq!(a.try_reserve(Pool::Store, 60).unwrap(), Ok(()));
    assert_eq!(
        b.try_reserve(Pool::Store, 50).unwrap(),
        Err(10),
        "a reservation in one handle counts in the other"
    );
    a.cancel(Pool::Store, 60);
    assert_eq!(b.try_reserve(Pool::Store, 50).unwrap(), Ok(()), "cancelled");
    // The reservation becomes a record of 10 bytes (sample files are 10)
    // and the rest is cancelled.
    repo.put("f", &sample_file("f", Some(100), &[])).unwrap();
    b.settle(Pool::Store, 10);
    b.cancel(Pool::Store, 40);
    for handle in [&a, &b] {
        assert_eq!(
            handle.usage(Pool::Store).unwrap().used_bytes,
            10,
            "the record counts once, settled or not"
        );
    }
    assert_eq!(a.try_reserve(Pool::Store, 91).unwrap(), Err(1));
    repo.remove("f").unwrap();
    a.freed(Pool::Store, 10);
    assert_eq!(a.try_reserve(Pool::Store, 100).unwrap(), Ok(()), "freed");
    assert_eq!(
        b.try_reserve(Pool::Pics, 10).unwrap(),
        Ok(()),
        "the pics pool is counted apart"
    );
    assert_eq!(a.try_reserve(Pool::Pics, 1).unwrap(), Err(1));
    assert_eq!(b.usage(Pool::Pics).unwrap().capacity_bytes, 10);
}

/// Two handles on one store's rate limiter (100 per minute).
pub type RatePair = (Arc<dyn RateLimits>, Arc<dyn RateLimits>);

/// A client address from a small number (192.0.2.0/24, for documentation).
fn client(n: u64) -> std::net::IpAddr {
    std::net::IpAddr::from([192, 0, 2, n as u8])
}

/// Runs every rate-limit check: a client's requests count over both
/// handles, and the answers match [`RateLimiter`] step for step.
pub fn rate_limits(make: &dyn Fn() -> RatePair) {
    let (a, b) = make();
    let t0 = Timestamp::from_secs(1_000_000);
    let (c, d) = (client(1), client(2));
    for i in 0..100 {
        let handle = if i % 2 == 0 { &a } else { &b };
        assert_eq!(handle.check(c, t0).unwrap(), Ok(()), "request {i}");
    }
    assert_eq!(a.check(c, t0).unwrap(), Err(1), "the 101st is refused");
    assert_eq!(b.check(c, t0).unwrap(), Err(1), "on either handle");
    assert_eq!(a.check(d, t0).unwrap(), Ok(()), "clients are apart");

    // The same answers as the reference, over an irregular sequence.
    let (a, b) = make();
    let mut reference = RateLimiter::new(100);
    let mut now = 5_000_000i64;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for step in 0..600 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // About three requests a second per client: over the rate, so both
        // answers occur.
        now += (seed % 250) as i64;
        let who = client(seed % 3);
        let handle = if seed % 2 == 0 { &a } else { &b };
        let t = Timestamp::from_millis(now);
        assert_eq!(
            handle.check(who, t).unwrap(),
            reference.check(&who, t),
            "step {step}"
        );
    }
}
