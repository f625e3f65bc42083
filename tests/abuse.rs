//! Abuse and faults against the real binary (issue 7): the rate limit and
//! its proxy rules, secrets kept out of logs, once files under a crowd,
//! missing bytes, a corrupt database, and a full disk.

use crate::common::*;
use std::process::Command;

#[test]
fn the_rate_limit_holds_and_forwarded_for_is_not_believed_from_strangers() {
    let s = Server::with_env(&[("STORE_RATE_LIMIT_PER_MIN", "5")]);
    for i in 0..5 {
        assert_eq!(s.get("/api").status(), 200, "request {i}");
    }
    let mut res = s.get("/api");
    assert_eq!(res.status(), 429);
    let retry: u64 = header(&res, "retry-after")
        .parse()
        .expect("an integer Retry-After");
    let body = json(&mut res);
    assert_eq!(body["code"], "rate_limited");
    assert_eq!(body["retry_after"], retry, "header and body agree");
    assert!(retry >= 1);
    // A forged X-Forwarded-For from an untrusted peer changes nothing.
    let spoofed = s.get_with("/api", &[("x-forwarded-for", "198.51.100.77")]);
    assert_eq!(spoofed.status(), 429);
}

#[test]
fn behind_a_trusted_proxy_each_client_has_its_own_allowance() {
    let s = Server::with_env(&[
        ("STORE_RATE_LIMIT_PER_MIN", "3"),
        ("STORE_TRUSTED_PROXIES", "127.0.0.1/32"),
    ]);
    for _ in 0..3 {
        assert_eq!(
            s.get_with("/api", &[("x-forwarded-for", "203.0.113.1")])
                .status(),
            200
        );
    }
    assert_eq!(
        s.get_with("/api", &[("x-forwarded-for", "203.0.113.1")])
            .status(),
        429
    );
    assert_eq!(
        s.get_with("/api", &[("x-forwarded-for", "203.0.113.2")])
            .status(),
        200,
        "another client"
    );
    // The client is the rightmost untrusted hop: a forged left part is ignored.
    assert_eq!(
        s.get_with("/api", &[("x-forwarded-for", "1.2.3.4, 203.0.113.1")])
            .status(),
        429
    );
    // IPv6 clients share their /64.
    for _ in 0..3 {
        assert_eq!(
            s.get_with("/api", &[("x-forwarded-for", "2001:db8:aa:bb::1")])
                .status(),
            200
        );
    }
    assert_eq!(
        s.get_with("/api", &[("x-forwarded-for", "2001:db8:aa:bb::ffff")])
            .status(),
        429
    );
}

#[test]
fn secrets_never_reach_the_log() {
    let s = Server::start();
    let r = json(&mut s.post(&format!("/?name=a.txt&token={RETAIN_TOKEN}"), b"a"));
    let id = r["id"].as_str().unwrap();
    s.post_empty(
        &format!("/{id}?retain=1&token={RETAIN_TOKEN}"),
        &[("authorization", &format!("Bearer {RETAIN_TOKEN}"))],
    );
    let d = json(&mut s.post_empty("/?dir=1&name=secret-dir&write=my-secret-write-token-1", &[]));
    assert_eq!(d["write_token"], "my-secret-write-token-1");
    s.post(
        "/d/secret-dir?name=b.txt&write=my-secret-write-token-1",
        b"b",
    );
    s.post_with(
        "/d/secret-dir?name=c.txt",
        &[("x-store-write", "my-secret-write-token-1")],
        b"c",
    );
    let generated = json(&mut s.post_empty("/?dir=1&write=1", &[]))["write_token"]
        .as_str()
        .unwrap()
        .to_string();
    let log = s.log();
    assert!(
        log.contains("route=\"upload\""),
        "requests are logged: {log}"
    );
    for secret in [RETAIN_TOKEN, "my-secret-write-token-1", generated.as_str()] {
        assert!(!log.contains(secret), "the log contains a secret");
    }
    assert!(
        !log.contains("secret-dir"),
        "names and ids stay out of the request log"
    );
}

#[test]
fn fifty_concurrent_reads_of_a_once_file_serve_it_once() {
    let s = Server::start();
    let r = json(&mut s.post("/?name=once.txt&once=1", b"exactly once"));
    let url = s.url(&format!("/{}", r["id"].as_str().unwrap()));
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(50));
    let handles: Vec<_> = (0..50)
        .map(|_| {
            let (url, barrier) = (url.clone(), barrier.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                barrier.wait();
                let mut res = agent.get(&url).call().unwrap();
                (
                    res.status().as_u16(),
                    res.body_mut().read_to_string().unwrap(),
                )
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let ok: Vec<_> = results.iter().filter(|(st, _)| *st == 200).collect();
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].1, "exactly once", "the one answer is whole");
    assert!(results.iter().all(|(st, _)| *st == 200 || *st == 404));
}

#[test]
fn a_record_whose_bytes_are_gone_answers_404_not_500() {
    let s = Server::start();
    let r = s.upload("lost.txt", b"soon gone");
    s.remove_all_blobs();
    assert_error(
        &mut s.get(&format!("/{}", r["id"].as_str().unwrap())),
        404,
        "not_found",
    );
    assert!(s.log().contains("missing bytes"), "the fault is logged");
}

