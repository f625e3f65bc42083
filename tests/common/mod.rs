//! The integration harness: starts the real `storesrv` binary on
//! 127.0.0.1:0 over a temp data dir, exactly as CONTRACT.md says an outside
//! suite does, and speaks HTTP to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub mod clamd;
pub mod proxy;
pub mod qr;
pub mod tus;
pub mod webdriver;
pub mod webhook;

pub use ureq::http::Response;

/// A path in the repository, from its root: `repo("fixtures/pixel.png")`.
/// Found at run time: nextest sets CARGO_MANIFEST_DIR to where the sources
/// are, also when it runs an archived build against a copy of them
/// (scripts/stress-runs), so such a run reads the fixtures and scripts of
/// the commit it was built from, not of the working tree.
pub fn repo(rel: &str) -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
        .join(rel)
}
pub type Body = ureq::Body;

pub const RETAIN_TOKEN: &str = "test-retain-token";

/// Runs `script` (under tests/interop/) with `args` in the venv of
/// clients no one here wrote (scripts/interop: tuspy, the MCP SDK), and
/// answers its stdout and stderr; fails when it fails.
pub fn run_interop(script: &str, args: &[String]) -> (String, String) {
    let python = repo("target/interop/bin/python");
    assert!(
        python.exists(),
        "no interop clients at {}: run scripts/test (or scripts/interop --install)",
        python.display()
    );
    let out = std::process::Command::new(&python)
        .arg(repo(&format!("tests/interop/{script}")))
        .args(args)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{script}: {stdout}\n{stderr}");
    (stdout, stderr)
}

/// A running server and the data dir it owns: one process, or two that
/// share their records and bytes under `STORE_TEST_BACKEND=cluster`,
/// between which requests alternate.
pub struct Server {
    procs: Vec<Proc>,
    /// The first process's base URL: the one every process hands out.
    pub base: String,
    /// The request count, which picks the process of the next request.
    turn: std::sync::atomic::AtomicUsize,
    data: PathBuf,
    env: Vec<(String, String)>,
    _dir: Option<tempfile::TempDir>,
    agent: ureq::Agent,
}

/// One storesrv process of a [`Server`].
struct Proc {
    child: Option<Child>,
    base: String,
    /// Its `--data`.
    data: PathBuf,
    /// Its stderr, beside `data` and named for this process alone: two
    /// servers of a test may share a data dir (tests/cluster.rs).
    log: PathBuf,
}

/// How long a test waits for a line it expects in a server's log.
const LOG_WAIT: Duration = Duration::from_secs(10);
/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(10);
/// The request line of a log barrier (`Server::log`): `HEAD /healthz`,
/// which no test sends and no rate limit refuses.
const BARRIER_LINE: &str = "method=HEAD route=\"healthz\"";

impl Proc {
    /// This process's log, once everything it logged before the call is
    /// in the file (see `Server::log`).
    fn log_so_far(&self, agent: &ureq::Agent) -> String {
        let read = || std::fs::read_to_string(&self.log).unwrap_or_default();
        if self.child.is_none() {
            return read();
        }
        let before = read().matches(BARRIER_LINE).count();
        let sent = agent.head(format!("{}/healthz", self.base)).call();
        let deadline = std::time::Instant::now() + LOG_WAIT;
        loop {
            let log = read();
            // A process that could not answer the barrier (it is exiting)
            // has nothing left to batch by the time the wait runs out.
            if log.matches(BARRIER_LINE).count() > before
                || (sent.is_err() && std::time::Instant::now() >= deadline)
            {
                return log;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the log barrier's line never reached {}",
                self.log.display()
            );
            std::thread::sleep(POLL);
        }
    }
}

