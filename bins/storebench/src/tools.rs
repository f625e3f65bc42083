//! The processes a benchmark runs: storesrv and nginx pinned to one core,
//! wrk and oha pinned to the other, and a sampler of their memory.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// The core the servers run on, and the one the load generators use.
pub const SERVER_CORE: &str = "0";
pub const LOAD_CORE: &str = "1";

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into()
}

pub use store_testkit::pin::pin_this_thread;

fn pinned(core: &str, program: &Path) -> Command {
    let mut cmd = Command::new("taskset");
    cmd.arg("-c").arg(core).arg(program);
    cmd
}

/// A storesrv process over its own data dir.
pub struct Storesrv {
    child: Child,
    pub base: String,
    pub data: PathBuf,
}

impl Storesrv {
    /// Starts the release binary with the benchmark settings of issue 8:
    /// the per-client limits off (the rate limiter, and the shares of
    /// connections and requests in flight, since one load generator on one
    /// address stands for many clients) and the pools raised, nothing else
    /// changed.
    pub fn start(binary: &Path, data: &Path) -> Self {
        Self::start_with_env(binary, data, &[])
    }

    /// As [`Storesrv::start`], with more settings (`env`).
    pub fn start_with_env(binary: &Path, data: &Path, env: &[(&str, &str)]) -> Self {
        let mut all = vec![
            ("STORE_CONNECTIONS_PER_IP", "0"),
            ("STORE_REQUESTS_PER_IP", "0"),
        ];
        all.extend_from_slice(env);
        Self::spawn(binary, data, &all)
    }

    /// As [`Storesrv::start`], with the records in the PostgreSQL
    /// database of `url` (the bytes stay under `data`).
    pub fn start_with_database(binary: &Path, data: &Path, url: &str) -> Self {
        Self::start_with_env(binary, data, &[("STORE_DATABASE_URL", url)])
    }

    /// As [`Storesrv::start`], with metrics counted and served on a
    /// listener of their own (scenario 15 compares it with the former).
    pub fn start_with_metrics(binary: &Path, data: &Path) -> Self {
        Self::start_with_env(binary, data, &[("STORE_METRICS_LISTEN", "127.0.0.1:0")])
    }

    /// Starts the release binary with every guard at its default but the
    /// rate limiter and the pools (scenario 12, the attack: there the
    /// shares are what is measured).
    pub fn start_guarded(binary: &Path, data: &Path) -> Self {
        Self::spawn(binary, data, &[])
    }

