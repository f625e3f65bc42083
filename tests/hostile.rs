//! Hostile clients against the real binary, over loopback only (issue 19):
//! slow readers, connection floods, trickled bodies, image floods, bodies
//! refused before they are stored, input that must never be dropped in
//! silence, show-dirs that could starve the pool, and import fetching the
//! service itself.
//!
//! One test plays several clients by binding its sockets to other
//! addresses of 127.0.0.0/8 (127.0.0.2, .3, ...), so that the guards that
//! count per address see distinct clients.

use crate::common::*;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long a request from an innocent client may take while the server is
/// under attack: generous, since this checks liveness, not speed.
const LIVE: Duration = Duration::from_secs(5);

const MIB: usize = 1024 * 1024;

/// The two tests that hold hundreds of sockets take turns: together they
/// would double the file descriptors this process needs, and their timing
/// checks would share two busy cores.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> MutexGuard<'static, ()> {
    // A failed heavy test must not fail the other one with a poisoned lock.
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The runtime whose reactor tokio's sockets are created in. Only their
/// socket options and connect are used; every test then reads and writes
/// plainly through std.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// A connection from `source`, another address of the loopback range, with
/// a receive buffer of `recv_buf` bytes when given (set before connecting,
/// so that the window the client advertises is small from the start).
fn connect_from(source: &str, addr: SocketAddr, recv_buf: Option<u32>) -> TcpStream {
    let local = SocketAddr::new(source.parse().expect("a source address"), 0);
    let stream = runtime().block_on(async {
        let s = tokio::net::TcpSocket::new_v4().expect("a socket");
        if let Some(bytes) = recv_buf {
            s.set_recv_buffer_size(bytes).expect("SO_RCVBUF");
        }
        s.bind(local).expect("bind to a loopback source address");
        let stream = s.connect(addr).await.expect("connect");
        stream.into_std().expect("a std stream")
    });
    // tokio hands its sockets over non-blocking; these tests block.
    stream.set_nonblocking(false).expect("blocking mode");
    stream
}

/// The same connection with a large receive buffer: what a dropped slow
/// reader still has to receive (the server's kernel buffer, megabytes)
/// then comes in large windows instead of 4 KiB ones.
fn widened(stream: TcpStream) -> TcpStream {
    use std::os::fd::AsFd;
    let socket = tokio::net::TcpSocket::from_std_stream(stream);
    socket
        .set_recv_buffer_size(4 * 1024 * 1024)
        .expect("SO_RCVBUF");
    let fd = socket.as_fd().try_clone_to_owned().expect("dup");
    TcpStream::from(fd)
}

fn addr_of(s: &Server) -> SocketAddr {
    s.base
        .trim_start_matches("http://")
        .parse()
        .expect("the server listens on an IP address")
}

/// The soft limit of open files of this process, from /proc/self/limits.
fn open_files_limit() -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .map_or(1024, |soft| soft.parse().unwrap_or(usize::MAX))
}

/// `wanted` clients, fewer if the open-files limit could not hold twice as
/// many sockets plus room for the rest of the test.
fn scaled(wanted: usize) -> usize {
    let n = wanted.min(open_files_limit().saturating_sub(200) / 2);
    assert!(n >= 50, "the open-files limit is too low for this test");
    n
}

fn media(name: &str) -> Vec<u8> {
    std::fs::read(repo(&format!("fixtures/media/{name}"))).expect(name)
}

/// Files in the data dir's staging area: a refused upload must leave none.
fn tmp_count(s: &Server) -> usize {
    std::fs::read_dir(s.data_dir().join("tmp")).map_or(0, |d| d.count())
}

/// One HTTP answer read off a raw socket.
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Reads more of `stream` into `pending`; the end of the stream is an
/// error here, since an answer was still expected.
fn fill(stream: &mut TcpStream, pending: &mut Vec<u8>) -> std::io::Result<()> {
    let mut buf = [0u8; 16 * 1024];
    match stream.read(&mut buf)? {
        0 => Err(ErrorKind::UnexpectedEof.into()),
        n => {
            pending.extend_from_slice(&buf[..n]);
            Ok(())
        }
    }
}

