//! A webhook receiver for the tests (issue 36): an HTTP server on
//! 127.0.0.1 that checks each delivery's signature with the Standard
//! Webhooks reference library (`standardwebhooks`, not the project's own
//! code), records it, and answers as its script says: fail, take longer
//! than the sender waits, hold until told, or take it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// A webhook secret as operators write it.
pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// How the receiver answers one delivery.
#[derive(Debug)]
pub enum Answer {
    /// 500.
    Fail,
    /// Sleeps this long, then 200: longer than the sender waits, a
    /// failure to it.
    Sleep(Duration),
    /// Waits until the channel says go (or closes), then 200: a delivery
    /// in flight for as long as the test wants.
    Hold(mpsc::Receiver<()>),
}

/// One delivery as it came.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: String,
    pub body: serde_json::Value,
    /// Whether the reference library accepted its signature.
    pub verified: bool,
    /// Whether the receiver took it (200 in time), rather than failing
    /// it or sleeping past the sender's wait.
    pub taken: bool,
    /// The sender's end of the connection: which process sent it
    /// ([`pid_of_port`]).
    pub from_port: u16,
}

/// The receiver: its URL, the deliveries so far, and its script (once
/// the script is spent, every delivery is taken).
pub struct Receiver {
    pub url: String,
    deliveries: Arc<Mutex<Vec<Delivery>>>,
}

impl Receiver {
    pub fn start(script: Vec<Answer>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let deliveries = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.into_iter().collect::<VecDeque<_>>()));
        let (d, s) = (Arc::clone(&deliveries), Arc::clone(&script));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (d, s) = (Arc::clone(&d), Arc::clone(&s));
                std::thread::spawn(move || serve(stream, &d, &s));
            }
        });
        Self { url, deliveries }
    }

    /// Every delivery so far, in the order they came.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.deliveries.lock().unwrap().clone()
    }

    /// Waits (up to 60 s) until `found` finds what it looks for among the
    /// deliveries.
    pub fn wait_for<T>(&self, what: &str, found: impl Fn(&[Delivery]) -> Option<T>) -> T {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(t) = found(&self.deliveries()) {
                return t;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "waited for {what}: {:?}",
                self.deliveries()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The environment that points a server at this receiver.
pub fn env(url: &str, timeout_ms: &'static str) -> Vec<(&'static str, String)> {
    vec![
        ("STORE_WEBHOOK_URL", url.to_string()),
        ("STORE_WEBHOOK_SECRET", SECRET.to_string()),
        ("STORE_WEBHOOK_ALLOW_PRIVATE", "1".to_string()),
        ("STORE_WEBHOOK_TIMEOUT_MS", timeout_ms.to_string()),
    ]
}

fn serve(stream: TcpStream, deliveries: &Mutex<Vec<Delivery>>, script: &Mutex<VecDeque<Answer>>) {
    let from_port = stream.peer_addr().map(|a| a.port()).unwrap_or(0);
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut headers = http::HeaderMap::new();
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            if let (Ok(n), Ok(v)) = (
                http::HeaderName::from_bytes(name.trim().as_bytes()),
                http::HeaderValue::from_str(value.trim()),
            ) {
                headers.insert(n, v);
            }
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let verified = standardwebhooks::Webhook::new(SECRET)
        .expect("the reference library takes the secret")
        .verify(&body, &headers)
        .is_ok();
    let answer = script.lock().unwrap().pop_front();
    // A failure is not taken, nor a sleep, which outlasts the sender's
    // wait; a held one is, once released (a test releases it within the
    // sender's wait).
    let taken = matches!(answer, None | Some(Answer::Hold(_)));
    deliveries.lock().unwrap().push(Delivery {
        id: headers
            .get("webhook-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        verified,
        taken,
        from_port,
    });
    match answer {
        Some(Answer::Fail) => return respond(stream, "500 Internal Server Error"),
        Some(Answer::Sleep(d)) => std::thread::sleep(d),
        Some(Answer::Hold(go)) => drop(go.recv()),
        None => {}
    }
    respond(stream, "200 OK");
}

fn respond(mut stream: TcpStream, status: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}

/// The process (among `pids`) with a TCP socket bound to local `port`:
/// which server process sent a delivery. Linux only: the socket's inode
/// from /proc/net/tcp, then the process holding it among its open files.
pub fn pid_of_port(port: u16, pids: &[u32]) -> Option<u32> {
    let tcp = std::fs::read_to_string("/proc/net/tcp").ok()?;
    // Every socket on that local port with an inode: a connection in
    // TIME_WAIT (inode 0) may hold the same port towards another peer, as
    // the kernel reuses a local port for a different remote address, and
    // under load other tests' connections come and go beside this one.
    let wanted: Vec<String> = tcp
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local_port = cols.get(1)?.rsplit(':').next()?;
            let inode = *cols.get(9)?;
            (u16::from_str_radix(local_port, 16).ok()? == port && inode != "0")
                .then(|| format!("socket:[{inode}]"))
        })
        .collect();
    pids.iter().copied().find(|pid| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|l| wanted.iter().any(|w| l.to_string_lossy() == *w))
            })
    })
}
