//! Scenarios 12 and 13 (issue 19): what a normal client feels while
//! hostile clients run, and the memory of an image flood.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::inproc::Fixtures;
use crate::tools::{self, RssSampler, Storesrv};
use crate::{Bench, Row};

/// Slow readers in the attack: eight addresses, each just under the
/// default share of 64 connections, so that all of them get in.
const SLOW_READER_ADDRS: u8 = 8;
const SLOW_READERS_PER_ADDR: usize = 63;
/// Uploaders of 24 MP photos running in a loop during the attack.
const FLOODERS: usize = 24;
/// A stalled reader's receive buffer: small, so the server's writes stall
/// at once instead of filling megabytes of socket buffers.
const SLOW_READER_RCVBUF_BYTES: usize = 4096;
const MIB: f64 = 1_048_576.0;

/// The 99th percentile of latencies, in ms.
fn p99(mut ms: Vec<f64>) -> f64 {
    if ms.is_empty() {
        return f64::NAN;
    }
    ms.sort_by(f64::total_cmp);
    ms[((ms.len() as f64 * 0.99).ceil() as usize).min(ms.len()) - 1]
}

/// A normal client for `secs`: GET a 1 KiB file and upload 1 KiB, one
/// after the other. Answers the GET and upload p99 in ms.
pub(crate) fn normal_client(s: &Storesrv, small: &str, secs: u32) -> (f64, f64) {
    let agent = tools::agent();
    let (mut gets, mut ups) = (vec![], vec![]);
    let body = vec![b'x'; 1024];
    let until = Instant::now() + Duration::from_secs(secs.into());
    while Instant::now() < until {
        let t = Instant::now();
        let mut res = agent.get(format!("{}{small}", s.base)).call().expect("GET");
        let _ = res.body_mut().read_to_vec();
        assert_eq!(res.status().as_u16(), 200, "the normal client's GET");
        gets.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let res = agent
            .post(format!("{}/?name=n.bin", s.base))
            .send(&body[..])
            .expect("upload");
        assert_eq!(res.status().as_u16(), 201, "the normal client's upload");
        ups.push(t.elapsed().as_secs_f64() * 1e3);
    }
    (p99(gets), p99(ups))
}

/// Opens slow readers of `path`: each sends its GET and reads nothing.
fn slow_readers(s: &Storesrv, path: &str) -> Vec<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let addr: SocketAddr = s
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let request = format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n");
    let mut held = Vec::new();
    for a in 0..SLOW_READER_ADDRS {
        let source = SocketAddr::from(([127, 0, 0, 2 + a], 0));
        for _ in 0..SLOW_READERS_PER_ADDR {
            let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
            socket
                .set_recv_buffer_size(SLOW_READER_RCVBUF_BYTES)
                .expect("rcvbuf");
            socket.bind(&source.into()).expect("bind");
            socket.connect(&addr.into()).expect("connect");
            let mut stream: TcpStream = socket.into();
            stream.write_all(request.as_bytes()).expect("request");
            held.push(stream);
        }
    }
    held
}

/// Uploads 24 MP photos in a loop from [`FLOODERS`] threads until `stop`;
/// counts the uploads accepted and those refused with a Retry-After.
fn flood(s: &Storesrv, photo: &[u8], stop: &AtomicBool, accepted: &AtomicU64, refused: &AtomicU64) {
    std::thread::scope(|scope| {
        for i in 0..FLOODERS {
            scope.spawn(move || {
                let agent = tools::agent();
                while !stop.load(Ordering::Relaxed) {
                    let res = agent
                        .post(format!("{}/pics/g/bench-flood?name=f{i}.jpg", s.base))
                        .send(photo);
                    match res.map(|r| r.status().as_u16()) {
                        Ok(201) => accepted.fetch_add(1, Ordering::Relaxed),
                        // Refused before its body was read: the server may
                        // close while the photo is still being sent.
                        Ok(429) | Err(_) => {
                            std::thread::sleep(Duration::from_millis(200));
                            refused.fetch_add(1, Ordering::Relaxed)
                        }
                        Ok(other) => panic!("an image upload answered {other}"),
                    };
                }
            });
        }
    });
}