/// Reads one answer. `pending` holds bytes already read and keeps those
/// read past this answer (the final answer after a `100 Continue`). An
/// answer without Content-Length runs to the end of the stream.
fn read_answer(stream: &mut TcpStream, pending: &mut Vec<u8>) -> std::io::Result<Answer> {
    let end = loop {
        if let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        fill(stream, pending)?;
    };
    let head = String::from_utf8_lossy(&pending[..end]).into_owned();
    pending.drain(..end);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::new(ErrorKind::InvalidData, head.clone()))?;
    let mut answer = Answer {
        status,
        head,
        body: vec![],
    };
    if status < 200 {
        return Ok(answer);
    }
    match answer.header("content-length").and_then(|v| v.parse().ok()) {
        Some(len) => {
            while pending.len() < len {
                fill(stream, pending)?;
            }
            answer.body = pending.drain(..len).collect();
        }
        None => {
            let _ = stream.read_to_end(pending);
            answer.body = std::mem::take(pending);
        }
    }
    Ok(answer)
}

/// Sends `request` from `source` on a new connection and reads the answer,
/// timing the whole exchange.
fn ask_from(source: &str, addr: SocketAddr, request: &[u8]) -> (Answer, Duration) {
    let started = Instant::now();
    let mut s = connect_from(source, addr, None);
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).expect("the request is sent");
    let answer = read_answer(&mut s, &mut Vec::new())
        .unwrap_or_else(|e| panic!("no answer from {source}: {e}"));
    (answer, started.elapsed())
}

/// Asserts that an innocent client at `source` is answered `want` (one of)
/// within [`LIVE`]; returns the answer.
fn served(source: &str, addr: SocketAddr, request: &[u8], want: &[u16]) -> Answer {
    let (answer, took) = ask_from(source, addr, request);
    let line =
        String::from_utf8_lossy(request.split(|&b| b == b'\r').next().unwrap_or(b"")).into_owned();
    assert!(
        want.contains(&answer.status),
        "{line} from {source}: {} {}",
        answer.status,
        answer.text()
    );
    assert!(took < LIVE, "{line} from {source} took {took:?}");
    answer
}

/// A raw request with a body, closing the connection after the answer.
fn post_raw(path: &str, extra_headers: &str, body: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n{extra_headers}\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    req
}

fn get_raw(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").into_bytes()
}

/// The key of a dir from its record's `url` (`.../d/<key>`).
fn dir_key(record: &serde_json::Value) -> String {
    let url = record["url"].as_str().expect("a dir has a url");
    let (_, key) = url.rsplit_once("/d/").expect("a dir url ends in /d/<key>");
    key.to_string()
}

/// The checks an innocent client at `source` runs while an attack is held:
/// a small upload, a new dir and the API description, each answered in
/// time.
fn innocent_client_is_served(source: &str, addr: SocketAddr) {
    served(source, addr, &post_raw("/?name=two.txt", "", b"ok"), &[201]);
    served(source, addr, &post_raw("/?dir=1", "", b""), &[200, 201]);
    served(source, addr, &get_raw("/api"), &[200]);
}

/// A slow reader: it asks for `path` and reads nothing.
struct SlowReader {
    stream: TcpStream,
    /// When its request went.
    asked: Instant,
    /// Bytes of the whole response's body: a reader that was dropped in
    /// time has received fewer.
    body_len: usize,
}

fn open_slow_readers(s: &Server, n: usize, id: &str, key: &str) -> Vec<SlowReader> {
    let addr = addr_of(s);
    (0..n)
        .map(|i| {
            // A tiny receive buffer makes the window close after a few KiB.
            let mut stream = connect_from("127.0.0.1", addr, Some(4096));
            let (path, body_len) = if i % 2 == 0 {
                (format!("/{id}"), 5 * MIB)
            } else {
                (format!("/d/{key}?zip=1"), 12 * MIB)
            };
            let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            stream
                .write_all(req.as_bytes())
                .expect("the request is sent");
            SlowReader {
                stream,
                asked: Instant::now(),
                body_len,
            }
        })
        .collect()
}

