//! The server process as CONTRACT.md runs it: configuration, the ready
//! line, negotiation, and shutdown.

mod common;

use common::*;
use std::process::Command;

#[test]
fn ready_line_and_clean_shutdown() {
    let mut s = Server::start();
    assert!(s.base.starts_with("http://127.0.0.1:"));
    let port: u16 = s.base.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0, "the ready line has the real port");
    assert_eq!(s.get("/api").status(), 200);
    let status = s.stop();
    assert!(status.success(), "SIGTERM exits 0, got {status}");
    assert!(
        s.log().contains("stopped"),
        "the store was flushed and closed: {}",
        s.log()
    );
}

#[test]
fn base_url_prefixes_every_url() {
    let s = Server::with_env(&[("STORE_BASE_URL", "https://files.example.test/")]);
    let r = s.upload("a.txt", b"a");
    assert_eq!(
        r["url"],
        format!("https://files.example.test/{}", r["id"].as_str().unwrap())
    );
    assert_eq!(
        json(&mut s.get("/api"))["base_url"],
        "https://files.example.test"
    );
}

#[test]
fn env_limits_show_in_the_contract() {
    let s = Server::with_env(&[
        ("STORE_POOL_BYTES", "1234567"),
        ("STORE_PICS_POOL_BYTES", "999"),
    ]);
    let c = json(&mut s.get("/api"));
    assert_eq!(c["pool_bytes"], 1_234_567);
    assert_eq!(c["limits"]["pics_pool_bytes"], 999);
}

#[test]
fn home_is_json_for_agents_and_html_for_browsers() {
    let s = Server::start();
    let mut agent = s.get("/");
    assert!(header(&agent, "content-type").starts_with("application/json"));
    assert_eq!(json(&mut agent)["api"], s.url("/api"));
    let mut browser = s.get_with("/", &[("accept", "text/html,*/*;q=0.8")]);
    assert!(header(&browser, "content-type").starts_with("text/html"));
    let csp = header(&browser, "content-security-policy");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(text(&mut browser).contains("<form"));
    let forced = s.get_with("/?json=1", &[("accept", "text/html")]);
    assert!(header(&forced, "content-type").starts_with("application/json"));
}

#[test]
fn browser_upload_form_works_without_javascript() {
    let s = Server::start();
    let (ct, body) = multipart(&[
        (
            "file",
            Some("<img src=x onerror=alert(1)>.txt"),
            b"from a browser",
        ),
        ("ttl", None, b"7d"),
        ("once", None, b"1"),
    ]);
    let mut res = s.post_with(
        "/",
        &[("content-type", &ct), ("accept", "text/html")],
        &body,
    );
    assert_eq!(res.status(), 201);
    let page = text(&mut res);
    assert!(
        page.contains("&lt;img src=x onerror=alert(1)&gt;.txt"),
        "names are escaped: {page}"
    );
    assert!(!page.contains("<img src=x"));
}

#[test]
fn bad_configuration_exits_with_a_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_storesrv"))
        .args(["--listen", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout but the ready line"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--listen"));
    let help = Command::new(env!("CARGO_BIN_EXE_storesrv"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("STORE_RETAIN_TOKEN"));
}

#[test]
fn probes_answer_health_and_readiness_outside_the_rate_limit() {
    let s = Server::with_env(&[("STORE_RATE_LIMIT_PER_MIN", "3")]);
    for _ in 0..10 {
        let mut health = s.get("/healthz");
        assert_eq!(health.status(), 200);
        assert_eq!(json(&mut health), serde_json::json!({ "status": "ok" }));
        let mut ready = s.get("/readyz");
        assert_eq!(ready.status(), 200, "probes are never rate limited");
        assert_eq!(json(&mut ready)["status"], "ok");
    }
    assert_eq!(s.head("/readyz").status(), 200);
    assert_error(&mut s.post("/readyz", b""), 501, "unsupported");

    // The bytes moved away under the running server: not ready, though
    // the process still serves.
    s.set_bytes_reachable(false);
    let mut res = s.get("/readyz");
    assert_eq!(header(&res, "retry-after"), "5");
    assert_error(&mut res, 503, "unavailable");
    assert_eq!(s.get("/healthz").status(), 200);
    s.set_bytes_reachable(true);
    assert_eq!(
        s.get("/readyz").status(),
        200,
        "ready again once they are back"
    );
}
