//! Single files over HTTP, against the real binary: every rule of SPEC.md
//! for single files, retention and /api (issue 2).

use crate::common::*;
use std::collections::HashSet;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(repo(&format!("fixtures/{name}"))).expect("fixture")
}

fn is_rfc3339_z(s: &str) -> bool {
    s.len() == 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T'
}

#[test]
fn upload_answers_the_single_file_record() {
    let s = Server::start();
    let r = s.upload("notes.txt", b"hello");
    let id = r["id"].as_str().unwrap();
    assert_eq!(r["url"], s.url(&format!("/{id}")));
    assert_eq!(r["size"], 5);
    assert_eq!(r["name"], "notes.txt");
    assert_eq!(r["content_type"], "text/plain");
    assert_eq!(r["editable"], true);
    assert!(r["tags"].as_array().unwrap().is_empty());
    assert_eq!(r["expires_in"], 14_400);
    assert!(is_rfc3339_z(r["expires_at"].as_str().unwrap()), "{r}");
    let p = &r["persistence"];
    assert_eq!(p["type"], "single");
    assert_eq!(p["expires_at"], r["expires_at"]);
    assert_eq!(p["extendable_by"], "none");
    assert!(p["max_age"].is_null());
    assert!(p.get("retention").is_none());
    // Ids are unguessable and distinct.
    assert!(id.len() >= 11 && id.bytes().all(|b| b.is_ascii_alphanumeric()));
    let ids: HashSet<String> = (0..20)
        .map(|_| s.upload("x.txt", b"x")["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 20);
}

#[test]
fn download_serves_bytes_with_safe_headers() {
    let s = Server::start();
    let text = fixture("notes-utf8.txt");
    let r = s.upload("notes.txt", &text);
    let id = r["id"].as_str().unwrap();
    let mut res = s.get(&format!("/{id}"));
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "content-type"), "text/plain; charset=utf-8");
    assert_eq!(header(&res, "x-content-type-options"), "nosniff");
    assert!(header(&res, "content-disposition").starts_with("inline"));
    assert_eq!(bytes(&mut res), text);

    let r = s.upload("r%C3%A9sum%C3%A9%20final.txt", b"cv");
    let res = s.get(&format!("/{}?download=1", r["id"].as_str().unwrap()));
    assert_eq!(
        header(&res, "content-disposition"),
        "attachment; filename=\"r_sum_ final.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20final.txt"
    );
}

#[test]
fn type_comes_from_magic_bytes_before_the_name() {
    let s = Server::start();
    let png = fixture("pixel.png");
    let r = s.upload("not-really.txt", &png);
    assert_eq!(r["content_type"], "image/png");
    assert_eq!(r["editable"], false);
    let mut res = s.get(&format!("/{}", r["id"].as_str().unwrap()));
    assert_eq!(header(&res, "content-type"), "image/png");
    assert!(header(&res, "content-disposition").starts_with("inline"));
    assert_eq!(bytes(&mut res), png);
    // Unknown binary bytes download rather than render.
    let r = s.upload("blob", b"\x00\x01\x02\xff");
    assert_eq!(r["content_type"], "application/octet-stream");
    let res = s.get(&format!("/{}", r["id"].as_str().unwrap()));
    assert!(header(&res, "content-disposition").starts_with("attachment"));
}

#[test]
fn active_content_is_sandboxed() {
    let s = Server::start();
    for (name, ty) in [("page.html", "text/html"), ("drawing.svg", "image/svg+xml")] {
        let r = s.upload(name, &fixture(name));
        assert_eq!(r["content_type"], ty);
        let res = s.get(&format!("/{}", r["id"].as_str().unwrap()));
        let csp = header(&res, "content-security-policy");
        assert_eq!(
            csp, "sandbox allow-scripts allow-forms allow-popups",
            "{name}"
        );
        assert!(!csp.contains("allow-same-origin"));
        assert_eq!(header(&res, "x-content-type-options"), "nosniff");
    }
    let r = s.upload("plain.txt", b"x");
    let res = s.get(&format!("/{}", r["id"].as_str().unwrap()));
    assert_eq!(
        header(&res, "content-security-policy"),
        "sandbox allow-scripts allow-forms allow-popups",
        "every user file is sandboxed, as a backstop"
    );
}

#[test]
fn multipart_upload_with_one_part_is_a_single_file() {
    let s = Server::start();
    let (ct, body) = multipart(&[("file", Some("from-form.txt"), b"form bytes")]);
    let mut res = s.post_with("/?tag=forms", &[("content-type", &ct)], &body);
    assert_eq!(res.status(), 201);
    let r = json(&mut res);
    assert_eq!(r["name"], "from-form.txt");
    assert_eq!(r["size"], 10);
    assert_eq!(r["tags"], serde_json::json!(["forms"]));
    let mut got = s.get(&format!("/{}", r["id"].as_str().unwrap()));
    assert_eq!(text(&mut got), "form bytes");
    // Form fields count like query parameters (a browser form sends them).
    let (ct, body) = multipart(&[("ttl", None, b"1d"), ("file", Some("f.txt"), b"x")]);
    let r = json(&mut s.post_with("/", &[("content-type", &ct)], &body));
    assert_eq!(r["expires_in"], 86_400);
    let (ct, body) = multipart(&[("note", None, b"no file here")]);
    assert_error(
        &mut s.post_with("/", &[("content-type", &ct)], &body),
        400,
        "bad_request",
    );
}

