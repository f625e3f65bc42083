//! Bundles, dirs, show-dirs and the store pool over HTTP, against the real
//! binary (issue 3).

use crate::common::*;
use serde_json::Value;
use std::io::Read;

fn unzip(bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a valid zip");
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index(i).unwrap();
            let mut data = vec![];
            f.read_to_end(&mut data).unwrap();
            (f.name().unwrap().to_string(), data)
        })
        .collect()
}

fn post_parts(
    s: &Server,
    path: &str,
    parts: &[(&str, Option<&str>, &[u8])],
    headers: &[(&str, &str)],
) -> Response<Body> {
    let (ct, body) = multipart(parts);
    let mut h: Vec<(&str, &str)> = vec![("content-type", &ct)];
    h.extend_from_slice(headers);
    s.post_with(path, &h, &body)
}

fn bearer() -> String {
    format!("Bearer {RETAIN_TOKEN}")
}

// ---- bundles

#[test]
fn bundle_members_and_dir_files_serve_ranges_and_validators() {
    let s = Server::start();
    let mut res = post_parts(
        &s,
        "/",
        &[
            ("file", Some("a.txt"), b"alpha beta"),
            ("file", Some("b.txt"), b"beta"),
        ],
        &[],
    );
    let id = json(&mut res)["id"].as_str().unwrap().to_string();
    let member = format!("/{id}/a.txt");
    let whole = s.get(&member);
    let etag = header(&whole, "etag");
    assert_eq!(header(&whole, "accept-ranges"), "bytes");
    assert_eq!(
        s.get_with(&member, &[("if-none-match", &etag)]).status(),
        304
    );
    let mut part = s.get_with(&member, &[("range", "bytes=6-")]);
    assert_eq!(part.status(), 206);
    assert_eq!(text(&mut part), "beta");

    assert_eq!(create_dir(&s, "name=ranged").0, 201);
    let file = "/d/ranged/log.txt";
    assert_eq!(s.put(file, &[], b"one\n").status(), 200);
    let first = header(&s.get(file), "etag");
    assert_eq!(s.get_with(file, &[("if-none-match", &first)]).status(), 304);
    assert_eq!(s.patch(file, &[], b"two\n").status(), 200);
    let mut after = s.get_with(file, &[("if-none-match", &first)]);
    assert_eq!(
        after.status(),
        200,
        "an append makes new bytes, and a new tag"
    );
    assert_ne!(header(&after, "etag"), first);
    assert_eq!(text(&mut after), "one\ntwo\n");
    let mut tail = s.get_with(file, &[("range", "bytes=-4")]);
    assert_eq!(header(&tail, "content-range"), "bytes 4-7/8");
    assert_eq!(text(&mut tail), "two\n");
    // A bad `download=` is answered where the headers are written: after
    // a missing file's 404, a matching tag's 304 and a range past the
    // end's 416, as before the router read the parameters.
    let bad = "download=maybe";
    let now = header(&after, "etag");
    for (path, headers, want) in [
        (format!("/d/ranged/gone.txt?{bad}"), vec![], 404),
        (
            format!("{file}?{bad}"),
            vec![("if-none-match", now.as_str())],
            304,
        ),
        (format!("{file}?{bad}"), vec![("range", "bytes=100-")], 416),
        (
            format!("{member}?{bad}"),
            vec![("if-none-match", etag.as_str())],
            304,
        ),
        (format!("{file}?{bad}"), vec![], 400),
    ] {
        assert_eq!(
            s.get_with(&path, &headers).status(),
            want,
            "{path} {headers:?}"
        );
    }
}

