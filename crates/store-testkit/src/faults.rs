//! A small fault-injecting HTTP proxy for the fault suite (tests/faults.rs):
//! it stands between storesrv and the bucket, passes every request on, and
//! delays, fails or holds the requests of a method that a test names, so
//! that a slow or broken bucket happens for real, on a real connection.
//!
//! Requests are told apart by method, except that S3's bulk delete (a POST
//! to `?delete`) counts as a DELETE, since some clients delete that way,
//! the completion of a multipart upload (a POST to `?uploadId=`) is named
//! COMPLETE: the moment its object appears in the bucket whole; and its
//! abortion (a DELETE with `?uploadId=`) is named ABORT.
//!
//! It speaks just enough HTTP/1.1 for an S3 client: a request's body is
//! framed by Content-Length, each request goes upstream on a connection of
//! its own (with `Connection: close`), and the answer is read to its end and
//! sent back whole, so its own framing (length or chunks) reaches the
//! client unchanged. Plain threads, loopback only.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the proxy does to the requests of one method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Passes the request on at once, then holds the answer this long: a
    /// slow bucket, whose reads saw the state of the moment they were sent.
    Delay(Duration),
    /// Answers this status at once (an S3 error), without passing it on.
    Fail(u16),
    /// Holds the request without an answer until the fault is cleared,
    /// then passes it on: a bucket that hangs.
    Hang,
    /// Waits this long, then passes the request on: a slow way to the
    /// bucket, whose reads see the state of the moment they arrive.
    Stall(Duration),
}

/// Largest request head the proxy reads.
const HEAD_BYTES_MAX: usize = 64 * 1024;
/// How often a held request looks whether its fault was cleared.
const HANG_POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Default)]
struct State {
    faults: HashMap<String, Fault>,
    /// Requests seen, by method, faulted or not.
    seen: HashMap<String, usize>,
    /// Requests of each method held or delayed right now.
    waiting: HashMap<String, usize>,
    /// One-shot holds ([`FaultProxy::hold_next`]), by method.
    holds: HashMap<String, Hold>,
}

/// Where a one-shot hold of a method stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// The next request of the method will be held.
    Armed,
    /// A request was passed on and its answer is held.
    Holding,
}

/// A running proxy. Dropping it stops taking connections.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stopped: Arc<AtomicBool>,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl FaultProxy {
    /// Starts a proxy on 127.0.0.1 in front of `upstream`
    /// (`http://host:port`, as an S3 endpoint is written).
    pub fn start(upstream: &str) -> Self {
        let upstream = upstream
            .strip_prefix("http://")
            .expect("an http:// endpoint")
            .trim_end_matches('/')
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let state = Arc::new(Mutex::new(State::default()));
        let stopped = Arc::new(AtomicBool::new(false));
        let (s, stop) = (Arc::clone(&state), Arc::clone(&stopped));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (s, up) = (Arc::clone(&s), upstream.clone());
                std::thread::spawn(move || serve(conn, &up, &s));
            }
        });
        Self {
            addr,
            state,
            stopped,
        }
    }

    /// The endpoint to give storesrv instead of the bucket's.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Applies `fault` to every request of `method` from now on, or none.
    pub fn set(&self, method: &str, fault: Option<Fault>) {
        let mut st = lock(&self.state);
        match fault {
            Some(f) => st.faults.insert(method.to_string(), f),
            None => st.faults.remove(method),
        };
    }

    /// Passes the next request of `method` on at once and holds its answer
    /// until [`FaultProxy::release`]: one request that the bucket served
    /// and that waits, while others go through.
    pub fn hold_next(&self, method: &str) {
        lock(&self.state)
            .holds
            .insert(method.to_string(), Hold::Armed);
    }

    /// Lets the answer held by [`FaultProxy::hold_next`] go.
    pub fn release(&self, method: &str) {
        lock(&self.state).holds.remove(method);
    }

    /// Requests of `method` seen so far.
    pub fn seen(&self, method: &str) -> usize {
        lock(&self.state).seen.get(method).copied().unwrap_or(0)
    }

    /// Requests of `method` being delayed or held right now.
    pub fn waiting(&self, method: &str) -> usize {
        lock(&self.state).waiting.get(method).copied().unwrap_or(0)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::Relaxed);
        // Wake the accept loop so that it sees the word.
        let _ = TcpStream::connect(self.addr);
        // Release every held request.
        let mut st = lock(&self.state);
        st.faults.clear();
        st.holds.clear();
    }
}