/// Reads a slow reader to its end and asserts that the server cut it off:
/// the stream ends (EOF or reset) before the whole response came, and what
/// came began as an answer to the request.
fn assert_dropped(reader: SlowReader, i: usize) {
    let SlowReader {
        stream, body_len, ..
    } = reader;
    let mut stream = widened(stream);
    // A reader the server still serves would never end: this bounds it.
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut first = Vec::new();
    let mut got = 0usize;
    let end = loop {
        match stream.read(&mut buf) {
            Ok(0) => break "EOF",
            Ok(n) => {
                if first.len() < 12 {
                    first.extend_from_slice(&buf[..n.min(12)]);
                }
                got += n;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break "reset",
            // The server has closed its side (the caller checked its
            // sockets); the kernel may hold the rest back for a while.
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                break "close (the kernel still draining)"
            }
            Err(e) => panic!("slow reader {i} was not dropped: no end after {got} bytes ({e})"),
        }
    };
    assert!(
        got < body_len,
        "slow reader {i} got the whole response ({got} bytes) before its {end}"
    );
    assert!(
        got == 0 || first.starts_with(b"HTTP/1.1 200"),
        "slow reader {i} was answered {:?}",
        String::from_utf8_lossy(&first)
    );
}

/// The send deadline the slow-reader test gives its server.
const SEND_TIMEOUT_SECS: u64 = 3;

/// How long the slow-reader test lets the server go without closing any
/// reader's connection: three deadlines. A server that kept its default
/// deadline (30 s) or none would close none in that time.
const LET_GO_IDLE_SECS_MAX: u64 = 3 * SEND_TIMEOUT_SECS;

/// How long it waits in all for the last readers to go: a bound for a hang,
/// not a measure. On two processes each reader's answer waits for its
/// blob from Garage, and 600 of those took from 10 s to past 15 s with the
/// other core busy (5 of 10 runs of a campaign failed at 15 s).
const LET_GO_SECS_MAX: u64 = 120;

/// Connections the slow-reader test allows the server to hold at the end
/// beyond those it held idle (a straggler the last look caught closing).
const STRAGGLERS_MAX: usize = 2;

/// Waits while the server closes the slow readers' connections, as long as
/// it keeps closing some; answers how many it still holds at the end.
/// Progress is the evidence, not a total time: a reader's deadline only
/// starts once its answer does, and how soon the last answer starts is the
/// machine's (its bucket's, its other core's) speed.
fn wait_until_let_go(s: &Server, idle_sockets: usize) -> usize {
    let held = || s.open_sockets().saturating_sub(idle_sockets);
    let until = Instant::now() + Duration::from_secs(LET_GO_SECS_MAX);
    let mut left = held();
    let mut last_close = Instant::now();
    while left > STRAGGLERS_MAX && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(250));
        let now = held();
        if now < left {
            left = now;
            last_close = Instant::now();
        }
        assert!(
            last_close.elapsed() < Duration::from_secs(LET_GO_IDLE_SECS_MAX),
            "{left} slow readers still connected, and none let go for {LET_GO_IDLE_SECS_MAX} s"
        );
    }
    left
}

