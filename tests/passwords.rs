//! Passwords (CONTRACT.md, "Private sharing"): a protected file, bundle or
//! dir is read with HTTP Basic (any user name), the owner token, or in a
//! browser through a form that spends nothing; wrong passwords change
//! nothing, and the eleventh within ten minutes is 429.

use crate::common::tus::{b64, TUS};
use crate::common::{assert_error, bytes, header, json, multipart, text, Server};

const PASSWORD: &str = "correct horse";

/// `Authorization: Basic` with `user` and `password`, as `curl -u` sends it.
fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", b64(format!("{user}:{password}").as_bytes()))
}

/// Uploads `body` as `name` with `query` and the password; the record.
fn protected(s: &Server, name: &str, query: &str, body: &[u8]) -> serde_json::Value {
    let mut res = s.post_with(
        &format!("/?name={name}{query}"),
        &[("X-Store-Password", PASSWORD)],
        body,
    );
    assert_eq!(res.status(), 201);
    json(&mut res)
}

/// Asserts the answer to a read without the password: 401 `write_denied`
/// asking for HTTP Basic.
fn assert_asks_for_password(res: &mut ureq::http::Response<ureq::Body>, what: &str) {
    assert_eq!(
        header(res, "www-authenticate"),
        "Basic realm=\"storesrv\"",
        "{what}"
    );
    assert_error(res, 401, "write_denied");
}

#[test]
fn a_password_protects_a_file_for_curl_and_its_owner() {
    let s = Server::start();
    let r = protected(&s, "plan.txt", "&tag=plans", b"the plan");
    assert_eq!(r["password"], true);
    let (id, owner) = (
        r["id"].as_str().unwrap(),
        r["owner_token"].as_str().unwrap(),
    );
    let path = format!("/{id}");

    for (what, mut res) in [
        ("no password", s.get(&path)),
        ("its record", s.get(&format!("{path}?info=1"))),
        ("a HEAD", s.head(&path)),
        (
            "a wrong one",
            s.get_with(&path, &[("authorization", &basic("", "wrong horse"))]),
        ),
        (
            "another's owner token",
            s.get_with(&path, &[("x-store-owner", "not-the-owner-token")]),
        ),
    ] {
        if what == "a HEAD" {
            assert_eq!(res.status(), 401, "{what}");
            assert_eq!(header(&res, "www-authenticate"), "Basic realm=\"storesrv\"");
            continue;
        }
        assert_asks_for_password(&mut res, what);
    }
    for (what, headers) in [
        (
            "HTTP Basic, no user name",
            vec![("authorization", basic("", PASSWORD))],
        ),
        (
            "HTTP Basic, any user name",
            vec![("authorization", basic("alice", PASSWORD))],
        ),
        (
            "the owner token",
            vec![("x-store-owner", owner.to_string())],
        ),
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut res = s.get_with(&path, &headers);
        assert_eq!(res.status(), 200, "{what}");
        assert_eq!(bytes(&mut res), b"the plan", "{what}");
        let mut info = s.get_with(&format!("{path}?info=1"), &headers);
        let record = text(&mut info);
        assert!(
            !record.contains("argon2") && !record.contains(PASSWORD),
            "{record}"
        );
        let record: serde_json::Value = serde_json::from_str(&record).unwrap();
        assert_eq!(record["password"], true, "{what}");
    }
    let listed = json(&mut s.get("/browse?tag=plans"));
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(0),
        "never listed: {listed}"
    );
}

#[test]
fn wrong_passwords_spend_nothing_and_the_eleventh_in_ten_minutes_is_429() {
    let s = Server::start();
    let r = protected(&s, "once.txt", "&once=1", b"burn me");
    let (id, owner) = (
        r["id"].as_str().unwrap(),
        r["owner_token"].as_str().unwrap(),
    );
    let path = format!("/{id}");
    assert_asks_for_password(&mut s.get(&path), "no password");
    for i in 0..10 {
        let wrong = basic("", &format!("wrong {i}"));
        assert_asks_for_password(
            &mut s.get_with(&path, &[("authorization", &wrong)]),
            "wrong",
        );
    }
    // The right password too: the window is closed to every try.
    let mut res = s.get_with(&path, &[("authorization", &basic("", PASSWORD))]);
    let retry: u64 = header(&res, "retry-after").parse().unwrap();
    assert!((1..=600).contains(&retry), "{retry}");
    assert_error(&mut res, 429, "rate_limited");
    // Nothing was spent: the owner reads (and burns) it.
    let mut read = s.get_with(&path, &[("x-store-owner", owner)]);
    assert_eq!(read.status(), 200);
    assert_eq!(bytes(&mut read), b"burn me");
    assert_error(
        &mut s.get_with(&path, &[("x-store-owner", owner)]),
        404,
        "not_found",
    );
}