#[test]
fn ttl_notation_and_clamping() {
    let s = Server::start();
    for (ttl, want) in [
        ("1d", 86_400),
        ("6h", 21_600),
        ("6", 21_600),
        ("1h", 14_400),
        ("30d", 1_209_600),
    ] {
        let r = json(&mut s.post(&format!("/?name=a.txt&ttl={ttl}"), b"a"));
        assert_eq!(r["expires_in"], want, "ttl={ttl}");
    }
    for bad in ["abc", "0h", "-1d", "1w", "1.5h"] {
        assert_error(
            &mut s.post(&format!("/?name=a.txt&ttl={bad}"), b"a"),
            400,
            "bad_request",
        );
    }
}

#[test]
fn once_files_burn_after_reading_but_not_on_head() {
    let s = Server::start();
    let r = json(&mut s.post("/?name=secret.txt&once=1", b"burn me"));
    let path = format!("/{}", r["id"].as_str().unwrap());
    let head = s.head(&path);
    assert_eq!(head.status(), 200);
    assert_eq!(header(&head, "content-length"), "7");
    assert_eq!(s.head(&path).status(), 200, "HEAD never burns");
    let mut first = s.get(&path);
    assert_eq!(first.status(), 200);
    assert_eq!(header(&first, "cache-control"), "no-store");
    assert_eq!(text(&mut first), "burn me");
    assert_error(&mut s.get(&path), 404, "not_found");
    assert_eq!(
        s.head(&path).status(),
        404,
        "HEAD answers 404 too (without a body)"
    );
}

#[test]
fn downloads_carry_validators_and_serve_ranges() {
    let s = Server::start();
    let body: Vec<u8> = (0..100u8).map(|i| b'a' + i % 26).collect();
    let r = json(&mut s.post("/?name=abc.txt", &body));
    let path = format!("/{}", r["id"].as_str().unwrap());
    let mut whole = s.get(&path);
    assert_eq!(whole.status(), 200);
    assert_eq!(header(&whole, "accept-ranges"), "bytes");
    let etag = header(&whole, "etag");
    let modified = header(&whole, "last-modified");
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
        "{etag}"
    );
    assert!(modified.ends_with(" GMT"), "{modified}");
    assert_eq!(bytes(&mut whole), body);
    let head = s.head(&path);
    assert_eq!(
        (header(&head, "etag"), header(&head, "last-modified")),
        (etag.clone(), modified.clone())
    );

    // Validators: 304 with the tag, and no body.
    for (name, value) in [
        ("if-none-match", etag.as_str()),
        ("if-modified-since", modified.as_str()),
    ] {
        let mut res = s.get_with(&path, &[(name, value)]);
        assert_eq!(res.status(), 304, "{name}");
        assert_eq!(header(&res, "etag"), etag);
        assert!(bytes(&mut res).is_empty());
    }
    assert_eq!(
        s.head_with(&path, &[("if-none-match", &etag)]).status(),
        304
    );
    assert_eq!(
        s.get_with(&path, &[("if-none-match", "\"other\"")])
            .status(),
        200
    );

    // One range: 206 with Content-Range; clamped; suffix; past the end 416.
    for (range, start, end) in [
        ("bytes=10-19", 10, 19),
        ("bytes=90-500", 90, 99),
        ("bytes=-5", 95, 99),
    ] {
        let mut res = s.get_with(&path, &[("range", range)]);
        assert_eq!(res.status(), 206, "{range}");
        assert_eq!(
            header(&res, "content-range"),
            format!("bytes {start}-{end}/100")
        );
        assert_eq!(
            header(&res, "content-length"),
            (end - start + 1).to_string()
        );
        assert_eq!(bytes(&mut res), &body[start..=end], "{range}");
    }
    let mut past = s.get_with(&path, &[("range", "bytes=100-")]);
    assert_eq!(header(&past, "content-range"), "bytes */100");
    assert_error(&mut past, 416, "range_not_satisfiable");
    let head = s.head_with(&path, &[("range", "bytes=0-9")]);
    assert_eq!(head.status(), 206, "HEAD agrees with GET");
    assert_eq!(header(&head, "content-length"), "10");
    for ignored in [("range", "bytes=0-1,5-6"), ("range", "bytes=x-y")] {
        assert_eq!(s.get_with(&path, &[ignored]).status(), 200, "{ignored:?}");
    }
    let stale = [("range", "bytes=0-9"), ("if-range", "\"stale\"")];
    assert_eq!(
        s.get_with(&path, &stale).status(),
        200,
        "a stale If-Range gets it all"
    );
    let fresh = [("range", "bytes=0-9"), ("if-range", etag.as_str())];
    assert_eq!(s.get_with(&path, &fresh).status(), 206);

    // New bytes, new tag: the old one no longer matches.
    assert_eq!(s.put(&path, &[], b"replaced").status(), 200);
    let mut after = s.get_with(&path, &[("if-none-match", &etag)]);
    assert_eq!(after.status(), 200, "nothing stale after PUT");
    assert_ne!(header(&after, "etag"), etag);
    assert_eq!(text(&mut after), "replaced");
}

#[test]
fn large_files_serve_ranges_without_reading_the_rest() {
    let s = Server::start();
    let body = pattern(300_000);
    let r = json(&mut s.post("/?name=big.bin", &body));
    let path = format!("/{}", r["id"].as_str().unwrap());
    for (start, end) in [(0usize, 999usize), (150_000, 250_000), (299_000, 299_999)] {
        let mut res = s.get_with(&path, &[("range", &format!("bytes={start}-{end}"))]);
        assert_eq!(res.status(), 206);
        assert!(bytes(&mut res) == body[start..=end], "bytes {start}-{end}");
    }
}