/// Scenario 12: the p99 of a normal client alone, then while 504 slow
/// readers of a 5 MiB file and a flood of 24 MP image uploads run.
pub fn attack(bench: &Bench, f: &Fixtures) -> Vec<Row> {
    let dir = bench.work.join("attack");
    let _ = std::fs::remove_dir_all(&dir);
    let s = Storesrv::start_guarded(&bench.storesrv, &dir.join("data"));
    let small = s.upload("small.bin", &f.small);
    let large = s.upload("large.bin", &f.large);
    s.post_empty("/pics?create=1&name=bench-flood");
    let (get_alone, up_alone) = normal_client(&s, &small, bench.secs);
    let sampler = RssSampler::start(s.pid());
    let held = slow_readers(&s, &large);
    let (stop, accepted, refused) = (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
    let (get_attacked, up_attacked) = std::thread::scope(|scope| {
        scope.spawn(|| flood(&s, &f.photo, &stop, &accepted, &refused));
        // Let the flood fill the image queue before measuring.
        std::thread::sleep(Duration::from_secs(2));
        let figures = normal_client(&s, &small, bench.secs);
        stop.store(true, Ordering::Relaxed);
        figures
    });
    let (peak, hwm) = sampler.finish();
    let slow = held.len();
    drop(held);
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, busy) = (accepted.into_inner(), refused.into_inner());
    println!(
        "  12: alone GET p99 {get_alone:.2} ms, upload {up_alone:.2} ms; attacked GET {get_attacked:.2} ms, upload {up_attacked:.2} ms; {slow} slow readers; images {ok} accepted, {busy} refused"
    );
    let worst = get_attacked.max(up_attacked);
    vec![
        Row::new(
            "12",
            format!("normal client alone, then under {slow} slow readers and a flood of {FLOODERS} image uploaders ({ok} stored, {busy} told to retry)"),
            format!(
                "p99 GET {get_alone:.1} → {get_attacked:.1} ms, upload {up_alone:.1} → {up_attacked:.1} ms"
            ),
            "p99 < 1000 ms under attack",
            Some(worst < 1000.0),
        ),
        Row::new(
            "12",
            "storesrv memory during the attack (two image jobs, the slow readers' buffers)",
            format!(
                "peak RSS {:.1} MiB, VmHWM {:.1} MiB",
                peak as f64 / MIB,
                hwm as f64 / MIB
            ),
            "",
            None,
        ),
    ]
}

/// Scenario 13: 24 concurrent uploads of a 24 MP photo; the peak memory,
/// and what is left 10 s after the last one.
pub fn image_flood_memory(bench: &Bench, f: &Fixtures) -> (Vec<Row>, u64) {
    let dir = bench.work.join("flood-memory");
    let _ = std::fs::remove_dir_all(&dir);
    let s = Storesrv::start(&bench.storesrv, &dir.join("data"));
    s.post_empty("/pics?create=1&name=bench-flood");
    let idle_before = tools::memory(s.pid()).0;
    let sampler = RssSampler::start(s.pid());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for i in 0..FLOODERS {
            let (s, photo) = (&s, &f.photo);
            scope.spawn(move || {
                let res = tools::agent()
                    .post(format!("{}/pics/g/bench-flood?name=m{i}.jpg", s.base))
                    .send(photo.as_slice())
                    .expect("upload");
                assert_eq!(res.status().as_u16(), 201, "image upload");
            });
        }
    });
    let took = started.elapsed().as_secs_f64();
    let (peak, hwm) = sampler.finish();
    std::thread::sleep(Duration::from_secs(10));
    let idle_after = tools::memory(s.pid()).0;
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
    let mib = |b: u64| b as f64 / MIB;
    let rows = vec![
        Row::new(
            "13",
            format!("{FLOODERS} concurrent 24 MP image uploads ({took:.1} s)"),
            format!("peak RSS {:.1} MiB, VmHWM {:.1} MiB", mib(peak), mib(hwm)),
            "< 300 MB",
            Some(hwm < 300 * 1_000_000),
        ),
        Row::new(
            "13",
            "RSS before, and 10 s after the image flood",
            format!("{:.1} → {:.1} MiB", mib(idle_before), mib(idle_after)),
            "< 60 MB after",
            Some(idle_after < 60 * 1_000_000),
        ),
    ];
    (rows, hwm)
}