#[test]
fn slow_readers_are_dropped_after_the_send_deadline_and_starve_no_one() {
    // Issue 19: the slow-reader attack. Hundreds of clients ask for large
    // downloads and zips and then read nothing; they must neither hold a
    // thread nor keep others from being served, and each is dropped once
    // it has accepted nothing for the send deadline.
    let _turn = heavy();
    let s = Server::with_env(&[
        ("STORE_CONNECTIONS_PER_IP", "0"),
        ("STORE_REQUESTS_PER_IP", "0"),
        ("STORE_SEND_TIMEOUT_SECS", &SEND_TIMEOUT_SECS.to_string()),
    ]);
    let id = s.upload("big.bin", &noise(5 * MIB, 1))["id"]
        .as_str()
        .expect("an id")
        .to_string();
    let parts: Vec<Vec<u8>> = (2..5).map(|seed| noise(4 * MIB, seed)).collect();
    let (ct, body) = multipart(&[
        ("file", Some("a.bin"), &parts[0]),
        ("file", Some("b.bin"), &parts[1]),
        ("file", Some("c.bin"), &parts[2]),
    ]);
    let mut res = s.post_with("/?dir=1", &[("content-type", &ct)], &body);
    assert_eq!(res.status(), 201, "the dir of three files is created");
    let key = dir_key(&json(&mut res));
    let idle_sockets = s.open_sockets();
    let readers = open_slow_readers(&s, scaled(600), &id, &key);
    innocent_client_is_served("127.0.0.2", addr_of(&s));
    // The readers asked less than the deadline ago cannot have been
    // dropped yet: the server must hold (nearly) all of those. (Opening
    // 600 takes seconds on a busy machine, and the first may be dropped
    // already, as they should be.)
    let held = s.open_sockets() - idle_sockets;
    let recent = readers
        .iter()
        .filter(|r| r.asked.elapsed() < Duration::from_secs(SEND_TIMEOUT_SECS))
        .count();
    assert!(
        held * 10 >= recent * 9,
        "the server holds the readers' connections ({held} held, {recent} asked within the deadline)"
    );
    // The send deadline (3 s) runs from the moment a reader's window
    // closed, which is after its answer began. The server's own sockets
    // are the evidence that it let go: what the kernel still has to send
    // of a closed connection may take the client a while to drain.
    let left = wait_until_let_go(&s, idle_sockets);
    assert!(
        left <= STRAGGLERS_MAX,
        "{left} slow readers still connected {LET_GO_SECS_MAX} s after the deadline"
    );
    // What the first readers got, when drained, began as an answer and
    // was cut short.
    for (i, reader) in readers.into_iter().enumerate().take(20) {
        assert_dropped(reader, i);
    }
    assert!(!s.log().contains("panicked"), "no task panicked");
}

/// The first bytes a refused connection gets, or how it ended without any.
fn first_answer(stream: &mut TcpStream) -> Result<Vec<u8>, ErrorKind> {
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut out = Vec::new();
    match stream.read_to_end(&mut out) {
        Ok(_) => Ok(out),
        Err(e) if e.kind() == ErrorKind::ConnectionReset && out.is_empty() => {
            Err(ErrorKind::ConnectionReset)
        }
        Err(e) if e.kind() == ErrorKind::ConnectionReset => Ok(out),
        Err(e) => Err(e.kind()),
    }
}

#[test]
fn a_connection_flood_from_one_address_is_refused_429_and_others_are_served() {
    // Issue 19: the connection flood. One address opens far more
    // connections than its share and sends nothing on them; past its share
    // each is answered 429 at once instead of taking a slot, and another
    // address is served meanwhile.
    let s = Server::with_env(&[("STORE_CONNECTIONS_PER_IP", "64")]);
    let addr = addr_of(&s);
    let held: Vec<TcpStream> = (0..64)
        .map(|_| connect_from("127.0.0.3", addr, None))
        .collect();
    let (mut refused, mut resets) = (0, 0);
    for i in 64..200 {
        let started = Instant::now();
        let mut extra = connect_from("127.0.0.3", addr, None);
        match first_answer(&mut extra) {
            Ok(bytes) if bytes.starts_with(b"HTTP/1.1 429") => refused += 1,
            Err(ErrorKind::ConnectionReset) => resets += 1,
            other => panic!("connection {i} past the share: {other:?}"),
        }
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "connection {i}: {took:?}");
        // The server writes a bounded number of refusals at once, each
        // until the client closes (at most 2 s): this client reads its
        // refusal and goes, as the Retry-After asks.
        drop(extra);
    }
    assert!(
        refused >= 100,
        "{refused} of 136 saw 429 ({resets} were reset)"
    );
    let (answer, took) = ask_from("127.0.0.4", addr, &get_raw("/api"));
    assert_eq!(answer.status, 200, "another address is served");
    assert!(took < Duration::from_secs(2), "served in {took:?}");
    drop(held);
}