#[test]
fn once_files_ignore_ranges_and_validators() {
    let s = Server::start();
    let r = json(&mut s.post("/?name=secret.txt&once=1", b"burn me whole"));
    let path = format!("/{}", r["id"].as_str().unwrap());
    let head = s.head(&path);
    assert!(head.headers().get("accept-ranges").is_none());
    assert!(head.headers().get("etag").is_none());
    let mut res = s.get_with(&path, &[("range", "bytes=0-3"), ("if-none-match", "*")]);
    assert_eq!(res.status(), 200, "a whole 200 that burns it");
    assert_eq!(header(&res, "cache-control"), "no-store");
    assert_eq!(text(&mut res), "burn me whole");
    assert_error(&mut s.get(&path), 404, "not_found");
}

#[test]
fn encoded_uploads_are_refused_and_store_nothing() {
    let s = Server::start();
    for encoding in ["gzip", "br", "identity, gzip"] {
        let mut res = s.post_with(
            "/?name=a.txt",
            &[("content-encoding", encoding)],
            b"\x1f\x8b bytes",
        );
        assert_error(&mut res, 501, "unsupported");
    }
    assert_eq!(s.blob_count(), 0, "nothing stored");
    let plain = s.post_with(
        "/?name=a.txt",
        &[("content-encoding", "identity")],
        b"plain",
    );
    assert_eq!(plain.status(), 201, "identity is the bytes as they are");
}

/// Uploads `body` with `query`, then has `readers` clients GET it at once:
/// each answer's status and body.
fn concurrent_reads(s: &Server, query: &str, body: &[u8], readers: usize) -> Vec<(u16, String)> {
    let r = json(&mut s.post(&format!("/?{query}"), body));
    let url = s.url(&format!("/{}", r["id"].as_str().unwrap()));
    let handles: Vec<_> = (0..readers)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let mut res = agent.get(&url).call().unwrap();
                (
                    res.status().as_u16(),
                    res.body_mut().read_to_string().unwrap(),
                )
            })
        })
        .collect();
    let results: Vec<(u16, String)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        results.iter().all(|(st, _)| *st == 200 || *st == 404),
        "{results:?}"
    );
    results
}

#[test]
fn once_files_are_served_once_to_concurrent_readers() {
    let s = Server::start();
    let results = concurrent_reads(&s, "name=secret.txt&once=1", b"only once", 12);
    let served: Vec<_> = results.iter().filter(|(st, _)| *st == 200).collect();
    assert_eq!(served.len(), 1, "{results:?}");
    assert_eq!(served[0].1, "only once");
}

#[test]
fn a_limited_file_is_served_exactly_its_count_to_ten_more_concurrent_readers() {
    let s = Server::start();
    for n in [2, 5] {
        let query = format!("name=limited.txt&max_downloads={n}");
        let results = concurrent_reads(&s, &query, b"counted", n + 10);
        let served: Vec<_> = results.iter().filter(|(st, _)| *st == 200).collect();
        assert_eq!(served.len(), n, "max_downloads={n}: {results:?}");
        assert!(served.iter().all(|(_, body)| body == "counted"));
    }
}

#[test]
fn delete_removes_the_file() {
    let s = Server::start();
    let r = s.upload("a.txt", b"bye");
    let path = format!("/{}", r["id"].as_str().unwrap());
    let mut res = s.delete(&path, &[]);
    assert_eq!(res.status(), 200);
    assert_eq!(json(&mut res)["deleted"], true);
    assert_error(&mut s.get(&path), 404, "not_found");
    assert_error(&mut s.delete(&path, &[]), 404, "not_found");
    assert_eq!(s.blob_count(), 0, "the bytes are gone too");
}

#[test]
fn tags_change_without_touching_content_or_expiry() {
    let s = Server::start();
    let r = json(&mut s.post("/?name=a.txt&tag=one&tag=two", b"content"));
    let path = format!("/{}", r["id"].as_str().unwrap());
    let mut res = s.post_empty(&format!("{path}?tag=three&untag=one"), &[]);
    assert_eq!(res.status(), 200);
    let t = json(&mut res);
    assert_eq!(t["tags"], serde_json::json!(["two", "three"]));
    assert_eq!(t["expires_at"], r["expires_at"]);
    assert_eq!(t["size"], r["size"]);
    assert_eq!(text(&mut s.get(&path)), "content");
    assert_error(
        &mut s.post_empty(&format!("{path}?tag=Bad"), &[]),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post_empty(&format!("{path}?tag=a,b,c,d"), &[]),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post_empty(&format!("{path}?tag={}", "x".repeat(25)), &[]),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post_empty(&format!("{path}?bogus=1"), &[]),
        400,
        "bad_request",
    );
    let after = json(&mut s.post_empty(&format!("{path}?tag=two"), &[]));
    assert_eq!(
        after["tags"],
        serde_json::json!(["two", "three"]),
        "failed updates changed nothing"
    );
}