    fn spawn(binary: &Path, data: &Path, env: &[(&str, &str)]) -> Self {
        let mut child = pinned(SERVER_CORE, binary)
            .args(["--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .env_remove("STORE_DATABASE_URL")
            .envs(env.iter().copied())
            .env("STORE_RATE_LIMIT_PER_MIN", "0")
            .env("STORE_POOL_BYTES", "1000000000000")
            .env("STORE_PICS_POOL_BYTES", "1000000000000")
            .env_remove("STORE_BASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("storesrv starts (build it with cargo build --release -p storesrv)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the ready line");
        let base = line
            .trim()
            .strip_prefix("storesrv listening on ")
            .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
            .to_string();
        Self {
            child,
            base,
            data: data.to_path_buf(),
        }
    }

    pub fn pid(&self) -> u32 {
        // taskset execs the program, so the child's pid is storesrv's.
        self.child.id()
    }

    /// A POST without a body (creating a dir or a gallery); panics unless
    /// it succeeds.
    pub fn post_empty(&self, path: &str) {
        let mut res = agent()
            .post(format!("{}{path}", self.base))
            .send_empty()
            .expect("POST");
        assert!(res.status().is_success(), "POST {path}: {}", res.status());
        let _ = res.body_mut().read_to_string();
    }

    /// Uploads `bytes` as a single file and answers its path.
    pub fn upload(&self, name: &str, bytes: &[u8]) -> String {
        upload_to(&self.base, name, bytes)
    }
}

/// Uploads `bytes` as a single file to the service at `base` and answers
/// its path.
pub fn upload_to(base: &str, name: &str, bytes: &[u8]) -> String {
    let mut res = agent()
        .post(format!("{base}/?name={name}&ttl=14d"))
        .send(bytes)
        .expect("upload");
    let v: Value =
        serde_json::from_str(&res.body_mut().read_to_string().expect("body")).expect("JSON");
    let url = v["url"].as_str().expect("a url").to_string();
    url.strip_prefix(base).expect("base").to_string()
}

/// Stops a server with SIGTERM and waits for it: TERM, not KILL, so nginx's
/// master takes its worker down with it (a killed master leaves the worker
/// holding the port) and storesrv shuts down as in production.
fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
}

impl Drop for Storesrv {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// nginx serving `www` with sendfile and accepting PUT (its DAV module)
/// under `/up/`.
pub struct Nginx {
    child: Child,
    pub base: String,
}

/// How nginx moves file bytes to the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileIo {
    /// sendfile: the kernel sends page-cache pages, no copy in user space.
    Sendfile,
    /// read() into two 256 KiB buffers, then write(): the same copies as
    /// a server that cannot use sendfile (storesrv, through hyper).
    Copy,
}

impl Nginx {
    pub fn start(dir: &Path, www: &Path, port: u16) -> Self {
        Self::start_with(dir, www, port, FileIo::Sendfile)
    }

    pub fn start_with(dir: &Path, www: &Path, port: u16, io: FileIo) -> Self {
        let file_io = match io {
            FileIo::Sendfile => "sendfile on; tcp_nopush on;",
            FileIo::Copy => "sendfile off; output_buffers 2 256k;",
        };
        std::fs::create_dir_all(dir).expect("nginx dir");
        let conf = dir.join("nginx.conf");
        let d = dir.display();
        let text = format!(
            "worker_processes 1;\n\
             daemon off;\n\
             pid {d}/nginx.pid;\n\
             error_log {d}/nginx-error.log warn;\n\
             events {{ worker_connections 4096; }}\n\
             http {{\n\
               access_log off;\n\
               {file_io} tcp_nodelay on;\n\
               keepalive_requests 1000000;\n\
               client_body_temp_path {d}/body;\n\
               proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n\
               uwsgi_temp_path {d}/uwsgi;\n\
               scgi_temp_path {d}/scgi;\n\
               default_type application/octet-stream;\n\
               server {{\n\
                 listen 127.0.0.1:{port};\n\
                 root {www};\n\
                 client_max_body_size 64m;\n\
                 location /up/ {{ dav_methods PUT; create_full_put_path on; }}\n\
               }}\n\
             }}\n",
            www = www.display(),
        );
        std::fs::write(&conf, text).expect("nginx.conf");
        std::fs::create_dir_all(www.join("up")).expect("www/up");
        let mut child = pinned(SERVER_CORE, Path::new("nginx"))
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("nginx starts (apt-get install nginx-light)");
        let base = format!("http://127.0.0.1:{port}");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Self { child, base };
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("nginx did not start; see {d}/nginx-error.log");
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// What one wrk run measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct WrkResult {
    pub requests: f64,
    pub secs: f64,
    pub bytes: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: f64,
}

impl WrkResult {
    pub fn rps(&self) -> f64 {
        self.requests / self.secs
    }

    pub fn bytes_per_sec(&self) -> f64 {
        self.bytes / self.secs
    }
}

/// The Lua every wrk run shares: an optional method and body, and a
/// `done` that prints the figures as one JSON line.
fn wrk_script(method: &str, body_bytes: usize) -> String {
    let body = if body_bytes > 0 {
        format!(
            "wrk.body = string.rep(\"x\", {body_bytes})\nwrk.headers[\"Content-Type\"] = \"application/octet-stream\"\n"
        )
    } else {
        String::new()
    };
    format!(
        "wrk.method = \"{method}\"\n{body}\
done = function(summary, latency, requests)\n\
  local e = summary.errors\n\
  io.write(string.format('{{\"requests\":%d,\"duration_us\":%d,\"bytes\":%d,\"p50_us\":%d,\"p99_us\":%d,\"errors\":%d}}\\n',\n\
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(99),\n\
    e.connect + e.read + e.write + e.status + e.timeout))\n\
end\n"
    )
}

/// Runs wrk pinned to the load core.
pub fn wrk(
    dir: &Path,
    url: &str,
    connections: u32,
    secs: u32,
    method: &str,
    body_bytes: usize,
) -> WrkResult {
    let script = dir.join(format!("wrk-{method}-{body_bytes}.lua"));
    std::fs::write(&script, wrk_script(method, body_bytes)).expect("wrk script");
    run_wrk(&script, url, connections, secs)
}

/// Runs wrk sending one fixed body of JSON with `method` (an MCP
/// message): the same for every request.
pub fn wrk_json(
    dir: &Path,
    url: &str,
    connections: u32,
    secs: u32,
    name: &str,
    json: &str,
) -> WrkResult {
    let script = dir.join(format!("wrk-json-{name}.lua"));
    // Lua's long brackets take the JSON as it is, quotes included.
    let lua = format!(
        "wrk.body = [==[{json}]==]\nwrk.headers[\"Content-Type\"] = \"application/json\"\n{report}",
        report = wrk_script("POST", 0)
    );
    std::fs::write(&script, lua).expect("wrk script");
    run_wrk(&script, url, connections, secs)
}

/// Runs wrk with GETs of random `range_bytes` ranges, aligned to their
/// size, of a file of `file_bytes`: a player or a download manager's
/// pattern.
pub fn wrk_ranges(
    dir: &Path,
    url: &str,
    connections: u32,
    secs: u32,
    (file_bytes, range_bytes): (usize, usize),
) -> WrkResult {
    let script = dir.join(format!("wrk-ranges-{range_bytes}.lua"));
    let ranges = file_bytes / range_bytes;
    let lua = format!(
        "request = function()\n\
  local s = math.random(0, {last}) * {range_bytes}\n\
  return wrk.format(\"GET\", nil, {{ Range = \"bytes=\" .. s .. \"-\" .. (s + {range_bytes} - 1) }})\n\
end\n{report}",
        last = ranges - 1,
        report = wrk_script("GET", 0)
    );
    std::fs::write(&script, lua).expect("wrk script");
    run_wrk(&script, url, connections, secs)
}

fn run_wrk(script: &Path, url: &str, connections: u32, secs: u32) -> WrkResult {
    let out = pinned(LOAD_CORE, Path::new("wrk"))
        .args(["-t", "1", "-c", &connections.to_string()])
        .args(["-d", &format!("{secs}s"), "--timeout", "10s", "-s"])
        .arg(script)
        .arg(url)
        .output()
        .expect("wrk runs (apt-get install wrk)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("{\"requests\""))
        .unwrap_or_else(|| panic!("wrk printed no figures: {stdout}"));
    let v: Value = serde_json::from_str(line).expect("wrk JSON");
    let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
    WrkResult {
        requests: f("requests"),
        secs: f("duration_us") / 1e6,
        bytes: f("bytes"),
        p50_ms: f("p50_us") / 1e3,
        p99_ms: f("p99_us") / 1e3,
        errors: f("errors"),
    }
}

/// What one oha run measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct OhaResult {
    pub rps: f64,
    pub p99_ms: f64,
    pub success_rate: f64,
}

/// Runs oha at a fixed rate with its coordinated-omission correction.
pub fn oha(url: &str, rate: f64, connections: u32, secs: u32, body: Option<&Path>) -> Child {
    let mut cmd = pinned(LOAD_CORE, Path::new(&oha_path()));
    cmd.args([
        "--no-tui",
        "--output-format",
        "json",
        "--latency-correction",
    ])
    .args(["-z", &format!("{secs}s"), "-q", &format!("{rate:.0}")])
    .args(["-c", &connections.to_string()]);
    if let Some(b) = body {
        cmd.args(["-m", "POST", "-T", "application/octet-stream", "-D"])
            .arg(b);
    }
    cmd.arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("oha runs (cargo install oha)")
}

pub fn oha_result(child: Child) -> OhaResult {
    let out = child.wait_with_output().expect("oha finishes");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "oha printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    OhaResult {
        rps: v["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
        p99_ms: v["latencyPercentiles"]["p99"].as_f64().unwrap_or(f64::NAN) * 1e3,
        success_rate: v["summary"]["successRate"].as_f64().unwrap_or(0.0),
    }
}

pub fn oha_path() -> String {
    let home = std::env::var("HOME").unwrap_or_default();
    let cargo_bin = format!("{home}/.cargo/bin/oha");
    if Path::new(&cargo_bin).exists() {
        cargo_bin
    } else {
        "oha".to_string()
    }
}

/// Memory of one process, sampled once a second until stopped.
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    peak_rss: Arc<Mutex<u64>>,
    handle: Option<std::thread::JoinHandle<()>>,
    pid: u32,
}

/// `VmRSS` and `VmHWM` of a process, in bytes.
pub fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

impl RssSampler {
    pub fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak_rss = Arc::new(Mutex::new(memory(pid).0));
        let handle = {
            let (stop, peak_rss) = (stop.clone(), peak_rss.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let (rss, _) = memory(pid);
                    let mut p = peak_rss.lock().expect("sampler lock");
                    *p = (*p).max(rss);
                    drop(p);
                    // Sample once a second, but notice a stop quickly.
                    for _ in 0..10 {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            })
        };
        Self {
            stop,
            peak_rss,
            handle: Some(handle),
            pid,
        }
    }

    /// Stops sampling; answers the peak sampled VmRSS and the VmHWM.
    pub fn finish(mut self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let (rss, hwm) = memory(self.pid);
        let peak = (*self.peak_rss.lock().expect("sampler lock")).max(rss);
        (peak, hwm)
    }
}

/// Bytes a directory tree occupies on disk (allocated blocks).
pub fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| disk_usage(&e.path()))
                    .sum()
            })
            .unwrap_or(0)
    } else {
        meta.blocks() * 512
    }
}

/// Wall time of a command, in seconds; panics if it fails.
pub fn time_command(cmd: &mut Command) -> f64 {
    let start = std::time::Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("command runs");
    assert!(status.success(), "{cmd:?} failed");
    start.elapsed().as_secs_f64()
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    if xs.is_empty() {
        return f64::NAN;
    }
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}
