//! The scenarios that speak HTTP to the real server (and to nginx).

use std::path::Path;
use std::time::Instant;

use crate::inproc::Fixtures;
use crate::tools::{self, median, FileIo, Nginx, RssSampler, Storesrv};
use crate::{Bench, Row};

const NGINX_PORT: u16 = 18_081;
/// nginx without sendfile, for scenario 2's ceiling of copying servers.
const NGINX_COPY_PORT: u16 = 18_082;
const KIB: usize = 1024;
const MIB: f64 = 1_048_576.0;

/// A scenario's server over its own dir. Fields drop in order: the server
/// stops first, then its dir (data included) is removed.
pub(crate) struct Scenario {
    pub(crate) s: Storesrv,
    pub(crate) dir: Cleanup,
}

fn fresh(bench: &Bench, name: &str) -> Scenario {
    fresh_on(bench, name, None)
}

/// A fresh server over its own dir, started by `start`.
pub(crate) fn fresh_with(
    bench: &Bench,
    name: &str,
    start: fn(&Path, &Path) -> Storesrv,
) -> Scenario {
    let dir = bench.work.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scenario dir");
    Scenario {
        s: start(&bench.storesrv, &dir.join("data")),
        dir: Cleanup(dir),
    }
}

/// A fresh server with its records in sled, or in the PostgreSQL
/// database `database` names.
pub(crate) fn fresh_on(bench: &Bench, name: &str, database: Option<&str>) -> Scenario {
    let dir = bench.work.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scenario dir");
    let data = dir.join("data");
    Scenario {
        s: match database {
            None => Storesrv::start(&bench.storesrv, &data),
            Some(url) => Storesrv::start_with_database(&bench.storesrv, &data, url),
        },
        dir: Cleanup(dir),
    }
}

/// Removes a directory tree when dropped.
pub(crate) struct Cleanup(pub(crate) std::path::PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn www(dir: &Path, f: &Fixtures) -> std::path::PathBuf {
    let www = dir.join("www");
    std::fs::create_dir_all(&www).expect("www");
    std::fs::write(www.join("1k.bin"), &f.small).expect("1k");
    std::fs::write(www.join("5m.bin"), &f.large).expect("5m");
    www
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB)
}

