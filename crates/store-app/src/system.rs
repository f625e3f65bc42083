//! The real clock and random source, for the server binary.

use std::time::{SystemTime, UNIX_EPOCH};

use store_core::ports::{Clock, Random};
use store_core::Timestamp;

/// Reads the system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp::from_millis(ms)
    }
}

/// The operating system's CSPRNG.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsRandom;

impl Random for OsRandom {
    fn fill(&self, buf: &mut [u8]) {
        // Without OS randomness no id or token would be safe to hand out;
        // there is no sensible way to go on.
        getrandom::fill(buf).expect("the operating system's random source failed");
    }
}