#[test]
fn two_parts_make_a_bundle_with_the_spec_record() {
    let s = Server::start();
    let mut res = post_parts(
        &s,
        "/?ttl=1d",
        &[
            ("file", Some("a.txt"), b"alpha"),
            ("file", Some("b c.txt"), b"beta"),
        ],
        &[],
    );
    assert_eq!(res.status(), 201);
    let b = json(&mut res);
    let id = b["id"].as_str().unwrap();
    assert_eq!(b["url"], s.url(&format!("/{id}")));
    assert_eq!(b["bundle"], true);
    assert_eq!(b["editable"], false);
    let p = &b["persistence"];
    assert_eq!(p["type"], "bundle");
    assert_eq!(p["extendable_by"], "none");
    assert!(p["max_age"].is_null());
    assert_eq!(p["expires_at"], b["expires_at"]);
    assert!(b["expires_at"].is_string());
    let files = b["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[1]["name"], "b c.txt");
    assert_eq!(files[1]["url"], s.url(&format!("/{id}/b%20c.txt")));
    assert_eq!(files[1]["size"], 4);
    assert_eq!(files[1]["content_type"], "text/plain");
    // One file of it, with the same headers as single files.
    let mut m = s.get(&format!("/{id}/b%20c.txt"));
    assert_eq!(m.status(), 200);
    assert_eq!(header(&m, "x-content-type-options"), "nosniff");
    assert_eq!(text(&mut m), "beta");
    assert_error(&mut s.get(&format!("/{id}/missing.txt")), 404, "not_found");
}

#[test]
fn a_bundle_is_a_zip_for_agents_and_a_page_for_browsers() {
    let s = Server::start();
    let b = json(&mut post_parts(
        &s,
        "/",
        &[
            ("file", Some("a.txt"), b"alpha"),
            ("file", Some("pic.bin"), &[0, 1, 2, 255]),
        ],
        &[],
    ));
    let id = b["id"].as_str().unwrap();
    let mut res = s.get(&format!("/{id}"));
    assert_eq!(header(&res, "content-type"), "application/zip");
    let entries = unzip(bytes(&mut res));
    assert_eq!(
        entries,
        vec![
            ("a.txt".to_string(), b"alpha".to_vec()),
            ("pic.bin".to_string(), vec![0, 1, 2, 255])
        ]
    );
    let mut page = s.get_with(&format!("/{id}"), &[("accept", "text/html")]);
    assert!(header(&page, "content-type").starts_with("text/html"));
    assert!(text(&mut page).contains("pic.bin"));

    let site = json(&mut post_parts(
        &s,
        "/",
        &[
            ("file", Some("index.html"), b"<h1>site</h1>"),
            ("file", Some("style.css"), b"h1{}"),
        ],
        &[],
    ));
    let mut page = s.get_with(
        &format!("/{}", site["id"].as_str().unwrap()),
        &[("accept", "text/html")],
    );
    assert_eq!(
        text(&mut page),
        "<h1>site</h1>",
        "index.html is served inline to browsers"
    );
    assert_eq!(
        header(&page, "content-security-policy"),
        "sandbox allow-scripts allow-forms allow-popups"
    );
}

#[test]
fn bundles_refuse_edits_and_bad_names() {
    let s = Server::start();
    let b = json(&mut post_parts(
        &s,
        "/",
        &[("file", Some("a.txt"), b"a"), ("file", Some("b.txt"), b"b")],
        &[],
    ));
    let path = format!("/{}", b["id"].as_str().unwrap());
    assert_error(&mut s.put(&path, &[], b"x"), 403, "forbidden");
    assert_error(&mut s.patch(&path, &[], b"x"), 403, "forbidden");
    for parts in [
        vec![
            ("file", Some("same.txt"), &b"1"[..]),
            ("file", Some("same.txt"), &b"2"[..]),
        ],
        vec![
            ("file", Some("../up.txt"), &b"1"[..]),
            ("file", Some("b.txt"), &b"2"[..]),
        ],
        vec![
            ("file", Some("a\\b.txt"), &b"1"[..]),
            ("file", Some("b.txt"), &b"2"[..]),
        ],
    ] {
        assert_error(&mut post_parts(&s, "/", &parts, &[]), 400, "bad_request");
    }
    assert_error(
        &mut post_parts(
            &s,
            "/?once=1",
            &[("file", Some("a"), b"1"), ("file", Some("b"), b"2")],
            &[],
        ),
        400,
        "bad_request",
    );
    assert_eq!(s.blob_count(), 2, "refused bundles left no bytes");
}

#[test]
fn bundles_can_be_retained_and_deleted() {
    let s = Server::start();
    let b = json(&mut post_parts(
        &s,
        "/",
        &[("file", Some("a.txt"), b"a"), ("file", Some("b.txt"), b"b")],
        &[],
    ));
    let path = format!("/{}", b["id"].as_str().unwrap());
    let auth = bearer();
    let mut res = s.post_empty(&format!("{path}?retain=1"), &[("authorization", &auth)]);
    assert_eq!(res.status(), 200);
    let r = json(&mut res);
    assert_eq!(r["persistence"]["type"], "bundle");
    assert_eq!(r["retention"], "indefinite");
    assert_error(&mut s.delete(&path, &[]), 401, "write_denied");
    assert_eq!(s.delete(&path, &[("authorization", &auth)]).status(), 200);
    assert_error(&mut s.get(&path), 404, "not_found");
    assert_eq!(s.blob_count(), 0);
}

// ---- dirs

fn create_dir(s: &Server, query: &str) -> (u16, Value) {
    let mut res = s.post_empty(&format!("/?dir=1&{query}"), &[]);
    let status = res.status().as_u16();
    (status, json(&mut res))
}

#[test]
fn unnamed_and_named_dirs() {
    let s = Server::start();
    let (status, d) = create_dir(&s, "");
    assert_eq!(status, 201);
    let id = d["id"].as_str().unwrap();
    assert_eq!(id.len(), 32);
    assert!(id
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert_eq!(d["url"], s.url(&format!("/d/{id}")));
    assert_eq!(d["dir"], true);
    assert_eq!(d["editable"], false);
    assert_eq!(d["max_age"], 604_800);
    assert_eq!(d["persistence"]["type"], "dir");
    assert_eq!(d["persistence"]["extendable_by"], "activity");
    assert_eq!(d["persistence"]["max_age"], 604_800);
    assert!(d["files"].as_array().unwrap().is_empty());
    assert!(d["tags"].as_array().unwrap().is_empty());
    assert!(d.get("write_token").is_none());

    let (status, first) = create_dir(&s, "name=team-notes&listed=1&tag=work&ttl=1d");
    assert_eq!(status, 201);
    assert_eq!(first["id"], "team-notes");
    assert_eq!(first["name"], "team-notes");
    assert_eq!(first["max_age"], 86_400);
    let (status, again) = create_dir(&s, "name=team-notes&ttl=14d&tag=other");
    assert_eq!(status, 200, "named creation is create-or-get");
    assert_eq!(
        again["max_age"], 86_400,
        "flags apply only on first creation"
    );
    assert_eq!(again["tags"], serde_json::json!(["work"]));
    assert_eq!(again["listed"], true);
    // Ttl clamps, names follow the rules.
    assert_eq!(create_dir(&s, "name=short-dir&ttl=1h").1["max_age"], 14_400);
    assert_eq!(
        create_dir(&s, "name=long-dir&ttl=99d").1["max_age"],
        1_209_600
    );
    for bad in [
        "name=abc",
        "name=Upper-Case",
        "name=browse",
        "tag=a&tag=b&tag=c&tag=d&tag=e&tag=f",
        "ttl=soon",
        "write=short",
    ] {
        let (status, body) = create_dir(&s, bad);
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("bad_request")),
            "{bad}"
        );
    }
}

