//! Scenario 16 (issue 33): a 1 GiB file sent as a resumable upload (tus,
//! 8 MiB PATCHes) beside one plain upload of the same bytes, round by
//! round on the same server: on sled and local files, and on the cluster
//! (PostgreSQL and Garage behind nginx) when bench/run.sh started one.
//! Throughput is the file's size over the wall time from the first byte of
//! the creation to the answer of the last PATCH; memory is the servers'
//! RSS growth over their idle RSS while either runs.
//!
//! The client writes HTTP/1.1 by hand on a socket, from one 8 MiB buffer:
//! a client library's own copies would be measured too, and neither side
//! may hold the file in memory.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use crate::scenarios::Cleanup;
use crate::tools::{self, median, RssSampler, Storesrv};
use crate::{Bench, Row};

const MIB: usize = 1 << 20;
/// The file: 1 GiB.
const FILE_BYTES: usize = 1 << 30;
/// One PATCH: 8 MiB, as the issue sets it.
const PATCH_BYTES: usize = 8 * MIB;
/// The single-file limit the servers get, in bytes: the file fits.
pub const LIMIT_BYTES: &str = "1100000000";
/// What the issue asks of tus against the plain upload, as a ratio of
/// throughputs.
const RATIO_MIN: f64 = 0.8;
/// What the issue allows the server's RSS to grow during either upload.
const GROWTH_MAX_BYTES: u64 = 64 * MIB as u64;

/// One server to send to: its base URL and the pids whose memory counts.
struct Target {
    base: String,
    pids: Vec<u32>,
}

/// Figures of one set-up, one per round.
#[derive(Default)]
struct Figures {
    tus: Vec<f64>,
    plain: Vec<f64>,
    /// The larger RSS growth of the two uploads, in bytes.
    growth: Vec<u64>,
    /// Whether any process's memory was sampled.
    measured_memory: bool,
}

/// Runs the scenario on a fresh sled server and, with `cluster`, on the
/// cluster at that URL with those storesrv pids.
pub fn scenarios(bench: &Bench, cluster: Option<(&str, &[u32])>) -> Vec<Row> {
    let dir = bench.work.join("resumable");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scenario dir");
    let _cleanup = Cleanup(dir.clone());
    let sled = Storesrv::start_with_env(
        &bench.storesrv,
        &dir.join("data"),
        &[("STORE_MAX_FILE_BYTES", LIMIT_BYTES)],
    );
    let chunk = pattern();
    let mut targets = vec![(
        "sled + files",
        Target {
            base: sled.base.clone(),
            pids: vec![sled.pid()],
        },
    )];
    if let Some((url, pids)) = cluster {
        targets.push((
            "PostgreSQL + Garage (cluster)",
            Target {
                base: url.to_string(),
                pids: pids.to_vec(),
            },
        ));
    }
    let mut rows = Vec::new();
    for (name, target) in &targets {
        let mut figures = Figures {
            measured_memory: !target.pids.is_empty(),
            ..Figures::default()
        };
        for round in 0..bench.rounds {
            // Each upload starts with nothing left to write back, and the
            // two take turns going first.
            let plain = || {
                crate::settle_disk();
                measured(target, || plain_upload(&target.base, &chunk))
            };
            let tus = || {
                crate::settle_disk();
                measured(target, || tus_upload(&target.base, &chunk))
            };
            let ((plain, plain_growth), (tus, tus_growth)) = if round % 2 == 0 {
                let p = plain();
                (p, tus())
            } else {
                let t = tus();
                (plain(), t)
            };
            println!(
                "  16 {name} round {round}: tus {:.0} MB/s, plain {:.0} MB/s; RSS growth {:.1} / {:.1} MiB",
                tus / 1e6,
                plain / 1e6,
                tus_growth as f64 / MIB as f64,
                plain_growth as f64 / MIB as f64
            );
            figures.tus.push(tus);
            figures.plain.push(plain);
            figures.growth.push(tus_growth.max(plain_growth));
        }
        rows.extend(report(name, &figures));
    }
    rows
}

