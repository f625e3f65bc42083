//! `Limits` is the only source of every number (issue 16): a server built
//! with limits other than SPEC.md's enforces the configured values, and
//! every text that shows a limit (`/api`, `/help`, `/help/errors`, error
//! messages, the home page) shows the configured value.
//!
//! The server runs in process on memory ports, so that any field of
//! `Limits` can be set (the binary's flags set only a few of them), and is
//! spoken to over HTTP on 127.0.0.1.

mod common;

use serde_json::Value;
use store_core::{Limits, Timestamp};
use store_http::ServeOptions;

/// Limits unlike SPEC.md's in every field this test checks.
fn odd_limits() -> Limits {
    Limits {
        file_bytes_max: 1_000,
        file_ttl_min_secs: 60,
        file_ttl_default_secs: 120,
        file_ttl_max_secs: 3_600,
        tags_per_object_max: 2,
        name_chars_min: 6,
        comment_cooldown_secs: 77,
        comment_text_chars_max: 10,
        ..Limits::DEFAULT
    }
}

struct Server {
    base: String,
    agent: ureq::Agent,
    _rt: tokio::runtime::Runtime,
}

impl Server {
    fn start(limits: Limits) -> Self {
        let limits = Limits {
            rate_limit_per_min: 0,
            ..limits
        };
        let (addr, rt) = common::start(limits, ServeOptions::default());
        let base = format!("http://{addr}");
        let agent = common::agent();
        Self {
            base,
            agent,
            _rt: rt,
        }
    }

    /// POSTs `body` to `path` and answers the status and the body as text.
    fn post(&self, path: &str, content_type: &str, body: &[u8]) -> (u16, String) {
        let mut res = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", content_type)
            .send(body)
            .unwrap();
        let text = res.body_mut().read_to_string().unwrap();
        (res.status().as_u16(), text)
    }

    fn get(&self, path: &str, accept: &str) -> String {
        let mut res = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Accept", accept)
            .call()
            .unwrap();
        assert_eq!(res.status(), 200, "GET {path}");
        res.body_mut().read_to_string().unwrap()
    }

    fn json(&self, path: &str) -> Value {
        serde_json::from_str(&self.get(path, "application/json")).unwrap()
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

const BYTES: &str = "application/octet-stream";
const FORM: &str = "application/x-www-form-urlencoded";

#[test]
fn the_configured_file_size_is_enforced_and_shown() {
    let s = Server::start(odd_limits());
    let (status, _) = s.post("/", BYTES, &[b'a'; 1_000]);
    assert_eq!(status, 201, "exactly the limit fits");
    let (status, body) = s.post("/", BYTES, &[b'a'; 1_001]);
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("1000"), "the message names the limit: {body}");

    let api = s.json("/api");
    assert_eq!(api["max_file_bytes"], 1_000);
    assert_eq!(api["limits"]["file_bytes_max"], 1_000);
    let too_large = api["errors"]["too_large"]["meaning"].as_str().unwrap();
    assert!(too_large.starts_with("file over 1000 B"), "{too_large}");
    let limits = s.get("/help/limits", "text/markdown");
    assert!(
        limits.contains("| single file size | 1000 bytes |"),
        "{limits}"
    );
    let home = s.get("/", "text/html");
    assert!(
        home.contains(r#"data-max="1000""#),
        "the home form checks it"
    );
}

#[test]
fn the_configured_lifetimes_are_enforced_and_shown() {
    let s = Server::start(odd_limits());
    let lifetime = |query: &str| {
        let (status, body) = s.post(&format!("/{query}"), BYTES, b"x");
        assert_eq!(status, 201, "{body}");
        let rec = parse(&body);
        let at = |f: &str| Timestamp::parse(rec[f].as_str().unwrap()).unwrap();
        at("expires_at").as_millis() - at("created_at").as_millis()
    };
    assert_eq!(lifetime(""), 120_000, "the configured default");
    assert_eq!(
        lifetime("?ttl=1d"),
        3_600_000,
        "clamped to the configured max"
    );
    let api = s.json("/api");
    assert_eq!(api["ttl_seconds"], 120);
    let limits = s.get("/help/limits", "text/markdown");
    assert!(
        limits.contains("default 120s, ttl clamped to [60s, 1h]"),
        "{limits}"
    );
}

#[test]
fn the_configured_tag_and_name_rules_are_enforced_and_shown() {
    let s = Server::start(odd_limits());
    let (status, body) = s.post("/?tag=a&tag=b&tag=c", BYTES, b"x");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("at most 2"), "{body}");
    let (status, _) = s.post("/?tag=a&tag=b", BYTES, b"x");
    assert_eq!(status, 201);
    let (status, body) = s.post("/?share=abcde", BYTES, b"x");
    assert_eq!(status, 400, "five characters are one short: {body}");
    assert!(body.contains("6-32 characters"), "{body}");
    let (status, _) = s.post("/?share=abcdef", BYTES, b"x");
    assert_eq!(status, 201);
    let limits = s.get("/help/limits", "text/markdown");
    assert!(limits.contains("2 per file or dir"), "{limits}");
}

#[test]
fn the_configured_comment_rules_are_enforced_and_shown() {
    let s = Server::start(odd_limits());
    let (status, body) = s.post("/pics?create=1", FORM, b"");
    assert_eq!(status, 201, "{body}");
    let gid = parse(&body)["id"].as_str().unwrap().to_string();
    let comment = |text: &str| s.post(&format!("/pics/g/{gid}?comment=1"), FORM, text.as_bytes());
    let (status, body) = comment("text=eleven-char");
    assert_eq!(status, 400, "over the configured 10 characters: {body}");
    assert!(body.contains("1 to 10 characters"), "{body}");
    assert_eq!(comment("text=hello").0, 201);
    let (status, body) = comment("text=again");
    assert_eq!(status, 429, "{body}");
    assert_eq!(parse(&body)["retry_after"], 77, "the clock stood still");

    let errors = s.get("/help/errors", "text/plain");
    assert!(errors.contains("within 77 s"), "{errors}");
    let galleries = s.get("/help/galleries", "text/markdown");
    assert!(galleries.contains("every 77 s"), "{galleries}");
    assert_eq!(s.json("/api")["limits"]["comment_cooldown_secs"], 77);
}
