//! Moderation (CONTRACT.md "Operators: moderation and webhooks"): the
//! admin's listing and search, deleting any object, and the blocklist.
//! Under STORE_TEST_BACKEND=cluster two processes serve these requests in
//! turn, so a block made through one holds on the other.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::common::{assert_error, json, multipart, text, Server};

const ADMIN: &str = "the-admin-token";

fn moderated() -> Server {
    Server::with_env(&[("STORE_ADMIN_TOKEN", ADMIN)])
}

fn bearer() -> String {
    format!("Bearer {ADMIN}")
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Uploads `bytes` as `name`; the answer's id.
fn upload(s: &Server, name: &str, bytes: &[u8]) -> String {
    let mut res = s.post(&format!("/?name={name}"), bytes);
    assert_eq!(res.status(), 201);
    json(&mut res)["id"].as_str().unwrap().to_string()
}

/// `GET /admin` with `query`, as the admin.
fn admin(s: &Server, query: &str) -> Value {
    let auth = bearer();
    let mut res = s.get_with(&format!("/admin{query}"), &[("authorization", &auth)]);
    assert_eq!(res.status(), 200);
    json(&mut res)
}

fn keys(page: &Value) -> Vec<String> {
    page["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn without_an_admin_token_configured_there_is_no_admin() {
    let s = Server::start();
    assert_error(&mut s.get("/admin"), 404, "not_found");
    let auth = bearer();
    assert_error(
        &mut s.post_with("/admin/block", &[("authorization", &auth)], b"{}"),
        404,
        "not_found",
    );
}

#[test]
fn the_admin_lists_searches_and_pages_every_live_object() {
    let s = moderated();
    assert_error(&mut s.get("/admin"), 401, "write_denied");
    assert_error(
        &mut s.get_with("/admin", &[("authorization", "Bearer wrong")]),
        401,
        "write_denied",
    );
    let photo = upload(&s, "holiday-photo.txt", b"sunny");
    let notes = upload(&s, "notes.txt", b"plain notes");
    let mut dir = s.post_empty("/?dir=1&name=photo-album", &[]);
    assert_eq!(dir.status(), 201);
    drop(json(&mut dir));

    let all = admin(&s, "");
    let listed = keys(&all);
    for key in [&photo, &notes, &"d/photo-album".to_string()] {
        assert!(listed.contains(key), "{key} in {listed:?}");
    }
    let first = &all["objects"][listed.iter().position(|k| *k == photo).unwrap()];
    assert_eq!(first["kind"], "file");
    assert_eq!(first["sha256"], json!([hex_sha256(b"sunny")]));
    assert_eq!(first["url"], format!("{}/{photo}", s.base));

    assert_eq!(
        keys(&admin(&s, "?q=photo")),
        ["d/photo-album", photo.as_str()]
    );
    assert_eq!(keys(&admin(&s, "?q=HOLIDAY+photo")), [photo.as_str()]);
    let by_digest = admin(&s, &format!("?q={}", hex_sha256(b"plain notes")));
    assert_eq!(keys(&by_digest), [notes.as_str()]);
    assert_eq!(keys(&admin(&s, &format!("?q={notes}")))[0], notes);

    let page = admin(&s, "?limit=2");
    assert_eq!(keys(&page).len(), 2);
    let next = page["next"].as_str().expect("a next page");
    let next = next.strip_prefix(&s.base).unwrap();
    let rest = admin(&s, &next[next.find('?').unwrap()..]);
    let mut seen = keys(&page);
    seen.extend(keys(&rest));
    assert_eq!(seen, listed, "two pages hold what one does, in order");
    assert!(rest["next"].is_null());
    assert_error(
        &mut s.get_with("/admin?limit=0", &[("authorization", &bearer())]),
        400,
        "bad_request",
    );

    // A browser carries the token in the URL, and gets the page.
    let mut page = s.get_with(
        &format!("/admin?q=notes&token={ADMIN}"),
        &[("accept", "text/html")],
    );
    assert_eq!(page.status(), 200);
    let html = text(&mut page);
    assert!(
        html.contains("notes.txt") && html.contains("Block bytes"),
        "{html}"
    );
}

#[test]
fn the_admin_deletes_any_object_by_its_key_or_its_usual_url() {
    let s = moderated();
    let auth = bearer();
    let a = upload(&s, "a.txt", b"a");
    let b = upload(&s, "b.txt", b"b");
    let mut res = s.post_with(
        "/admin/delete",
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        json!({ "key": a }).to_string().as_bytes(),
    );
    assert_eq!(res.status(), 200);
    assert_eq!(json(&mut res)["deleted"], true);
    assert_error(&mut s.get(&format!("/{a}")), 404, "not_found");
    assert_eq!(
        s.delete(&format!("/{b}"), &[("authorization", &auth)])
            .status(),
        200
    );
    assert_error(&mut s.get(&format!("/{b}")), 404, "not_found");
    let mut missing = s.post_with(
        "/admin/delete",
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        br#"{"key": "nothere1"}"#,
    );
    assert_error(&mut missing, 404, "not_found");
    // A browser's form: the token in a field, then back to the page.
    let c = upload(&s, "c.txt", b"c");
    let form = format!("token={ADMIN}&key={c}&confirm=1");
    let res = s.post_with(
        "/admin/delete",
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("accept", "text/html"),
        ],
        form.as_bytes(),
    );
    assert_eq!(res.status(), 303);
    assert_error(&mut s.get(&format!("/{c}")), 404, "not_found");
}

#[test]
fn blocked_bytes_are_removed_and_refused_in_every_way_they_come() {
    let s = moderated();
    let auth = bearer();
    let bad: &[u8] = b"these bytes are not welcome here";
    let live = upload(&s, "bad.bin", bad);
    let kept = upload(&s, "good.bin", b"fine bytes");
    let (ctype, body) = multipart(&[
        ("file", Some("bad.bin"), bad),
        ("file", Some("ok.txt"), b"ok"),
    ]);
    let mut dir = s.post_with("/?dir=1&name=mixed-box", &[("content-type", &ctype)], &body);
    assert_eq!(dir.status(), 201);
    drop(json(&mut dir));

    let block = json!({ "sha256": hex_sha256(bad), "reason": "malware" }).to_string();
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
    ];
    assert_error(
        &mut s.post_with(
            "/admin/block",
            &[("content-type", "application/json")],
            block.as_bytes(),
        ),
        401,
        "write_denied",
    );
    let mut res = s.post_with("/admin/block", &headers, block.as_bytes());
    assert_eq!(res.status(), 200);
    let done = json(&mut res);
    assert_eq!(done["reason"], "malware");
    let mut removed: Vec<&str> = done["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    removed.sort_unstable();
    let mut want = vec!["d/mixed-box", live.as_str()];
    want.sort_unstable();
    assert_eq!(removed, want);
    assert_error(&mut s.get(&format!("/{live}")), 404, "not_found");
    assert_eq!(s.get(&format!("/{kept}")).status(), 200);
    assert_error(&mut s.get("/d/mixed-box/bad.bin"), 404, "not_found");
    assert_eq!(s.get("/d/mixed-box/ok.txt").status(), 200);

    // Every way in answers 451 and stores nothing, through either process.
    for _ in 0..2 {
        assert_error(&mut s.post("/?name=again.bin", bad), 451, "blocked");
    }
    let (ctype, body) = multipart(&[("file", Some("x.bin"), bad), ("file", Some("y.txt"), b"y")]);
    assert_error(
        &mut s.post_with("/", &[("content-type", &ctype)], &body),
        451,
        "blocked",
    );
    assert_error(
        &mut s.post("/d/mixed-box?name=back.bin", bad),
        451,
        "blocked",
    );
    assert!(keys(&admin(&s, &format!("?q={}", hex_sha256(bad)))).is_empty());
    let listed = admin(&s, "");
    assert_eq!(listed["blocked"][0]["sha256"], hex_sha256(bad));

    for (body, why) in [
        (json!({ "sha256": "abc", "reason": "x" }), "a short digest"),
        (
            json!({ "sha256": hex_sha256(b"x"), "reason": "" }),
            "no reason",
        ),
        (
            json!({ "sha256": hex_sha256(b"x"), "reason": "r".repeat(1001) }),
            "a long reason",
        ),
    ] {
        let mut res = s.post_with("/admin/block", &headers, body.to_string().as_bytes());
        assert_eq!(res.status(), 400, "{why}");
        drop(text(&mut res));
    }
}

#[test]
fn a_block_survives_a_restart() {
    let mut s = moderated();
    let block = json!({ "sha256": hex_sha256(b"gone"), "reason": "spam" }).to_string();
    let auth = bearer();
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
    ];
    assert_eq!(
        s.post_with("/admin/block", &headers, block.as_bytes())
            .status(),
        200
    );
    s.restart();
    assert_error(&mut s.post("/?name=g.txt", b"gone"), 451, "blocked");
}