#[test]
fn a_trickled_body_is_cut_by_its_overall_deadline() {
    // Issue 19: the slow-body attack. A client sends a byte often enough
    // that the per-chunk idle limit never fires; the whole body's deadline
    // (a grace of 2 s plus its length at the minimum rate) must still end
    // the request, and nothing is stored.
    let s = Server::with_env(&[("STORE_BODY_TIMEOUT_SECS", "2")]);
    let mut c = TcpStream::connect(addr_of(&s)).expect("connect");
    c.write_all(b"POST /?name=t.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n")
        .unwrap();
    // The read time-out paces the trickle: one byte per 400 ms.
    c.set_read_timeout(Some(Duration::from_millis(400)))
        .unwrap();
    let started = Instant::now();
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    while pending.is_empty() && started.elapsed() < Duration::from_secs(10) {
        // The server may close while a byte is on its way: stop sending.
        let sent = c.write_all(b"x").is_ok();
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("the trickling client was cut without an answer: {e}"),
        }
        assert!(sent || !pending.is_empty(), "closed without an answer");
    }
    let took = started.elapsed();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let answer = read_answer(&mut c, &mut pending).expect("an answer");
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(answer.text().contains("too slowly"), "{}", answer.text());
    assert!(took < Duration::from_secs(10), "answered after {took:?}");
    // Not before the grace: the deadline is what ended it.
    assert!(
        took >= Duration::from_millis(1500),
        "answered after {took:?}"
    );
    assert_eq!(s.blob_count(), 0, "nothing was stored");
    assert_eq!(tmp_count(&s), 0, "nothing was left in tmp/");
}

/// Places of the image queue: 2 image jobs run at once and 32 more may
/// wait for them.
const IMAGE_PLACES: usize = 2 + 32;
/// Queued uploads of the flood whose bodies are sent. Each costs seconds
/// of CPU (a 2400x1600 PNG decoded, resized and encoded again), so the
/// other queued ones give up instead, which must give their places back.
const IMAGES_SENT: usize = 4;

fn start_flooder(addr: SocketAddr, gid: &str, len: usize) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let head = format!(
        "POST /pics/g/{gid}?name=a.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: {len}\r\nExpect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("the head is sent");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
}

/// An image upload that asked before sending its body, and what it was
/// answered first: `100 Continue` when it holds a place in the image
/// queue (its body is being read), or a final answer given before a byte
/// of the body was sent.
struct Flooder {
    stream: TcpStream,
    pending: Vec<u8>,
    first: Answer,
}

impl Flooder {
    fn answered(mut stream: TcpStream, i: usize) -> Self {
        let mut pending = Vec::new();
        let first = read_answer(&mut stream, &mut pending)
            .unwrap_or_else(|e| panic!("upload {i}: no first answer: {e}"));
        Self {
            stream,
            pending,
            first,
        }
    }

    fn queued(&self) -> bool {
        self.first.status == 100
    }

    fn send(mut self, body: &[u8]) -> Self {
        self.stream.write_all(body).expect("the body is sent");
        self
    }

    fn finish(mut self, i: usize) -> Answer {
        read_answer(&mut self.stream, &mut self.pending)
            .unwrap_or_else(|e| panic!("queued upload {i}: no final answer: {e}"))
    }
}

/// Every upload of the flood without a place was refused at once with
/// Retry-After, and only the queue's places were given. The refusal is
/// 429 `rate_limited` (the queue is full), or, on two processes whose
/// database is slowed by the flood and a busy machine, 503 `unavailable`
/// when the gallery's record could not be read within its bounded wait
/// (CONTRACT.md, "Faults in a cluster"): refused before the body either
/// way, which is the promise. Most must be the queue's own refusal.
fn assert_queue_bounded(queued: usize, refused: &[Flooder], m: usize) {
    let mut full = 0;
    for f in refused {
        let a = &f.first;
        let (code, status) = match a.status {
            429 => ("\"rate_limited\"", 429),
            503 => ("\"unavailable\"", 503),
            other => panic!("refused with {other}: {} {}", a.head, a.text()),
        };
        let wait = if status == 429 {
            Some("5")
        } else {
            a.header("retry-after")
        };
        assert!(
            wait.is_some() && a.header("retry-after") == wait,
            "{}",
            a.head
        );
        assert!(a.text().contains(code), "{status}: {}", a.text());
        full += usize::from(status == 429);
    }
    assert!(
        full * 2 >= refused.len(),
        "{full} of {} refused by the queue",
        refused.len()
    );
    assert_eq!(queued, IMAGE_PLACES.min(m), "places given in the queue");
    assert!(refused.len() >= m / 2, "{} of {m} refused", refused.len());
}

