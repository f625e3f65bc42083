//! Import over HTTP against the real binary and a scripted origin server on
//! loopback (issue 4). The positive paths run with
//! STORE_IMPORT_ALLOW_PRIVATE=1, which is what lets the service reach a
//! loopback origin at all; the default server must refuse the same URLs.

use crate::common::*;
use std::net::TcpListener;
use std::sync::Arc;

use store_testkit::origin::{not_found, ok, redirect, Origin};

fn origin() -> Origin {
    let bomb = std::fs::read(repo("fixtures/zeros-10mib.gz")).unwrap();
    Origin::start(Arc::new(move |path| {
        match path {
        "/docs/guide.md" => ok(b"# Guide\n", "Content-Type: text/markdown\r\n"),
        "/download?id=1" => ok(b"%PDF-1.4 fake", "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"paper.pdf\"\r\n"),
        "/big" => ok(&vec![b'x'; 5_242_881], "Content-Type: text/plain\r\n"),
        "/bomb" => ok(&bomb, "Content-Type: application/octet-stream\r\nContent-Encoding: gzip\r\n"),
        "/to-metadata" => redirect("http://169.254.169.254/latest/meta-data/"),
        "/silent" => None,
        "/cat.gif" => ok(&std::fs::read(repo("fixtures/media/animated.gif")).unwrap(), "Content-Type: image/gif\r\n"),
        "/to-zero" => redirect("http://0.0.0.0/"),
        _ => not_found(),
    }
    }))
}

fn allowing() -> Server {
    Server::with_env(&[
        ("STORE_RETAIN_TOKEN", RETAIN_TOKEN),
        ("STORE_IMPORT_ALLOW_PRIVATE", "1"),
    ])
}

fn import(s: &Server, query: &str) -> Response<Body> {
    s.post_empty(&format!("/?{query}"), &[])
}

#[test]
fn imports_name_the_file_from_the_header_or_the_path() {
    let o = origin();
    let s = allowing();
    assert!(
        s.log().contains("STORE_IMPORT_ALLOW_PRIVATE"),
        "the test mode is logged as a warning"
    );
    let mut res = import(
        &s,
        &format!("url={}&tag=docs&tag=guide", enc(&o.url("/docs/guide.md"))),
    );
    assert_eq!(res.status(), 201);
    let owner = header(&res, "x-store-owner");
    assert_eq!(header(&res, "cache-control"), "no-store");
    let r = json(&mut res);
    assert_eq!(r["owner_token"], owner.as_str(), "an import is a creation");
    assert_eq!(r["name"], "guide.md");
    assert_eq!(r["content_type"], "text/markdown");
    assert_eq!(r["tags"], serde_json::json!(["docs", "guide"]));
    assert_eq!(r["size"], 8);
    assert_eq!(
        text(&mut s.get(&format!("/{}", r["id"].as_str().unwrap()))),
        "# Guide\n"
    );
    let r = json(&mut import(
        &s,
        &format!("url={}", enc(&o.url("/download?id=1"))),
    ));
    assert_eq!(r["name"], "paper.pdf");
    let r = json(&mut import(
        &s,
        &format!("url={}&name=mine.md", enc(&o.url("/docs/guide.md"))),
    ));
    assert_eq!(r["name"], "mine.md", "name= overrides");
}

#[test]
fn link_stores_a_redirect_that_agents_can_edit() {
    let s = allowing();
    let target = "https://example.com/page?a=1&b=\"2\"";
    let mut res = import(&s, &format!("url={}&link=1", enc(target)));
    assert_eq!(res.status(), 201);
    let r = json(&mut res);
    assert_eq!(r["editable"], true);
    let path = format!("/{}", r["id"].as_str().unwrap());
    let browser = s.get_with(&path, &[("accept", "text/html")]);
    assert_eq!(browser.status(), 302);
    assert_eq!(header(&browser, "location"), target);
    let mut doc = s.get(&path);
    let doc = text(&mut doc);
    assert!(
        doc.contains("https://example.com/page?a=1&amp;b=&quot;2&quot;"),
        "agents get the escaped document: {doc}"
    );
    // An agent rewrites it to point elsewhere.
    let edited = doc.replace(
        "https://example.com/page?a=1&amp;b=&quot;2&quot;",
        "https://example.org/new",
    );
    assert_eq!(s.put(&path, &[], edited.as_bytes()).status(), 200);
    assert_eq!(
        header(&s.get_with(&path, &[("accept", "text/html")]), "location"),
        "https://example.org/new"
    );
    assert_error(
        &mut import(&s, &format!("url={}&link=1", enc("javascript:alert(1)"))),
        400,
        "bad_request",
    );
}