/// Scenarios 1 and 2: GET a 1 KiB file with 64 connections and a 5 MiB
/// file with 8, A/B against nginx. Answers storesrv's small-GET rate for
/// the mix, and the peak memory.
pub fn downloads(bench: &Bench, f: &Fixtures) -> (Vec<Row>, f64, u64) {
    let run = fresh(bench, "downloads");
    let (s, dir) = (&run.s, run.dir.0.clone());
    let idle = tools::memory(s.pid()).0;
    let small = s.upload("1k.bin", &f.small);
    let large = s.upload("5m.bin", &f.large);
    let www = www(&dir, f);
    let nginx = Nginx::start(&dir, &www, NGINX_PORT);
    // The same nginx copying through user space instead of sendfile: what
    // any server pays that hands bytes to the socket from a buffer.
    let copying = Nginx::start_with(&dir.join("copy"), &www, NGINX_COPY_PORT, FileIo::Copy);
    let sampler = RssSampler::start(s.pid());
    let (mut ratios, mut rps, mut p99) = (vec![], vec![], vec![]);
    let (mut tratios, mut tput) = (vec![], vec![]);
    let (mut copy_ratios, mut ceiling) = (vec![], vec![]);
    let mut nginx_rps = vec![];
    for round in 0..bench.rounds {
        let a = tools::wrk(
            &dir,
            &format!("{}{small}", s.base),
            64,
            bench.secs,
            "GET",
            0,
        );
        let b = tools::wrk(
            &dir,
            &format!("{}/1k.bin", nginx.base),
            64,
            bench.secs,
            "GET",
            0,
        );
        assert_eq!(a.errors + b.errors, 0.0, "errors in scenario 1");
        println!(
            "  1 round {round}: storesrv {:.0} req/s p50 {:.2} ms p99 {:.2} ms, nginx {:.0} req/s",
            a.rps(),
            a.p50_ms,
            a.p99_ms,
            b.rps()
        );
        ratios.push(a.rps() / b.rps());
        rps.push(a.rps());
        nginx_rps.push(b.rps());
        p99.push(a.p99_ms);
        let a = tools::wrk(&dir, &format!("{}{large}", s.base), 8, bench.secs, "GET", 0);
        let b = tools::wrk(
            &dir,
            &format!("{}/5m.bin", nginx.base),
            8,
            bench.secs,
            "GET",
            0,
        );
        let c = tools::wrk(
            &dir,
            &format!("{}/5m.bin", copying.base),
            8,
            bench.secs,
            "GET",
            0,
        );
        assert_eq!(a.errors + b.errors + c.errors, 0.0, "errors in scenario 2");
        println!(
            "  2 round {round}: storesrv {:.0} MB/s, nginx {:.0} MB/s, nginx without sendfile {:.0} MB/s",
            a.bytes_per_sec() / 1e6,
            b.bytes_per_sec() / 1e6,
            c.bytes_per_sec() / 1e6
        );
        tratios.push(a.bytes_per_sec() / b.bytes_per_sec());
        tput.push(a.bytes_per_sec());
        copy_ratios.push(a.bytes_per_sec() / c.bytes_per_sec());
        ceiling.push(c.bytes_per_sec() / b.bytes_per_sec());
    }
    let (peak, hwm) = sampler.finish();
    let ratio = median(ratios);
    let p99 = median(p99);
    let tratio = median(tratios);
    let rows = vec![
        Row::new(
            "1",
            "GET 1 KiB, 64 connections: storesrv/nginx req/s",
            format!(
                "{ratio:.2}x ({:.0} vs {:.0} req/s)",
                median(rps.clone()),
                median(nginx_rps)
            ),
            // Issue 15 raised it from 0.7x.
            ">= 0.9x",
            Some(ratio >= 0.9),
        ),
        Row::new(
            "1",
            "GET 1 KiB, 64 connections: p99",
            format!("{p99:.2} ms"),
            "< 5 ms",
            Some(p99 < 5.0),
        ),
        Row::new(
            "2",
            "GET 5 MiB, 8 connections: storesrv/nginx throughput",
            format!("{tratio:.2}x ({:.0} MB/s)", median(tput) / 1e6),
            ">= 0.9x",
            Some(tratio >= 0.9),
        ),
        Row::new(
            "2",
            "GET 5 MiB: nginx without sendfile / nginx (the copying ceiling)",
            format!("{:.2}x", median(ceiling)),
            "reported",
            None,
        ),
        Row::new(
            "2",
            "GET 5 MiB: storesrv / nginx without sendfile",
            format!("{:.2}x", median(copy_ratios)),
            "reported",
            None,
        ),
        Row::new(
            "6",
            "idle RSS with a small store",
            mib(idle),
            "< 30 MB",
            Some(idle < 30 * 1_000_000),
        ),
        Row::new(
            "1-2",
            "storesrv peak RSS / VmHWM during downloads",
            format!("{} / {}", mib(peak), mib(hwm)),
            "",
            None,
        ),
    ];
    (rows, median(rps), hwm)
}

/// Scenario 3 (and 11): upload 1 KiB files with 64 connections, each
/// acknowledged once durable; then the bytes on disk per logical byte.
pub fn small_uploads(bench: &Bench) -> (Vec<Row>, f64, u64) {
    let run = fresh(bench, "uploads-small");
    let (s, dir) = (&run.s, run.dir.0.clone());
    let www = dir.join("www");
    std::fs::create_dir_all(&www).expect("www");
    let nginx = Nginx::start(&dir, &www, NGINX_PORT);
    let sampler = RssSampler::start(s.pid());
    let (mut rates, mut nginx_rates) = (vec![], vec![]);
    let mut stored = 0.0;
    for round in 0..bench.rounds {
        let url = format!("{}/?name=small.bin", s.base);
        let a = tools::wrk(&dir, &url, 64, bench.secs, "POST", KIB);
        let b = tools::wrk(
            &dir,
            &format!("{}/up/small.bin", nginx.base),
            64,
            bench.secs,
            "PUT",
            KIB,
        );
        assert_eq!(a.errors, 0.0, "storesrv refused uploads in scenario 3");
        println!(
            "  3 round {round}: storesrv {:.0} uploads/s (p99 {:.1} ms), nginx PUT {:.0}/s",
            a.rps(),
            a.p99_ms,
            b.rps()
        );
        stored += a.requests;
        rates.push(a.rps());
        nginx_rates.push(b.rps());
    }
    let (_, hwm) = sampler.finish();
    let rate = median(rates);
    let logical = stored * KIB as f64;
    let records = tools::disk_usage(&s.data.join("db")) as f64;
    let blobs = tools::disk_usage(&s.data.join("blobs")) as f64;
    let rows = vec![
        Row::new(
            "3",
            "upload 1 KiB, 64 connections, durable before the answer",
            format!(
                "{rate:.0} uploads/s (nginx PUT, not fsynced: {:.0}/s)",
                median(nginx_rates)
            ),
            ">= 2000/s",
            Some(rate >= 2000.0),
        ),
        Row::new(
            "11",
            format!("disk per logical byte, {stored:.0} files of 1 KiB"),
            format!(
                "records {:.2}x, blobs {:.2}x, total {:.2}x",
                records / logical,
                blobs / logical,
                (records + blobs) / logical
            ),
            "reported",
            None,
        ),
    ];
    (rows, rate, hwm)
}