#[test]
fn files_in_a_dir_slide_its_lifetime_and_record_history() {
    let s = Server::start();
    let mut res = post_parts(
        &s,
        "/?dir=1&name=work-area&ttl=4h",
        &[("file", Some("notes.txt"), b"first")],
        &[],
    );
    assert_eq!(res.status(), 201);
    let created = json(&mut res);
    assert_eq!(created["files"][0]["name"], "notes.txt");
    assert_eq!(created["files"][0]["editable"], true);
    assert_eq!(created["files"][0]["url"], s.url("/d/work-area/notes.txt"));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let mut res = post_parts(
        &s,
        "/d/work-area",
        &[("file", Some("pic.bin"), &[1, 2, 3])],
        &[],
    );
    assert_eq!(res.status(), 200);
    let added = json(&mut res);
    assert!(
        added["expires_at"].as_str() > created["expires_at"].as_str(),
        "activity slides expires_at"
    );
    assert_eq!(added["files"].as_array().unwrap().len(), 2);
    // Raw body with name= works too.
    assert_eq!(s.post("/d/work-area?name=raw.txt", b"raw").status(), 200);
    assert_eq!(text(&mut s.get("/d/work-area/raw.txt")), "raw");
    assert_eq!(text(&mut s.get("/d/work-area/notes.txt")), "first");
    assert_eq!(
        s.put("/d/work-area/notes.txt", &[], b"second").status(),
        200
    );
    assert_eq!(
        s.patch("/d/work-area/notes.txt", &[], b" third").status(),
        200
    );
    assert_eq!(text(&mut s.get("/d/work-area/notes.txt")), "second third");
    assert_error(
        &mut s.put("/d/work-area/pic.bin", &[], b"x"),
        403,
        "forbidden",
    );
    assert_error(
        &mut s.patch("/d/work-area/pic.bin", &[], b"x"),
        403,
        "forbidden",
    );
    assert_error(
        &mut s.patch("/d/work-area/missing.txt", &[], b"x"),
        404,
        "not_found",
    );
    assert_eq!(
        s.put("/d/work-area/new.md", &[], b"# new").status(),
        200,
        "PUT creates a text file"
    );
    assert_eq!(s.delete("/d/work-area/raw.txt", &[]).status(), 200);
    assert_error(&mut s.get("/d/work-area/raw.txt"), 404, "not_found");
    let mut res = s.get("/d/work-area/history");
    assert_eq!(res.status(), 200);
    let history = json(&mut res);
    let actions: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["delete", "add", "append", "replace", "add", "add", "add"]
    );
    let newest = &history[0];
    assert_eq!(newest["file"], "raw.txt");
    assert_eq!(newest["bytes"], 3);
    assert!(newest["ts"].is_f64() || newest["ts"].is_u64());
    assert!(
        history[0]["ts"].as_f64() >= history[6]["ts"].as_f64(),
        "newest first"
    );
    // Listing: JSON for agents, HTML for browsers, and ?json=1 / ?html=1.
    let listing = json(&mut s.get("/d/work-area"));
    let names: Vec<&str> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["notes.txt", "pic.bin", "new.md"]);
    assert!(header(
        &s.get_with("/d/work-area", &[("accept", "text/html")]),
        "content-type"
    )
    .starts_with("text/html"));
    assert!(header(&s.get("/d/work-area?html=1"), "content-type").starts_with("text/html"));
    assert!(header(
        &s.get_with("/d/work-area?json=1", &[("accept", "text/html")]),
        "content-type"
    )
    .starts_with("application/json"));
    // The zip holds every file.
    let mut zipped = s.get("/d/work-area?zip=1");
    assert_eq!(header(&zipped, "content-type"), "application/zip");
    let entries = unzip(bytes(&mut zipped));
    assert_eq!(entries.len(), 3);
    assert!(entries.contains(&("notes.txt".to_string(), b"second third".to_vec())));
    assert!(entries.contains(&("pic.bin".to_string(), vec![1, 2, 3])));
    assert_error(
        &mut post_parts(&s, "/d/work-area", &[("file", Some("history"), b"x")], &[]),
        400,
        "bad_request",
    );
    // Deleting the whole dir.
    assert_eq!(s.delete("/d/work-area", &[]).status(), 200);
    assert_error(&mut s.get("/d/work-area"), 404, "not_found");
    assert_error(&mut s.get("/d/work-area/notes.txt"), 404, "not_found");
    assert_eq!(s.blob_count(), 0);
}

