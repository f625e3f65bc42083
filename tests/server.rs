//! The server process as CONTRACT.md runs it: configuration, the ready
//! line, negotiation, and shutdown.

use crate::common::*;
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

/// CONTRACT.md's self-hoster settings: the per-file limit, the pics
/// upload limit and the single files' ttl bounds are what the server
/// enforces and what it reports.
#[test]
fn self_hoster_settings_are_enforced_and_reported() {
    let s = Server::with_env(&[
        ("STORE_MAX_FILE_BYTES", "1000"),
        ("STORE_MAX_PICS_UPLOAD_BYTES", "2000"),
        ("STORE_TTL_MIN", "1h"),
        ("STORE_TTL_DEFAULT", "2h"),
        ("STORE_TTL_MAX", "1d"),
    ]);
    assert_eq!(s.post("/?name=a.bin", &[1u8; 1000]).status(), 201);
    assert_error(&mut s.post("/?name=b.bin", &[1u8; 1001]), 413, "too_large");
    let lifetime = |query: &str| {
        let r = json(&mut s.post(&format!("/?name=t.txt{query}"), b"t"));
        let at = |f: &str| {
            store_core::Timestamp::parse(r[f].as_str().unwrap())
                .unwrap()
                .as_millis()
        };
        (at("expires_at") - at("created_at")) / 1000
    };
    assert_eq!(lifetime(""), 7_200, "the configured default");
    assert_eq!(lifetime("&ttl=1"), 3_600, "clamped up to the minimum");
    assert_eq!(lifetime("&ttl=3d"), 86_400, "clamped down to the maximum");
    let c = json(&mut s.get("/api"));
    assert_eq!(c["max_file_bytes"], 1000);
    assert_eq!(c["ttl_seconds"], 7_200);
    assert_eq!(c["limits"]["import_bytes_max"], 1000);
    assert_eq!(c["limits"]["pics_upload_bytes_max"], 2000);
    assert_eq!(c["limits"]["file_ttl_max_secs"], 86_400);
    let help = text(&mut s.get("/help/limits"));
    assert!(
        help.contains("default 2h, ttl clamped to [1h, 1d]"),
        "{help}"
    );
}