#[test]
fn browse_filters_sorts_and_negotiates() {
    let s = Server::start();
    let up = |name: &str, tags: &str, body: &[u8]| {
        std::thread::sleep(std::time::Duration::from_millis(1100)); // distinct created_at seconds
        json(&mut s.post(&format!("/?name={name}&{tags}"), body))
    };
    up("alpha.md", "tag=rust&tag=docs", b"aaaa");
    up("beta.txt", "tag=rust", b"b");
    up("gamma.txt", "tag=go", b"gg");
    s.upload("hidden.txt", b"untagged files are not listed");
    json(&mut s.post("/?name=burn.txt&tag=rust&once=1", b"never listed"));
    let names = |q: &str| -> Vec<String> {
        let mut res = s.get(&format!("/browse{q}"));
        assert_eq!(res.status(), 200, "{q}");
        json(&mut res)
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(""),
        ["gamma.txt", "beta.txt", "alpha.md"],
        "default: created desc"
    );
    assert_eq!(names("?tag=rust"), ["beta.txt", "alpha.md"]);
    assert_eq!(names("?tag=rust&tag=docs"), ["alpha.md"], "tags AND");
    assert_eq!(names("?q=gam"), ["gamma.txt"]);
    assert_eq!(names("?q=doc"), ["alpha.md"], "q matches tags too");
    assert_eq!(
        names("?sort=size&order=asc"),
        ["beta.txt", "gamma.txt", "alpha.md"]
    );
    assert_eq!(
        names("?sort=name&order=asc"),
        ["alpha.md", "beta.txt", "gamma.txt"]
    );
    assert_eq!(
        names("?sort=created&order=asc"),
        ["alpha.md", "beta.txt", "gamma.txt"]
    );
    let mut res = s.get("/browse?tag=rust");
    let entry = &json(&mut res)[0];
    for field in [
        "id",
        "url",
        "name",
        "content_type",
        "size",
        "tags",
        "created_at",
        "expires_at",
    ] {
        assert!(entry.get(field).is_some(), "browse entry has {field}");
    }
    assert_error(&mut s.get("/browse?sort=weight"), 400, "bad_request");
    assert_error(&mut s.get("/browse?order=sideways"), 400, "bad_request");
    let mut page = s.get_with("/browse?tag=rust", &[("accept", "text/html")]);
    assert!(header(&page, "content-type").starts_with("text/html"));
    let html = text(&mut page);
    assert!(html.contains("beta.txt") && !html.contains("gamma.txt"));
}

#[test]
fn put_and_patch_edit_text_files_only() {
    let s = Server::start();
    let r = s.upload("log.txt", b"one");
    let path = format!("/{}", r["id"].as_str().unwrap());
    let mut res = s.put(&path, &[], b"two");
    assert_eq!(res.status(), 200);
    assert_eq!(json(&mut res)["size"], 3);
    let mut res = s.patch(&path, &[], b" three");
    assert_eq!(json(&mut res)["size"], 9);
    assert_eq!(text(&mut s.get(&path)), "two three");
    assert_error(&mut s.patch(&path, &[], b"\xff\xfe"), 400, "bad_request");
    assert_eq!(
        text(&mut s.get(&path)),
        "two three",
        "a refused edit changed nothing"
    );

    let png = s.upload("pixel.png", &fixture("pixel.png"));
    let png_path = format!("/{}", png["id"].as_str().unwrap());
    assert_error(&mut s.put(&png_path, &[], b"text"), 403, "forbidden");
    assert_error(&mut s.patch(&png_path, &[], b"text"), 403, "forbidden");
    assert_eq!(bytes(&mut s.get(&png_path)), fixture("pixel.png"));
    assert_error(&mut s.put("/nosuchid0000", &[], b"x"), 404, "not_found");
}

#[test]
fn patch_past_the_size_limit_is_too_large() {
    let s = Server::start();
    let r = s.upload("big.txt", &vec![b'a'; 5_242_000]);
    let path = format!("/{}", r["id"].as_str().unwrap());
    assert_error(&mut s.patch(&path, &[], &[b'b'; 1000]), 413, "too_large");
    assert_eq!(
        json(&mut s.patch(&path, &[], &[b'b'; 880]))["size"],
        5_242_880
    );
}

