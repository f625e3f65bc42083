//! Scenario 19 (issue 36): what moderation, webhooks and scanning cost
//! the users of an instance. In turns, on fresh servers: the build before
//! issue 36 (`STOREBENCH_BASELINE`, when given), this build with none of
//! it configured, and this build with a webhook (to a receiver here that
//! takes every delivery; with `STOREBENCH_WITH_ADMIN`, an admin token
//! too). Each is measured with 1 KiB uploads and GETs (64 connections)
//! and 5 MiB uploads (8). The issue asks that without them nothing is
//! slower (a ratio within the noise), and that a webhook costs uploads
//! under 10%.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

use crate::tools::{self, median, Storesrv};
use crate::{Bench, Row};

const KIB: usize = 1024;
/// The most a webhook may take off the upload rate.
const WEBHOOK_DROP_MAX: f64 = 0.10;

/// A receiver that takes every delivery (204), keeping connections open.
fn receiver() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || take_all(stream));
        }
    });
    url
}

/// Answers every request on `stream` with 204 until it closes.
fn take_all(stream: std::net::TcpStream) {
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    loop {
        let mut len = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line.trim().is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err()
            || writer
                .write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
                .is_err()
        {
            return;
        }
    }
}

/// A server's rates: uploads of 1 KiB, GETs of 1 KiB, uploads of 5 MiB.
type Rates = (f64, f64, f64);

/// The rates of one fresh server.
fn measure(bench: &Bench, binary: &Path, name: &str, env: &[(&str, &str)]) -> Rates {
    let dir = bench.work.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scenario dir");
    let s = Storesrv::start_with_env(binary, &dir.join("data"), env);
    let path = s.upload("read.txt", "x".repeat(KIB).as_bytes());
    let up = tools::wrk(
        &dir,
        &format!("{}/?name=small.bin", s.base),
        64,
        bench.secs,
        "POST",
        KIB,
    );
    let get = tools::wrk(&dir, &format!("{}{path}", s.base), 64, bench.secs, "GET", 0);
    // Large bodies: where hashing (and scanning, were it on) as the
    // bytes arrive would show.
    let large_url = format!("{}/?name=large.bin", s.base);
    let large = tools::wrk(&dir, &large_url, 8, bench.secs, "POST", 5 * KIB * KIB);
    let errors = up.errors + get.errors + large.errors;
    assert_eq!(errors, 0.0, "storesrv refused requests in scenario 19");
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
    (up.rps(), get.rps(), large.rps())
}

/// Runs the scenario; answers its rows.
pub fn scenarios(bench: &Bench) -> Vec<Row> {
    let baseline = std::env::var_os("STOREBENCH_BASELINE").map(std::path::PathBuf::from);
    let hook = receiver();
    // A webhook alone, what the target is about; with
    // `STOREBENCH_WITH_ADMIN=1` an admin token too, which adds the hashing
    // of every upload.
    let mut on = vec![
        ("STORE_WEBHOOK_URL", hook.as_str()),
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
        // The order turns round by round, so that none of the three is
        // always measured first (uploads are bound by the disk, whose
        // pace drifts within a run).
        let mut turns: Vec<u8> = vec![0, 1, 2];
        turns.rotate_left(round % 3);
        for turn in turns {
            match (turn, &baseline) {
                (0, Some(b)) => before.push(measure(bench, b, "moderation-before", &[])),
                (0, None) => {}
                (1, _) => off.push(measure(bench, &bench.storesrv, "moderation-off", &[])),
                _ => with.push(measure(bench, &bench.storesrv, "moderation-on", &on)),
            }
        }
        let last = |v: &Vec<Rates>| v.last().copied().unwrap_or((f64::NAN, f64::NAN, f64::NAN));
        let (b, o, w) = (last(&before), last(&off), last(&with));
        println!(
            "  19 round {round}: 1 KiB up/GET, 5 MiB up: before {:.0}/{:.0}/{:.1}, off {:.0}/{:.0}/{:.1}, webhook {:.0}/{:.0}/{:.1} req/s",
            b.0, b.1, b.2, o.0, o.1, o.2, w.0, w.1, w.2
        );
    }
    let ratio = |a: &[Rates], b: &[Rates], pick: fn(&Rates) -> f64| {
        median(a.iter().zip(b).map(|(x, y)| pick(x) / pick(y)).collect())
    };
    let mut rows = vec![];
    if !before.is_empty() {
        rows.push(Row::new(
            "19",
            "uploads of 1 KiB, nothing of issue 36 configured, over the build before it",
            format!("{:.2}x", ratio(&off, &before, |r| r.0)),
            "within the noise",
            None,
        ));
        rows.push(Row::new(
            "19",
            "GETs of 1 KiB, nothing of issue 36 configured, over the build before it",
            format!("{:.2}x", ratio(&off, &before, |r| r.1)),
            "within the noise",
            None,
        ));
        rows.push(Row::new(
            "19",
            "uploads of 5 MiB (8 connections), nothing of issue 36 configured, over the build before it",
            format!("{:.2}x", ratio(&off, &before, |r| r.2)),
            "within the noise",
            None,
        ));
    }
    let webhook = ratio(&with, &off, |r| r.0);
    rows.push(Row::new(
        "19",
        "uploads of 1 KiB with a webhook (every event delivered) over none (an admin token too with STOREBENCH_WITH_ADMIN)",
        format!("{webhook:.2}x"),
        ">= 0.90x",
        Some(webhook >= 1.0 - WEBHOOK_DROP_MAX),
    ));
    rows.push(Row::new(
        "19",
        "GETs of 1 KiB with a webhook over none (an admin token too with STOREBENCH_WITH_ADMIN)",
        format!("{:.2}x", ratio(&with, &off, |r| r.1)),
        "within the noise",
        None,
    ));
    rows
}
