//! Private sharing (CONTRACT.md, "Private sharing"): files their clients
//! encrypted in the age format. The files here are made by Debian's `age`
//! tool, which no one here wrote, and must come back byte for byte and
//! decrypt with it again.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::browser::ready;
use crate::common::tus::{b64, patch_at, TUS};
use crate::common::webdriver::Browser;
use crate::common::{assert_error, header, json, multipart, noise, Server};

/// `age` itself, with its arguments; panics with what it said on failure.
fn age(program: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs (scripts/test installs Debian's age): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A new X25519 identity in `dir`: its file and its recipient.
fn identity(dir: &Path) -> (String, String) {
    identity_in(dir, "key")
}

/// A new X25519 identity in `dir`, in the file `<stem>.txt`.
fn identity_in(dir: &Path, stem: &str) -> (String, String) {
    let key = dir.join(format!("{stem}.txt"));
    let key = key.to_str().unwrap().to_string();
    age("age-keygen", &["-o", &key]);
    let recipient = String::from_utf8(age("age-keygen", &["-y", &key])).unwrap();
    (key, recipient.trim().to_string())
}

/// `plain` encrypted to `recipient` by the age tool (`armor`: with -a).
fn encrypt(dir: &Path, recipient: &str, plain: &[u8], armor: bool) -> Vec<u8> {
    let input = dir.join("plain");
    std::fs::write(&input, plain).unwrap();
    let mut args = vec!["-r", recipient];
    if armor {
        args.push("-a");
    }
    args.push(input.to_str().unwrap());
    age("age", &args)
}

/// `cipher` decrypted with the identity in `key` by the age tool.
fn decrypt(dir: &Path, key: &str, cipher: &[u8]) -> Vec<u8> {
    let input = dir.join("cipher");
    std::fs::write(&input, cipher).unwrap();
    age("age", &["-d", "-i", key, input.to_str().unwrap()])
}

#[test]
fn a_file_encrypted_by_age_comes_back_byte_for_byte() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = identity(dir.path());
    let plain = noise(300 * 1024, 1);
    let cipher = encrypt(dir.path(), &recipient, &plain, false);
    let mut res = s.post("/?encrypted=age&name=notes.html", &cipher);
    assert_eq!(res.status(), 201);
    let r = json(&mut res);
    assert_eq!(r["encrypted"], "age");
    assert_eq!(r["content_type"], "application/octet-stream");
    assert_eq!(r["editable"], false);
    assert_eq!(r["size"], cipher.len());
    let id = r["id"].as_str().unwrap();
    let mut got = s.get(&format!("/{id}"));
    assert_eq!(got.status(), 200);
    assert_eq!(header(&got, "content-type"), "application/octet-stream");
    assert!(header(&got, "content-disposition").starts_with("attachment"));
    let body = got.body_mut().read_to_vec().unwrap();
    assert_eq!(body, cipher, "the ciphertext as it was sent");
    assert_eq!(decrypt(dir.path(), &key, &body), plain);
    // The record says so wherever it is shown.
    let info = json(&mut s.get(&format!("/{id}?info=1")));
    assert_eq!(info["encrypted"], "age");
    // A file no one encrypted shows nothing of it.
    let other = s.upload("plain.txt", b"hello");
    assert!(other.get("encrypted").is_none(), "{other}");
    // Ciphertext is never edited: a byte more would break it.
    assert_error(&mut s.patch(&format!("/{id}"), &[], b"x"), 403, "forbidden");
}

#[test]
fn encrypted_age_takes_only_age_files_and_single_files() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (_, recipient) = identity(dir.path());
    let cipher = encrypt(dir.path(), &recipient, b"secret", false);
    let armored = encrypt(dir.path(), &recipient, b"secret", true);
    for (path, body) in [
        ("/?encrypted=age&name=a.txt", &b"not encrypted at all"[..]),
        ("/?encrypted=age", &armored[..]),
        ("/?encrypted=age", b""),
        ("/?encrypted=gpg", &cipher[..]),
        ("/?encrypted=age&share=team-notes", &cipher[..]),
    ] {
        let mut res = s.post(path, body);
        assert_error(&mut res, 400, "bad_request");
    }
    let mut res = s.post("/?encrypted=age", &armored);
    let e = json(&mut res);
    assert!(e["error"].as_str().unwrap().contains("armor"), "{e}");
    // Two files are a bundle, which is not one file to decrypt.
    let (ct, body) = multipart(&[("a", Some("a.age"), &cipher), ("b", Some("b.age"), &cipher)]);
    let mut res = s.post_with("/?encrypted=age", &[("content-type", &ct)], &body);
    assert_error(&mut res, 400, "bad_request");
    // A form's field counts as the query's does; no name makes one.
    let (ct, body) = multipart(&[("encrypted", None, b"age"), ("file", Some(""), &cipher)]);
    let mut res = s.post_with("/", &[("content-type", &ct)], &body);
    assert_eq!(res.status(), 201);
    let r = json(&mut res);
    assert_eq!(
        (r["encrypted"].as_str(), r["name"].as_str()),
        (Some("age"), Some("encrypted.age"))
    );
}