#[test]
fn an_image_flood_is_refused_at_once_past_the_queue_and_others_are_served() {
    // Issue 19: the image flood. Hundreds of gallery uploads at once may
    // queue only so many image jobs; the rest are refused 429 with
    // Retry-After before their bodies are read, other clients are served
    // while the queue works, and abandoned places come back.
    let _turn = heavy();
    let s = Server::with_env(&[
        ("STORE_CONNECTIONS_PER_IP", "0"),
        ("STORE_REQUESTS_PER_IP", "0"),
    ]);
    let addr = addr_of(&s);
    let mut res = s.post_empty("/pics?create=1", &[]);
    assert_eq!(res.status(), 201);
    let g = json(&mut res);
    let gid = g["url"].as_str().unwrap().rsplit('/').next().unwrap();
    let key = dir_key(&json(&mut s.post_empty("/?dir=1", &[])));
    let png = media("alpha-2400x1600.png");
    let m = scaled(1000);
    let streams: Vec<TcpStream> = (0..m)
        .map(|_| start_flooder(addr, gid, png.len()))
        .collect();
    // No body has been sent yet: every first answer comes without one.
    let (queued, refused): (Vec<Flooder>, Vec<Flooder>) = streams
        .into_iter()
        .enumerate()
        .map(|(i, stream)| Flooder::answered(stream, i))
        .partition(Flooder::queued);
    assert_queue_bounded(queued.len(), &refused, m);
    let mut queued = queued.into_iter();
    let sent: Vec<Flooder> = queued
        .by_ref()
        .take(IMAGES_SENT)
        .map(|f| f.send(&png))
        .collect();
    served("127.0.0.5", addr, &get_raw(&format!("/d/{key}")), &[200]);
    served(
        "127.0.0.5",
        addr,
        &post_raw("/?name=two.txt", "", b"ok"),
        &[201],
    );
    drop(queued);
    for (i, f) in sent.into_iter().enumerate() {
        let a = f.finish(i);
        assert_eq!(a.status, 201, "queued upload {i}: {}", a.text());
    }
    let again = s.post(&format!("/pics/g/{gid}?name=b.png"), &png);
    assert_eq!(again.status(), 201, "the abandoned places came back");
}

const BOUNDARY: &str = "hostileboundary19";

/// A part's head in a multipart body.
fn part_head(name: &str, file: &str) -> String {
    format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
}

/// Sends a request head declaring `declared` body bytes and only `prefix`
/// of them, in one write (so that the server holds them all when it
/// answers, and closes without a reset); then reads the answer, which must
/// come within 2 s, and checks that nothing reached blobs/ or tmp/.
fn refused_early(s: &Server, head: &str, declared: usize, prefix: &[u8]) -> Answer {
    let (blobs, tmp) = (s.blob_count(), tmp_count(s));
    let mut req =
        format!("{head}Host: 127.0.0.1\r\nContent-Length: {declared}\r\n\r\n").into_bytes();
    req.extend_from_slice(prefix);
    let started = Instant::now();
    let mut c = TcpStream::connect(addr_of(s)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(&req).expect("the head is sent");
    let answer = read_answer(&mut c, &mut Vec::new())
        .unwrap_or_else(|e| panic!("no refusal for {head:?}: {e}"));
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "{head:?} refused after {took:?}"
    );
    assert_eq!(s.blob_count(), blobs, "{head:?}: no blob was stored");
    assert_eq!(tmp_count(s), tmp, "{head:?}: nothing was left in tmp/");
    answer
}

fn multipart_head(request_line: &str, extra: &str) -> String {
    format!("{request_line}\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n{extra}")
}

