//! Scenario 19 (issue 36): what moderation, webhooks and scanning cost
//! the users of an instance. In turns, on fresh servers: the build before
//! issue 36 (`STOREBENCH_BASELINE`, when given), this build with none of
//! it configured, and this build with a webhook (to a receiver here that
//! takes every delivery; with `STOREBENCH_WITH_ADMIN`, an admin token
//! too). Each is measured with 1 KiB uploads and GETs (64 connections)
//! and 5 MiB uploads (8). The issue asks that without them nothing is
//! slower (a ratio within the noise), and that a webhook costs uploads
//! under 10%.

use std::path::Path;
use std::time::{Duration, Instant};

use store_testkit::origin::KeepAlive;

use crate::tools::{self, median, Storesrv};
use crate::{Bench, Row};

const KIB: usize = 1024;
/// The most a webhook may take off the upload rate.
const WEBHOOK_DROP_MAX: f64 = 0.10;
/// How often a server's processor time is read while it settles.
const SETTLE_POLL: Duration = Duration::from_millis(300);
/// The longest a server is waited for to deliver and settle.
const SETTLE_MAX: Duration = Duration::from_secs(60);

/// A receiver that takes every delivery (204), keeping connections open,
/// on the load core: started from a pinned thread, its threads inherit
/// the pinning. The receiver is load, not server: on the server's core it
/// would take the time of the very server it measures.
fn receiver() -> KeepAlive {
    std::thread::spawn(|| {
        tools::pin_this_thread(tools::LOAD_CORE);
        KeepAlive::start(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
    })
    .join()
    .expect("the receiver starts")
}

/// A server's rates (uploads of 1 KiB, GETs of 1 KiB, uploads of 5 MiB),
/// and the processor time it spent per 1 KiB upload, in microseconds,
/// deliveries included: a measure the disk's drifting pace does not
/// reach.
#[derive(Debug, Clone, Copy)]
struct Rates {
    up: f64,
    get: f64,
    large: f64,
    cpu_per_up_us: f64,
}

/// The processor time `pid` has used (user and system), in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and
    // stime are the 14th and 15th of the whole line.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)
}

