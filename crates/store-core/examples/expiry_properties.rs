//! A property test an outside project would write against storesrv's
//! expiry rules, with proptest and store-core's public API only: any
//! sequence of writes to a dir, at any pace, keeps its lifetime within the
//! rules SPEC.md gives.
//!
//! ```sh
//! cargo run -p store-core --example expiry_properties
//! ```
//!
//! In a test suite the same properties sit in a `proptest!` block; here
//! they run through proptest's `TestRunner`, so that the example is a
//! program that fails (exit code 1) when a property breaks.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use store_core::{Lifetime, Limits, Timestamp};

/// A dir's story: its ttl, then the gaps (in seconds) between writes.
fn dir_story() -> impl Strategy<Value = (u64, Vec<u64>)> {
    let l = Limits::DEFAULT;
    (
        l.dir_ttl_min_secs..=l.dir_ttl_max_secs,
        prop::collection::vec(0u64..3 * 86_400, 0..40),
    )
}

/// After every write a dir lives at least its ttl (or the cap, if that is
/// shorter) and never more than the cap; between writes it is live until
/// its expiry and gone from then on.
fn sliding_lifetime_holds((ttl, gaps): (u64, Vec<u64>)) -> Result<(), TestCaseError> {
    let cap = Limits::DEFAULT.dir_sliding_cap_secs;
    let mut now = Timestamp::from_secs(1_800_000_000);
    let mut life = Lifetime::sliding(now, ttl);
    for gap in gaps {
        let at = life
            .expires_at()
            .expect("a dir that is not retained expires");
        let next = now.plus_secs(gap);
        // Live strictly before the expiry, gone at it.
        prop_assert_eq!(life.is_live(next), next < at);
        if !life.is_live(next) {
            return Ok(()); // An expired dir takes no more writes.
        }
        now = next;
        life.slide(now, cap);
        let at = life.expires_at().expect("still sliding");
        prop_assert!(
            at >= now.plus_secs(ttl.min(cap)),
            "a write gives at least the ttl"
        );
        prop_assert!(at <= now.plus_secs(cap), "never past the cap");
        prop_assert_eq!(life.max_age_secs(), Some(ttl));
    }
    Ok(())
}

/// A single file's lifetime is fixed: activity never moves it.
fn fixed_lifetime_ignores_writes((ttl, gaps): (u64, Vec<u64>)) -> Result<(), TestCaseError> {
    let start = Timestamp::from_secs(1_800_000_000);
    let mut life = Lifetime::fixed(start, ttl);
    let mut now = start;
    for gap in gaps {
        now = now.plus_secs(gap);
        life.slide(now, Limits::DEFAULT.dir_sliding_cap_secs);
        prop_assert_eq!(life.expires_at(), Some(start.plus_secs(ttl)));
    }
    Ok(())
}

fn main() {
    // A program has no source file to keep failing cases beside: proptest
    // prints the case that failed instead.
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    for (name, property) in [
        (
            "sliding lifetime",
            sliding_lifetime_holds as fn((u64, Vec<u64>)) -> Result<(), TestCaseError>,
        ),
        ("fixed lifetime", fixed_lifetime_ignores_writes),
    ] {
        match runner.run(&dir_story(), property) {
            Ok(()) => println!("{name}: 512 cases hold"),
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(1);
            }
        }
    }
}