#[test]
fn a_resumable_upload_may_be_encrypted() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = identity(dir.path());
    let plain = noise(64 * 1024, 2);
    let cipher = encrypt(dir.path(), &recipient, &plain, false);
    let meta = format!("filename {},encrypted {}", b64(b"x.age"), b64(b"age"));
    let len = cipher.len().to_string();
    let res = s.post_empty(
        "/uploads",
        &[TUS, ("Upload-Length", &len), ("Upload-Metadata", &meta)],
    );
    assert_eq!(res.status(), 201);
    let path = header(&res, "location")
        .strip_prefix(&s.base)
        .unwrap()
        .to_string();
    let res = patch_at(&s, &path, 0, &cipher);
    assert_eq!(res.status(), 204);
    let id = header(&res, "x-store-id");
    let info = json(&mut s.get(&format!("/{id}?info=1")));
    assert_eq!(info["encrypted"], "age");
    let got = s.get(&format!("/{id}")).body_mut().read_to_vec().unwrap();
    assert_eq!(decrypt(dir.path(), &key, &got), plain);
    // Not age: the last byte is refused, and no file is made.
    let meta = format!("filename {},encrypted {}", b64(b"y.age"), b64(b"age"));
    let res = s.post_empty(
        "/uploads",
        &[TUS, ("Upload-Length", "5"), ("Upload-Metadata", &meta)],
    );
    let path = header(&res, "location")
        .strip_prefix(&s.base)
        .unwrap()
        .to_string();
    let mut res = patch_at(&s, &path, 0, b"plain");
    assert_error(&mut res, 400, "bad_request");
    // The PATCH that showed it kept none of its bytes.
    let res = s.head_with(&path, &[TUS]);
    assert_eq!(header(&res, "upload-offset"), "0");
}

/// The page opened at `url#identity` decrypts the file with no click,
/// and the browser saves it: its bytes, as saved under `name`.
fn open_in_the_page(b: &Browser, link: &str, name: &str) -> Vec<u8> {
    b.goto(link);
    ready(b);
    b.downloaded(name)
}

