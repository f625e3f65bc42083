//! How long one password check costs with the service's argon2id
//! parameters (issue 34 asks for about 50 ms on the reference machine):
//! `cargo run --release -p store-app --example argon2_cost [ROUNDS]`.
//! Prints each check's time and the median, in milliseconds.

use std::time::Instant;

use store_app::passwords::{hash_password, password_matches};
use store_core::ports::Random;

/// Fixed salt bytes: the cost does not depend on them.
struct Fixed;

impl Random for Fixed {
    fn fill(&self, buf: &mut [u8]) {
        buf.fill(7);
    }
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(21);
    let hash = hash_password("correct horse battery", &Fixed).expect("a hash");
    let mut ms: Vec<f64> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            assert!(!password_matches("a wrong guess", &hash));
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    println!("{hash}");
    println!(
        "{rounds} checks: median {:.1} ms, fastest {:.1}, slowest {:.1}",
        ms[rounds / 2],
        ms[0],
        ms[rounds - 1]
    );
}