/// STORE_UPLOAD_TOKEN closes creation, by header, query or form field,
/// and refuses before anything is stored; reading and writes to what
/// exists stay as they were.
#[test]
fn an_upload_token_closes_creation_and_leaves_reading_open() {
    const UP: &str = "up-secret";
    let s = Server::with_env(&[
        ("STORE_UPLOAD_TOKEN", UP),
        ("STORE_RETAIN_TOKEN", RETAIN_TOKEN),
    ]);
    let bearer = format!("Bearer {UP}");
    let with_token = [("Authorization", bearer.as_str())];
    for path in [
        "/?name=a.txt",
        "/?dir=1",
        "/pics?create=1",
        "/?url=http://127.0.0.1:9/x",
    ] {
        assert_error(&mut s.post(path, b"x"), 401, "write_denied");
        let wrong = [("Authorization", "Bearer nope")];
        assert_error(&mut s.post_with(path, &wrong, b"x"), 401, "write_denied");
    }
    assert_eq!(s.blob_count(), 0, "nothing stored by a refusal");
    let file = json(&mut s.post_with("/?name=a.txt", &with_token, b"hello"));
    assert_eq!(
        text(&mut s.get(&format!("/{}", file["id"].as_str().unwrap()))),
        "hello"
    );
    assert_eq!(
        s.post(&format!("/?name=b.txt&token={UP}"), b"b").status(),
        201
    );
    let retained = [("Authorization", format!("Bearer {RETAIN_TOKEN}"))];
    let retained = [(retained[0].0, retained[0].1.as_str())];
    assert_eq!(s.post_with("/?name=c.txt", &retained, b"c").status(), 201);
    let gallery = json(&mut s.post_with("/pics?create=1", &with_token, b""));
    let gid = gallery["id"].as_str().unwrap().to_string();
    let upload = format!("/pics/g/{gid}?name=p.png");
    assert_error(
        &mut s.post(&upload, b"not even an image"),
        401,
        "write_denied",
    );
    // Commenting writes to what exists: the token is not asked for.
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let comment = s.post_with(&format!("/pics/g/{gid}?comment=1"), &form, b"text=hi");
    assert_eq!(comment.status(), 201);

    // A browser form carries the token as a field before its files.
    let blobs = s.blob_count();
    for (parts, status) in [
        (
            vec![
                ("token", None, UP.as_bytes()),
                ("file", Some("f.txt"), &b"f"[..]),
            ],
            201,
        ),
        (
            vec![
                ("file", Some("g.txt"), &b"g"[..]),
                ("token", None, UP.as_bytes()),
            ],
            401,
        ),
        (vec![("file", Some("h.txt"), &b"h"[..])], 401),
    ] {
        let (ct, body) = multipart(&parts);
        let res = s.post_with("/", &[("Content-Type", ct.as_str())], &body);
        assert_eq!(
            res.status(),
            status,
            "{:?}",
            parts.iter().map(|p| p.0).collect::<Vec<_>>()
        );
    }
    assert_eq!(
        s.blob_count(),
        blobs + 1,
        "only the form with its token stored a file"
    );
    // A form without files never meets the gate before a file: checked
    // once it is read.
    for (parts, status) in [
        (vec![("name", None, &b"no-files"[..])], 401),
        (
            vec![
                ("token", None, UP.as_bytes()),
                ("name", None, &b"no-files"[..]),
            ],
            201,
        ),
    ] {
        let (ct, body) = multipart(&parts);
        let res = s.post_with("/?dir=1", &[("Content-Type", ct.as_str())], &body);
        assert_eq!(res.status(), status, "a dir form without files");
    }
    let form_gallery = s.post_with(
        "/pics?create=1",
        &form,
        format!("token={UP}&name=Trip").as_bytes(),
    );
    assert_eq!(form_gallery.status(), 201);

    assert_eq!(json(&mut s.get("/api"))["upload_token"], true);
    let home = text(&mut s.get_with("/", &[("Accept", "text/html")]));
    assert!(
        home.contains(r#"name="token""#),
        "the home form asks for it"
    );
}

#[test]
fn bad_configuration_exits_with_a_message() {
    let out = Command::new(crate::common::storesrv_bin())
        .args(["--listen", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout but the ready line"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--listen"));
    let out = Command::new(crate::common::storesrv_bin())
        .args(["--listen", "127.0.0.1:0"])
        .env("STORE_TTL_MAX", "1h")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "ttl bounds out of order");
    assert!(String::from_utf8_lossy(&out.stderr).contains("STORE_TTL_MAX"));
    let help = Command::new(crate::common::storesrv_bin())
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

/// One scrape of every process, each series summed over them (counters
/// add up; a gauge of the shared store is the same on each, so the test
/// reads gauges from the first process alone).
pub(crate) fn scrape(urls: &[String]) -> (std::collections::HashMap<String, f64>, String) {
    let mut sums = std::collections::HashMap::new();
    let mut first = String::new();
    for (i, url) in urls.iter().enumerate() {
        // What Prometheus asks for.
        let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
        let mut res = ureq::get(url)
            .header("accept", accept)
            .call()
            .expect("scrape");
        assert_eq!(
            header(&res, "content-type"),
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
        );
        let text = res.body_mut().read_to_string().unwrap();
        assert!(text.ends_with("# EOF\n"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (series, value) = line.rsplit_once(' ').expect("a sample line");
            *sums.entry(series.to_string()).or_insert(0.0) += value.parse::<f64>().unwrap();
        }
        if i == 0 {
            first = text;
        }
    }
    (sums, first)
}

/// The value of `series` in a scrape (0 when absent: never counted).
pub(crate) fn sample(scraped: &std::collections::HashMap<String, f64>, series: &str) -> f64 {
    scraped.get(series).copied().unwrap_or(0.0)
}

/// The value of a gauge in one process's exposition.
fn gauge(text: &str, series: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{series} ")))
        .unwrap_or_else(|| panic!("no {series} in {text}"));
    line.rsplit_once(' ').unwrap().1.parse().unwrap()
}

#[test]
fn metrics_count_known_traffic_on_their_own_listener() {
    let s = Server::with_env(&[
        ("STORE_METRICS_LISTEN", "127.0.0.1:0"),
        ("STORE_RATE_LIMIT_PER_MIN", "40"),
    ]);
    let urls = s.metrics_urls();
    let (before, _) = scrape(&urls);
    let ids: Vec<String> = (0..3)
        .map(|i| {
            s.upload(&format!("m{i}.txt"), b"0123456789")["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for id in ids.iter().chain(&ids[..1]) {
        assert_eq!(s.get(&format!("/{id}")).status(), 200);
    }
    let ranged = s.get_with(&format!("/{}", ids[0]), &[("range", "bytes=0-3")]);
    assert_eq!(ranged.status(), 206);
    for _ in 0..2 {
        assert_error(&mut s.get("/nosuchfile1"), 404, "not_found");
    }
    assert_error(&mut s.get("/metrics"), 404, "not_found");
    let (after, text) = scrape(&urls);
    let moved = |series: &str| sample(&after, series) - sample(&before, series);
    let requests = |route: &str, status: u16| {
        moved(&format!(
            "storesrv_http_requests_total{{route=\"{route}\",status=\"{status}\"}}"
        ))
    };
    assert_eq!(requests("upload", 201), 3.0);
    assert_eq!(requests("get_file", 200), 4.0);
    assert_eq!(requests("get_file", 206), 1.0);
    assert_eq!(
        requests("get_file", 404),
        3.0,
        "the public /metrics is a file id like any other"
    );
    let uploads = "storesrv_http_request_duration_seconds";
    assert_eq!(moved(&format!("{uploads}_count{{route=\"upload\"}}")), 3.0);
    assert_eq!(
        moved(&format!("{uploads}_bucket{{le=\"+Inf\",route=\"upload\"}}")),
        3.0
    );
    assert!(moved(&format!("{uploads}_sum{{route=\"upload\"}}")) > 0.0);
    assert_eq!(gauge(&text, "storesrv_objects{kind=\"file\"}"), 3.0);
    assert_eq!(gauge(&text, "storesrv_objects{kind=\"dir\"}"), 0.0);
    assert_eq!(gauge(&text, "storesrv_pool_used_bytes"), 30.0);
    assert!(text.contains("storesrv_sweep_removed_total 0\n"));
    assert!(text.contains("storesrv_import_refused_total 0\n"));
    // A client that does not ask for OpenMetrics (curl) gets the classic
    // text format, with the same samples.
    let mut plain = ureq::get(&urls[0]).call().unwrap();
    assert_eq!(
        header(&plain, "content-type"),
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let plain = plain.body_mut().read_to_string().unwrap();
    assert!(plain.contains("# TYPE storesrv_http_requests_total counter\n"));
    assert!(plain.contains("storesrv_objects{kind=\"file\"} 3\n"));
    assert!(!plain.contains("# EOF"));

    // Past the rate: refusals are counted as such, and by route.
    let refused = (0..60)
        .filter(|_| s.get("/healthz_not").status() == 429)
        .count();
    assert!(refused > 0, "60 requests pass a rate of 40 a minute");
    let (limited, _) = scrape(&urls);
    let counted = sample(&limited, "storesrv_rate_limited_total");
    assert!(
        counted >= refused as f64,
        "{counted} counted, {refused} seen"
    );
    assert_eq!(
        counted,
        sample(
            &limited,
            "storesrv_http_requests_total{route=\"rate_limited\",status=\"429\"}"
        )
    );
    let mut other = ureq::get(urls[0].replace("/metrics", "/other"))
        .config()
        .http_status_as_error(false)
        .build()
        .call()
        .unwrap();
    assert_eq!(other.status(), 404);
    assert_eq!(json(&mut other)["code"], "not_found");
}

#[test]
fn no_metrics_listener_unless_asked_for() {
    let s = Server::start();
    assert!(!s.log().contains("metrics served at"));
    assert_error(&mut s.get("/metrics"), 404, "not_found");
}

/// An upload refused before its body is read (413 over the size limit, a
/// 401 without the upload token) reaches a client that sends its whole
/// body before it reads, as a proxy does: the server reads the rest and
/// drops it (lingering close, as nginx does) instead of closing on it,
/// which would answer the client's bytes with a reset.
#[test]
fn an_early_refusal_reaches_a_client_still_sending() {
    let s = Server::with_env(&[
        ("STORE_MAX_FILE_BYTES", "1000"),
        ("STORE_UPLOAD_TOKEN", "the-upload-token"),
    ]);
    for (query, auth, status) in [
        ("?name=big.bin", "Bearer the-upload-token", "413"),
        ("?name=anyone.bin", "Bearer a-wrong-token", "401"),
    ] {
        let answer = send_whole_then_read(&s, query, auth, 8 * 1024 * 1024);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{status}: {}",
            answer.lines().next().unwrap_or_default()
        );
        assert!(
            answer.contains("\"code\""),
            "the JSON error arrives: {answer}"
        );
    }
}

/// Sends a POST of `len` bytes whole, as a client that does not read until
/// it has sent everything, then reads the answer. Panics if the server
/// resets the connection on the way.
fn send_whole_then_read(s: &Server, query: &str, auth: &str, len: usize) -> String {
    use std::io::{Read, Write};
    let addr = s.url("").trim_start_matches("http://").to_string();
    let mut conn = std::net::TcpStream::connect(addr).expect("connect");
    conn.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    conn.set_write_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "POST /{query} HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\nContent-Length: {len}\r\n\r\n"
    );
    conn.write_all(head.as_bytes()).expect("the head is sent");
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0;
    while sent < len {
        let n = chunk.len().min(len - sent);
        conn.write_all(&chunk[..n])
            .unwrap_or_else(|e| panic!("the body is sent whole ({sent} of {len} bytes): {e}"));
        sent += n;
    }
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer)
        .unwrap_or_else(|e| panic!("the answer is read: {e}"));
    String::from_utf8_lossy(&answer).into_owned()
}

/// The server's guards have one home (issue 32): what the environment
/// sets is what `/api` shows under `limits.server`, and what it leaves
/// alone shows its default.
#[test]
fn the_guards_set_are_the_guards_shown() {
    let s = Server::with_env(&[
        ("STORE_CONNECTIONS_PER_IP", "7"),
        ("STORE_SEND_TIMEOUT_SECS", "9"),
        ("STORE_BODIES_IN_FLIGHT_BYTES", "123456"),
    ]);
    let api = json(&mut s.get("/api"));
    let server = &api["limits"]["server"];
    assert_eq!(server["connections_per_client_max"], 7, "{server}");
    assert_eq!(server["send_timeout_secs"], 9, "{server}");
    assert_eq!(server["bodies_in_flight_bytes_max"], 123456, "{server}");
    assert_eq!(server["connections_max"], 2048, "the default: {server}");
    assert_eq!(server["uri_bytes_max"], 8192, "the default: {server}");
}