#[test]
fn visitors_report_objects_and_the_admin_reads_and_clears_the_queue() {
    let s = moderated();
    let file = upload(&s, "spam.txt", b"buy now");
    let mut dir = s.post_empty("/?dir=1&name=odd-folder", &[]);
    assert_eq!(dir.status(), 201);
    drop(json(&mut dir));
    let reason = |r: &str| json!({ "reason": r }).to_string();
    let as_json = [("content-type", "application/json")];

    let mut res = s.post_with(
        &format!("/{file}?report=1"),
        &as_json,
        reason("spam").as_bytes(),
    );
    assert_eq!(res.status(), 202);
    assert_eq!(json(&mut res)["reported"], true);
    let form = [("content-type", "application/x-www-form-urlencoded")];
    assert_eq!(
        s.post_with(
            "/d/odd-folder?report=1",
            &form,
            b"reason=looks+like+phishing"
        )
        .status(),
        202
    );
    for (path, body, status, code) in [
        ("/nothere1?report=1", reason("x"), 404, "not_found"),
        (
            &*format!("/{file}?report=1"),
            reason(""),
            400,
            "bad_request",
        ),
        (
            &*format!("/{file}?report=1"),
            reason(&"r".repeat(1001)),
            400,
            "bad_request",
        ),
    ] {
        assert_error(
            &mut s.post_with(path, &as_json, body.as_bytes()),
            status,
            code,
        );
    }

    assert_error(&mut s.get("/admin?reports=1"), 401, "write_denied");
    let queue = admin(&s, "?reports=1");
    let reports = queue["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{queue}");
    // Oldest first; two reports made within one tick of the clock may come
    // either way (the store breaks the tie by the reports' random ids).
    let of = |key: &str| {
        reports
            .iter()
            .find(|r| r["key"] == key)
            .unwrap_or_else(|| panic!("no report of {key}: {queue}"))
    };
    let on_file = of(file.as_str());
    assert_eq!(on_file["reason"], "spam");
    assert_eq!(on_file["object"]["kind"], "file");
    assert_eq!(of("d/odd-folder")["reason"], "looks like phishing");

    let auth = bearer();
    let id = on_file["id"].as_str().unwrap();
    let clear = json!({ "id": id }).to_string();
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
    ];
    assert_eq!(
        s.post_with("/admin/clear", &headers, clear.as_bytes())
            .status(),
        200
    );
    assert_error(
        &mut s.post_with("/admin/clear", &headers, clear.as_bytes()),
        404,
        "not_found",
    );
    let queue = admin(&s, "?reports=1");
    assert_eq!(queue["reports"].as_array().unwrap().len(), 1);

    // The shared page carries the Report form; without an admin, none.
    let html = text(&mut s.get_with("/d/odd-folder", &[("accept", "text/html")]));
    assert!(html.contains("/d/odd-folder?report=1"), "{html}");
    let plain = Server::start();
    let other = upload(&plain, "a.txt", b"a");
    assert_eq!(
        plain.post_empty("/?dir=1&name=odd-folder", &[]).status(),
        201
    );
    let html = text(&mut plain.get_with("/d/odd-folder", &[("accept", "text/html")]));
    assert!(!html.contains("report=1"), "no admin, no Report link");
    assert_error(
        &mut plain.post_with(
            &format!("/{other}?report=1"),
            &as_json,
            reason("x").as_bytes(),
        ),
        404,
        "not_found",
    );
}