/// Scenario 4: upload 5 MiB files with 8 connections; memory growth per
/// in-flight upload.
///
/// Growth is the peak RSS of a run with 8 connections minus that of a run
/// with 1, divided by the 7 extra uploads in flight. Each run gets a fresh
/// server over a fresh data dir, removed afterwards: the runs compare like
/// with like, and the disk (filled at hundreds of MB/s) is freed between
/// them. Peak minus idle would also count what the store grows into as it
/// fills, which does not depend on how many uploads are in flight.
pub fn large_uploads(bench: &Bench) -> (Vec<Row>, u64) {
    let body = 5 * KIB * KIB;
    let mut idle = u64::MAX;
    let (mut peak, mut hwm) = (0, 0);
    let mut upload = |connections: u32| {
        let run = fresh(bench, "uploads-large");
        let (s, dir) = (&run.s, run.dir.0.clone());
        idle = idle.min(tools::memory(s.pid()).0);
        let url = format!("{}/?name=large.bin", s.base);
        let sampler = RssSampler::start(s.pid());
        let a = tools::wrk(&dir, &url, connections, bench.secs, "POST", body);
        let (run_peak, run_hwm) = sampler.finish();
        assert_eq!(a.errors, 0.0, "storesrv refused uploads in scenario 4");
        peak = peak.max(run_peak);
        hwm = hwm.max(run_hwm);
        (a, run_peak)
    };
    let (mut rates, mut growths) = (vec![], vec![]);
    for round in 0..bench.rounds {
        let (_, one) = upload(1);
        let (a, eight) = upload(8);
        let mbps = a.requests * body as f64 / a.secs / 1e6;
        let growth = eight.saturating_sub(one) as f64 / 7.0;
        println!(
            "  4 round {round}: {mbps:.0} MB/s ({:.1} uploads/s), peak RSS {} with 1 connection, {} with 8",
            a.rps(),
            mib(one),
            mib(eight)
        );
        rates.push(mbps);
        growths.push(growth);
    }
    let rate = median(rates);
    let growth = median(growths);
    let rows = vec![
        Row::new(
            "4",
            "upload 5 MiB, 8 connections",
            format!("{rate:.0} MB/s"),
            ">= 300 MB/s",
            Some(rate >= 300.0),
        ),
        Row::new(
            "4",
            "RSS growth per in-flight upload (8 vs 1 connection)",
            format!(
                "{:.2} MiB (idle {}, scenario peak {})",
                growth / MIB,
                mib(idle),
                mib(peak)
            ),
            "< 1 MiB",
            Some(growth < MIB),
        ),
    ];
    (rows, hwm)
}

/// Scenario 5: 90% GET / 10% upload at half the maximum rate, with oha's
/// latency correction.
pub fn mix(bench: &Bench, f: &Fixtures, get_rps: f64, upload_rps: f64) -> (Vec<Row>, u64) {
    let run = fresh(bench, "mix");
    // The rate at which the mix saturates, from the two pure rates.
    let max = 1.0 / (0.9 / get_rps + 0.1 / upload_rps);
    let rate = max / 2.0;
    let sampler = RssSampler::start(run.s.pid());
    let (g, u) = mix_p99(bench, (&run.s.base, &run.dir.0), f, rate, "5");
    let (_, hwm) = sampler.finish();
    let worst = g.max(u);
    let rows = vec![Row::new(
        "5",
        format!("90% GET / 10% upload at {rate:.0} req/s (half of {max:.0})"),
        format!("p99 GET {g:.2} ms, upload {u:.2} ms"),
        "p99 < 10 ms",
        Some(worst < 10.0),
    )];
    (rows, hwm)
}

