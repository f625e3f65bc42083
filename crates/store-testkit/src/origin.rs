//! A scripted HTTP/1.1 origin on loopback, for import tests: it answers
//! each request path with what the script says (or stays silent, to test
//! time-outs) and counts the connections it accepts, so a test can prove
//! that a blocked fetch never connected.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A reply: the status line and headers (ending in a blank line), then
/// the body. `None` keeps the connection open and says nothing.
pub type Reply = Option<(String, Vec<u8>)>;

/// Maps a request path (with its query) to a reply.
pub type Script = Arc<dyn Fn(&str) -> Reply + Send + Sync>;

/// How long a silent reply holds the connection.
const SILENCE: Duration = Duration::from_secs(40);

/// A scripted origin listening on a loopback port of its own. Its threads
/// serve until the test process ends.
#[derive(Debug)]
pub struct Origin {
    /// The loopback address and port it listens on.
    pub addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Origin {
    /// Binds a free loopback port and answers every connection with `script`,
    /// each on a thread of its own. Panics if no port can be bound.
    pub fn start(script: Script) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&hits);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                let script = Arc::clone(&script);
                std::thread::spawn(move || {
                    let Ok(read_half) = stream.try_clone() else {
                        return;
                    };
                    let mut reader = BufReader::new(read_half);
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                    }
                    match script(&path) {
                        Some((head, body)) => {
                            let _ = stream.write_all(head.as_bytes());
                            let _ = stream.write_all(&body);
                        }
                        None => std::thread::sleep(SILENCE),
                    }
                });
            }
        });
        Self { addr, hits }
    }

    /// The `http://` URL of `path` (starting with `/`, query included) on this
    /// origin.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections accepted so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// A 200 with `extra` header lines (each ending in CRLF).
pub fn ok(body: &[u8], extra: &str) -> Reply {
    Some((
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        ),
        body.to_vec(),
    ))
}

/// A 302 to `to`.
pub fn redirect(to: &str) -> Reply {
    Some((format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), vec![]))
}

/// A 404.
pub fn not_found() -> Reply {
    Some((
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
        vec![],
    ))
}

/// A receiver on loopback that keeps its connections open (HTTP/1.1) and
/// answers every request with the same bytes, counting connections and
/// requests: a webhook receiver for the sender's tests and the benchmark.
/// Its threads serve until the process ends.
#[derive(Debug)]
pub struct KeepAlive {
    /// The `http://` URL requests go to.
    pub url: String,
    connections: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

impl KeepAlive {
    /// Binds a free loopback port and answers each request with `answer`
    /// (a whole response: status line, headers, body), each connection on
    /// a thread of its own. Panics if no port can be bound.
    pub fn start(answer: &'static [u8]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}/hook", listener.local_addr().expect("bound"));
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let (c, r) = (Arc::clone(&connections), Arc::clone(&requests));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                c.fetch_add(1, Ordering::SeqCst);
                let r = Arc::clone(&r);
                std::thread::spawn(move || answer_each(stream, answer, &r));
            }
        });
        Self {
            url,
            connections,
            requests,
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Requests received whole so far (each is counted before its answer
    /// is written).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Reads each request on `stream` (its head, then `Content-Length` bytes
/// of body), counts it in `requests` and writes `answer`, until the
/// connection closes.
fn answer_each(stream: std::net::TcpStream, answer: &[u8], requests: &AtomicUsize) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut body_bytes = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                body_bytes = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; body_bytes];
        if std::io::Read::read_exact(&mut reader, &mut body).is_err() {
            return;
        }
        // Counted before the answer goes out: a client that has read its
        // answer must find its request counted (counted after, a test
        // that asserted the count as soon as its third post returned saw
        // 2 once, on a busy machine).
        requests.fetch_add(1, Ordering::SeqCst);
        if writer.write_all(answer).is_err() {
            return;
        }
    }
}
