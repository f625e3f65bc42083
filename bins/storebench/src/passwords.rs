//! Scenario 18 (issue 34): what a normal client feels while a flood of
//! wrong passwords runs. The flood is spread over many protected links,
//! so that it is not all refused by the per-link limit of ten wrong tries
//! and most of it reaches the password lane, the costly case.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::inproc::Fixtures;
use crate::tools::{self, Storesrv};
use crate::{Bench, Row};

/// Wrong passwords sent per second, in all.
const WRONG_PER_SEC: u64 = 200;
/// Threads sending them, each at an even pace (one a second): enough
/// that the rate holds while seventeen of them wait on the password lane
/// (one check and sixteen queued, at about 50 ms each), for up to a
/// second.
const FLOODERS: u64 = 200;
/// Protected links the flood is spread over.
const PROTECTED_LINKS: usize = 100;

/// Sends wrong passwords at [`WRONG_PER_SEC`] in all until `stop`, over
/// `links` in turn; counts the answers: checked and wrong (401), and
/// refused unchecked (429: the link's limit, or the lane's queue full).
fn flood(
    s: &Storesrv,
    links: &[String],
    stop: &AtomicBool,
    checked: &AtomicU64,
    refused: &AtomicU64,
) {
    let gap = Duration::from_micros(1_000_000 * FLOODERS / WRONG_PER_SEC);
    std::thread::scope(|scope| {
        for t in 0..FLOODERS as usize {
            scope.spawn(move || {
                let agent = tools::agent();
                let wrong = "Basic OndyZW5nIHBhc3N3b3Jk"; // ":wrong password"
                let mut next = Instant::now();
                let mut i = t;
                while !stop.load(Ordering::Relaxed) {
                    let url = format!("{}{}", s.base, links[i % links.len()]);
                    let res = agent.get(url).header("authorization", wrong).call();
                    match res.map(|r| r.status().as_u16()) {
                        Ok(401) => checked.fetch_add(1, Ordering::Relaxed),
                        Ok(429) => refused.fetch_add(1, Ordering::Relaxed),
                        other => panic!("a wrong password answered {other:?}"),
                    };
                    i += FLOODERS as usize;
                    next += gap;
                    if let Some(wait) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                }
            });
        }
    });
}

/// Scenario 18: the normal client's p99 alone, then during the flood,
/// each the median of `bench.rounds` rounds.
pub fn flood_of_wrong_passwords(bench: &Bench, f: &Fixtures) -> Vec<Row> {
    let dir = bench.work.join("passwords");
    let _ = std::fs::remove_dir_all(&dir);
    let s = Storesrv::start(&bench.storesrv, &dir.join("data"));
    let small = s.upload("small.bin", &f.small);
    let links: Vec<String> = (0..PROTECTED_LINKS)
        .map(|i| {
            let mut res = tools::agent()
                .post(format!("{}/?name=p{i}.txt", s.base))
                .header("x-store-password", "correct horse")
                .send(&b"protected"[..])
                .expect("upload");
            assert_eq!(res.status().as_u16(), 201, "a protected upload");
            let body = res.body_mut().read_to_string().expect("body");
            let v: serde_json::Value = serde_json::from_str(&body).expect("record");
            format!("/{}", v["id"].as_str().expect("id"))
        })
        .collect();
    // Rounds of the client alone, then under the flood; medians of each.
    let (stop, checked, refused) = (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
    let (mut alone, mut flooded) = (Vec::new(), Vec::new());
    let mut took = 0.0;
    for _ in 0..bench.rounds {
        alone.push(crate::attack::normal_client(&s, &small, bench.secs));
        stop.store(false, Ordering::Relaxed);
        let started = Instant::now();
        flooded.push(std::thread::scope(|scope| {
            scope.spawn(|| flood(&s, &links, &stop, &checked, &refused));
            let figures = crate::attack::normal_client(&s, &small, bench.secs);
            stop.store(true, Ordering::Relaxed);
            figures
        }));
        took += started.elapsed().as_secs_f64();
    }
    let median = |xs: &[(f64, f64)], pick: fn(&(f64, f64)) -> f64| {
        tools::median(xs.iter().map(pick).collect())
    };
    let (get_alone, up_alone) = (median(&alone, |x| x.0), median(&alone, |x| x.1));
    let (get_flood, up_flood) = (median(&flooded, |x| x.0), median(&flooded, |x| x.1));
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
    let (checked, refused) = (checked.into_inner(), refused.into_inner());
    let rate = (checked + refused) as f64 / took;
    println!(
        "  18: alone GET p99 {get_alone:.2} ms, upload {up_alone:.2} ms; during {rate:.0} wrong passwords/s GET {get_flood:.2} ms, upload {up_flood:.2} ms; {checked} checked, {refused} refused unchecked"
    );
    vec![Row::new(
        "18",
        format!(
            "normal client alone, then during {rate:.0} wrong passwords/s over {PROTECTED_LINKS} links ({checked} checked by argon2id, {refused} refused unchecked)"
        ),
        format!("p99 GET {get_alone:.1} → {get_flood:.1} ms, upload {up_alone:.1} → {up_flood:.1} ms"),
        "",
        None,
    )]
}
