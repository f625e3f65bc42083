//! Fetcher tests against scripted HTTP servers on loopback, with policies
//! that allow exactly the servers a test means to reach.

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

use store_testkit::origin::{ok, redirect, Origin as TestServer};

fn fast() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(2),
        headers: Duration::from_secs(1),
        total: Duration::from_secs(3),
    }
}

fn exactly(addrs: &[SocketAddr]) -> UreqFetcher {
    UreqFetcher::with_lookup(
        Guard {
            policy: Policy::Exactly(addrs.to_vec()),
            own: vec![],
        },
        "http://service.invalid",
        None,
        fast(),
    )
}

fn read_all(f: Fetched) -> Vec<u8> {
    let mut out = vec![];
    let mut body = f.body;
    body.read_to_end(&mut out).unwrap();
    out
}

#[test]
fn fetches_from_an_allowed_server_with_its_name_and_type() {
    let s = TestServer::start(Arc::new(|_| {
        ok(b"hello", "Content-Type: text/plain\r\nContent-Disposition: attachment; filename=\"greeting.txt\"\r\n")
    }));
    let f = exactly(&[s.addr]).fetch(&s.url("/x/y.bin"), 100).unwrap();
    assert_eq!(f.content_type.as_deref(), Some("text/plain"));
    assert_eq!(f.disposition_name.as_deref(), Some("greeting.txt"));
    assert_eq!(read_all(f), b"hello");
}

#[test]
fn a_lookup_to_a_private_address_is_refused_without_connecting() {
    let trap = TestServer::start(Arc::new(|_| ok(b"secret", "")));
    let trap_addr = trap.addr;
    // The name resolves to the trap's loopback address, which the default
    // policy forbids: no connection may reach it.
    let fetcher = UreqFetcher::with_lookup(
        Guard {
            policy: Policy::PublicOnly,
            own: vec![],
        },
        "http://service.invalid",
        Some(Arc::new(move |_| Ok(vec![trap_addr]))),
        fast(),
    );
    for url in [
        "http://internal.example/",
        "https://internal.example/",
        "http://rebind.example:80/",
    ] {
        assert_eq!(
            fetcher.fetch(url, 100).unwrap_err(),
            FetchError::Refused,
            "{url}"
        );
    }
    let private = UreqFetcher::with_lookup(
        Guard {
            policy: Policy::PublicOnly,
            own: vec![],
        },
        "http://service.invalid",
        Some(Arc::new(|_| {
            Ok(vec![
                "10.0.0.1:80".parse().unwrap(),
                "8.8.8.8:80".parse().unwrap(),
            ])
        })),
        fast(),
    );
    assert_eq!(
        private.fetch("http://mixed.example/", 100).unwrap_err(),
        FetchError::Refused
    );
    assert_eq!(trap.hits(), 0, "no connection was attempted");
    assert!(fetcher.refusals() >= 3);
}

#[test]
fn numeric_host_spellings_meet_the_same_guard() {
    let fetcher = UreqFetcher::with_lookup(
        Guard {
            policy: Policy::PublicOnly,
            own: vec![],
        },
        "http://service.invalid",
        None,
        fast(),
    );
    for url in [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0/",
        "http://localhost/",
    ] {
        assert_eq!(
            fetcher.fetch(url, 100).unwrap_err(),
            FetchError::Refused,
            "{url}"
        );
    }
}

#[test]
fn redirects_are_checked_hop_by_hop() {
    let forbidden = TestServer::start(Arc::new(|_| ok(b"internal", "")));
    let target = forbidden.url("/");
    let s = TestServer::start(Arc::new(move |path| match path {
        "/away" => redirect(&target),
        "/meta" => redirect("http://169.254.169.254/"),
        "/loop" => redirect("/loop"),
        "/ftp" => redirect("ftp://example.com/x"),
        "/rel" => redirect("/final"),
        _ => ok(b"final", ""),
    }));
    let f = exactly(&[s.addr]);
    assert_eq!(
        read_all(f.fetch(&s.url("/rel"), 100).unwrap()),
        b"final",
        "allowed hops are followed"
    );
    assert_eq!(
        f.fetch(&s.url("/away"), 100).unwrap_err(),
        FetchError::Refused
    );
    assert_eq!(forbidden.hits(), 0, "the blocked hop was never contacted");
    assert_eq!(
        f.fetch(&s.url("/meta"), 100).unwrap_err(),
        FetchError::Refused
    );
    assert_eq!(
        f.fetch(&s.url("/loop"), 100).unwrap_err(),
        FetchError::Refused
    );
    assert_eq!(
        f.fetch(&s.url("/ftp"), 100).unwrap_err(),
        FetchError::Refused
    );
}

#[test]
fn url_syntax_is_checked_before_any_network() {
    let f = exactly(&[]);
    assert!(matches!(
        f.fetch("ftp://example.com/a", 1),
        Err(FetchError::InvalidUrl(_))
    ));
    assert!(matches!(
        f.fetch("file:///etc/passwd", 1),
        Err(FetchError::InvalidUrl(_))
    ));
    assert!(matches!(
        f.fetch("http://user:pw@example.com/", 1),
        Err(FetchError::InvalidUrl(_))
    ));
    assert!(matches!(
        f.fetch("not a url", 1),
        Err(FetchError::InvalidUrl(_))
    ));
    let own = UreqFetcher::with_lookup(
        Guard {
            policy: Policy::AllowPrivate,
            own: vec![],
        },
        "http://127.0.0.1:9/",
        None,
        fast(),
    );
    assert_eq!(
        own.fetch("http://127.0.0.1:9/x", 1).unwrap_err(),
        FetchError::Refused,
        "never the service itself"
    );
}