#[test]
fn write_tokens_gate_writes_and_leave_reads_open() {
    let s = Server::start();
    let (_, d) = create_dir(&s, "name=locked-dir&write=1");
    let token = d["write_token"]
        .as_str()
        .expect("write_token is returned on creation")
        .to_string();
    assert!(token.len() >= 22);
    let (_, again) = create_dir(&s, "name=locked-dir&write=1");
    assert!(again.get("write_token").is_none(), "returned once");
    assert_error(
        &mut s.post("/d/locked-dir?name=a.txt", b"a"),
        401,
        "write_denied",
    );
    assert_error(
        &mut s.post("/d/locked-dir?name=a.txt&write=wrong-token-123456", b"a"),
        401,
        "write_denied",
    );
    assert_eq!(
        s.post_with(
            "/d/locked-dir?name=a.txt",
            &[("x-store-write", &token)],
            b"a"
        )
        .status(),
        200
    );
    assert_eq!(
        s.post(&format!("/d/locked-dir?name=b.txt&write={token}"), b"b")
            .status(),
        200
    );
    assert_error(
        &mut s.put("/d/locked-dir/a.txt", &[], b"x"),
        401,
        "write_denied",
    );
    assert_error(
        &mut s.patch("/d/locked-dir/a.txt", &[], b"x"),
        401,
        "write_denied",
    );
    assert_error(
        &mut s.delete("/d/locked-dir/a.txt", &[]),
        401,
        "write_denied",
    );
    assert_error(&mut s.delete("/d/locked-dir", &[]), 401, "write_denied");
    assert_error(
        &mut post_parts(
            &s,
            "/?dir=1&name=locked-dir",
            &[("file", Some("c.txt"), b"c")],
            &[],
        ),
        401,
        "write_denied",
    );
    // Reads, history and zip stay open.
    assert_eq!(text(&mut s.get("/d/locked-dir/a.txt")), "a");
    assert_eq!(s.get("/d/locked-dir/history").status(), 200);
    assert_eq!(unzip(bytes(&mut s.get("/d/locked-dir?zip=1"))).len(), 2);
    // A caller's own token.
    let (_, mine) = create_dir(&s, "name=my-dir&write=my_own-token_12345");
    assert_eq!(mine["write_token"], "my_own-token_12345");
    assert_eq!(
        s.post_with(
            "/d/my-dir?name=a.txt",
            &[("x-store-write", "my_own-token_12345")],
            b"a"
        )
        .status(),
        200
    );
    assert_eq!(
        s.delete("/d/my-dir", &[("x-store-write", "my_own-token_12345")])
            .status(),
        200
    );
}