#[test]
fn retention_needs_the_token_and_then_guards_the_file() {
    let s = Server::start();
    let bearer = format!("Bearer {RETAIN_TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let r = s.upload("keep.txt", b"keep");
    let path = format!("/{}", r["id"].as_str().unwrap());
    assert_error(
        &mut s.post_empty(&format!("{path}?retain=1"), &[]),
        401,
        "write_denied",
    );
    assert_error(
        &mut s.post_empty(&format!("{path}?retain=1&token=wrong"), &[]),
        401,
        "write_denied",
    );
    let mut res = s.post_empty(&format!("{path}?retain=1"), &auth);
    assert_eq!(res.status(), 200);
    let kept = json(&mut res);
    assert_eq!(kept["id"], r["id"]);
    assert_eq!(kept["url"], r["url"]);
    assert_eq!(kept["retention"], "indefinite");
    assert!(kept["expires_at"].is_null());
    let p = &kept["persistence"];
    assert_eq!(p["type"], "single");
    assert!(p["expires_at"].is_null());
    assert_eq!(p["extendable_by"], "none");
    assert!(p["max_age"].is_null());
    assert_eq!(p["retention"], "indefinite");
    // Idempotent, and the query form works too.
    let again = json(&mut s.post_empty(&format!("{path}?retain=1&token={RETAIN_TOKEN}"), &[]));
    assert_eq!(again, kept);
    // Public read; writes and deletes need the token.
    assert_eq!(text(&mut s.get(&path)), "keep");
    assert_error(&mut s.put(&path, &[], b"x"), 401, "write_denied");
    assert_error(&mut s.patch(&path, &[], b"x"), 401, "write_denied");
    assert_error(&mut s.delete(&path, &[]), 401, "write_denied");
    assert_error(
        &mut s.post_empty(&format!("{path}?tag=x"), &[]),
        401,
        "write_denied",
    );
    assert_eq!(s.patch(&path, &auth, b"!").status(), 200);
    assert_eq!(text(&mut s.get(&path)), "keep!");
    assert_eq!(s.delete(&path, &auth).status(), 200);
    assert_error(&mut s.get(&path), 404, "not_found");
}

#[test]
fn upload_or_edit_with_the_token_retains() {
    let s = Server::start();
    let bearer = format!("Bearer {RETAIN_TOKEN}");
    let mut res = s.post_with("/?name=k.txt", &[("authorization", &bearer)], b"k");
    assert_eq!(res.status(), 201);
    let r = json(&mut res);
    assert!(r["expires_at"].is_null() && r["expires_in"].is_null());
    assert!(r["persistence"]["expires_at"].is_null());
    assert_eq!(r["persistence"]["retention"], "indefinite");
    assert_error(
        &mut s.post_with("/?name=k.txt", &[("authorization", "Bearer nope")], b"k"),
        401,
        "write_denied",
    );

    let r = s.upload("e.txt", b"e");
    let path = format!("/{}", r["id"].as_str().unwrap());
    let edited = json(&mut s.put(&format!("{path}?token={RETAIN_TOKEN}"), &[], b"edited"));
    assert!(
        edited["expires_at"].is_null(),
        "PUT with the token retains implicitly"
    );
    assert_eq!(edited["persistence"]["retention"], "indefinite");
}

#[test]
fn retention_off_when_no_token_is_configured() {
    let s = Server::with_env(&[]);
    assert_eq!(json(&mut s.get("/api"))["retention_token"], false);
    let r = s.upload("a.txt", b"a");
    let path = format!("/{}?retain=1&token=anything", r["id"].as_str().unwrap());
    assert_error(&mut s.post_empty(&path, &[]), 401, "write_denied");
}

#[test]
fn api_describes_the_contract() {
    let s = Server::start();
    let mut res = s.get("/api");
    assert_eq!(res.status(), 200);
    let c = json(&mut res);
    assert_eq!(c["service"], "storesrv");
    assert_eq!(c["version"], "1.54.1");
    assert_eq!(c["base_url"], s.base);
    assert_eq!(c["ttl_seconds"], 14_400);
    assert_eq!(
        c["dir_ttl_seconds"],
        serde_json::json!({"min": 14_400, "default": 604_800, "max": 1_209_600})
    );
    assert_eq!(c["max_file_bytes"], 5_242_880);
    assert_eq!(c["pool_bytes"], 104_857_600);
    assert_eq!(c["retention_token"], true);
    assert!(c["endpoints"].as_object().is_some_and(|e| !e.is_empty()));
    let errors = c["errors"].as_object().unwrap();
    for (code, http) in [
        ("bad_request", 400),
        ("write_denied", 401),
        ("forbidden", 403),
        ("not_found", 404),
        ("missing_length", 411),
        ("too_large", 413),
        ("rate_limited", 429),
        ("unsupported", 501),
        ("pool_full", 507),
    ] {
        assert_eq!(errors[code]["http"], http, "{code}");
        assert!(errors[code]["meaning"].is_string() && errors[code]["retry"].is_string());
    }
    assert_eq!(c["limits"]["file_bytes_max"], 5_242_880);
    assert_eq!(c["limits"]["history_limit"], 200);
    assert_eq!(c["limits"]["comment_cooldown_secs"], 20);
}

#[test]
fn bad_input_gets_a_json_error_and_changes_nothing() {
    let s = Server::start();
    let mut refused = s.post("/?name=a/b.txt", b"x");
    // Refused before its body was read: the server closes the connection,
    // and says so, so that no client sends its next request on it.
    assert_eq!(
        refused.headers().get("connection").map(|v| v.as_bytes()),
        Some(&b"close"[..])
    );
    assert_error(&mut refused, 400, "bad_request");
    assert_error(&mut s.post("/?name=..", b"x"), 400, "bad_request");
    assert_error(&mut s.post("/?name=", b"x"), 400, "bad_request");
    assert_error(
        &mut s.post("/?name=a.txt&once=1&share=shared", b"x"),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post("/?name=a.txt&once=maybe", b"x"),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post("/?name=a.txt&tag=a&tag=b&tag=c&tag=d&tag=e&tag=f", b"x"),
        400,
        "bad_request",
    );
    // A client that waits for the answer before sending (Expect:
    // 100-continue, as curl does for large bodies) is told 413 at once.
    let res = s.raw(b"POST /?name=a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5242881\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
    assert!(res.starts_with("HTTP/1.1 413"), "{res}");
    assert_error(&mut s.get("/doesnotexist"), 404, "not_found");
    assert_error(&mut s.get("/help/nothing/here"), 404, "not_found");
    assert_eq!(s.blob_count(), 0, "no bytes were kept");
    assert!(json(&mut s.get("/browse")).as_array().unwrap().is_empty());
    // Exactly the limit is fine.
    assert_eq!(
        s.post("/?name=max.bin", &vec![0u8; 5_242_880]).status(),
        201
    );
}

#[test]
fn length_rules_are_enforced_before_reading() {
    let s = Server::start();
    // Chunked bodies are refused with 411.
    let res = s.raw(b"POST /?name=a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    assert!(res.starts_with("HTTP/1.1 411"), "{res}");
    assert!(res.contains("\"code\": \"missing_length\""), "{res}");
    // A body without any length is refused with 411.
    let res = s.raw(b"POST /?name=a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(res.starts_with("HTTP/1.1 411"), "{res}");
    let res = s.raw(b"PUT /abcdefabcdef HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(res.starts_with("HTTP/1.1 411"), "{res}");
    // A declared length over the limit is refused at once, without sending
    // the body (the server answers although the body never comes).
    let res = s.raw_answer(b"POST /?name=a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 6000000\r\nConnection: close\r\n\r\n");
    assert!(res.starts_with("HTTP/1.1 413"), "{res}");
    assert!(res.contains("too_large"), "{res}");
    assert_eq!(s.blob_count(), 0);
}

#[test]
fn an_oversized_multipart_part_is_refused_while_streaming() {
    let s = Server::start();
    let (ct, body) = multipart(&[("file", Some("big.bin"), &vec![7u8; 5_242_881])]);
    let mut req = format!("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).into_bytes();
    req.extend_from_slice(&body);
    let res = s.raw(&req);
    assert!(
        res.starts_with("HTTP/1.1 413"),
        "{}",
        &res[..res.len().min(200)]
    );
    assert_eq!(s.blob_count(), 0, "the partial upload left nothing behind");
    assert_eq!(s.temp_file_count(), 0, "no temp file either");
}

#[test]
fn a_multipart_part_with_huge_headers_is_refused() {
    let s = Server::start();
    let boundary = "b0undary";
    let mut body = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nX-Pad: ").into_bytes();
    body.extend(std::iter::repeat_n(b'p', 64 * 1024));
    body.extend_from_slice(format!("\r\n\r\nhello\r\n--{boundary}--\r\n").as_bytes());
    let ct = format!("multipart/form-data; boundary={boundary}");
    assert_error(
        &mut s.post_with("/", &[("content-type", &ct)], &body),
        400,
        "bad_request",
    );
    assert_eq!(s.blob_count(), 0);
}

#[test]
fn unsupported_methods_answer_501() {
    let s = Server::start();
    let r = s.upload("a.txt", b"a");
    let res = s.raw(
        format!(
            "OPTIONS /{} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            r["id"].as_str().unwrap()
        )
        .as_bytes(),
    );
    assert!(res.starts_with("HTTP/1.1 501"), "{res}");
    assert!(res.contains("unsupported"));
    assert_error(&mut s.delete("/", &[]), 501, "unsupported");
    assert_error(&mut s.post("/api", b""), 501, "unsupported");
}

#[test]
fn a_restart_keeps_every_object_and_its_bytes() {
    let mut s = Server::start();
    let bearer = format!("Bearer {RETAIN_TOKEN}");
    let plain = s.upload("plain.txt", b"plain bytes");
    let png = s.upload("pixel.png", &fixture("pixel.png"));
    let once = json(&mut s.post("/?name=once.txt&once=1", b"once"));
    let tagged = json(&mut s.post("/?name=tagged.txt&tag=keep", b"tagged"));
    let kept = json(&mut s.post_with("/?name=kept.txt", &[("authorization", &bearer)], b"kept"));
    s.restart();
    let id = |v: &serde_json::Value| format!("/{}", v["id"].as_str().unwrap());
    assert_eq!(text(&mut s.get(&id(&plain))), "plain bytes");
    assert_eq!(bytes(&mut s.get(&id(&png))), fixture("pixel.png"));
    assert_eq!(
        text(&mut s.get(&id(&once))),
        "once",
        "a once file survives a restart unread"
    );
    assert_error(&mut s.get(&id(&once)), 404, "not_found");
    assert_eq!(text(&mut s.get(&id(&kept))), "kept");
    assert_error(&mut s.delete(&id(&kept), &[]), 401, "write_denied");
    let listed = json(&mut s.get("/browse?tag=keep"));
    assert_eq!(listed[0]["id"], tagged["id"], "the tag index survives");
    assert!(
        s.log().contains("5 objects"),
        "recovery counted the objects: {}",
        s.log()
    );
    assert!(s.stop().success());
    // Only sled keeps a log to fold; PostgreSQL needs nothing at a stop.
    if !crate::common::on_postgres() {
        assert!(
            s.log().contains("database log folded"),
            "a clean stop prepares a fast start: {}",
            s.log()
        );
    }
}

#[test]
fn bytes_left_by_a_crash_are_collected_after_a_restart_while_it_serves() {
    let mut s = Server::start();
    let kept = s.upload("kept.txt", b"kept bytes");
    // The first collection must be over before the orphan is planted, or
    // it may be the one that removes it (and logs it).
    s.wait_for_every_log("orphan collection done");
    // Bytes committed without a record, and without an upload's intent
    // (when processes share the store): what a crash between the two steps
    // of a write leaves. Their age does not matter.
    if let Some(blobs) = s.s3_blobs() {
        let mut w = store_core::BlobStore::create(&blobs).unwrap();
        w.write(b"orphan").unwrap();
        w.commit().unwrap();
    } else {
        let fan = s.data_dir().join("blobs").join("ab");
        std::fs::create_dir_all(&fan).unwrap();
        std::fs::write(fan.join("ab0123456789abcdef0123456789abcd"), b"orphan").unwrap();
    }
    assert_eq!(s.blob_count(), 2);
    s.restart();
    let id = format!("/{}", kept["id"].as_str().unwrap());
    assert_eq!(text(&mut s.get(&id)), "kept bytes");
    // The collection runs in the background; wait for its log line.
    s.wait_for_every_log("orphan collection done");
    assert_eq!(s.blob_count(), 1, "the orphan went, the kept bytes stayed");
    assert_eq!(text(&mut s.get(&id)), "kept bytes");
    assert!(s.log().contains("removed=1"), "{}", s.log());
}

/// A real client: curl cut off in the middle of a download (by its own
/// time limit, at a low rate) and then resumed with `-C -` ends with the
/// exact bytes, and the resumption was a 206.
#[test]
fn curl_resumes_a_download_cut_in_the_middle() {
    let s = Server::start();
    let body: Vec<u8> = (0..2_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    let r = json(&mut s.post("/?name=resume.bin", &body));
    let url = r["url"].as_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("resume.bin");
    let curl = |args: &[&str]| {
        std::process::Command::new("curl")
            .args(["-s", "-o"])
            .arg(&out)
            .args(args)
            .arg(&url)
            .status()
            .expect("curl runs")
    };
    let cut = curl(&["--limit-rate", "10k", "--max-time", "1"]);
    assert_eq!(cut.code(), Some(28), "cut off by its time limit");
    let partial = std::fs::metadata(&out).unwrap().len();
    assert!(
        partial > 0 && partial < body.len() as u64,
        "{partial} bytes kept"
    );
    assert!(curl(&["-C", "-", "--fail"]).success());
    assert!(std::fs::read(&out).unwrap() == body, "byte-identical");
    let log = s.log();
    assert!(
        log.lines()
            .any(|l| l.contains("route=\"get_file\"") && l.contains("status=206")),
        "the resumption is a 206: {log}"
    );
}

#[test]
fn owner_tokens_change_the_expiry_and_guard_protected_files() {
    let s = Server::start();
    let mut res = s.post("/?name=a.txt&protect=1", b"hello");
    assert_eq!(res.status(), 201);
    assert_eq!(header(&res, "cache-control"), "no-store");
    let token = header(&res, "x-store-owner");
    let r = json(&mut res);
    assert_eq!(r["owner_token"], token.as_str(), "{r}");
    assert!(token.len() >= 22, "at least 128 bits");
    assert_eq!(r["protected"], true);
    let id = r["id"].as_str().unwrap();
    let mut info = s.get(&format!("/{id}?info=1"));
    let info = json(&mut info);
    assert!(info.get("owner_token").is_none(), "shown once: {info}");
    assert_eq!(info["protected"], true);

    let denied = |mut res: Response<Body>| {
        assert_eq!(res.status(), 401);
        assert_eq!(json(&mut res)["code"], "write_denied");
    };
    denied(s.delete(&format!("/{id}"), &[]));
    denied(s.delete(&format!("/{id}?owner=not-the-owner-token"), &[]));
    denied(s.put(&format!("/{id}"), &[], b"other"));
    denied(s.post_empty(&format!("/{id}?ttl=2d"), &[]));
    denied(s.post_empty(
        &format!("/{id}?ttl=2d"),
        &[("x-store-owner", "not-the-owner-token")],
    ));
    let mut res = s.post_empty(&format!("/{id}?ttl=1d&tag=x"), &[("x-store-owner", &token)]);
    assert_eq!(res.status(), 400, "two keywords: {}", json(&mut res));

    let mut res = s.post_empty(&format!("/{id}?ttl=2d"), &[("x-store-owner", &token)]);
    assert_eq!(res.status(), 200);
    let r = json(&mut res);
    assert_eq!(r["expires_in"], 172_800, "counted from now: {r}");
    assert!(r.get("owner_token").is_none());
    let res = s.put(&format!("/{id}"), &[("x-store-owner", &token)], b"new");
    assert_eq!(res.status(), 200);
    let res = s.delete(&format!("/{id}?owner={token}"), &[]);
    assert_eq!(res.status(), 200);
    assert_eq!(s.get(&format!("/{id}")).status(), 404);
    assert!(!s.log().contains(&token), "never logged");

    // Without protect=1 a file stays open to anyone with its URL (SPEC.md).
    let open = s.upload("b.txt", b"b");
    assert_eq!(open["protected"], false);
    assert!(open["owner_token"].is_string());
    let res = s.delete(&format!("/{}", open["id"].as_str().unwrap()), &[]);
    assert_eq!(res.status(), 200);
}

#[test]
fn a_dirs_owner_token_sets_its_sliding_lifetime() {
    let s = Server::start();
    let mut res = s.post_empty("/?dir=1&name=owned-dir&write=1", &[]);
    assert_eq!(res.status(), 201);
    let token = header(&res, "x-store-owner");
    let d = json(&mut res);
    assert_eq!(d["owner_token"], token.as_str(), "{d}");
    assert_eq!(d["write_protected"], true);
    let mut again = s.post_empty("/?dir=1&name=owned-dir", &[]);
    assert_eq!(again.status(), 200);
    assert!(json(&mut again).get("owner_token").is_none());
    assert_eq!(s.post_empty("/d/owned-dir?ttl=2d", &[]).status(), 401);
    let mut res = s.post_empty("/d/owned-dir?ttl=2d", &[("x-store-owner", &token)]);
    assert_eq!(res.status(), 200);
    let d = json(&mut res);
    assert_eq!(d["max_age"], 172_800, "{d}");
    assert_eq!(d["persistence"]["max_age"], 172_800);
    // The owner passes the write gate, as the write token does.
    let res = s.put("/d/owned-dir/a.txt", &[("x-store-owner", &token)], b"a");
    assert_eq!(res.status(), 200);
    assert_eq!(s.put("/d/owned-dir/b.txt", &[], b"b").status(), 401);
}

#[test]
fn a_limited_file_is_served_its_count_whole_and_uncached_then_goes() {
    let s = Server::start();
    for bad in [
        "max_downloads=0",
        "max_downloads=1001",
        "max_downloads=two",
        "once=1&max_downloads=2",
    ] {
        let mut res = s.post(&format!("/?name=x.txt&{bad}"), b"x");
        assert_eq!(res.status(), 400, "{bad}: {}", json(&mut res));
    }
    let once = s.upload("once.txt", b"x");
    assert!(once.get("downloads_left").is_none(), "not counted: {once}");
    let r = json(&mut s.post("/?name=o.txt&once=1", b"x"));
    assert_eq!(r["downloads_left"], 1, "once=1 is max_downloads=1");
    let r = json(&mut s.post("/?name=report.txt&max_downloads=3", b"0123456789"));
    assert_eq!(r["downloads_left"], 3, "{r}");
    let id = r["id"].as_str().unwrap();
    for left in [3, 2, 1] {
        let info = json(&mut s.get(&format!("/{id}?info=1")));
        assert_eq!(info["downloads_left"], left);
        // A browser gets a page first, which counts nothing.
        assert_eq!(
            header(
                &s.get_with(&format!("/{id}"), &[("Accept", "text/html")]),
                "content-type"
            ),
            "text/html; charset=utf-8"
        );
        assert_eq!(
            s.head(&format!("/{id}")).status(),
            200,
            "HEAD counts nothing"
        );
        // Every download is whole and uncached: a range is ignored.
        let mut res = s.get_with(&format!("/{id}"), &[("Range", "bytes=0-3")]);
        assert_eq!(res.status(), 200);
        assert_eq!(header(&res, "cache-control"), "no-store");
        assert_eq!(bytes(&mut res), b"0123456789");
    }
    assert_eq!(s.get(&format!("/{id}")).status(), 404);
}

#[test]
fn owner_tokens_guard_bundles_and_every_change_to_a_protected_file() {
    let s = Server::start();
    let (ct, body) = multipart(&[("file", Some("a.txt"), b"a"), ("file", Some("b.txt"), b"b")]);
    let mut res = s.post_with("/?protect=1", &[("Content-Type", &ct)], &body);
    assert_eq!(res.status(), 201);
    let bundle = json(&mut res);
    let (id, token) = (
        bundle["id"].as_str().unwrap(),
        bundle["owner_token"].as_str().unwrap(),
    );
    assert_eq!(bundle["protected"], true);
    assert_eq!(s.delete(&format!("/{id}"), &[]).status(), 401);
    let mut res = s.post_empty(&format!("/{id}?ttl=1d"), &[("x-store-owner", token)]);
    assert_eq!(res.status(), 200);
    assert_eq!(json(&mut res)["bundle"], true);
    assert_eq!(
        s.delete(&format!("/{id}"), &[("x-store-owner", token)])
            .status(),
        200
    );

    let mut res = s.post("/?name=p.txt&protect=1", b"p");
    let token = header(&res, "x-store-owner");
    let id = json(&mut res)["id"].as_str().unwrap().to_string();
    let owner = [("x-store-owner", token.as_str())];
    assert_eq!(s.patch(&format!("/{id}"), &[], b"+").status(), 401);
    assert_eq!(s.post_empty(&format!("/{id}?tag=t"), &[]).status(), 401);
    assert_eq!(s.patch(&format!("/{id}"), &owner, b"+").status(), 200);
    assert_eq!(s.post_empty(&format!("/{id}?tag=t"), &owner).status(), 200);
    // A body posted with ?ttl= is refused, not dropped.
    assert_eq!(
        s.post_with(&format!("/{id}?ttl=1d"), &owner, b"x").status(),
        400
    );
    // An empty owner header is a mistake worth a 400, as for X-Store-Write.
    assert_eq!(
        s.delete(&format!("/{id}"), &[("x-store-owner", "")])
            .status(),
        400
    );
}

#[test]
fn a_dir_cannot_be_protected_and_a_share_that_creates_answers_a_token() {
    let s = Server::start();
    let mut res = s.post_empty("/?dir=1&name=prot-dir&protect=1", &[]);
    assert_eq!(res.status(), 400, "{}", json(&mut res));
    assert_eq!(
        s.post("/?name=a.txt&share=shared-x&protect=1", b"a")
            .status(),
        400
    );
    let mut res = s.post("/?name=a.txt&share=shared-x", b"a");
    assert_eq!(res.status(), 201);
    let token = header(&res, "x-store-owner");
    assert_eq!(json(&mut res)["owner_token"], token.as_str());
    let mut res = s.post("/?name=b.txt&share=shared-x", b"b");
    assert_eq!(res.status(), 200);
    assert!(
        json(&mut res).get("owner_token").is_none(),
        "found, not made"
    );
    let wrong = [("x-store-owner", "not-the-owner-token")];
    assert_eq!(s.put("/d/shared-x/c.txt", &wrong, b"c").status(), 401);
    assert_eq!(
        s.delete("/d/shared-x", &[("x-store-owner", &token)])
            .status(),
        200
    );
}