#[test]
fn a_file_encrypted_in_the_browser_opens_with_age_and_the_other_way_round() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let plain = noise(200 * 1024, 3);
    let name = "Résumé notes.bin";
    let path = dir.path().join(name);
    std::fs::write(&path, &plain).unwrap();
    let b = Browser::start();
    b.goto(&s.url("/"));
    ready(&b);
    b.send_keys(
        &b.find("form[data-upload=home] input[type=file]"),
        path.to_str().unwrap(),
    );
    // Under "More options", folded so that Upload stays in sight.
    b.click(&b.find("form[data-upload=home] details.more summary"));
    b.click(&b.find("form[data-upload=home] [data-encrypt]"));
    b.click(&b.find("form[data-upload=home] button[type=submit]"));
    let link = b.attr(&b.find("a[data-result-url]"), "href").unwrap();
    let (url, identity) = link.split_once('#').expect("the key after #");
    assert!(identity.starts_with("AGE-SECRET-KEY-1"), "{link}");
    // The server has ciphertext, under no name of the person's.
    let id = url.rsplit('/').next().unwrap();
    let info = json(&mut s.get(&format!("/{id}?info=1")));
    assert_eq!(info["encrypted"], "age");
    assert_eq!(info["name"], "encrypted.age");
    let cipher = s.get(&format!("/{id}")).body_mut().read_to_vec().unwrap();
    assert!(cipher.starts_with(b"age-encryption.org/v1\n"));
    // Debian's age opens it with the key from the link: the bytes alone.
    let key = dir.path().join("key.txt");
    std::fs::write(&key, format!("{identity}\n")).unwrap();
    assert_eq!(decrypt(dir.path(), key.to_str().unwrap(), &cipher), plain);
    // A second person opens the link in the page: the bytes, and the name.
    assert!(
        open_in_the_page(&b, &link, name) == plain,
        "the page saved other bytes"
    );
    // No request of the page named the key: every URL it asked for (the
    // page, its scripts, the fetch of the bytes), as the browser's
    // Resource Timing lists them.
    let asked = b.execute(
        "return performance.getEntriesByType('resource').map(e => e.name)",
        json!([]),
    );
    let asked: Vec<&str> = asked
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        asked.iter().any(|u| u.contains(id)),
        "the fetch is listed: {asked:?}"
    );
    assert!(
        !asked.iter().any(|u| u.contains("AGE-SECRET-KEY")),
        "{asked:?}"
    );
    assert!(!s.log().contains("AGE-SECRET-KEY"), "the key is in the log");
    // The other way round: a file the age tool encrypted opens in the page,
    // under the name it was uploaded with.
    let (key, recipient) = identity_in(dir.path(), "tool");
    let cipher = encrypt(dir.path(), &recipient, b"from the age tool", false);
    let r = json(&mut s.post("/?encrypted=age&name=tool.txt", &cipher));
    let identity = std::fs::read_to_string(&key).unwrap();
    let secret = identity
        .lines()
        .find(|l| l.starts_with("AGE-SECRET-KEY-1"))
        .unwrap();
    let link = format!("{}#{secret}", r["url"].as_str().unwrap());
    assert_eq!(
        open_in_the_page(&b, &link, "tool.txt"),
        b"from the age tool"
    );
}

#[test]
fn an_encrypted_once_file_shows_its_page_without_spending_the_download() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = identity(dir.path());
    let cipher = encrypt(dir.path(), &recipient, b"read me once", false);
    let r = json(&mut s.post("/?encrypted=age&once=1", &cipher));
    let path = format!("/{}", r["id"].as_str().unwrap());
    let browser = ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8");
    let previewer = (
        "User-Agent",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    );
    for asker in [browser, previewer] {
        let mut page = s.get_with(&path, &[asker]);
        assert_eq!(page.status(), 200);
        assert!(header(&page, "content-type").starts_with("text/html"));
        assert_eq!(header(&page, "cache-control"), "no-store");
        let html = page.body_mut().read_to_string().unwrap();
        assert!(
            html.contains("data-decrypt="),
            "the decrypting page: {html}"
        );
        assert!(html.contains("age -d -i key.txt"), "the terminal's recipe");
        assert!(html.contains("data-counted"), "the page waits for a click");
    }
    // Neither page spent it: the one download is still there, and it is
    // the ciphertext, which the key opens.
    let got = s.get(&path).body_mut().read_to_vec().unwrap();
    assert_eq!(decrypt(dir.path(), &key, &got), b"read me once");
    assert_eq!(s.get(&path).status(), 404, "burnt by its download");
}