/// A log file name no other server of this test process, or of another
/// test process, uses.
fn log_path(data: &Path) -> PathBuf {
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    data.with_extension(format!("{}-{n}.log", std::process::id()))
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// The storesrv binary under test. cargo-nextest names it at run time
/// (`NEXTEST_BIN_EXE_storesrv`), also when the tests run from an archive
/// of an earlier build; `cargo test` only at build time.
pub fn storesrv_bin() -> PathBuf {
    std::env::var_os("NEXTEST_BIN_EXE_storesrv")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_storesrv")))
}

fn spawn(data: &Path, log: &Path, env: &[(String, String)]) -> (Child, String) {
    let mut cmd = Command::new(storesrv_bin());
    cmd.args(["--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .env_remove("STORE_BASE_URL")
        .env_remove("STORE_RETAIN_TOKEN")
        .env("STORE_RATE_LIMIT_PER_MIN", "0")
        // Bytes no record names are deleted at once, not after an hour, so
        // that tests can count what is left (`Server::blob_count`).
        .env("STORE_DELETE_GRACE_SECS", "0")
        .env_remove("STORE_DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(log).expect("log file")));
    for var in S3_VARS {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the storesrv binary starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout is piped"))
        .read_line(&mut line)
        .expect("the ready line is readable");
    let base = line
        .trim()
        .strip_prefix("storesrv listening on ")
        .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
        .to_string();
    (child, base)
}

/// The settings of the bytes in S3 (CONTRACT.md).
const S3_VARS: [&str; 6] = [
    "STORE_S3_ENDPOINT",
    "STORE_S3_BUCKET",
    "STORE_S3_REGION",
    "STORE_S3_ACCESS_KEY_ID",
    "STORE_S3_SECRET_ACCESS_KEY",
    "STORE_S3_PREFIX",
];

/// The environment that makes a process's wall clock run `offset` ahead
/// (libfaketime, e.g. `+5h`), its monotonic clock untouched so that its
/// timers behave. Panics, naming the package, where libfaketime is missing.
pub fn clock_ahead(offset: &str) -> Vec<(String, String)> {
    let lib = ["x86_64-linux-gnu", "aarch64-linux-gnu"]
        .iter()
        .map(|arch| format!("/usr/lib/{arch}/faketime/libfaketime.so.1"))
        .find(|p| Path::new(p).exists())
        .unwrap_or_else(|| {
            panic!("libfaketime is missing: apt-get install faketime (scripts/test installs it)")
        });
    vec![
        ("LD_PRELOAD".into(), lib),
        ("FAKETIME".into(), offset.into()),
        ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
    ]
}

/// Where this run keeps records and bytes (`STORE_TEST_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// sled and files under `--data`: the embedded default.
    Sled,
    /// Records in PostgreSQL, files under `--data`.
    Postgres,
    /// Records in PostgreSQL, bytes in S3 (Garage), two processes.
    Cluster,
}

pub fn backend() -> Backend {
    match std::env::var("STORE_TEST_BACKEND").as_deref() {
        Ok("sled") | Err(_) => Backend::Sled,
        Ok("postgres") => Backend::Postgres,
        Ok("cluster") => Backend::Cluster,
        Ok(other) => panic!("STORE_TEST_BACKEND must be sled, postgres or cluster, not {other:?}"),
    }
}

/// Whether this run puts records in PostgreSQL.
pub fn on_postgres() -> bool {
    backend() != Backend::Sled
}

/// Whether this run puts bytes in S3: nothing of a store is on the disk.
pub fn on_s3() -> bool {
    backend() == Backend::Cluster
}

/// The S3 settings for a store whose (first) data dir is `data`, under
/// `STORE_TEST_BACKEND=cluster`; none otherwise. The key prefix is made
/// from the path, so that every process (and every restart) on one data
/// dir shares the bytes, and no two stores do.
pub fn s3_env(data: &Path) -> Vec<(String, String)> {
    if !on_s3() {
        return vec![];
    }
    let b = store_testkit::s3::bucket();
    let prefix: String = data
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    [
        ("STORE_S3_ENDPOINT", b.endpoint),
        ("STORE_S3_BUCKET", b.bucket),
        ("STORE_S3_REGION", b.region),
        ("STORE_S3_ACCESS_KEY_ID", b.access_key_id),
        ("STORE_S3_SECRET_ACCESS_KEY", b.secret_access_key),
        ("STORE_S3_PREFIX", prefix),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

impl Server {
    /// Starts a server with the retain token configured.
    pub fn start() -> Self {
        Self::with_env(&[("STORE_RETAIN_TOKEN", RETAIN_TOKEN)])
    }

    pub fn with_env(env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        Self::on(data, Some(dir), env)
    }

    /// Starts a server over a data dir the caller owns. Unless `env` names
    /// a database, `STORE_TEST_BACKEND` chooses: under `postgres` records
    /// go to a fresh PostgreSQL database (kept across restarts); under
    /// `cluster` bytes go to S3 too, and two processes serve. A server
    /// on PostgreSQL under `cluster` keeps its bytes in S3 either way.
    pub fn on(data: PathBuf, dir: Option<tempfile::TempDir>, env: &[(&str, &str)]) -> Self {
        let mut env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let chosen = !env.iter().any(|(k, _)| k == "STORE_DATABASE_URL");
        if on_postgres() && chosen {
            env.push((
                "STORE_DATABASE_URL".into(),
                store_testkit::pg::fresh_database(),
            ));
        }
        let shared = env
            .iter()
            .any(|(k, v)| k == "STORE_DATABASE_URL" && !v.is_empty());
        if shared && !env.iter().any(|(k, _)| k == "STORE_S3_ENDPOINT") {
            env.extend(s3_env(&data));
        }
        // Two processes share a store only when nothing of it is on their
        // own disks: records in PostgreSQL, bytes in S3.
        let in_bucket = env
            .iter()
            .any(|(k, v)| k == "STORE_S3_ENDPOINT" && !v.is_empty());
        let processes = if chosen && in_bucket { 2 } else { 1 };
        let procs: Vec<Proc> = (0..processes)
            .map(|i| {
                let data = Self::proc_data(&data, i);
                Proc {
                    child: None,
                    base: String::new(),
                    log: log_path(&data),
                    data,
                }
            })
            .collect();
        let mut server = Self {
            procs,
            base: String::new(),
            turn: Default::default(),
            data,
            env,
            _dir: dir,
            agent: agent(),
        };
        server.spawn_all();
        server
    }

    /// The `--data` of the `i`th process: the first has the server's; the
    /// others hold only their logs, since the stores are shared.
    fn proc_data(data: &Path, i: usize) -> PathBuf {
        if i == 0 {
            return data.to_path_buf();
        }
        let name = data.file_name().unwrap_or_default().to_string_lossy();
        data.with_file_name(format!("{name}-{}", i + 1))
    }

    /// Starts every process that is down. The others are told to hand out
    /// the first one's URLs, as processes behind one load balancer hand
    /// out its.
    fn spawn_all(&mut self) {
        for i in 0..self.procs.len() {
            if self.procs[i].child.is_some() {
                continue;
            }
            let mut env = self.env.clone();
            if i > 0 && !env.iter().any(|(k, _)| k == "STORE_BASE_URL") {
                env.push(("STORE_BASE_URL".into(), self.procs[0].base.clone()));
            }
            let (child, base) = spawn(&self.procs[i].data, &self.procs[i].log, &env);
            self.procs[i].child = Some(child);
            self.procs[i].base = base;
        }
        self.base = self.procs[0].base.clone();
    }

    /// Starts the server again after [`Server::stop`] or [`Server::kill`].
    pub fn start_again(&mut self) {
        self.spawn_all();
    }

    /// Sends SIGTERM, waits for a clean exit, and starts again on the same
    /// data dir (on a new port).
    pub fn restart(&mut self) {
        let status = self.stop();
        assert!(
            status.success(),
            "storesrv exits 0 on SIGTERM, got {status}"
        );
        self.spawn_all();
    }

    /// Kills the server with SIGKILL, as a crash would, and starts it again
    /// on the same data dir.
    pub fn crash_and_restart(&mut self) {
        self.kill();
        self.spawn_all();
    }

    /// Kills the server with SIGKILL, as a crash would, and leaves it down.
    pub fn kill(&mut self) {
        for p in &mut self.procs {
            let mut child = p.child.take().expect("the server is running");
            child.kill().expect("SIGKILL");
            child.wait().expect("the server is gone");
        }
    }

    /// Stops with SIGTERM and returns the exit status (the first failure
    /// of its processes, if any).
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut statuses = vec![];
        for p in &mut self.procs {
            let mut child = p.child.take().expect("the server is running");
            let ok = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .expect("kill runs");
            assert!(ok.success());
            statuses.push(child.wait().expect("the server exits"));
        }
        let failed = statuses.iter().find(|s| !s.success()).copied();
        failed.unwrap_or(statuses[0])
    }

    /// The ids of the server's processes.
    pub fn pids(&self) -> Vec<u32> {
        self.procs
            .iter()
            .filter_map(|p| p.child.as_ref().map(|c| c.id()))
            .collect()
    }

    /// The (first) server process's id.
    pub fn pid(&self) -> u32 {
        self.procs[0]
            .child
            .as_ref()
            .expect("the server is running")
            .id()
    }

    /// Sockets the server process holds open on its own port now: its
    /// listener and its clients' connections (Linux: the `/proc/<pid>/fd`
    /// links to `socket:[inode]` whose inode `/proc/<pid>/net/tcp*` lists
    /// with that local port). Connections it opened itself, as to
    /// PostgreSQL, are not counted.
    pub fn open_sockets(&self) -> usize {
        let port: u16 = self
            .base
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let mut ours = std::collections::HashSet::new();
        for table in ["tcp", "tcp6"] {
            let text = std::fs::read_to_string(format!("/proc/{}/net/{table}", self.pid()))
                .unwrap_or_default();
            for line in text.lines().skip(1) {
                let cols: Vec<&str> = line.split_whitespace().collect();
                let local_port = cols
                    .get(1)
                    .and_then(|a| a.rsplit(':').next())
                    .and_then(|p| u16::from_str_radix(p, 16).ok());
                if local_port == Some(port) {
                    if let Some(inode) = cols.get(9) {
                        ours.insert(format!("socket:[{inode}]"));
                    }
                }
            }
        }
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|fds| {
                fds.filter_map(Result::ok)
                    .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                    .filter(|link| ours.contains(link.to_string_lossy().as_ref()))
                    .count()
            })
            .unwrap_or(0)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// Committed blobs: bytes the server still keeps, on disk or in the
    /// bucket, once the deletion queue of a store in PostgreSQL has been
    /// drained (its grace is 0 in the tests; see `spawn`).
    pub fn blob_count(&self) -> usize {
        self.wait_for_queued_deletes();
        if let Some(blobs) = self.s3_blobs() {
            return store_core::BlobStore::list(&blobs)
                .expect("list the bucket")
                .len();
        }
        let Ok(fans) = std::fs::read_dir(self.data.join("blobs")) else {
            return 0;
        };
        fans.filter_map(Result::ok)
            .filter_map(|fan| std::fs::read_dir(fan.path()).ok())
            .map(|files| files.count())
            .sum()
    }

    /// Waits (up to 20 s) until no delete waits in the queue of the
    /// server's PostgreSQL database, if it has one: bytes no record names
    /// are deleted by a drainer thread a moment after the change.
    pub fn wait_for_queued_deletes(&self) {
        let Some((_, url)) = self.env.iter().find(|(k, _)| k == "STORE_DATABASE_URL") else {
            return;
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let queued = || store_testkit::pg::psql(url, "SELECT count(*) FROM store_doomed");
        while queued() != "0" {
            assert!(
                std::time::Instant::now() < deadline,
                "queued deletes not drained in 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's bucket, when its bytes are in S3.
    pub fn s3_blobs(&self) -> Option<store_s3::S3Blobs> {
        let var = |name: &str| {
            self.env
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let config = store_s3::S3Config {
            endpoint: var("STORE_S3_ENDPOINT")?,
            bucket: var("STORE_S3_BUCKET")?,
            region: var("STORE_S3_REGION")?,
            access_key_id: var("STORE_S3_ACCESS_KEY_ID")?,
            secret_access_key: var("STORE_S3_SECRET_ACCESS_KEY")?,
            prefix: var("STORE_S3_PREFIX").unwrap_or_default(),
            part_bytes: store_s3::PART_BYTES_DEFAULT,
        };
        let random =
            std::sync::Arc::new(store_testkit::SeededRandom::new(std::process::id().into()));
        Some(store_s3::S3Blobs::connect(&config, random).expect("the test bucket"))
    }

    /// Everything the server logged before this call, every process's in
    /// turn. A process batches its request lines (bins/storesrv/src/logs.rs),
    /// so each running one is first sent a barrier request, and this waits
    /// until the barrier's own line is in its log: the lines before it are
    /// then there too. A stopped process has written everything.
    pub fn log(&self) -> String {
        self.procs
            .iter()
            .map(|p| p.log_so_far(&self.agent))
            .collect()
    }

    /// Waits (up to 10 s) until the log of every process of the server
    /// holds `needle`, and returns the log. Background work such as the
    /// orphan collection reports only there, and each process does its own.
    pub fn wait_for_every_log(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + LOG_WAIT;
        loop {
            std::thread::sleep(POLL);
            // Each process's log read once per look, for both the check
            // and the answer.
            let logs: Vec<String> = self
                .procs
                .iter()
                .map(|p| std::fs::read_to_string(&p.log).unwrap_or_default())
                .collect();
            let log = logs.concat();
            if logs.iter().all(|l| l.contains(needle)) {
                return log;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {needle:?} in every log: {log}"
            );
        }
    }

    /// The metrics URL of each process (`STORE_METRICS_LISTEN` set, port 0
    /// allowed), from the line each one logs.
    pub fn metrics_urls(&self) -> Vec<String> {
        let line = "metrics served at ";
        self.wait_for_every_log(line);
        self.procs
            .iter()
            .map(|p| {
                let log = std::fs::read_to_string(&p.log).unwrap_or_default();
                let at = &log[log.find(line).expect("logged") + line.len()..];
                at.split_whitespace().next().unwrap_or_default().to_string()
            })
            .collect()
    }

    /// Removes every committed blob behind the server's back, as a disk
    /// wiped by hand (or a bucket emptied) would.
    pub fn remove_all_blobs(&self) {
        if let Some(blobs) = self.s3_blobs() {
            for id in store_core::BlobStore::list(&blobs).unwrap() {
                store_core::BlobStore::remove(&blobs, &id).unwrap();
            }
            return;
        }
        for fan in std::fs::read_dir(self.data.join("blobs")).unwrap() {
            for f in std::fs::read_dir(fan.unwrap().path()).unwrap() {
                std::fs::remove_file(f.unwrap().path()).unwrap();
            }
        }
    }

    /// Takes the server's bytes out of its reach, or gives them back: the
    /// blob directory moved away, or the bucket's marker object deleted
    /// (what a bucket emptied or swapped under the service looks like).
    pub fn set_bytes_reachable(&self, reachable: bool) {
        if on_s3() {
            let blobs = self.s3_blobs().expect("the server's bucket");
            if !reachable {
                blobs.remove_marker().unwrap();
            }
            // Connecting (in s3_blobs) wrote the marker back.
            return;
        }
        let (blobs, away) = (self.data.join("blobs"), self.data.join("blobs-away"));
        if reachable {
            std::fs::rename(&away, &blobs).unwrap();
        } else {
            std::fs::rename(&blobs, &away).unwrap();
        }
    }

    /// Temp files of uploads in progress or abandoned, under `--data`.
    /// None ever, when the bytes go to S3: a writer holds at most one part
    /// in memory, and an abandoned multipart upload is aborted.
    pub fn temp_file_count(&self) -> usize {
        std::fs::read_dir(self.data.join("tmp"))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// The public URL of `path`: the one the server hands out.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Where to send a request for `path`: to the process whose turn it
    /// is, as a round-robin load balancer would.
    fn route(&self, path: &str) -> String {
        let turn = self.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = &self.procs[turn % self.procs.len()];
        format!("{}{path}", p.base)
    }

    pub fn get(&self, path: &str) -> Response<Body> {
        self.agent.get(self.route(path)).call().expect("GET")
    }

    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
        let mut req = self.agent.get(self.route(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.call().expect("GET")
    }

    pub fn head_with(&self, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
        let mut req = self.agent.head(self.route(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.call().expect("HEAD")
    }

    pub fn head(&self, path: &str) -> Response<Body> {
        self.agent.head(self.route(path)).call().expect("HEAD")
    }

    pub fn post(&self, path: &str, body: &[u8]) -> Response<Body> {
        self.try_post(path, body).expect("POST")
    }

    /// A POST that may fail in transport (the server was killed).
    pub fn try_post(&self, path: &str, body: &[u8]) -> Result<Response<Body>, ureq::Error> {
        self.agent.post(self.route(path)).send(body)
    }

    pub fn post_with(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response<Body> {
        let mut req = self.agent.post(self.route(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body).expect("POST")
    }

    pub fn post_empty(&self, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
        let mut req = self.agent.post(self.route(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send_empty().expect("POST")
    }

    pub fn put(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response<Body> {
        let mut req = self.agent.put(self.route(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body).expect("PUT")
    }

    pub fn patch(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response<Body> {
        let mut req = self.agent.patch(self.route(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body).expect("PATCH")
    }

    pub fn delete(&self, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
        let mut req = self.agent.delete(self.route(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.call().expect("DELETE")
    }

    /// Uploads `body` as `name` and returns the record.
    pub fn upload(&self, name: &str, body: &[u8]) -> serde_json::Value {
        let mut res = self.post(&format!("/?name={name}"), body);
        assert_eq!(res.status(), 201, "upload of {name}");
        json(&mut res)
    }

    /// Sends raw bytes on a new connection and returns the raw answer, for
    /// requests a well-behaved client library will not send.
    pub fn raw(&self, request: &[u8]) -> String {
        let mut s = self.send_raw(request);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Like [`Server::raw`], but returns as soon as one whole answer (its
    /// head and `Content-Length` bytes of body) has come, as a client does,
    /// instead of waiting for the server to close: after an early refusal
    /// the server keeps reading the body that never comes for a few
    /// seconds (store-http's linger) before it closes. For a final answer
    /// with a `Content-Length` (as every refusal has) to a request other
    /// than HEAD: a chunked body is cut at its head.
    pub fn raw_answer(&self, request: &[u8]) -> String {
        let mut s = self.send_raw(request);
        let mut out = Vec::new();
        let mut chunk = [0u8; 4096];
        while !whole_answer(&out) {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Writes `request` on a new connection and closes it without reading:
    /// a client whose connection broke in the middle of a body.
    pub fn send_and_close(&self, request: &[u8]) {
        let s = self.send_raw(request);
        let _ = s.shutdown(std::net::Shutdown::Both);
    }

    /// A new connection with `request` written on it, reads timing out
    /// after 10 s. The server may answer and close before the whole
    /// request is sent (an early 413): the write's failure is ignored, so
    /// that whatever it said can still be read.
    pub fn send_raw(&self, request: &[u8]) -> TcpStream {
        let addr = self.base.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = s.write_all(request);
        s
    }
}

/// Whether `bytes` hold an answer's whole head and as much body as its
/// `Content-Length` says.
fn whole_answer(bytes: &[u8]) -> bool {
    let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    bytes.len() >= end + 4 + length
}

impl Drop for Server {
    fn drop(&mut self) {
        for p in &mut self.procs {
            if let Some(mut child) = p.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

pub fn json(res: &mut Response<Body>) -> serde_json::Value {
    let text = res.body_mut().read_to_string().expect("body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

pub fn text(res: &mut Response<Body>) -> String {
    res.body_mut().read_to_string().expect("body")
}

/// `len` bytes that follow no simple pattern (no run compresses, no two
/// offsets look alike), the same on every call: a body whose bytes coming
/// back in order is worth checking.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

pub fn bytes(res: &mut Response<Body>) -> Vec<u8> {
    res.body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_vec()
        .expect("body")
}

pub fn header(res: &Response<Body>, name: &str) -> String {
    res.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// Asserts an error answer: status, SPEC.md's JSON body and stable code.
pub fn assert_error(res: &mut Response<Body>, status: u16, code: &str) {
    assert_eq!(res.status(), status, "status");
    assert!(
        header(res, "content-type").starts_with("application/json"),
        "errors are JSON"
    );
    let body = json(res);
    assert_eq!(body["code"], code, "code in {body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "an error message in {body}"
    );
}

/// Percent-encodes a query value: everything but unreserved characters.
pub fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Pseudo-random bytes (xorshift) of every value, the same for a seed on
/// every run: nothing on the way compresses them, so a response's size is
/// what it says, and no one takes them for text.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A multipart/form-data body with the given (field, file name, bytes)
/// parts; returns (content type, body).
pub fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "----storesrvtestboundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (field, file, data) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{field}\"; filename=\"{f}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{field}\"\r\n\r\n").as_bytes()),
        }
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// The claims (lock files) and the copies (files below a `blobs`
/// directory) of the disk caches under `root` (`--data/blob-cache`), one
/// directory for each process (store-sled's cachedir.rs).
pub fn disk_cache(root: &Path) -> (usize, usize) {
    let mut found = (0, 0);
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "lock") {
            found.0 += 1;
        } else if path.is_dir() {
            found.1 += files_below(&path.join("blobs"));
        }
    }
    found
}

fn files_below(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => files_below(&e.path()),
            Ok(t) if t.is_file() => 1,
            _ => 0,
        })
        .sum()
}