/// Clock ticks per second (`getconf CLK_TCK`).
fn ticks_per_sec() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Waits until `receiver` has taken `deliveries` in all (when a webhook
/// is on) and the processor time of `pid` has stopped growing: the
/// uploads' whole cost is then counted. Answers that processor time.
fn settled_ticks(pid: u32, deliveries: Option<(&KeepAlive, usize)>) -> u64 {
    let deadline = Instant::now() + SETTLE_MAX;
    let mut last = cpu_ticks(pid);
    loop {
        std::thread::sleep(SETTLE_POLL);
        let now = cpu_ticks(pid);
        let delivered = deliveries.is_none_or(|(r, n)| r.requests() >= n);
        if (delivered && now == last) || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// The rates of one fresh server, in a directory of its own (`name`
/// numbered by `turn`) that stays until the scenario ends.
fn measure(
    bench: &Bench,
    binary: &Path,
    (name, turn): (&str, usize),
    env: &[(&str, &str)],
    receiver: Option<&KeepAlive>,
) -> Rates {
    let dir = bench.work.join(format!("{name}-{turn}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scenario dir");
    // The receiver serves every server of the scenario: its count goes on.
    let taken_before = receiver.map(KeepAlive::requests);
    let connections_before = receiver.map(KeepAlive::connections);
    let s = Storesrv::start_with_env(binary, &dir.join("data"), env);
    let path = s.upload("read.txt", "x".repeat(KIB).as_bytes());
    // read.txt's event, delivered before the measure.
    let ticks_before = settled_ticks(s.pid(), receiver.zip(taken_before.map(|n| n + 1)));
    let up = tools::wrk(
        &dir,
        &format!("{}/?name=small.bin", s.base),
        64,
        bench.secs,
        "POST",
        KIB,
    );
    let all = taken_before.map(|n| n + 1 + up.requests as usize);
    let ticks = settled_ticks(s.pid(), receiver.zip(all)) - ticks_before;
    let cpu_per_up_us = ticks as f64 / ticks_per_sec() * 1e6 / up.requests;
    let get = tools::wrk(&dir, &format!("{}{path}", s.base), 64, bench.secs, "GET", 0);
    // Large bodies: where hashing (and scanning, were it on) as the
    // bytes arrive would show.
    let large_url = format!("{}/?name=large.bin", s.base);
    let large = tools::wrk(&dir, &large_url, 8, bench.secs, "POST", 5 * KIB * KIB);
    if let (Some(r), Some(before)) = (receiver, connections_before) {
        // A kept connection per deliverer: more means the sender's pool
        // closed some, and each new one costs the server a handshake.
        println!(
            "  19 {name}: {} connections for {} deliveries",
            r.connections() - before,
            r.requests() - taken_before.unwrap_or(0)
        );
    }
    let errors = up.errors + get.errors + large.errors;
    assert_eq!(errors, 0.0, "storesrv refused requests in scenario 19");
    drop(s);
    empty_large_files(&dir);
    Rates {
        up: up.rps(),
        get: get.rps(),
        large: large.rps(),
        cpu_per_up_us,
    }
}

/// Frees the space of the large uploads under `dir` without deleting a
/// file. Deleting is what skews the next server: on ext4 without a
/// journal (as here), a new file's inode is searched past every inode
/// freed in the last minutes (`recently_deleted`), which cost the server
/// after a removal of ten thousand uploads a quarter of its time
/// (`perf`, scenario 19, 2026-11-28). The directories go at the end.
fn empty_large_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.metadata() {
            Ok(m) if m.is_dir() => empty_large_files(&path),
            Ok(m) if m.len() >= KIB as u64 * KIB as u64 => {
                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
                    let _ = f.set_len(0);
                }
            }
            _ => {}
        }
    }
}

/// Runs the scenario; answers its rows.
pub fn scenarios(bench: &Bench) -> Vec<Row> {
    let baseline = std::env::var_os("STOREBENCH_BASELINE").map(std::path::PathBuf::from);
    let hook = receiver();
    // A webhook alone, what the target is about; with
    // `STOREBENCH_WITH_ADMIN=1` an admin token too, which adds the hashing
    // of every upload.
    let mut on = vec![
        ("STORE_WEBHOOK_URL", hook.url.as_str()),
        (
            "STORE_WEBHOOK_SECRET",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        ),
        ("STORE_WEBHOOK_ALLOW_PRIVATE", "1"),
    ];
    if std::env::var_os("STOREBENCH_WITH_ADMIN").is_some() {
        on.push(("STORE_ADMIN_TOKEN", "bench-admin"));
    }
    let (mut before, mut off, mut with) = (vec![], vec![], vec![]);
    for round in 0..bench.rounds {
        // The order reverses round by round (ABC CBA ABC...), so that a
        // drift of the disk's pace within a run, to which uploads bound by
        // fsync are exposed, weighs on every server alike.
        let mut turns: Vec<u8> = if baseline.is_some() {
            vec![0, 1, 2]
        } else {
            vec![1, 2]
        };
        if round % 2 == 1 {
            turns.reverse();
        }
        for turn in turns {
            match (turn, &baseline) {
                (0, Some(b)) => {
                    before.push(measure(bench, b, ("moderation-before", round), &[], None))
                }
                (0, None) => {}
                (1, _) => off.push(measure(
                    bench,
                    &bench.storesrv,
                    ("moderation-off", round),
                    &[],
                    None,
                )),
                _ => with.push(measure(
                    bench,
                    &bench.storesrv,
                    ("moderation-on", round),
                    &on,
                    Some(&hook),
                )),
            }
        }
        let last = |v: &Vec<Rates>| v.last().map_or("-".to_string(), show);
        println!(
            "  19 round {round}: 1 KiB up/GET, 5 MiB up (req/s), CPU per upload: before {}, off {}, webhook {}",
            last(&before),
            last(&off),
            last(&with)
        );
    }
    for round in 0..bench.rounds {
        for name in ["moderation-before", "moderation-off", "moderation-on"] {
            let _ = std::fs::remove_dir_all(bench.work.join(format!("{name}-{round}")));
        }
    }
    rows(&before, &off, &with)
}

/// One server's figures, for a round's line.
fn show(r: &Rates) -> String {
    format!(
        "{:.0}/{:.0}/{:.1}, {:.0} us",
        r.up, r.get, r.large, r.cpu_per_up_us
    )
}

/// The scenario's rows: medians over rounds of each round's ratio.
fn rows(before: &[Rates], off: &[Rates], with: &[Rates]) -> Vec<Row> {
    let ratio = |a: &[Rates], b: &[Rates], pick: fn(&Rates) -> f64| {
        median(a.iter().zip(b).map(|(x, y)| pick(x) / pick(y)).collect())
    };
    let mut rows = vec![];
    if !before.is_empty() {
        for (what, pick) in [
            ("uploads of 1 KiB", (|r: &Rates| r.up) as fn(&Rates) -> f64),
            ("GETs of 1 KiB", |r| r.get),
            ("uploads of 5 MiB (8 connections)", |r| r.large),
        ] {
            rows.push(Row::new(
                "19",
                format!("{what}, nothing of issue 36 configured, over the build before it"),
                format!("{:.2}x", ratio(off, before, pick)),
                "within the noise",
                None,
            ));
        }
    }
    let webhook = ratio(with, off, |r| r.up);
    rows.push(Row::new(
        "19",
        "uploads of 1 KiB with a webhook (every event delivered) over none (an admin token too with STOREBENCH_WITH_ADMIN)",
        format!("{webhook:.2}x"),
        ">= 0.90x",
        Some(webhook >= 1.0 - WEBHOOK_DROP_MAX),
    ));
    rows.push(Row::new(
        "19",
        "processor time per 1 KiB upload, its delivery included, with a webhook over none",
        format!("{:.2}x", ratio(with, off, |r| r.cpu_per_up_us)),
        "<= 1.11x (a 10% lower rate when bound by the processor)",
        None,
    ));
    rows.push(Row::new(
        "19",
        "GETs of 1 KiB with a webhook over none (an admin token too with STOREBENCH_WITH_ADMIN)",
        format!("{:.2}x", ratio(with, off, |r| r.get)),
        "within the noise",
        None,
    ));
    rows
}