#[test]
fn show_dirs_are_open_to_all_and_indefinite() {
    let s = Server::start();
    let auth = bearer();
    assert_error(
        &mut s.post_empty("/?dir=1&show=1&name=open-wall", &[]),
        401,
        "write_denied",
    );
    let mut res = s.post_empty("/?dir=1&show=1&name=open-wall", &[("authorization", &auth)]);
    assert_eq!(res.status(), 201);
    let d = json(&mut res);
    assert_eq!(d["id"], "open-wall");
    assert_eq!(d["dir"], true);
    assert_eq!(d["open"], true);
    let p = &d["persistence"];
    assert_eq!(p["type"], "dir");
    assert!(p["expires_at"].is_null());
    assert_eq!(p["extendable_by"], "none");
    assert!(p["max_age"].is_null());
    assert_eq!(p["retention"], "indefinite");
    // Anyone may add, edit and delete files; history records it all.
    assert_eq!(s.post("/d/open-wall?name=a.txt", b"a").status(), 200);
    assert_eq!(s.patch("/d/open-wall/a.txt", &[], b"b").status(), 200);
    assert_eq!(s.delete("/d/open-wall/a.txt", &[]).status(), 200);
    assert_eq!(
        json(&mut s.get("/d/open-wall/history"))
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // Deleting it whole still needs the token.
    assert_error(&mut s.delete("/d/open-wall", &[]), 401, "write_denied");
    assert_eq!(
        s.delete("/d/open-wall", &[("authorization", &auth)])
            .status(),
        200
    );

    // Flipping an existing dir: token required, idempotent.
    create_dir(&s, "name=flip-me");
    assert_error(
        &mut s.post_empty("/d/flip-me?show=1", &[]),
        401,
        "write_denied",
    );
    let flipped = json(&mut s.post_empty("/d/flip-me?show=1", &[("authorization", &auth)]));
    assert_eq!(flipped["open"], true);
    assert!(flipped["expires_at"].is_null());
    let again = json(&mut s.post_empty("/d/flip-me?show=1", &[("authorization", &auth)]));
    assert_eq!(again["open"], true);
}

#[test]
fn dirs_can_be_retained() {
    let s = Server::start();
    create_dir(&s, "name=keep-dir");
    assert_error(
        &mut s.post_empty("/d/keep-dir?retain=1", &[]),
        401,
        "write_denied",
    );
    let r = json(&mut s.post_empty(&format!("/d/keep-dir?retain=1&token={RETAIN_TOKEN}"), &[]));
    assert_eq!(r["id"], "keep-dir");
    assert_eq!(r["url"], s.url("/d/keep-dir"));
    assert_eq!(r["retention"], "indefinite");
    assert!(r["expires_at"].is_null());
    assert_eq!(r["persistence"]["type"], "dir");
    assert_eq!(r["persistence"]["retention"], "indefinite");
    assert_error(
        &mut s.post("/d/keep-dir?name=a.txt", b"a"),
        401,
        "write_denied",
    );
    assert_eq!(
        s.post_with(
            "/d/keep-dir?name=a.txt",
            &[("authorization", &bearer())],
            b"a"
        )
        .status(),
        200
    );
}

#[test]
fn share_uploads_into_a_named_dir() {
    let s = Server::start();
    let mut res = s.post("/?name=report.txt&share=shared-box", b"report");
    assert_eq!(res.status(), 201);
    let d = json(&mut res);
    assert_eq!(d["url"], s.url("/d/shared-box"));
    assert_eq!(d["dir"], true);
    assert_eq!(d["persistence"]["extendable_by"], "activity");
    let mut res = s.post("/?name=second.txt&share=shared-box", b"more");
    assert_eq!(res.status(), 200, "create-or-get");
    assert_eq!(json(&mut res)["files"].as_array().unwrap().len(), 2);
    assert_eq!(text(&mut s.get("/d/shared-box/report.txt")), "report");
    assert_error(
        &mut s.post("/?name=x.txt&share=shared-box&once=1", b"x"),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post("/?name=x.txt&share=no", b"x"),
        400,
        "bad_request",
    );
}

#[test]
fn listed_dirs_with_filters_and_sorting() {
    let s = Server::start();
    create_dir(&s, "name=alpha-dir&listed=1&tag=red");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    create_dir(&s, "name=beta-dir&listed=1");
    create_dir(&s, "name=secret-dir");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    s.post("/d/alpha-dir?name=a.txt", b"a");
    let ids = |q: &str| -> Vec<String> {
        let mut res = s.get(&format!("/d{q}"));
        assert_eq!(res.status(), 200, "{q}");
        json(&mut res)
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ids(""),
        ["beta-dir", "alpha-dir"],
        "listed only, created desc"
    );
    assert_eq!(ids("?order=asc"), ["alpha-dir", "beta-dir"]);
    assert_eq!(ids("?sort=updated"), ["alpha-dir", "beta-dir"]);
    assert_eq!(ids("?sort=name&order=asc"), ["alpha-dir", "beta-dir"]);
    assert_eq!(ids("?q=red"), ["alpha-dir"], "q matches tags");
    assert_eq!(ids("?q=bet"), ["beta-dir"], "q matches names");
    let alpha = json(&mut s.get("/d/alpha-dir"));
    let created = alpha["created_at"].as_str().unwrap();
    assert_eq!(ids(&format!("?created_after={created}")), ["beta-dir"]);
    assert_eq!(
        ids(&format!("?created_before={created}")),
        Vec::<String>::new()
    );
    let offset_form = created.replace('Z', "%2B00:00");
    assert_eq!(
        ids(&format!("?created_after={offset_form}")),
        ["beta-dir"],
        "RFC 3339 offsets work"
    );
    assert_error(&mut s.get("/d?created_after=yesterday"), 400, "bad_request");
    assert_error(&mut s.get("/d?sort=size"), 400, "bad_request");
}

#[test]
fn concurrent_patches_to_one_dir_file_all_land() {
    let s = Server::start();
    s.post("/?dir=1&name=log-dir", b"");
    assert_eq!(s.post("/d/log-dir?name=log.txt", b"").status(), 200);
    let url = s.url("/d/log-dir/log.txt");
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                agent
                    .patch(&url)
                    .send(format!("line {i}\n").as_bytes())
                    .unwrap()
                    .status()
                    .as_u16()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 200);
    }
    assert_eq!(text(&mut s.get("/d/log-dir/log.txt")).lines().count(), 8);
    assert_eq!(
        json(&mut s.get("/d/log-dir/history"))
            .as_array()
            .unwrap()
            .len(),
        9
    );
}