#[test]
fn declared_lengths_over_the_limit_are_refused_before_reading() {
    let s = TestServer::start(Arc::new(|_| ok(&[7u8; 1000], "")));
    assert_eq!(
        exactly(&[s.addr]).fetch(&s.url("/"), 999).unwrap_err(),
        FetchError::TooLarge(999)
    );
}

#[test]
fn gzip_is_decoded_so_limits_count_real_bytes() {
    let manifest =
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    let bomb = std::fs::read(format!("{manifest}/../../fixtures/zeros-10mib.gz")).unwrap();
    assert!(bomb.len() < 100_000);
    let s = TestServer::start(Arc::new(move |_| ok(&bomb, "Content-Encoding: gzip\r\n")));
    let f = exactly(&[s.addr]).fetch(&s.url("/"), 200_000).unwrap();
    // The caller counts what it reads: far more than the compressed size.
    let mut body = f.body;
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0usize;
    while total <= 200_000 {
        let n = body.read(&mut buf).unwrap();
        assert!(n > 0, "the decoded stream ended early at {total}");
        total += n;
    }
}

#[test]
fn a_silent_server_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = vec![];
        for s in listener.incoming() {
            held.push(s); // accept, then say nothing
        }
    });
    let started = Instant::now();
    assert_eq!(
        exactly(&[addr])
            .fetch(&format!("http://{addr}/"), 100)
            .unwrap_err(),
        FetchError::Refused
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn address_literals_need_no_lookup() {
    let at = |s: &str| super::literal_addr(&s.parse().unwrap());
    assert_eq!(
        at("http://127.0.0.1:81/hook"),
        Some("127.0.0.1:81".parse().unwrap())
    );
    assert_eq!(
        at("https://192.0.2.1/x"),
        Some("192.0.2.1:443".parse().unwrap())
    );
    assert_eq!(at("http://[::1]/x"), Some("[::1]:80".parse().unwrap()));
    assert_eq!(at("http://example.com:81/x"), None);
    assert_eq!(at("ftp://127.0.0.1/x"), None);
}

#[test]
fn webhook_deliveries_share_a_connection_when_the_receiver_answers_a_body() {
    use store_core::ports::WebhookSender;
    let receiver =
        store_testkit::origin::KeepAlive::start(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let guard = Guard {
        policy: Policy::AllowPrivate,
        own: vec![],
    };
    let hook = UreqWebhook::new(&receiver.url, guard, Duration::from_secs(5), 1).unwrap();
    for _ in 0..3 {
        hook.post(&[("webhook-id", "msg_1".into())], b"{}").unwrap();
    }
    assert_eq!(receiver.requests(), 3);
    assert_eq!(receiver.connections(), 1);
}

#[test]
fn a_delivery_is_sent_in_one_write_and_a_closed_connection_is_not_reused() {
    use std::io::Write;
    use store_core::ports::WebhookSender;
    // A receiver that answers one request per connection and closes it
    // without saying so, and records what its first read of each held.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, first_reads) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = vec![0u8; 64 * 1024];
            let n = stream.read(&mut buf).unwrap_or(0);
            let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
            // Closed before the test hears of this request, so before
            // the next delivery looks at the kept connection.
            drop(stream);
            let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    });
    let guard = Guard {
        policy: Policy::AllowPrivate,
        own: vec![],
    };
    let hook = UreqWebhook::new(&url, guard, Duration::from_secs(5), 1).unwrap();
    let body = "{\"type\":\"object.created\"}".repeat(20);
    for _ in 0..3 {
        // The closed connection is seen as closed before it is reused:
        // each delivery after the first would fail otherwise.
        hook.post(&[("webhook-id", "msg_1".into())], body.as_bytes())
            .unwrap();
        let first = first_reads.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(first.starts_with("POST /hook HTTP/1.1\r\n"), "{first}");
        assert!(
            first.ends_with(&body),
            "head and body in one write: {first}"
        );
    }
}

#[test]
fn a_silent_receiver_times_the_delivery_out() {
    use store_core::ports::WebhookSender;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = vec![];
        for s in listener.incoming() {
            held.push(s); // accept, then say nothing
        }
    });
    let guard = Guard {
        policy: Policy::AllowPrivate,
        own: vec![],
    };
    let hook = UreqWebhook::new(&url, guard, Duration::from_millis(300), 1).unwrap();
    let started = Instant::now();
    let why = hook.post(&[], b"{}").unwrap_err();
    assert!(why.contains("timeout"), "{why}");
    assert!(started.elapsed() >= Duration::from_millis(300), "{why}");
}

#[test]
fn deliverers_posting_at_once_keep_a_connection_each() {
    use store_core::ports::WebhookSender;
    const AT_ONCE: usize = 6;
    let receiver = store_testkit::origin::KeepAlive::start(
        b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
    );
    let guard = Guard {
        policy: Policy::AllowPrivate,
        own: vec![],
    };
    let hook =
        Arc::new(UreqWebhook::new(&receiver.url, guard, Duration::from_secs(5), AT_ONCE).unwrap());
    let threads: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            let hook = Arc::clone(&hook);
            std::thread::spawn(move || {
                for _ in 0..200 {
                    hook.post(&[("webhook-id", "msg_1".into())], b"{}").unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(receiver.requests(), AT_ONCE * 200);
    assert!(
        receiver.connections() <= AT_ONCE,
        "{} connections for {AT_ONCE} senders",
        receiver.connections()
    );
}