#[test]
fn a_browser_gets_a_form_that_spends_nothing_and_a_pass_for_that_object_only() {
    let s = Server::start();
    let html = [("accept", "text/html")];
    let r = protected(&s, "once.txt", "&once=1", b"for your eyes");
    let other = protected(&s, "other.txt", "", b"another");
    let id = r["id"].as_str().unwrap();
    let path = format!("/{id}");

    let mut page = s.get_with(&path, &html);
    assert_eq!(page.status(), 401);
    assert!(
        header(&page, "www-authenticate").is_empty(),
        "no dialog of the browser's own"
    );
    assert_eq!(header(&page, "cache-control"), "no-store");
    let body = text(&mut page);
    assert!(body.contains("type=\"password\""), "{body}");
    assert!(
        body.contains(&format!("action=\"{path}?unlock=1\"")),
        "{body}"
    );
    assert!(
        !body.contains("once.txt"),
        "the page shows nothing of the file"
    );

    let form = |pw: &str| format!("password={}&back={}", pw.replace(' ', "+"), path);
    let form_type = ("content-type", "application/x-www-form-urlencoded");
    let mut wrong = s.post_with(
        &format!("{path}?unlock=1"),
        &[html[0], form_type],
        form("nope nope").as_bytes(),
    );
    assert_eq!(wrong.status(), 401);
    assert!(text(&mut wrong).contains("not the right one"));

    let right = s.post_with(
        &format!("{path}?unlock=1"),
        &[html[0], form_type],
        form(PASSWORD).as_bytes(),
    );
    assert_eq!(right.status(), 303);
    assert_eq!(header(&right, "location"), path);
    let cookie = header(&right, "set-cookie");
    assert!(
        cookie.contains(&format!("; Path={path}; Max-Age=3600; HttpOnly")),
        "{cookie}"
    );
    let pass = cookie.split(';').next().unwrap().to_string();

    // The pass opens this object and no other.
    let other_path = format!("/{}", other["id"].as_str().unwrap());
    assert_asks_for_password(
        &mut s.get_with(&other_path, &[("cookie", &pass)]),
        "another object",
    );
    // A counted file still shows its page first; its download spends it.
    let mut once_page = s.get_with(&path, &[html[0], ("cookie", &pass)]);
    assert_eq!(once_page.status(), 200);
    assert!(text(&mut once_page).contains("deleted when it is downloaded"));
    let mut got = s.get_with(&format!("{path}?download=1"), &[html[0], ("cookie", &pass)]);
    assert_eq!(got.status(), 200);
    assert_eq!(bytes(&mut got), b"for your eyes");
    assert_error(
        &mut s.get_with(&path, &[("cookie", &pass)]),
        404,
        "not_found",
    );
}

#[test]
fn the_owner_changes_and_removes_the_password() {
    let s = Server::start();
    let r = protected(&s, "a.txt", "", b"abc");
    let (id, owner) = (
        r["id"].as_str().unwrap(),
        r["owner_token"].as_str().unwrap(),
    );
    let path = format!("/{id}");
    let set = format!("{path}?password=1");
    let stranger = s.post_empty(&set, &[("x-store-password", "new password")]);
    assert_eq!(stranger.status(), 401);
    let mut changed = s.post_empty(
        &set,
        &[
            ("x-store-owner", owner),
            ("x-store-password", "new password"),
        ],
    );
    assert_eq!(changed.status(), 200);
    assert_eq!(json(&mut changed)["password"], true);
    assert_asks_for_password(
        &mut s.get_with(&path, &[("authorization", &basic("", PASSWORD))]),
        "the old one",
    );
    assert_eq!(
        s.get_with(&path, &[("authorization", &basic("", "new password"))])
            .status(),
        200
    );
    assert_error(
        &mut s.post_empty(
            &set,
            &[("x-store-owner", owner), ("x-store-password", "abc")],
        ),
        400,
        "bad_request",
    );
    let mut removed = s.post_empty(&set, &[("x-store-owner", owner), ("x-store-password", "")]);
    assert_eq!(removed.status(), 200);
    assert!(
        json(&mut removed).get("password").is_none(),
        "absent once removed"
    );
    assert_eq!(s.get(&path).status(), 200);
}

