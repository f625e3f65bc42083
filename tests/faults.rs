//! The fault suite (CONTRACT.md, "Faults in a cluster"): two storesrv
//! processes on one PostgreSQL database and one Garage bucket, with the
//! failures made to happen for real: a fault-injecting proxy in front of
//! the bucket ([`store_testkit::faults::FaultProxy`]), database sessions
//! terminated with `pg_terminate_backend`, processes frozen with SIGSTOP.
//! Each test names the promise it checks.
//!
//! It needs PostgreSQL and Garage (scripts/test starts both) and runs in a
//! step of its own: `cargo nextest run --no-default-features -p storesrv -E
//! 'test(/^faults::/)'`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use store_testkit::faults::{Fault, FaultProxy};
use store_testkit::pg::psql;

/// Two processes sharing a fresh database and a fresh prefix of the test
/// bucket, which they reach through one fault proxy.
struct Pair {
    a: Server,
    b: Server,
    proxy: FaultProxy,
    url: String,
    /// The bytes' key prefix in the bucket.
    prefix: String,
}

impl Pair {
    fn start() -> Self {
        Self::start_with(&[])
    }

    fn start_with(extra: &[(&str, &str)]) -> Self {
        Self::start_on(store_testkit::pg::fresh_database(), extra)
    }

    /// Two processes on the database of `url`.
    fn start_on(url: String, extra: &[(&str, &str)]) -> Self {
        let bucket = store_testkit::s3::bucket();
        let proxy = FaultProxy::start(&bucket.endpoint);
        let prefix = store_testkit::s3::fresh_prefix();
        let endpoint = proxy.endpoint();
        let mut env: Vec<(&str, &str)> = vec![
            ("STORE_DATABASE_URL", &url),
            ("STORE_S3_ENDPOINT", &endpoint),
            ("STORE_S3_BUCKET", &bucket.bucket),
            ("STORE_S3_REGION", &bucket.region),
            ("STORE_S3_ACCESS_KEY_ID", &bucket.access_key_id),
            ("STORE_S3_SECRET_ACCESS_KEY", &bucket.secret_access_key),
            ("STORE_S3_PREFIX", &prefix),
            ("STORE_RETAIN_TOKEN", RETAIN_TOKEN),
        ];
        env.extend_from_slice(extra);
        let dir = tempfile::tempdir().expect("temp dir");
        let a = Server::on(dir.path().join("a"), None, &env);
        let b = Server::on(dir.path().join("b"), Some(dir), &env);
        // The bucket is listed once after each start: done before a test
        // holds or counts requests.
        for server in [&a, &b] {
            server.wait_for_every_log("orphan collection done");
        }
        Self {
            a,
            b,
            proxy,
            url,
            prefix,
        }
    }

    /// Waits until a request of `method` is held at the proxy.
    fn held(&self, method: &str) {
        poll("a request held at the bucket", || {
            (self.proxy.waiting(method) == 1).then_some(())
        });
    }

    /// The PostgreSQL backend whose session holds the advisory lock of
    /// `key` (as `PgLocks` takes it), once one does: polls the lock table.
    fn lock_holder(&self, key: &str) -> i32 {
        let sql = format!(
            "WITH k AS (SELECT hashtextextended('{key}', 0) AS h)
             SELECT l.pid FROM pg_locks l, k
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
               AND l.classid = ((k.h >> 32) & 4294967295)::oid
               AND l.objid = (k.h & 4294967295)::oid"
        );
        poll("a session to hold the key's lock", || {
            psql(&self.url, &sql).parse::<i32>().ok()
        })
    }

    /// Terminates backend `pid` and waits until it is gone:
    /// `pg_terminate_backend` returns before the session has ended.
    fn terminate(&self, pid: i32) {
        psql(&self.url, &format!("SELECT pg_terminate_backend({pid})"));
        let gone = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}");
        poll("the terminated session to end", || {
            (psql(&self.url, &gone) == "0").then_some(())
        });
    }
}

/// A text of 100 KiB that starts with `first` and ends with a newline:
/// larger than the blobs a process keeps in memory, so that every read of
/// it goes to the bucket (and through the fault proxy).
fn big_text(first: &str) -> String {
    let mut text = format!("{first}\n");
    while text.len() < 100 * 1024 {
        text.push_str("padding padding padding padding padding padding padding\n");
    }
    text
}

/// Calls `f` every 20 ms until it answers, for at most 30 s.
fn poll<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGSTOP or SIGCONT to `pid`.
fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill {sig} {pid}");
}

/// The status of a GET of `url`, or `None` if none came within `secs`.
fn probe(url: &str, secs: u64) -> Option<u16> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(secs)))
        .build()
        .into();
    agent.get(url).call().ok().map(|r| r.status().as_u16())
}

fn status_and_body(mut res: Response<Body>) -> (u16, Vec<u8>) {
    let status = res.status().as_u16();
    (status, bytes(&mut res))
}

/// Promise: a `once=1` file is served at most once in total, even when the
/// process serving it loses its database session (and with it the key's
/// lock) in the middle of the request. The first reader waits on a slow
/// bucket while holding the lock; its session is terminated; the second
/// reader, on the other process, takes the lock. Exactly one of them gets
/// the bytes; the other's burn is refused by the fence.
#[test]
fn a_once_file_survives_a_lost_lock_session() {
    let p = Pair::start();
    once_file_survives(&p, |key| p.terminate(p.lock_holder(key)));
}