#[test]
fn oversized_and_compressed_bombs_answer_413() {
    let o = origin();
    let s = allowing();
    assert_error(
        &mut import(&s, &format!("url={}", enc(&o.url("/big")))),
        413,
        "too_large",
    );
    assert_error(
        &mut import(&s, &format!("url={}", enc(&o.url("/bomb")))),
        413,
        "too_large",
    );
    assert_eq!(s.blob_count(), 0, "nothing was stored");
}

#[test]
fn blocked_refused_and_silent_look_the_same() {
    let o = origin();
    let allowing = allowing();
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap(); // bound then dropped: closed
    let mut bodies = vec![];
    for url in [
        o.url("/to-metadata"),
        o.url("/to-zero"),
        o.url("/missing"),
        format!("http://{closed}/"),
        o.url("/silent"),
    ] {
        let mut res = import(&allowing, &format!("url={}", enc(&url)));
        assert_eq!(res.status(), 400, "{url}");
        bodies.push(text(&mut res));
    }
    // The default server refuses the origin itself: loopback is blocked.
    let strict = Server::with_env(&[]);
    let hits = o.hits();
    for url in [
        o.url("/docs/guide.md"),
        "http://2130706433/".into(),
        "http://[::1]/".into(),
        "http://localhost:1/".into(),
    ] {
        let mut res = import(&strict, &format!("url={}", enc(&url)));
        assert_eq!(res.status(), 400, "{url}");
        bodies.push(text(&mut res));
    }
    assert_eq!(o.hits(), hits, "the strict server never connected");
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "one body for every refusal: {bodies:?}"
    );
    // Its own address is refused even in test mode.
    let mut res = import(&allowing, &format!("url={}", enc(&allowing.url("/api"))));
    assert_eq!(res.status(), 400);
    assert_eq!(text(&mut res), bodies[0]);
    assert_eq!(allowing.blob_count() + strict.blob_count(), 0);
}

#[test]
fn bad_urls_are_explained() {
    let s = allowing();
    for url in [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "http://user:pw@example.com/",
        "nonsense",
    ] {
        assert_error(
            &mut import(&s, &format!("url={}", enc(url))),
            400,
            "bad_request",
        );
    }
    assert_error(&mut import(&s, "url="), 400, "bad_request");
}

#[test]
fn galleries_import_images_only() {
    let o = origin();
    let s = allowing();
    assert_eq!(
        s.post_empty("/pics?create=1&name=imported", &[]).status(),
        201
    );
    let mut res = s.post_empty(
        &format!("/pics/g/imported?url={}", enc(&o.url("/cat.gif"))),
        &[],
    );
    assert_eq!(res.status(), 201);
    let img = json(&mut res);
    assert_eq!(img["content_type"], "image/gif");
    assert_eq!(img["name"], "cat.gif");
    let gallery = json(&mut s.get("/pics/g/imported"));
    assert_eq!(gallery["images"][0]["id"], img["id"]);
    // Not an image: refused, nothing stored.
    assert_error(
        &mut s.post_empty(
            &format!("/pics/g/imported?url={}", enc(&o.url("/docs/guide.md"))),
            &[],
        ),
        400,
        "bad_request",
    );
    // The guard applies as for any import.
    assert_error(
        &mut s.post_empty(
            &format!("/pics/g/imported?url={}", enc(&o.url("/to-metadata"))),
            &[],
        ),
        400,
        "bad_request",
    );
    assert_eq!(
        json(&mut s.get("/pics/g/imported"))["images"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