/// One client connection: request after request until it closes.
fn serve(conn: TcpStream, upstream: &str, state: &Mutex<State>) {
    let mut out = conn.try_clone().expect("a socket clone");
    let mut input = BufReader::new(conn);
    while let Some((method, head, body)) = read_request(&mut input) {
        let (fault, held) = {
            let mut st = lock(state);
            *st.seen.entry(method.clone()).or_default() += 1;
            let held = st.holds.get(&method) == Some(&Hold::Armed);
            if held {
                st.holds.insert(method.clone(), Hold::Holding);
            }
            (st.faults.get(&method).copied(), held)
        };
        if held {
            let answer = forward(upstream, &head, &body);
            waiting(state, &method, || {
                while lock(state).holds.get(&method) == Some(&Hold::Holding) {
                    std::thread::sleep(HANG_POLL);
                }
            });
            if out.write_all(&answer).is_err() {
                return;
            }
            continue;
        }
        let answer = match fault {
            Some(Fault::Fail(status)) => failure(status),
            Some(Fault::Delay(d)) => {
                let answer = forward(upstream, &head, &body);
                waiting(state, &method, || std::thread::sleep(d));
                answer
            }
            Some(Fault::Stall(d)) => {
                waiting(state, &method, || std::thread::sleep(d));
                forward(upstream, &head, &body)
            }
            Some(Fault::Hang) => {
                waiting(state, &method, || {
                    while lock(state).faults.get(&method) == Some(&Fault::Hang) {
                        std::thread::sleep(HANG_POLL);
                    }
                });
                forward(upstream, &head, &body)
            }
            None => forward(upstream, &head, &body),
        };
        if out.write_all(&answer).is_err() {
            return;
        }
    }
}

/// Runs `wait`, counted among the requests of `method` waiting.
fn waiting(state: &Mutex<State>, method: &str, wait: impl FnOnce()) {
    *lock(state).waiting.entry(method.to_string()).or_default() += 1;
    wait();
    *lock(state).waiting.entry(method.to_string()).or_default() -= 1;
}

/// Reads one request: its method, its head (with `Connection: close` in
/// place of any connection header) and its body; `None` at the end of the
/// connection.
fn read_request(input: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>, Vec<u8>)> {
    let mut lines = vec![];
    let mut read = 0;
    loop {
        let mut line = String::new();
        let n = input.read_line(&mut line).ok()?;
        read += n;
        if n == 0 || read > HEAD_BYTES_MAX {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        lines.push(line);
    }
    let mut words = lines.first()?.split(' ');
    let (method, target) = (words.next()?, words.next()?);
    // S3's bulk delete (DeleteObjects) is a POST to `?delete`, which some
    // clients send for a single delete too: it counts as a DELETE. The
    // completion of a multipart upload (a POST to `?uploadId=`) is told
    // apart from its creation (a POST to `?uploads`).
    let method = match method {
        "POST" if target.ends_with("?delete") || target.contains("?delete&") => "DELETE",
        "POST" if target.contains("uploadId=") => "COMPLETE",
        "DELETE" if target.contains("uploadId=") => "ABORT",
        other => other,
    }
    .to_string();
    let mut length = 0usize;
    let mut head = Vec::with_capacity(read + 32);
    for line in &lines {
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
        assert!(
            !lower.starts_with("transfer-encoding:"),
            "the fault proxy reads bodies framed by Content-Length only"
        );
        if !lower.starts_with("connection:") {
            head.extend_from_slice(line.as_bytes());
        }
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    let mut body = vec![0; length];
    input.read_exact(&mut body).ok()?;
    Some((method, head, body))
}

/// Sends the request upstream and answers its whole response, or a 502
/// if the bucket cannot be reached.
fn forward(upstream: &str, head: &[u8], body: &[u8]) -> Vec<u8> {
    let exchange = || -> std::io::Result<Vec<u8>> {
        let mut up = TcpStream::connect(upstream)?;
        up.write_all(head)?;
        up.write_all(body)?;
        let mut answer = vec![];
        up.read_to_end(&mut answer)?;
        Ok(answer)
    };
    match exchange() {
        Ok(answer) => keep_alive(answer),
        Err(_) => failure(502),
    }
}

/// The upstream answer with its `Connection: close` taken out, so that the
/// client may send its next request on the same connection. Its body is
/// framed by length or chunks (an S3 server always frames its answers),
/// so the client still knows where it ends.
fn keep_alive(answer: Vec<u8>) -> Vec<u8> {
    let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return answer;
    };
    let head = String::from_utf8_lossy(&answer[..end]);
    let mut out: Vec<u8> = head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .flat_map(|l| [l.as_bytes(), b"\r\n"].concat())
        .collect();
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&answer[end + 4..]);
    out
}

/// An S3-style error answer of `status`, with nothing passed on.
fn failure(status: u16) -> Vec<u8> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InjectedFault</Code>\
         <Message>the fault proxy answered {status}</Message></Error>"
    );
    format!(
        "HTTP/1.1 {status} Injected\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