/// Promise: the same when the database restarts (`pg_ctl restart -m
/// fast`, as a failover does) while the first reader waits on the bucket:
/// every session ends at once, and the second reader retries while the
/// database comes back, as a client told 503 with Retry-After does.
#[test]
fn a_once_file_survives_a_database_restart() {
    let pg = OwnCluster::start();
    let p = Pair::start_on(pg.url.clone(), &[]);
    once_file_survives(&p, |_| pg.restart());
}

/// Uploads a once file through the first process, starts a read of it
/// there whose bytes wait at the bucket, calls `lose` with the key (which
/// takes the first reader's lock from it), reads through the second
/// process, and checks that the file was served exactly once, whole.
fn once_file_survives(p: &Pair, lose: impl FnOnce(&str)) {
    let secret = big_text("the secret");
    let id = json(&mut p.a.post("/?name=secret.txt&once=1", secret.as_bytes()))["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The first reader's bytes come back from the bucket, and wait there.
    p.proxy.hold_next("GET");
    let path = format!("/{id}");
    let (first, second) = std::thread::scope(|s| {
        let first = s.spawn(|| status_and_body(p.a.get(&path)));
        p.held("GET");
        lose(&id);
        let second = retried(|| status_and_body(p.b.get(&path)), |r| r.0);
        p.proxy.release("GET");
        (first.join().unwrap(), second)
    });
    let served: Vec<_> = [&first, &second]
        .into_iter()
        .filter(|(s, _)| *s == 200)
        .collect();
    assert_eq!(served.len(), 1, "served once: {first:?} {second:?}");
    assert_eq!(served[0].1, secret.as_bytes(), "whole");
    for (status, _) in [&first, &second] {
        assert!([200, 404, 503].contains(status), "{first:?} {second:?}");
    }
    assert_eq!(p.a.get(&path).status(), 404, "and gone after");
}

/// Calls `request` again while it answers 503 (the database coming back
/// after a restart), for at most 30 s, as a client told to retry does;
/// answers the last answer.
fn retried<T>(mut request: impl FnMut() -> T, status: impl Fn(&T) -> u16) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = request();
        if status(&answer) != 503 || Instant::now() > deadline {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Promise: an acknowledged append is never lost. Two PATCHes append to
/// one dir file through the two processes while the first one's lock
/// session is terminated mid-request: every line whose PATCH answered 200
/// is in the file, once.
#[test]
fn appends_survive_a_lost_lock_session() {
    let p = Pair::start();
    appends_survive(&p, |key| p.terminate(p.lock_holder(key)));
}

/// Promise: the same when the database restarts in the middle of the
/// first PATCH (the second one retries while it answers 503; a refused
/// attempt must not have landed, or its retry shows the line twice).
#[test]
fn appends_survive_a_database_restart() {
    let pg = OwnCluster::start();
    let p = Pair::start_on(pg.url.clone(), &[]);
    appends_survive(&p, |_| pg.restart());
}

/// Appends through both processes while `lose` takes the first one's
/// lock on the dir from it, and checks every acknowledged line is there
/// once and every refused one is not.
fn appends_survive(p: &Pair, lose: impl FnOnce(&str)) {
    assert_eq!(p.a.post_empty("/?dir=1&name=faultlog", &[]).status(), 201);
    assert_eq!(
        p.a.put("/d/faultlog/log.txt", &[], big_text("start").as_bytes())
            .status(),
        200
    );
    // The first PATCH's read of the old content waits at the bucket.
    p.proxy.hold_next("GET");
    let (first, second) = std::thread::scope(|s| {
        let first = s.spawn(|| {
            p.a.patch("/d/faultlog/log.txt", &[], b"from a\n")
                .status()
                .as_u16()
        });
        p.held("GET");
        lose("d/faultlog");
        let second = retried(
            || {
                p.b.patch("/d/faultlog/log.txt", &[], b"from b\n")
                    .status()
                    .as_u16()
            },
            |s| *s,
        );
        p.proxy.release("GET");
        (first.join().unwrap(), second)
    });
    let mut res = p.b.get("/d/faultlog/log.txt");
    let content = text(&mut res);
    for (status, line) in [(first, "from a\n"), (second, "from b\n")] {
        assert!([200, 503].contains(&status), "{first} {second}");
        let times = content.matches(line).count();
        if status == 200 {
            assert_eq!(times, 1, "an acknowledged line is there once: {content:?}");
        } else {
            assert_eq!(times, 0, "a refused line is not applied: {content:?}");
        }
    }
    assert!(content.starts_with(&big_text("start")), "the start is kept");
}

/// A PostgreSQL cluster of the test's own (scripts/pg-cluster), which it
/// may restart without disturbing the tests that share the other one.
struct OwnCluster {
    dir: tempfile::TempDir,
    url: String,
}

impl OwnCluster {
    fn script() -> std::path::PathBuf {
        repo("scripts/pg-cluster")
    }

    fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = std::process::Command::new(Self::script())
            .arg("start")
            .arg(dir.path().join("pg"))
            .output()
            .expect("scripts/pg-cluster runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout)
            .expect("a URL")
            .trim()
            .to_string();
        Self { dir, url }
    }

    /// `pg_ctl restart -m fast`: returns once the database answers again.
    fn restart(&self) {
        let ok = std::process::Command::new(Self::script())
            .arg("restart")
            .arg(self.dir.path().join("pg"))
            .status()
            .expect("scripts/pg-cluster runs")
            .success();
        assert!(ok, "the database restarted");
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(Self::script())
            .arg("stop")
            .arg(self.dir.path().join("pg"))
            .status();
    }
}

/// Promise: a process frozen while it works on an object delays the other
/// processes' requests on that object by at most 30 s, every one of them
/// answers (no request waits for ever), and whatever the frozen process
/// writes once it wakes is refused, never applied over newer state.
#[test]
fn a_frozen_lock_holder_stops_no_one_for_long() {
    let p = Pair::start();
    assert_eq!(p.a.post_empty("/?dir=1&name=frozen", &[]).status(), 201);
    let start = big_text("start");
    assert_eq!(
        p.a.put("/d/frozen/log.txt", &[], start.as_bytes()).status(),
        200
    );
    // The first PATCH waits at the bucket while it holds the dir's lock,
    // and its process is frozen there.
    p.proxy.hold_next("GET");
    std::thread::scope(|s| {
        let late = s.spawn(|| {
            p.a.patch("/d/frozen/log.txt", &[], b"late\n")
                .status()
                .as_u16()
        });
        p.held("GET");
        p.lock_holder("d/frozen");
        signal(p.a.pid(), "-STOP");
        p.proxy.release("GET");
        // Every try answers (the harness's client gives up after 30 s,
        // which fails the test); within 30 s of the freeze one lands.
        let frozen_at = Instant::now();
        let mut tries = vec![];
        loop {
            let status = p.b.patch("/d/frozen/log.txt", &[], b"awake\n").status();
            tries.push(status.as_u16());
            if status == 200 {
                break;
            }
            assert_eq!(status, 503, "a busy key is 503 unavailable: {tries:?}");
            assert!(
                frozen_at.elapsed() < Duration::from_secs(40),
                "still refused 40 s after the freeze: {tries:?}"
            );
        }
        let got = p.b.get("/d/frozen/log.txt").status();
        assert_eq!(got, 200, "a read of the object answers");
        signal(p.a.pid(), "-CONT");
        let late = late.join().unwrap();
        assert_eq!(late, 503, "the frozen process's write is refused");
    });
    let mut res = p.b.get("/d/frozen/log.txt");
    assert_eq!(text(&mut res), format!("{start}awake\n"));
}

/// Promise: with the records in sled and the bytes in a bucket, a bucket
/// that hangs delays only the requests that read it: `/healthz` answers
/// at once and `/readyz` answers 503 within its bound while downloads
/// hang.
#[test]
fn a_hanging_bucket_leaves_the_probes_answering() {
    let bucket = store_testkit::s3::bucket();
    let proxy = FaultProxy::start(&bucket.endpoint);
    let prefix = store_testkit::s3::fresh_prefix();
    let endpoint = proxy.endpoint();
    let env = [
        ("STORE_S3_ENDPOINT", endpoint.as_str()),
        ("STORE_S3_BUCKET", &bucket.bucket),
        ("STORE_S3_REGION", &bucket.region),
        ("STORE_S3_ACCESS_KEY_ID", &bucket.access_key_id),
        ("STORE_S3_SECRET_ACCESS_KEY", &bucket.secret_access_key),
        ("STORE_S3_PREFIX", &prefix),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::on(dir.path().join("data"), Some(dir), &env);
    server.wait_for_every_log("orphan collection done");
    // Larger than the process's cache of small blobs keeps: read from the
    // bucket every time.
    let id = server.upload("hang.bin", &vec![7u8; 100 * 1024])["id"]
        .as_str()
        .unwrap()
        .to_string();
    proxy.set("GET", Some(Fault::Hang));
    proxy.set("HEAD", Some(Fault::Hang));
    let path = format!("/{id}");
    std::thread::scope(|s| {
        // More downloads than the executor has threads.
        for _ in 0..6 {
            s.spawn(|| server.get(&path).status());
        }
        poll("downloads held by the bucket", || {
            (proxy.waiting("GET") >= 2).then_some(())
        });
        // CONTRACT.md: /healthz within 1 s, /readyz within 3 s; the
        // client gives each three times that, never the bucket's own 10 s
        // read time-out, after which a blocked executor would answer too.
        let health = probe(&server.url("/healthz"), 3).expect("healthz answers");
        assert_eq!(health, 200, "healthz answers while the bucket hangs");
        let ready = probe(&server.url("/readyz"), 9).expect("readyz answers");
        assert_eq!(ready, 503, "readyz says the bucket is out");
        proxy.set("GET", None);
        proxy.set("HEAD", None);
    });
}

/// The rows of the deletion queue in the database of `url`.
fn queued(url: &str) -> usize {
    psql(url, "SELECT count(*) FROM store_doomed")
        .parse()
        .expect("a count")
}

/// Promise: deleting bytes never fails a request that committed. The
/// bucket refuses every DELETE: a once file is still delivered (once, 200),
/// a PATCH still answers 200 and appends once; their old bytes wait in the
/// queue, and are deleted without a restart once the bucket takes deletes
/// again.
#[test]
fn a_bucket_refusing_deletes_fails_no_committed_request() {
    let p = Pair::start_with(&[("STORE_DELETE_GRACE_SECS", "0")]);
    p.proxy.set("DELETE", Some(Fault::Fail(503)));
    let id = json(&mut p.a.post("/?name=burn.txt&once=1", b"read me once"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, body) = status_and_body(p.b.get(&format!("/{id}")));
    assert_eq!((status, body.as_slice()), (200, &b"read me once"[..]));
    assert_eq!(p.a.get(&format!("/{id}")).status(), 404, "and only once");
    assert_eq!(p.a.post_empty("/?dir=1&name=refused", &[]).status(), 201);
    assert_eq!(p.a.put("/d/refused/log.txt", &[], b"one\n").status(), 200);
    assert_eq!(p.b.patch("/d/refused/log.txt", &[], b"two\n").status(), 200);
    let mut res = p.a.get("/d/refused/log.txt");
    assert_eq!(text(&mut res), "one\ntwo\n", "appended once");
    // The burnt file's bytes, and the dir file's older version.
    poll("refused deletes to be tried", || {
        (p.proxy.seen("DELETE") >= 2).then_some(())
    });
    assert_eq!(
        queued(&p.url),
        2,
        "what the bucket refused waits in the queue"
    );
    p.proxy.set("DELETE", None);
    poll("the queue to drain", || (queued(&p.url) == 0).then_some(()));
}

/// Promise: a reader who read a record can still read the bytes it names.
/// One process replaces a text file again and again while the other reads
/// it, with every bucket read slowed down: no read of the live file
/// answers 404, and each answers one whole version.
#[test]
fn reads_during_replaces_never_miss_the_bytes() {
    // The grace of deleted bytes as in production (the harness makes it 0).
    let p = Pair::start_with(&[("STORE_DELETE_GRACE_SECS", "3600")]);
    let id = json(&mut p.a.post("/?name=live.txt", b"version 0"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Each read reaches the bucket 50 ms after its record was read.
    p.proxy
        .set("GET", Some(Fault::Stall(Duration::from_millis(50))));
    let path = format!("/{id}");
    let done = std::sync::atomic::AtomicBool::new(false);
    let reads = std::thread::scope(|s| {
        let readers: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let mut got = vec![];
                    while !done.load(std::sync::atomic::Ordering::Relaxed) {
                        got.push(status_and_body(p.b.get(&path)));
                    }
                    got
                })
            })
            .collect();
        for v in 1..=40 {
            let body = format!("version {v}");
            assert_eq!(p.a.put(&path, &[], body.as_bytes()).status(), 200);
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        readers
            .into_iter()
            .flat_map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert!(reads.len() >= 3, "the readers read: {}", reads.len());
    for (status, body) in &reads {
        let body = String::from_utf8_lossy(body);
        assert_eq!(*status, 200, "a read of the live file: {body}");
        assert!(body.starts_with("version "), "{body:?}");
    }
}

/// Promise: one clock. Expiry is decided by the database's clock, so a
/// process whose own clock runs hours ahead neither answers a live file
/// 404 nor sweeps it. (The bytes are in a directory both processes share:
/// a bucket refuses requests signed with a clock hours off.)
#[test]
fn clocks_hours_apart_expire_nothing_early() {
    let url = store_testkit::pg::fresh_database();
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let env = [("STORE_DATABASE_URL", url.as_str())];
    let a = Server::on(data.clone(), Some(dir), &env);
    let id = a.upload("soon.txt", b"four hours to live")["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Five hours ahead, past the file's four-hour lifetime by its clock;
    // it sweeps as it starts.
    let ahead = clock_ahead("+5h");
    let mut env_b: Vec<(&str, &str)> = ahead
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    env_b.push(("STORE_DATABASE_URL", &url));
    let b = Server::on(data, None, &env_b);
    b.wait_for_every_log("orphan collection done");
    let mut res = b.get(&format!("/{id}"));
    assert_eq!(res.status(), 200, "live by the database's clock");
    assert_eq!(text(&mut res), "four hours to live");
    let kept = psql(&url, "SELECT count(*) FROM store_objects");
    assert_eq!(kept, "1", "not swept by the process ahead");
}

/// A database session of its own that takes the advisory lock
/// `(class, id)` and holds it until dropped: what a frozen process's
/// session does until its lease runs out.
struct HeldLock {
    psql: std::process::Child,
}

impl HeldLock {
    fn take(url: &str, (class, id): (i32, i32)) -> Self {
        use std::io::Write;
        let mut session = std::process::Command::new(store_testkit::pg::psql_program())
            .args([url, "-qtA"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("psql runs");
        let stdin = session.stdin.as_mut().expect("piped");
        writeln!(stdin, "SELECT pg_advisory_lock({class}, {id});").expect("psql reads");
        stdin.flush().expect("psql reads");
        let held = format!(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
               AND classid = {class} AND objid = {id} AND objsubid = 2"
        );
        poll("the lock to be held", || {
            (psql(url, &held) == "1").then_some(())
        });
        Self { psql: session }
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        let _ = self.psql.kill();
        let _ = self.psql.wait();
    }
}

/// Promise: a process frozen while it holds the eviction lock stops no
/// upload that needs room on the other processes: they evict without it
/// after a moment, instead of waiting out the frozen holder's lease.
#[test]
fn a_stuck_evictor_stops_no_upload() {
    let p = Pair::start_with(&[("STORE_POOL_BYTES", "100000")]);
    for i in 0..9 {
        let res = p.a.post(&format!("/?name=f{i}.bin"), &[1u8; 10_000]);
        assert_eq!(res.status(), 201);
    }
    // The eviction lock's key (store-pg: the class "stor", lock 2).
    let _stuck = HeldLock::take(&p.url, (1_936_028_786, 2));
    let res = p.b.post("/?name=big.bin", &[2u8; 20_000]);
    assert_eq!(res.status(), 201, "the upload evicted what it needed");
    let files = psql(&p.url, "SELECT count(*) FROM store_objects");
    assert_eq!(files, "9", "one file evicted for the new one");
}

/// Starts storesrv with `env` and expects it to refuse: answers its
/// stderr once it exited with a failure (at most 30 s).
fn refused_start(env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = std::process::Command::new(crate::common::storesrv_bin())
        .args(["--listen", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("storesrv runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("storesrv did not refuse to start within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "it started: {stderr}");
    stderr
}

/// Promise: two services pointed at one bucket prefix with different
/// databases do not both run on it: the marker object names the database
/// that owns the prefix, and the second refuses to start (it would take
/// the first one's bytes for orphans).
#[test]
fn a_prefix_belongs_to_one_database() {
    let p = Pair::start();
    let bucket = store_testkit::s3::bucket();
    let other = store_testkit::pg::fresh_database();
    let stderr = refused_start(&[
        ("STORE_DATABASE_URL", &other),
        ("STORE_S3_ENDPOINT", &bucket.endpoint),
        ("STORE_S3_BUCKET", &bucket.bucket),
        ("STORE_S3_REGION", &bucket.region),
        ("STORE_S3_ACCESS_KEY_ID", &bucket.access_key_id),
        ("STORE_S3_SECRET_ACCESS_KEY", &bucket.secret_access_key),
        ("STORE_S3_PREFIX", &p.prefix),
    ]);
    assert!(stderr.contains("STORE_S3_PREFIX"), "{stderr}");
    assert!(!stderr.contains(&bucket.secret_access_key), "{stderr}");
    assert_eq!(p.a.get("/healthz").status(), 200, "the owner serves on");
}

/// Promise: bytes in flight are never collected. A multipart upload on
/// one process has completed in the bucket, but its record is not written
/// yet (the bucket's answer to the completion is held at the proxy), when
/// another process starts and runs its orphan collection over the whole
/// bucket: the upload's intent names the bytes, so the collection spares
/// them, and the file is served whole once its record lands. The second
/// process runs on the true clock: a bucket refuses requests signed hours
/// off, so a process whose clock is ahead could not list it at all (one
/// clock for expiry is `clocks_hours_apart_expire_nothing_early`), and no
/// rule of age is left for a clock to fool.
#[test]
fn an_upload_in_flight_survives_another_process_collection() {
    // Files larger than one part of a multipart upload (5 MiB).
    let mut p = Pair::start_with(&[("STORE_MAX_FILE_BYTES", "8388608")]);
    p.b.stop();
    p.proxy.hold_next("COMPLETE");
    let body: Vec<u8> = (0..6 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    let sent = body.clone();
    let url = p.a.url("/?name=slow.bin");
    let upload = std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .into();
        let mut res = agent
            .post(&url)
            .send(&sent[..])
            .expect("the upload answers");
        (res.status().as_u16(), json(&mut res))
    });
    poll("the upload's completion held at the bucket", || {
        (p.proxy.waiting("COMPLETE") == 1).then_some(())
    });
    p.b.start_again();
    let log = p.b.wait_for_every_log("orphan collection done");
    assert!(log.contains("removed=0"), "{log}");
    p.proxy.release("COMPLETE");
    let (status, created) = upload.join().expect("the upload thread");
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("an id");
    let (status, served) = status_and_body(p.b.get(&format!("/{id}")));
    assert_eq!(status, 200);
    assert!(served == body, "the file is served whole");
}

/// Promise: deleting bytes never needs the process that began it. A
/// process sweeps a batch of expired files and claims their queued
/// deletes; it is killed (SIGKILL) while the bucket holds its first
/// delete. The other process, which was running all along (frozen while
/// the first one swept, so that the claim is surely the first one's),
/// deletes every one of those blobs once the dead process's claim runs
/// out, without a restart.
#[test]
fn a_killed_drainer_leaves_its_deletes_to_another_process() {
    let mut p = Pair::start();
    for i in 0..20 {
        let res =
            p.a.post(&format!("/?name=f{i}.txt"), format!("file {i}").as_bytes());
        assert_eq!(res.status(), 201);
    }
    let bucket = p.b.s3_blobs().expect("bytes in the bucket");
    let listed = || store_core::BlobStore::list(&bucket).expect("list").len();
    assert_eq!(listed(), 20);
    signal(p.b.pid(), "-STOP");
    p.a.stop();
    store_testkit::pg::age_records(&p.url, 5 * 3600);
    p.proxy.hold_next("DELETE");
    // It sweeps as it starts, and its drainer claims the whole batch.
    p.a.start_again();
    p.held("DELETE");
    p.a.kill();
    p.proxy.release("DELETE");
    // The dead drainer's claim holds its batch for 30 s (store-pg's
    // DELETE_CLAIM_SECS). The test lets that time pass in the database
    // instead of waiting it out, as it ages the records above.
    assert_ne!(
        psql(
            &p.url,
            "SELECT count(*) FROM store_doomed WHERE due_at > now()"
        ),
        "0",
        "the killed drainer had claimed its batch"
    );
    psql(&p.url, "UPDATE store_doomed SET due_at = now()");
    signal(p.b.pid(), "-CONT");
    let deadline = Instant::now() + Duration::from_secs(90);
    while listed() > 0 || psql(&p.url, "SELECT count(*) FROM store_doomed") != "0" {
        assert!(
            Instant::now() < deadline,
            "{} blobs left after 90 s",
            listed()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(psql(&p.url, "SELECT count(*) FROM store_objects"), "0");
}

/// nginx in front of the pair, configured as scripts/cluster configures
/// it (bodies streamed to storesrv, not buffered), stopped when dropped.
struct Nginx {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start(upstreams: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let d = dir.path().display();
        let servers: String = upstreams
            .iter()
            .map(|u| format!("server {};", u.trim_start_matches("http://")))
            .collect();
        let conf = format!(
            "worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log warn;
             events {{ worker_connections 64; }}
             http {{
               access_log off;
               client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
               fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi;
               scgi_temp_path {d}/scgi;
               client_max_body_size 0; proxy_request_buffering off; proxy_buffering off;
               upstream storesrv {{ {servers} keepalive 8; }}
               server {{
                 listen 127.0.0.1:{port};
                 location / {{
                   proxy_pass http://storesrv; proxy_http_version 1.1;
                   proxy_set_header Connection \"\";
                 }}
               }}
             }}"
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).expect("nginx.conf written");
        let child = std::process::Command::new("nginx")
            .args(["-e", "stderr", "-g", "daemon off;", "-c"])
            .arg(&path)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nginx runs (scripts/test installs it)");
        poll("nginx to listen", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).ok()
        });
        Self {
            child,
            port,
            _dir: dir,
        }
    }
}

impl Drop for Nginx {
    /// SIGTERM, nginx's fast shutdown: the master stops its workers before
    /// it exits (SIGKILL would leave them running, orphaned).
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// Promise: an upload refused before its body is read reaches a client
/// behind nginx as storesrv's own JSON error. The client sends its whole
/// body (8 MiB, over the 5 MiB limit) before it reads, as Python's
/// requests does; storesrv answers 413 at once and then reads and drops
/// the rest (lingering close), so nginx, which streams the body on,
/// finishes sending it and passes the answer on. Closing at once, as
/// storesrv used to, made nginx answer its own 502 page.
#[test]
fn an_early_refusal_reaches_a_client_behind_nginx() {
    use std::io::{Read, Write};
    let p = Pair::start();
    let nginx = Nginx::start(&[&p.a.url(""), &p.b.url("")]);
    let body = vec![b'x'; 8 * 1024 * 1024];
    for _ in 0..2 {
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", nginx.port)).expect("connect");
        conn.set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let head = format!(
            "POST /?name=big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        conn.write_all(head.as_bytes()).expect("the head is sent");
        conn.write_all(&body).expect("the whole body is sent");
        let mut answer = String::new();
        let _ = conn.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
        assert!(
            answer.contains("\"too_large\""),
            "storesrv's JSON: {answer}"
        );
    }
}

/// A database that answers nothing, until dropped: every session of it
/// stopped with SIGSTOP, as an I/O stall or a stuck pooler freezes them,
/// and no new session let in. New sessions are refused (`ALLOW_CONNECTIONS
/// false`) because a pool whose stopped connections are all taken (a
/// sweep's, a drainer's) opens new ones, and under load one of those once
/// answered a readiness check; a session that was connecting meanwhile is
/// stopped when it appears. The rest of the cluster serves other tests.
struct FrozenSessions {
    url: String,
    done: Arc<AtomicBool>,
    freezer: Option<std::thread::JoinHandle<Vec<u32>>>,
}

impl FrozenSessions {
    fn freeze(url: &str) -> Self {
        let name = store_testkit::pg::database_of(url).to_string();
        let cluster = store_testkit::pg::cluster_url();
        store_testkit::pg::allow_connections(url, false);
        let mut frozen = Vec::new();
        stop_new_sessions(&cluster, &name, &mut frozen);
        assert!(!frozen.is_empty(), "the processes hold sessions");
        let done = Arc::new(AtomicBool::new(false));
        let until = Arc::clone(&done);
        let freezer = std::thread::spawn(move || {
            while !until.load(Ordering::SeqCst) {
                stop_new_sessions(&cluster, &name, &mut frozen);
                std::thread::sleep(Duration::from_millis(20));
            }
            frozen
        });
        Self {
            url: url.to_string(),
            done,
            freezer: Some(freezer),
        }
    }
}

/// Stops the sessions of database `name` not yet in `frozen`, and adds
/// them to it; `cluster` is where to look from. A failed look or stop is
/// left to the next look: this runs on a thread that must not end before
/// the sessions are let go.
fn stop_new_sessions(cluster: &str, name: &str, frozen: &mut Vec<u32>) {
    let Ok(pids) = store_testkit::pg::try_psql(
        cluster,
        &format!(
            "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE datname = '{name}'"
        ),
    ) else {
        return;
    };
    for pid in pids
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
    {
        let stopped = || {
            std::process::Command::new("kill")
                .args(["-STOP", &pid.to_string()])
                .status()
                .is_ok_and(|s| s.success())
        };
        if !frozen.contains(&pid) && stopped() {
            frozen.push(pid);
        }
    }
}

impl Drop for FrozenSessions {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        let frozen = self.freezer.take().map(|t| t.join().unwrap_or_default());
        // Let in again even if this test is failing: a panic here would abort.
        let _ = std::panic::catch_unwind(|| store_testkit::pg::allow_connections(&self.url, true));
        for pid in frozen.unwrap_or_default() {
            let _ = std::process::Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
        }
    }
}

/// Promise: no request waits on a frozen database for long. Every session
/// the two processes hold is frozen, and no new one is let in: `/healthz`
/// answers at once, `/readyz`
/// answers 503 within its bound, and a read of a file answers within
/// 15 s (the bytes, or 503), never waiting for the sessions to wake; once
/// they do, both processes serve again. (The issue measured 15 to 45 s of
/// hanging here.)
#[test]
fn frozen_database_sessions_hold_no_request_for_long() {
    let p = Pair::start();
    let id = json(&mut p.a.post("/?name=read.txt", b"read me"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/{id}");
    for server in [&p.a, &p.b] {
        assert_eq!(
            server.get(&path).status(),
            200,
            "every process holds sessions"
        );
    }
    {
        let _frozen = FrozenSessions::freeze(&p.url);
        for server in [&p.a, &p.b] {
            // As in the bucket's test: the client gives each probe three
            // times its bound, which a request waiting on a frozen session
            // would still pass.
            let health = probe(&server.url("/healthz"), 3);
            assert_eq!(health, Some(200), "healthz answers");
            let ready = probe(&server.url("/readyz"), 9);
            assert_eq!(ready, Some(503), "readyz says the database is out");
            let read = probe(&server.url(&path), 15);
            assert!(matches!(read, Some(200 | 503)), "a read answers: {read:?}");
        }
    }
    poll("both processes to serve again", || {
        [&p.a, &p.b]
            .iter()
            .all(|s| probe(&s.url(&path), 10) == Some(200))
            .then_some(())
    });
}

/// Promise (issue 37): a read waiting on the database never blocks the
/// executor. Each process first opens its read connections (64 reads at
/// once); then every session is frozen, and 64 reads more are sent to
/// each process, far more than its executor has threads. While they
/// wait, `/healthz` answers at once; each read then ends within 15 s,
/// with its bytes or 503. A read that blocked an executor thread while it
/// waited (checked by making it do so) leaves `/healthz` unanswered. The
/// rate limit is on (far above what is sent), so that each request's
/// count in the database is awaited on the executor too, and bounded.
#[test]
fn reads_waiting_on_a_frozen_database_hold_no_thread() {
    const READS: usize = 64;
    // One address holds all of them: no per-client share here.
    let p = Pair::start_with(&[
        ("STORE_CONNECTIONS_PER_IP", "0"),
        ("STORE_REQUESTS_PER_IP", "0"),
        ("STORE_RATE_LIMIT_PER_MIN", "1000000"),
    ]);
    let id = json(&mut p.a.post("/?name=read.txt", b"read me"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let request = format!("GET /{id} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    std::thread::scope(|s| {
        for server in [&p.a, &p.b] {
            for _ in 0..READS {
                // Only to open connections: how each ends is not the point.
                s.spawn(|| server.raw(request.as_bytes()));
            }
        }
    });
    let _frozen = FrozenSessions::freeze(&p.url);
    let streams: Vec<_> = [&p.a, &p.b]
        .iter()
        .flat_map(|server| (0..READS).map(|_| server.send_raw(request.as_bytes())))
        .collect();
    for server in [&p.a, &p.b] {
        let health = probe(&server.url("/healthz"), 3);
        assert_eq!(
            health,
            Some(200),
            "healthz answers beside the waiting reads"
        );
    }
    std::thread::scope(|s| {
        for mut stream in streams {
            s.spawn(move || {
                stream
                    .set_read_timeout(Some(Duration::from_secs(15)))
                    .unwrap();
                let mut answer = String::new();
                let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
                assert!(
                    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.1 503"),
                    "a read answers within 15 s: {answer:?}"
                );
            });
        }
    });
}

/// Promise (issue 37): a large file read whole through a process is read
/// again from that process's copy on its local disk, not the bucket: with
/// every GET to the bucket failing, the process that read it serves it
/// whole, byte for byte, and sends the bucket nothing; the other, which
/// never read it, fails (5xx). A burn-after-reading file read once leaves
/// no copy: after it, nothing serves it.
#[test]
fn a_large_file_read_before_is_served_from_the_disk_cache() {
    let p = Pair::start();
    let bytes = noise(3 << 20, 37);
    let id = p.a.upload("big.bin", &bytes)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/{id}");
    let (status, body) = status_and_body(p.a.get(&path));
    assert_eq!((status, body == bytes), (200, true), "the first read");
    let gets = p.proxy.seen("GET");
    p.proxy.set("GET", Some(Fault::Fail(500)));
    let (status, body) = status_and_body(p.a.get(&path));
    assert_eq!((status, body == bytes), (200, true), "read from the copy");
    assert_eq!(p.proxy.seen("GET"), gets, "the bucket saw no GET");
    let other = p.b.get(&path).status().as_u16();
    assert!(other >= 500, "no copy in the other process: {other}");
    p.proxy.set("GET", None);
    let once = p.a.post("/?name=once.bin&once=1", &bytes);
    let once = format!("/{}", json(&mut { once })["id"].as_str().unwrap());
    let (status, body) = status_and_body(p.a.get(&once));
    assert_eq!((status, body == bytes), (200, true), "the one read");
    let dir = p.a.data_dir().join("blob-cache");
    let (_, copies) = disk_cache(&dir);
    assert_eq!(copies, 1, "only the first file's copy is in {dir:?}");
}

/// Promise (issue 33): a resumable upload abandoned on the bucket expires
/// 24 h after its creation, and leaves nothing: its multipart upload (with
/// the part sent) is aborted, and its room in the pool is free again.
/// The records are aged in the database, whose clock decides expiry, and
/// a process restarted sweeps as it starts.
#[test]
fn an_abandoned_resumable_upload_aborts_its_multipart_upload() {
    const MIB: usize = 1 << 20;
    let mut p = Pair::start_with(&[
        ("STORE_MAX_FILE_BYTES", "16777216"),
        ("STORE_POOL_BYTES", "13107200"),
    ]);
    let path = tus::start(&p.a, 12 * MIB, "half.bin");
    // 7 MiB: a part of the multipart upload; then 1 MiB, which waits in
    // an object of its own.
    let bytes = vec![7u8; 8 * MIB];
    assert_eq!(
        tus::patch_at(&p.b, &path, 0, &bytes[..7 * MIB]).status(),
        204
    );
    let res = tus::patch_at(&p.a, &path, 7 * MIB, &bytes[7 * MIB..]);
    assert_eq!(res.status(), 204);
    // Its whole length is reserved: 1 MiB more does not fit (12.5 MiB).
    assert_error(
        &mut p.b.post("/?name=more.bin", &bytes[..MIB]),
        507,
        "pool_full",
    );
    let aborts = p.proxy.seen("ABORT");
    store_testkit::pg::age_records(&p.url, 25 * 3600);
    p.a.stop();
    p.a.start_again();
    poll("the upload to expire", || {
        (p.b.head_with(&path, &[tus::TUS]).status() == 404).then_some(())
    });
    poll("its multipart upload to be aborted", || {
        (p.proxy.seen("ABORT") > aborts).then_some(())
    });
    let mut res = p.b.post("/?name=more.bin", &bytes[..MIB]);
    assert_eq!(res.status(), 201, "its room is free: {}", text(&mut res));
}

/// Promise (issue 33): a process killed between the bucket's completion
/// of a resumable upload and the write of its record loses nothing. The
/// bucket's answer to the completion is held at the proxy while the
/// process is killed: the object is whole, the record still says the
/// upload stands before its last PATCH. The client sends that PATCH again
/// to the other process, which finds the object and makes the file.
#[test]
fn a_resumable_upload_completed_by_a_killed_process_is_made_by_the_other() {
    use std::io::Write as _;
    const MIB: usize = 1 << 20;
    let mut p = Pair::start_with(&[
        ("STORE_MAX_FILE_BYTES", "16777216"),
        ("STORE_UPLOAD_LEASE_SECS", "2"),
    ]);
    let sent = pattern(8 * MIB);
    let path = tus::start(&p.a, sent.len(), "whole.bin");
    assert_eq!(
        tus::patch_at(&p.a, &path, 0, &sent[..6 * MIB]).status(),
        204
    );
    // The last 2 MiB to a, whose completion reaches the bucket and whose
    // answer waits at the proxy until a is dead.
    p.proxy.hold_next("COMPLETE");
    let addr = p.a.base.trim_start_matches("http://").to_string();
    let mut last = std::net::TcpStream::connect(&addr).unwrap();
    let head = tus::patch_head(&path, 6 * MIB, 2 * MIB);
    last.write_all(head.as_bytes()).unwrap();
    last.write_all(&sent[6 * MIB..]).unwrap();
    p.held("COMPLETE");
    p.a.kill();
    p.proxy.release("COMPLETE");
    drop(last);
    // Once the dead PATCH's lease has run out (empty probes), the last
    // PATCH again, to b.
    poll("the dead PATCH's lease to run out", || {
        (tus::patch_at(&p.b, &path, 6 * MIB, b"").status() == 204).then_some(())
    });
    let done = tus::patch_at(&p.b, &path, 6 * MIB, &sent[6 * MIB..]);
    assert_eq!(done.status(), 204, "{}", header(&done, "content-type"));
    let id = header(&done, "x-store-id");
    let got = bytes(&mut p.b.get(&format!("/{id}")));
    assert!(
        got == sent,
        "{} bytes back, not the {} sent",
        got.len(),
        sent.len()
    );
}
