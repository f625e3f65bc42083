//! The integration harness: starts the real `storesrv` binary on
//! 127.0.0.1:0 over a temp data dir, exactly as CONTRACT.md says an outside
//! suite does, and speaks HTTP to it.

#![allow(dead_code)] // Each test binary uses a different part of the harness.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub use ureq::http::Response;
pub type Body = ureq::Body;

pub const RETAIN_TOKEN: &str = "test-retain-token";

/// A running server and the data dir it owns.
pub struct Server {
    child: Option<Child>,
    pub base: String,
    data: PathBuf,
    env: Vec<(String, String)>,
    _dir: Option<tempfile::TempDir>,
    agent: ureq::Agent,
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

fn spawn(data: &Path, env: &[(String, String)]) -> (Child, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_storesrv"));
    cmd.args(["--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .env_remove("STORE_BASE_URL")
        .env_remove("STORE_RETAIN_TOKEN")
        .env("STORE_RATE_LIMIT_PER_MIN", "0")
        .env_remove("STORE_DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(data.with_extension("log")).expect("log file"),
        ));
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

/// Whether this run puts records in PostgreSQL (`STORE_TEST_BACKEND`).
pub fn on_postgres() -> bool {
    match std::env::var("STORE_TEST_BACKEND").as_deref() {
        Ok("postgres") => true,
        Ok("sled") | Err(_) => false,
        Ok(other) => panic!("STORE_TEST_BACKEND must be sled or postgres, not {other:?}"),
    }
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

    /// Starts a server over a data dir the caller owns. Under
    /// `STORE_TEST_BACKEND=postgres` its records go to a fresh PostgreSQL
    /// database (kept across restarts), unless `env` names one.
    pub fn on(data: PathBuf, dir: Option<tempfile::TempDir>, env: &[(&str, &str)]) -> Self {
        let mut env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if on_postgres() && !env.iter().any(|(k, _)| k == "STORE_DATABASE_URL") {
            env.push((
                "STORE_DATABASE_URL".into(),
                store_testkit::pg::fresh_database(),
            ));
        }
        Self::spawned(data, dir, env)
    }

    fn spawned(data: PathBuf, dir: Option<tempfile::TempDir>, env: Vec<(String, String)>) -> Self {
        let (child, base) = spawn(&data, &env);
        Self {
            child: Some(child),
            base,
            data,
            env,
            _dir: dir,
            agent: agent(),
        }
    }

    /// Sends SIGTERM, waits for a clean exit, and starts again on the same
    /// data dir (on a new port).
    pub fn restart(&mut self) {
        let status = self.stop();
        assert!(
            status.success(),
            "storesrv exits 0 on SIGTERM, got {status}"
        );
        let (child, base) = spawn(&self.data, &self.env);
        self.child = Some(child);
        self.base = base;
    }

    /// Kills the server with SIGKILL, as a crash would, and starts it again
    /// on the same data dir.
    pub fn crash_and_restart(&mut self) {
        let mut child = self.child.take().expect("the server is running");
        child.kill().expect("SIGKILL");
        child.wait().expect("the server is gone");
        let (child, base) = spawn(&self.data, &self.env);
        self.child = Some(child);
        self.base = base;
    }

    /// Kills the server with SIGKILL, as a crash would, and leaves it down.
    pub fn kill(&mut self) {
        let mut child = self.child.take().expect("the server is running");
        child.kill().expect("SIGKILL");
        child.wait().expect("the server is gone");
    }

    /// Stops with SIGTERM and returns the exit status.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("the server is running");
        let ok = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(ok.success());
        child.wait().expect("the server exits")
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server is running").id()
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

    /// Committed blobs on disk: bytes the server still keeps.
    pub fn blob_count(&self) -> usize {
        let Ok(fans) = std::fs::read_dir(self.data.join("blobs")) else {
            return 0;
        };
        fans.filter_map(Result::ok)
            .filter_map(|fan| std::fs::read_dir(fan.path()).ok())
            .map(|files| files.count())
            .sum()
    }

    /// The server's stderr so far. Request lines are written in batches
    /// every 200 ms (bins/storesrv/src/logs.rs), so wait out one batch.
    pub fn log(&self) -> String {
        std::thread::sleep(std::time::Duration::from_millis(300));
        std::fs::read_to_string(self.data.with_extension("log")).unwrap_or_default()
    }

    /// Waits (up to 10 s) until the server's log holds `needle`, and
    /// returns the log. Background work such as the orphan collection
    /// reports only there.
    pub fn wait_for_log(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let log = self.log();
            if log.contains(needle) {
                return log;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {needle:?} in the log: {log}"
            );
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str) -> Response<Body> {
        self.agent.get(self.url(path)).call().expect("GET")
    }

    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
        let mut req = self.agent.get(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.call().expect("GET")
    }

    pub fn head(&self, path: &str) -> Response<Body> {
        self.agent.head(self.url(path)).call().expect("HEAD")
    }

    pub fn post(&self, path: &str, body: &[u8]) -> Response<Body> {
        self.try_post(path, body).expect("POST")
    }

    /// A POST that may fail in transport (the server was killed).
    pub fn try_post(&self, path: &str, body: &[u8]) -> Result<Response<Body>, ureq::Error> {
        self.agent.post(self.url(path)).send(body)
    }

    pub fn post_with(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response<Body> {
        let mut req = self.agent.post(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body).expect("POST")
    }

    pub fn post_empty(&self, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
        let mut req = self.agent.post(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send_empty().expect("POST")
    }

    pub fn put(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response<Body> {
        let mut req = self.agent.put(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body).expect("PUT")
    }

    pub fn patch(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response<Body> {
        let mut req = self.agent.patch(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body).expect("PATCH")
    }

    pub fn delete(&self, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
        let mut req = self.agent.delete(self.url(path));
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
        let addr = self.base.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // The server may answer and close before the whole request is sent
        // (an early 413): keep whatever it said.
        let _ = s.write_all(request);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
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