#[test]
fn huge_declared_bodies_are_refused_before_any_byte_is_stored() {
    // Issue 19: the cheap-refusal bypass. A client declares a body of many
    // megabytes that would be refused anyway (unknown gallery, no write
    // token, a bad part name, a bad boundary); the refusal must come from
    // the first bytes, before the body is received or stored.
    let s = Server::start();
    let mut prefix = part_head("file", "a.png").into_bytes();
    prefix.extend_from_slice(&noise(300, 5));
    let head = multipart_head("POST /pics/g/no-such-gallery HTTP/1.1", "");
    let a = refused_early(&s, &head, 31_000_000, &prefix);
    assert_eq!(a.status, 404, "unknown gallery: {}", a.text());

    let d = json(&mut s.post_empty("/?dir=1&write=1", &[]));
    assert!(d["write_token"].is_string(), "a protected dir: {d}");
    let line = format!("POST /d/{} HTTP/1.1", dir_key(&d));
    let head = multipart_head(&line, "Accept: text/html\r\n");
    let b = refused_early(&s, &head, 52_000_000, &prefix);
    assert_eq!(b.status, 401, "form without a token: {}", b.text());

    let mut body = part_head("file", "a.txt").into_bytes();
    body.extend_from_slice(b"hello\r\n");
    body.extend_from_slice(part_head("file", "..").as_bytes());
    body.extend_from_slice(b"some bytes");
    let head = multipart_head("POST / HTTP/1.1", "");
    let c = refused_early(&s, &head, 20_000_000, &body);
    assert_eq!(c.status, 400, "a part named ..: {}", c.text());
    assert!(c.text().contains("bad_request"), "{}", c.text());

    let long = "b".repeat(100);
    let head = format!("POST / HTTP/1.1\r\nContent-Type: multipart/form-data; boundary={long}\r\n");
    let prefix = format!(
        "--{long}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\nxyz"
    );
    let d = refused_early(&s, &head, 20_000_000, prefix.as_bytes());
    assert_eq!(d.status, 400);
    assert!(d.text().contains("boundary"), "{}", d.text());
}

/// Asserts an error answer as `assert_error` does, and that it carries
/// `x-content-type-options: nosniff`; returns the error message.
fn refusal(mut res: Response<Body>, status: u16, code: &str) -> String {
    assert_eq!(
        header(&res, "x-content-type-options"),
        "nosniff",
        "every error is nosniff"
    );
    assert_eq!(res.status(), status, "status");
    let body = json(&mut res);
    assert_eq!(body["code"], code, "code in {body}");
    body["error"].as_str().expect("a message").to_string()
}

fn query_flags_are_never_dropped(s: &Server) {
    let filler: String = (0..64).map(|i| format!("f{i}=0&")).collect();
    let too_many = s.post(&format!("/?{filler}once=1"), b"x");
    refusal(too_many, 400, "bad_request");
    assert_eq!(s.blob_count(), 0, "nothing stored");
    refusal(s.post("/?once=1&once=0", b"x"), 400, "bad_request");
    let typo = refusal(s.post("/?onse=1", b"x"), 400, "bad_request");
    assert!(typo.contains("once"), "{typo}");
}

fn empty_write_header_is_refused(s: &Server) {
    let token = "hostile-write-token-19";
    let d = json(&mut s.post_empty(&format!("/?dir=1&write={token}"), &[]));
    let path = format!("/d/{}?name=b.txt&write={token}", dir_key(&d));
    let res = s.post_with(&path, &[("x-store-write", "")], b"b");
    let why = refusal(res, 400, "bad_request");
    assert!(
        why.contains("x-store-write"),
        "refused for the header: {why}"
    );
    // The token itself is good: without the empty header it writes.
    assert_eq!(s.post(&path, b"b").status(), 200);
}

fn a_filename_star_part_is_a_file(s: &Server) {
    let body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt\r\n\r\nmy cv\r\n--{BOUNDARY}--\r\n"
    );
    let ct = format!("multipart/form-data; boundary={BOUNDARY}");
    let mut res = s.post_with("/", &[("content-type", &ct)], body.as_bytes());
    assert_eq!(res.status(), 201, "a filename* part is a file");
    assert_eq!(json(&mut res)["name"], "résumé.txt");
}

/// Names that display as something harmless, or hide what they are.
fn lookalike_names_are_refused(s: &Server) {
    for name in [
        " ..",
        "\u{FF0E}\u{FF0E}",
        "a\u{202E}txt.exe",
        "a\u{200B}b.txt",
    ] {
        let res = s.post(&format!("/?name={}", enc(name)), b"x");
        refusal(res, 400, "bad_request");
    }
}