/// Runs one upload, answering its throughput (bytes per second) and the
/// largest RSS growth of the target's processes meanwhile.
fn measured(target: &Target, upload: impl FnOnce() -> f64) -> (f64, u64) {
    let idle: Vec<u64> = target.pids.iter().map(|p| tools::memory(*p).0).collect();
    let samplers: Vec<RssSampler> = target.pids.iter().map(|p| RssSampler::start(*p)).collect();
    let rate = upload();
    let growth = samplers
        .into_iter()
        .zip(idle)
        .map(|(s, idle)| s.finish().0.saturating_sub(idle))
        .max()
        .unwrap_or(0);
    (rate, growth)
}

fn report(name: &str, f: &Figures) -> Vec<Row> {
    let ratios = f.tus.iter().zip(&f.plain).map(|(t, p)| t / p).collect();
    let ratio = median(ratios);
    let growth = f.growth.iter().copied().max().unwrap_or(0);
    vec![
        Row::new(
            "16",
            format!("{name}: 1 GiB through tus in 8 MiB PATCHes / one plain upload"),
            format!(
                "{ratio:.2}x ({:.0} vs {:.0} MB/s)",
                median(f.tus.clone()) / 1e6,
                median(f.plain.clone()) / 1e6
            ),
            format!(">= {RATIO_MIN}x"),
            Some(ratio >= RATIO_MIN),
        ),
        Row::new(
            "16",
            format!("{name}: server RSS growth during either (worst round)"),
            if f.measured_memory {
                format!("{:.1} MiB", growth as f64 / MIB as f64)
            } else {
                "not measured (no --cluster-pids)".to_string()
            },
            "< 64 MiB",
            f.measured_memory.then_some(growth < GROWTH_MAX_BYTES),
        ),
    ]
}

/// 8 MiB of bytes no store compresses away.
fn pattern() -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..PATCH_BYTES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// One POST of the whole file; answers bytes per second.
fn plain_upload(base: &str, chunk: &[u8]) -> f64 {
    let start = Instant::now();
    let (status, _) = request(base, "POST", "/?name=big.bin", &[], FILE_BYTES, chunk);
    assert_eq!(status, 201, "plain upload of 1 GiB");
    FILE_BYTES as f64 / start.elapsed().as_secs_f64()
}

/// The file through tus: a creation, then 8 MiB PATCHes; answers bytes
/// per second.
fn tus_upload(base: &str, chunk: &[u8]) -> f64 {
    let start = Instant::now();
    let length = FILE_BYTES.to_string();
    let (status, head) = request(
        base,
        "POST",
        "/uploads",
        &[
            ("Tus-Resumable", "1.0.0"),
            ("Upload-Length", &length),
            ("Upload-Metadata", "filename YmlnLmJpbg=="),
        ],
        0,
        chunk,
    );
    assert_eq!(status, 201, "tus creation");
    let location = header(&head, "location").expect("Location");
    let path = location
        .split_once("/uploads/")
        .map(|(_, id)| format!("/uploads/{id}"))
        .expect("an upload URL");
    for offset in (0..FILE_BYTES).step_by(PATCH_BYTES) {
        let at = offset.to_string();
        let (status, _) = request(
            base,
            "PATCH",
            &path,
            &[
                ("Tus-Resumable", "1.0.0"),
                ("Upload-Offset", &at),
                ("Content-Type", "application/offset+octet-stream"),
            ],
            PATCH_BYTES,
            chunk,
        );
        assert_eq!(status, 204, "PATCH at {offset}");
    }
    FILE_BYTES as f64 / start.elapsed().as_secs_f64()
}

/// Sends one request with a body of `len` bytes (`chunk` again and
/// again) on a new connection; answers the status and the head.
fn request(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    len: usize,
    chunk: &[u8],
) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let addr = addr.split('/').next().expect("host:port");
    let mut s = TcpStream::connect(addr).expect("connect");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {len}\r\n"
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("head");
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len());
        s.write_all(&chunk[..n]).expect("body");
        left -= n;
    }
    let mut reader = BufReader::new(s);
    let mut answer = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).expect("answer") == 0 || line == "\r\n" {
            break;
        }
        answer.push_str(&line);
    }
    let _ = reader.read_to_end(&mut Vec::new());
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}