/// The mix's rounds at `rate` requests per second (90% GETs of a 1 KiB
/// file, 10% uploads of one) on the service at `base`, with its body
/// files in `dir`: the median p99 of its GETs and of its uploads, in
/// milliseconds.
pub(crate) fn mix_p99(
    bench: &Bench,
    (base, dir): (&str, &Path),
    f: &Fixtures,
    rate: f64,
    label: &str,
) -> (f64, f64) {
    let small = tools::upload_to(base, "1k.bin", &f.small);
    let body = dir.join("1k.bin");
    std::fs::write(&body, &f.small).expect("body file");
    let (mut get_p99, mut up_p99) = (vec![], vec![]);
    for round in 0..bench.rounds {
        let g = tools::oha(&format!("{base}{small}"), rate * 0.9, 32, bench.secs, None);
        let u = tools::oha(
            &format!("{base}/?name=mix.bin"),
            rate * 0.1,
            16,
            bench.secs,
            Some(&body),
        );
        let (g, u) = (tools::oha_result(g), tools::oha_result(u));
        println!(
            "  {label} round {round}: at {rate:.0} req/s: GET p99 {:.2} ms ({:.0}/s, {:.3} ok), upload p99 {:.2} ms ({:.0}/s, {:.3} ok)",
            g.p99_ms, g.rps, g.success_rate, u.p99_ms, u.rps, u.success_rate
        );
        get_p99.push(g.p99_ms);
        up_p99.push(u.p99_ms);
    }
    (median(get_p99), median(up_p99))
}

/// Scenario 6: two 24 MP images processed at once.
pub fn memory(bench: &Bench, f: &Fixtures) -> (Vec<Row>, u64) {
    let run = fresh(bench, "memory");
    let s = &run.s;
    s.post_empty("/pics?create=1&name=bench-gallery");
    let sampler = RssSampler::start(s.pid());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for i in 0..2 {
            let base = s.base.clone();
            let bytes = &f.photo;
            scope.spawn(move || {
                let res = tools::agent()
                    .post(format!("{base}/pics/g/bench-gallery?name=p{i}.jpg"))
                    .send(bytes.as_slice())
                    .expect("upload");
                assert_eq!(res.status().as_u16(), 201, "image upload");
            });
        }
    });
    let took = start.elapsed().as_secs_f64();
    let (peak, hwm) = sampler.finish();
    let rows = vec![Row::new(
        "6",
        format!("two concurrent 24 MP image jobs ({took:.1} s)"),
        format!("peak RSS {}, VmHWM {}", mib(peak), mib(hwm)),
        "< 300 MB",
        Some(hwm < 300 * 1_000_000),
    )];
    (rows, hwm)
}

/// Scenario 10: zip of a dir of 20 incompressible 5 MB images.
pub fn zip(bench: &Bench, f: &Fixtures) -> (Vec<Row>, u64) {
    let run = fresh(bench, "zip");
    let s = &run.s;
    s.post_empty("/?dir=1&name=bench-zip-dir");
    let agent = tools::agent();
    for (i, img) in f.noise_images.iter().enumerate() {
        let res = agent
            .post(format!("{}/d/bench-zip-dir?name=img{i:02}.jpg", s.base))
            .send(img.as_slice())
            .expect("dir upload");
        assert!(res.status().is_success(), "dir upload {}", res.status());
    }
    let idle = tools::memory(s.pid()).0;
    let sampler = RssSampler::start(s.pid());
    let mut rates = vec![];
    let mut size = 0;
    for _ in 0..bench.rounds {
        let start = Instant::now();
        let mut res = agent
            .get(format!("{}/d/bench-zip-dir?zip=1", s.base))
            .call()
            .expect("zip");
        let mut reader = res.body_mut().with_config().limit(u64::MAX).reader();
        size = std::io::copy(&mut reader, &mut std::io::sink()).expect("zip body");
        rates.push(size as f64 / start.elapsed().as_secs_f64() / 1e6);
    }
    let (peak, hwm) = sampler.finish();
    let rate = median(rates);
    let stored: usize = f.noise_images.iter().map(Vec::len).sum();
    let rows = vec![
        Row::new(
            "10",
            format!(
                "zip of 20 images ({} in, {} out)",
                mib(stored as u64),
                mib(size)
            ),
            format!("{rate:.0} MB/s"),
            ">= 300 MB/s",
            Some(rate >= 300.0),
        ),
        Row::new(
            "10",
            "RSS while zipping",
            format!("idle {}, peak {}", mib(idle), mib(peak)),
            "flat",
            Some(peak.saturating_sub(idle) < 16 * 1024 * 1024),
        ),
    ];
    (rows, hwm)
}