#[test]
fn passwords_are_taken_from_a_header_a_form_or_tus_never_from_the_url() {
    let s = Server::start();
    let mut in_url = s.post("/?name=a.txt&password=correct+horse", b"abc");
    let body = text(&mut in_url);
    assert_eq!(in_url.status(), 400, "{body}");
    assert!(body.contains("never goes in the URL"), "{body}");
    assert_error(
        &mut s.post_with("/?name=a.txt", &[("x-store-password", "abc")], b"abc"),
        400,
        "bad_request",
    );

    let (ctype, form) = multipart(&[
        ("password", None, PASSWORD.as_bytes()),
        ("file", Some("f.txt"), b"form"),
    ]);
    let mut res = s.post_with("/", &[("content-type", &ctype)], &form);
    assert_eq!(res.status(), 201);
    let r = json(&mut res);
    assert_eq!(r["password"], true, "{r}");
    assert_asks_for_password(
        &mut s.get(&format!("/{}", r["id"].as_str().unwrap())),
        "form field",
    );

    let meta = format!(
        "filename {},password {}",
        b64(b"t.txt"),
        b64(PASSWORD.as_bytes())
    );
    let created = s.post_with(
        "/uploads",
        &[TUS, ("upload-length", "3"), ("upload-metadata", &meta)],
        b"",
    );
    assert_eq!(created.status(), 201);
    let location = header(&created, "location");
    let upload = location.rsplit_once("/uploads/").unwrap().1.to_string();
    let head = s.head_with(&format!("/uploads/{upload}"), &[TUS]);
    assert_eq!(
        header(&head, "upload-metadata"),
        format!("filename {}", b64(b"t.txt"))
    );
    let done = s.patch(
        &format!("/uploads/{upload}"),
        &[
            TUS,
            ("upload-offset", "0"),
            ("content-type", "application/offset+octet-stream"),
        ],
        b"tus",
    );
    assert_eq!(done.status(), 204);
    let file = format!("/{}", header(&done, "x-store-id"));
    assert_asks_for_password(&mut s.get(&file), "tus");
    let mut read = s.get_with(&file, &[("authorization", &basic("x", PASSWORD))]);
    assert_eq!(bytes(&mut read), b"tus");
    // Neither the password nor its hash is ever logged.
    let log = s.log();
    assert!(!log.contains(PASSWORD) && !log.contains("argon2"), "{log}");
}

#[test]
fn bundles_and_dirs_take_passwords_too() {
    let s = Server::start();
    let pw = [("x-store-password", PASSWORD)];
    let (ctype, body) = multipart(&[("a", Some("a.txt"), b"aaa"), ("b", Some("b.txt"), b"bbb")]);
    let mut res = s.post_with("/", &[("content-type", &ctype), pw[0]], &body);
    let bundle = json(&mut res);
    assert_eq!(bundle["password"], true, "{bundle}");
    let id = bundle["id"].as_str().unwrap();
    let key = [("authorization", basic("", PASSWORD))];
    let key: Vec<(&str, &str)> = key.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for path in [format!("/{id}"), format!("/{id}/a.txt")] {
        assert_asks_for_password(&mut s.get(&path), &path);
        assert_eq!(s.get_with(&path, &key).status(), 200, "{path}");
    }

    let mut made = s.post_with("/?dir=1&name=secret-plans&listed=1", &pw, b"");
    assert_eq!(made.status(), 201);
    assert_eq!(json(&mut made)["password"], true);
    let mut again = s.post_with("/?dir=1&name=secret-plans", &pw, b"");
    assert_error(&mut again, 409, "conflict");
    let mut wrote = s.post("/d/secret-plans?name=n.txt", b"note");
    assert_eq!(wrote.status(), 200, "writes keep their own gate");
    let answer = json(&mut wrote);
    assert_eq!(answer["file_count"], 1);
    assert_eq!(
        answer["files"],
        serde_json::json!([]),
        "a writer never sees what is in it"
    );
    for path in [
        "/d/secret-plans",
        "/d/secret-plans/n.txt",
        "/d/secret-plans?zip=1",
        "/d/secret-plans/history",
    ] {
        assert_asks_for_password(&mut s.get(path), path);
        assert_eq!(s.get_with(path, &key).status(), 200, "{path}");
    }
    let listed = text(&mut s.get("/d"));
    assert!(!listed.contains("secret-plans"), "never listed: {listed}");
}