#[test]
fn no_input_is_dropped_in_silence() {
    // Issue 19: input smuggled past the checks. A flag hidden past the
    // query's pair limit, a repeated or misspelt parameter, an empty auth
    // header beside a valid token, a file named only by filename*, names
    // that look harmless but are not, and a malformed form behind a wrong
    // gallery secret must each be refused or honoured, never ignored.
    let s = Server::start();
    query_flags_are_never_dropped(&s);
    empty_write_header_is_refused(&s);
    a_filename_star_part_is_a_file(&s);
    lookalike_names_are_refused(&s);
    let g = json(&mut s.post_empty("/pics?create=1", &[]));
    let gid = g["url"].as_str().unwrap().rsplit('/').next().unwrap();
    let path = format!("/pics/g/{gid}/not-the-secret");
    let form = [("content-type", "application/x-www-form-urlencoded")];
    refusal(s.post_with(&path, &form, b"\xff\xfe%%"), 404, "not_found");
    let json_form = [("content-type", "application/json")];
    refusal(
        s.post_with(&path, &json_form, b"{not json"),
        404,
        "not_found",
    );
}

#[test]
fn anonymous_show_dir_writers_cannot_starve_the_pool() {
    // Issue 19: pool starvation through show-dirs. Anyone may write to a
    // show-dir, which is never evicted; without the retain token a writer
    // gets a bounded share per dir and only free room, so it can neither
    // fill the pool nor evict other people's files.
    let s = Server::with_env(&[
        ("STORE_RETAIN_TOKEN", RETAIN_TOKEN),
        ("STORE_POOL_BYTES", "10000000"),
        ("STORE_SHOW_DIR_BYTES", "1000000"),
    ]);
    let auth = format!("Bearer {RETAIN_TOKEN}");
    let show = |s: &Server| {
        dir_key(&json(
            &mut s.post_empty("/?dir=1&show=1", &[("authorization", &auth)]),
        ))
    };
    let first = show(&s);
    let kept = noise(3_000_000, 7);
    let kept_id = s.upload("kept.bin", &kept)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let add = |key: &str, name: &str, len: usize| {
        s.post(&format!("/d/{key}?name={name}"), &noise(len, 9))
    };
    assert_eq!(add(&first, "f1.bin", 400_000).status(), 200);
    assert_eq!(add(&first, "f2.bin", 400_000).status(), 200);
    refusal(add(&first, "f3.bin", 400_000), 507, "pool_full");
    // 3.8 MB used; regular files bring it to 9.7 MB, leaving 300 KB free:
    // less than the next anonymous add, more than a smaller one.
    for i in 0..2 {
        s.upload(&format!("fill{i}.bin"), &noise(2_950_000, 10 + i));
    }
    let second = show(&s);
    refusal(add(&second, "g1.bin", 400_000), 507, "pool_full");
    assert_eq!(
        add(&second, "g2.bin", 200_000).status(),
        200,
        "free room is used"
    );
    let mut res = s.get(&format!("/{kept_id}"));
    assert_eq!(res.status(), 200, "the 3 MB file was not evicted");
    assert!(bytes(&mut res) == kept, "and it is whole");
}

#[test]
fn import_never_fetches_the_service_itself() {
    // Issue 19: the self-fetch loop. Even with private addresses allowed
    // (test mode), an import of the service's own URL, in any spelling, is
    // refused exactly as a blocked address is, and never connects.
    let s = Server::with_env(&[("STORE_IMPORT_ALLOW_PRIVATE", "1")]);
    // A once file: a fetch of it by the server would burn it.
    let id = json(&mut s.post("/?name=self.txt&once=1", b"only once"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let port = addr_of(&s).port();
    let import = |url: &str| {
        let mut res = s.post_empty(&format!("/?url={}", enc(url)), &[]);
        (res.status().as_u16(), text(&mut res))
    };
    let blocked = import("http://169.254.169.254/latest/meta-data/");
    assert_eq!(blocked.0, 400, "a blocked address: {}", blocked.1);
    for url in [
        format!("http://[::ffff:127.0.0.1]:{port}/{id}"),
        format!("http://127.0.0.1:{port}/{id}"),
    ] {
        assert_eq!(import(&url), blocked, "{url} is refused as blocked");
    }
    assert_eq!(s.blob_count(), 1, "nothing was imported");
    assert_eq!(
        text(&mut s.get(&format!("/{id}"))),
        "only once",
        "never read"
    );
}
