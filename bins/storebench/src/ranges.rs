//! Scenario 15 (issue 15): 206 answers, 64 KiB ranges of a 5 MiB file,
//! against nginx; and the cost of metrics, GET 1 KiB and 5 MiB with them
//! on and off, side by side in the same rounds.

use crate::inproc::Fixtures;
use crate::scenarios::fresh_with;
use crate::tools::{self, median, Nginx, Storesrv};
use crate::{Bench, Row};

const NGINX_PORT: u16 = 18_083;
const RANGE_BYTES: usize = 64 * 1024;

/// One round's figures: storesrv/nginx for ranges, and metrics on/off.
struct Round {
    ranges: f64,
    range_rps: f64,
    small: f64,
    large: f64,
}

pub fn ranges_and_metrics(bench: &Bench, f: &Fixtures) -> Vec<Row> {
    let off = fresh_with(bench, "ranges-off", Storesrv::start);
    let on = fresh_with(bench, "ranges-on", Storesrv::start_with_metrics);
    let dir = off.dir.0.clone();
    let www = dir.join("www");
    std::fs::create_dir_all(&www).expect("www");
    std::fs::write(www.join("1k.bin"), &f.small).expect("1k");
    std::fs::write(www.join("5m.bin"), &f.large).expect("5m");
    let nginx = Nginx::start(&dir, &www, NGINX_PORT);
    let paths = |s: &Storesrv| (s.upload("1k.bin", &f.small), s.upload("5m.bin", &f.large));
    let (off_small, off_large) = paths(&off.s);
    let (on_small, on_large) = paths(&on.s);
    let sizes = (f.large.len(), RANGE_BYTES);
    let mut rounds = vec![];
    for round in 0..bench.rounds {
        let get = |base: &str, path: &str, conns: u32| {
            let r = tools::wrk(&dir, &format!("{base}{path}"), conns, bench.secs, "GET", 0);
            assert_eq!(r.errors, 0.0, "errors in scenario 15");
            r
        };
        let a = tools::wrk_ranges(
            &dir,
            &format!("{}{off_large}", off.s.base),
            8,
            bench.secs,
            sizes,
        );
        let b = tools::wrk_ranges(
            &dir,
            &format!("{}/5m.bin", nginx.base),
            8,
            bench.secs,
            sizes,
        );
        assert_eq!(a.errors + b.errors, 0.0, "errors in scenario 15");
        // On and off take turns going first, so that neither gains from
        // its place in the round (a warm cache, a quieter host).
        let pair = |on_path: &str, off_path: &str, conns: u32| {
            if round % 2 == 0 {
                let first = get(&on.s.base, on_path, conns);
                (first, get(&off.s.base, off_path, conns))
            } else {
                let first = get(&off.s.base, off_path, conns);
                (get(&on.s.base, on_path, conns), first)
            }
        };
        let small = pair(&on_small, &off_small, 64);
        let large = pair(&on_large, &off_large, 8);
        println!(
            "  15 round {round}: ranges storesrv {:.0} req/s, nginx {:.0} req/s; metrics on/off: 1 KiB {:.0}/{:.0} req/s, 5 MiB {:.0}/{:.0} MB/s",
            a.rps(), b.rps(), small.0.rps(), small.1.rps(),
            large.0.bytes_per_sec() / 1e6, large.1.bytes_per_sec() / 1e6
        );
        rounds.push(Round {
            ranges: a.rps() / b.rps(),
            range_rps: a.rps(),
            small: small.0.rps() / small.1.rps(),
            large: large.0.bytes_per_sec() / large.1.bytes_per_sec(),
        });
    }
    rows(rounds)
}

fn rows(rounds: Vec<Round>) -> Vec<Row> {
    let pick = |f: fn(&Round) -> f64| median(rounds.iter().map(f).collect());
    let ranges = pick(|r| r.ranges);
    let (small, large) = (pick(|r| r.small), pick(|r| r.large));
    vec![
        Row::new(
            "15",
            "206: 64 KiB ranges of a 5 MiB file, 8 connections: storesrv/nginx req/s",
            format!("{ranges:.2}x ({:.0} req/s)", pick(|r| r.range_rps)),
            ">= 0.9x",
            Some(ranges >= 0.9),
        ),
        Row::new(
            "15",
            "GET 1 KiB, 64 connections: metrics on / off",
            format!("{small:.2}x"),
            "reported (>= 0.95x: not measurable)",
            None,
        ),
        Row::new(
            "15",
            "GET 5 MiB, 8 connections: metrics on / off",
            format!("{large:.2}x"),
            "reported (>= 0.95x: not measurable)",
            None,
        ),
    ]
}
