//! Drop links (CONTRACT.md "Private sharing"): a dir only its owner
//! reads, which anyone with its drop link adds files to without seeing
//! what is there; names never collide, the link has its bounds, and its
//! owner may close it.

use serde_json::{json, Value};

use crate::common::{assert_error, bytes, json, multipart, text, Server};

/// Makes a drop dir with `query`; its record, with `drop_url`.
fn make_drop(s: &Server, query: &str) -> Value {
    let mut res = s.post_empty(&format!("/?dir=1&drop=1{query}"), &[]);
    assert_eq!(res.status(), 201);
    json(&mut res)
}

/// The local path of one of the server's URLs.
fn path_of(s: &Server, url: &str) -> String {
    url.strip_prefix(&s.base)
        .expect("a URL of this server")
        .to_string()
}

#[test]
fn a_drop_link_takes_files_and_shows_no_one_what_is_there() {
    let s = Server::start();
    let made = make_drop(&s, "&drop_files=3");
    assert_eq!(
        made["drop"],
        json!({ "files_max": 3, "bytes_max": made["drop"]["bytes_max"], "open": true })
    );
    let drop = path_of(&s, made["drop_url"].as_str().unwrap());
    assert!(
        drop.starts_with("/drop/") && drop.len() >= "/drop/".len() + 32,
        "{drop}"
    );
    let (key, owner) = (
        made["id"].as_str().unwrap(),
        made["owner_token"].as_str().unwrap(),
    );
    let dir = format!("/d/{key}");
    let as_owner = [("x-store-owner", owner)];

    let mut how = s.get(&drop);
    assert_eq!(how.status(), 200);
    let how = json(&mut how);
    assert_eq!(
        (how["drop"].clone(), how["files_left"].clone()),
        (json!(true), json!(3))
    );

    let (ctype, body) = multipart(&[
        ("file", Some("a.txt"), b"first a"),
        ("file", Some("b.txt"), b"b"),
    ]);
    let mut res = s.post_with(&drop, &[("content-type", &ctype)], &body);
    assert_eq!(res.status(), 201);
    let answer = text(&mut res);
    assert_eq!(
        serde_json::from_str::<Value>(&answer).unwrap(),
        json!({ "files": [{ "name": "a.txt", "size": 7 }, { "name": "b.txt", "size": 1 }] })
    );
    let mut again = s.post(&format!("{drop}?name=a.txt"), b"second a");
    assert_eq!(again.status(), 201);
    let again = text(&mut again);
    assert!(again.contains("\"a (2).txt\""), "{again}");
    for said in [&answer, &again] {
        assert!(
            !said.contains("http") && !said.contains(key),
            "never a URL: {said}"
        );
    }
    assert_error(
        &mut s.post(&format!("{drop}?name=c.txt"), b"c"),
        403,
        "forbidden",
    );

    // Only the owner reads it; to anyone else it does not exist.
    for path in [
        dir.clone(),
        format!("{dir}/a.txt"),
        format!("{dir}?zip=1"),
        format!("{dir}/history"),
    ] {
        assert_error(&mut s.get(&path), 404, "not_found");
        assert_eq!(s.get_with(&path, &as_owner).status(), 200, "{path}");
    }
    assert_error(
        &mut s.post(&format!("{dir}?name=x.txt"), b"x"),
        404,
        "not_found",
    );
    let mut listing = s.get_with(&dir, &as_owner);
    let names: Vec<String> = json(&mut listing)["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let mut first = s.get_with(&format!("{dir}/a.txt"), &as_owner);
    assert_eq!(bytes(&mut first), b"first a", "never replaced");

    // Closing it: the owner's only.
    assert_error(
        &mut s.post_empty(&format!("{dir}?drop=0"), &[]),
        401,
        "write_denied",
    );
    let mut closed = s.post_empty(&format!("{dir}?drop=0"), &as_owner);
    assert_eq!(closed.status(), 200);
    assert_eq!(json(&mut closed)["drop"]["open"], false);
    assert_error(&mut s.get(&drop), 404, "not_found");
    assert_error(
        &mut s.post(&format!("{drop}?name=late.txt"), b"late"),
        404,
        "not_found",
    );
    assert_eq!(
        s.get_with(&dir, &as_owner).status(),
        200,
        "still the owner's"
    );
}

#[test]
fn a_drop_keeps_nothing_past_its_bytes_and_refuses_what_cannot_be_one() {
    let s = Server::start();
    let made = make_drop(&s, "&drop_bytes=10&name=inbox");
    let drop = path_of(&s, made["drop_url"].as_str().unwrap());
    let owner = made["owner_token"].as_str().unwrap();
    assert_error(
        &mut s.post(&format!("{drop}?name=big.bin"), &[7u8; 11]),
        403,
        "forbidden",
    );
    let mut listing = s.get_with("/d/inbox", &[("x-store-owner", owner)]);
    assert_eq!(json(&mut listing)["file_count"], 0, "nothing kept");
    assert_eq!(
        s.post(&format!("{drop}?name=fits.bin"), &[7u8; 10])
            .status(),
        201
    );
    let listed = text(&mut s.get("/d"));
    assert!(!listed.contains("inbox"), "never listed: {listed}");

    let wrong = format!("/drop/{}inbox", "0".repeat(32));
    assert_error(&mut s.get(&wrong), 404, "not_found");
    assert_error(
        &mut s.post(&format!("{wrong}?name=x"), b"x"),
        404,
        "not_found",
    );
    for bad in [
        "&listed=1",
        "&show=1",
        "&write=1",
        "&drop_files=0",
        "&drop_files=1001",
        "&drop_bytes=0",
    ] {
        let mut res = s.post_empty(&format!("/?dir=1&drop=1{bad}"), &[]);
        assert_error(&mut res, 400, "bad_request");
    }
    assert_error(
        &mut s.post_empty("/?dir=1&drop_files=5", &[]),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post_empty("/?dir=1&drop=1&name=inbox", &[]),
        409,
        "conflict",
    );
}