#[test]
fn a_corrupt_record_stops_the_server_with_a_message_and_removes_nothing() {
    let mut s = Server::start();
    s.upload("a.txt", b"a");
    assert!(s.stop().success());
    {
        let db = sled::open(s.data_dir().join("db")).unwrap();
        db.open_tree("objects")
            .unwrap()
            .insert("broken", &b"{not json"[..])
            .unwrap();
        db.flush().unwrap();
    }
    let out = Command::new(crate::common::storesrv_bin())
        .args(["--listen", "127.0.0.1:0", "--data"])
        .arg(s.data_dir())
        .output()
        .unwrap();
    // Opening reads no record (a restart must not wait for a million of
    // them), so the damage is found by the background orphan collection,
    // which stops the server with a message and removes nothing.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it must not keep running: {err}");
    assert!(err.contains("corrupt record"), "a clear message: {err}");
    assert!(err.contains("\"broken\""), "naming the damaged key: {err}");
    assert_eq!(s.blob_count(), 1, "no bytes were removed");
}

/// Set in the copy of this test binary that runs inside its own user and
/// mount namespace (see [`in_own_mount_namespace`]).
const INSIDE_NAMESPACE: &str = "STORESRV_TEST_IN_NAMESPACE";

/// Runs the test `name` again in a copy of this binary inside a new user
/// and mount namespace, where an unprivileged user is root enough to mount
/// a tmpfs (issue 20: no test needs root). Answers true in that copy,
/// which then runs the test's body; false in the caller, once the copy has
/// passed.
fn in_own_mount_namespace(name: &str) -> bool {
    if std::env::var_os(INSIDE_NAMESPACE).is_some() {
        return true;
    }
    let probe = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .status();
    assert!(
        probe.is_ok_and(|s| s.success()),
        "{name} needs a user and mount namespace (unshare --user --map-root-user --mount); this machine refused one: run scripts/test, which says how to enable them"
    );
    let status = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "--"])
        .arg(std::env::current_exe().expect("the test binary"))
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(INSIDE_NAMESPACE, "1")
        .status()
        .expect("unshare runs");
    assert!(status.success(), "{name} failed inside its namespace");
    false
}

/// A tmpfs as the data dir: a real ENOSPC, not a simulated one. It lives in
/// the test's own mount namespace and goes with it.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(bytes: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(&mnt)
            .status()
            .expect("mount runs");
        assert!(status.success(), "a tmpfs mounts in the test's namespace");
        Self { dir }
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("mnt")
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

#[test]
fn a_full_disk_answers_507_stores_nothing_partial_and_recovers() {
    if !in_own_mount_namespace("a_full_disk_answers_507_stores_nothing_partial_and_recovers") {
        return;
    }
    let fs = Tmpfs::mount(24 * 1024 * 1024);
    // The disk is what fills, so the bytes stay on it whatever the
    // backend (under STORE_TEST_BACKEND=cluster, records in PostgreSQL
    // and files on the tmpfs).
    let mut s = Server::on(
        fs.path(),
        None,
        &[
            ("STORE_POOL_BYTES", "1000000000"),
            ("STORE_S3_ENDPOINT", ""),
        ],
    );
    let chunk = vec![7u8; 4 * 1024 * 1024];
    let mut stored = vec![];
    let mut full = None;
    for i in 0..10 {
        let mut res = s.post(&format!("/?name=f{i}.bin"), &chunk);
        if res.status() == 201 {
            stored.push(json(&mut res)["id"].as_str().unwrap().to_string());
        } else {
            full = Some((
                res.status().as_u16(),
                header(&res, "retry-after"),
                json(&mut res),
            ));
            break;
        }
    }
    let (status, retry, body) = full.expect("the disk filled up");
    assert_eq!(status, 507);
    assert_eq!(body["code"], "storage_full");
    assert_eq!(retry, "300");
    // A multipart upload on the full disk gets its 507 too, not a broken
    // pipe: the server reads its unwanted rest before answering.
    let (ct, parts) = multipart(&[
        ("file", Some("a.bin"), &chunk[..]),
        ("file", Some("b.bin"), &chunk[..]),
        ("file", Some("c.bin"), &chunk[..]),
    ]);
    let mut res = s.post_with("/", &[("content-type", &ct)], &parts);
    assert_error(&mut res, 507, "storage_full");
    assert!(!stored.is_empty());
    assert_eq!(
        std::fs::read_dir(fs.path().join("tmp")).unwrap().count(),
        0,
        "no partial upload left behind"
    );
    for id in &stored {
        assert_eq!(
            bytes(&mut s.get(&format!("/{id}"))),
            chunk,
            "what was stored is whole"
        );
    }
    // Freeing space is enough to recover, once the bytes are deleted: at
    // once on the embedded store, through the deletion queue when the
    // records are in PostgreSQL.
    for id in stored.drain(..2) {
        assert_eq!(s.delete(&format!("/{id}"), &[]).status(), 200);
    }
    s.wait_for_queued_deletes();
    assert_eq!(s.post("/?name=again.bin", &chunk).status(), 201);
    s.restart();
    assert!(s.log().contains("store opened"));
}