#[test]
fn dirs_and_bundles_survive_a_restart() {
    let mut s = Server::start();
    let (_, d) = create_dir(&s, "name=durable-dir&write=1");
    let token = d["write_token"].as_str().unwrap().to_string();
    s.post_with(
        "/d/durable-dir?name=a.txt",
        &[("x-store-write", &token)],
        b"kept",
    );
    let b = json(&mut post_parts(
        &s,
        "/",
        &[("file", Some("a"), b"1"), ("file", Some("b"), b"2")],
        &[],
    ));
    s.restart();
    assert_eq!(text(&mut s.get("/d/durable-dir/a.txt")), "kept");
    assert_error(
        &mut s.post("/d/durable-dir?name=b.txt", b"b"),
        401,
        "write_denied",
    );
    assert_eq!(
        s.post_with(
            "/d/durable-dir?name=b.txt",
            &[("x-store-write", &token)],
            b"b"
        )
        .status(),
        200
    );
    assert_eq!(
        unzip(bytes(
            &mut s.get(&format!("/{}", b["id"].as_str().unwrap()))
        ))
        .len(),
        2
    );
    assert_eq!(
        json(&mut s.get("/d/durable-dir/history"))
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

// ---- the pool

#[test]
fn the_pool_evicts_soonest_expiry_first_and_answers_507_when_full() {
    let s = Server::with_env(&[
        ("STORE_RETAIN_TOKEN", RETAIN_TOKEN),
        ("STORE_POOL_BYTES", "3000"),
    ]);
    let auth = bearer();
    let kept = json(&mut s.post_with("/?name=kept.bin", &[("authorization", &auth)], &[1; 1000]));
    let (_, _) = create_dir(&s, "name=pool-dir&ttl=1d");
    s.post("/d/pool-dir?name=a.bin", &[2; 500]);
    s.post("/d/pool-dir?name=b.bin", &[2; 500]);
    let late = json(&mut s.post("/?name=late.bin&ttl=14d", &[3; 900]));
    // 2900 of 3000 used. The dir (1 day) expires before the 14-day file: it
    // goes first, as a whole.
    let new = json(&mut s.post("/?name=new.bin&ttl=14d", &[4; 500]));
    assert!(new["id"].is_string());
    assert_error(&mut s.get("/d/pool-dir"), 404, "not_found");
    assert_eq!(
        s.get(&format!("/{}", late["id"].as_str().unwrap()))
            .status(),
        200
    );
    assert_eq!(
        s.get(&format!("/{}", kept["id"].as_str().unwrap()))
            .status(),
        200
    );
    // Retained bytes never go; what cannot fit is 507 with Retry-After.
    let mut res = s.post_with("/?name=big.bin", &[("authorization", &auth)], &[5; 2500]);
    assert_error_with_retry(&mut res);
    assert_eq!(
        s.get(&format!("/{}", late["id"].as_str().unwrap()))
            .status(),
        200,
        "nothing was evicted for a refused upload"
    );
    let api = json(&mut s.get("/api"));
    assert_eq!(api["pool_bytes"], 3000);
}

fn assert_error_with_retry(res: &mut Response<Body>) {
    assert_eq!(res.status(), 507);
    assert_eq!(header(res, "retry-after"), "300");
    let body = json(res);
    assert_eq!(body["code"], "pool_full");
    assert_eq!(body["retry_after"], 300);
}
