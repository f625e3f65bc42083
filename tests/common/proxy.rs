//! A proxy in front of a server that can hold a PATCH's body still, as a
//! network that stops carrying bytes would: the browser tests of
//! resumable uploads reload the page while the upload hangs there.
//!
//! It reads each request's head and its `Content-Length` body (what
//! browsers send for an upload), forwards them, and counts the body bytes
//! of every PATCH. Armed with [`StallProxy::stall_next_patch`], it
//! forwards that many bytes of the next PATCH's body, then nothing more
//! until the client goes; then it closes the server's side, which ends
//! the PATCH there with the bytes that came.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What the proxy saw and does, shared with its threads.
#[derive(Default)]
struct State {
    /// The server, `127.0.0.1:<port>`: set once it has started (its base
    /// URL is the proxy's, so the proxy comes first).
    upstream: OnceLock<String>,
    /// Bytes of the next PATCH's body to let through, then hold (0: off).
    stall_after: AtomicU64,
    /// Set once a PATCH is held.
    stalled: AtomicBool,
    /// Each PATCH: its path and the body bytes forwarded.
    patches: Mutex<Vec<(String, u64)>>,
}

/// A running proxy; its threads end with the test's process.
pub struct StallProxy {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    state: Arc<State>,
}

impl StallProxy {
    /// A proxy listening now, to a server named later ([`Self::to`]).
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State::default());
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                std::thread::spawn(move || relay(conn, &state));
            }
        });
        Self { base, state }
    }

    /// Sends everything to the server at `base` (`http://127.0.0.1:<port>`).
    pub fn to(&self, base: &str) {
        let addr = base.trim_start_matches("http://").to_string();
        self.state.upstream.set(addr).expect("one server");
    }

    /// Holds the next PATCH after `bytes` of its body.
    pub fn stall_next_patch(&self, bytes: u64) {
        self.state.stalled.store(false, Ordering::SeqCst);
        self.state.stall_after.store(bytes, Ordering::SeqCst);
    }

    /// Whether a PATCH is being held.
    pub fn stalled(&self) -> bool {
        self.state.stalled.load(Ordering::SeqCst)
    }

    /// Every PATCH so far: its path and the body bytes forwarded.
    pub fn patches(&self) -> Vec<(String, u64)> {
        self.state.patches.lock().unwrap().clone()
    }
}

/// Carries one client connection to the server, request by request.
fn relay(mut client: TcpStream, state: &State) {
    let Some(upstream) = state.upstream.get() else {
        return;
    };
    let Ok(mut server) = TcpStream::connect(upstream) else {
        return;
    };
    let mut back = (server.try_clone().unwrap(), client.try_clone().unwrap());
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut back.0, &mut back.1);
        let _ = back.1.shutdown(std::net::Shutdown::Both);
    });
    let mut pending = Vec::new();
    while let Some(head) = read_head(&mut client, &mut pending) {
        if server.write_all(&head).is_err()
            || !forward_body(&head, &mut client, &mut server, &mut pending, state)
        {
            break;
        }
    }
    let _ = server.shutdown(std::net::Shutdown::Both);
}

/// The next request head (through its blank line), from what is pending
/// and then the socket; the bytes after it stay pending.
fn read_head(client: &mut TcpStream, pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = pending.split_off(end + 4);
            return Some(std::mem::replace(pending, rest));
        }
        let mut buf = [0u8; 65536];
        match client.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

/// Forwards the body the head announces; false once the connection is
/// to be closed (the client went, or a held PATCH ended).
fn forward_body(
    head: &[u8],
    client: &mut TcpStream,
    server: &mut TcpStream,
    pending: &mut Vec<u8>,
    state: &State,
) -> bool {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let length: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap_or(0));
    let patch = text.starts_with("patch ");
    let hold = if patch {
        state.stall_after.swap(0, Ordering::SeqCst)
    } else {
        0
    };
    let limit = if hold > 0 { hold.min(length) } else { length };
    let mut sent = 0u64;
    let mut buf = [0u8; 65536];
    while sent < limit {
        let chunk = if pending.is_empty() {
            match client.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => buf[..n].to_vec(),
            }
        } else {
            std::mem::take(pending)
        };
        let take = chunk.len().min((limit - sent) as usize);
        if server.write_all(&chunk[..take]).is_err() {
            break;
        }
        pending.extend_from_slice(&chunk[take..]);
        sent += take as u64;
    }
    if patch {
        let path = String::from_utf8_lossy(head)
            .split(' ')
            .nth(1)
            .unwrap_or("")
            .to_string();
        state.patches.lock().unwrap().push((path, sent));
    }
    if hold > 0 && sent < length {
        // Held: nothing more goes through until the client gives up.
        state.stalled.store(true, Ordering::SeqCst);
        while matches!(client.read(&mut buf), Ok(n) if n > 0) {}
        return false;
    }
    sent == length
}
