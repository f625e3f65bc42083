//! Resumable uploads over tus 1.0.0 (CONTRACT.md, "Resumable uploads: tus
//! 1.0.0"): every header, status and error of the section, and the file a
//! completed upload makes, next to the one a plain upload makes.

use sha2::Digest as _;

use crate::common::tus::{b64, patch_at, patch_head, OFFSET_BODY, TUS};
use crate::common::{assert_error, header, json, pattern, Server};

/// Creates an upload of `length` bytes named `name`, with more metadata
/// pairs (already encoded); answers its path.
fn create(s: &Server, length: usize, name: &str, more: &str) -> (String, String) {
    let meta = format!("filename {}{more}", b64(name.as_bytes()));
    let len = length.to_string();
    let res = s.post_empty(
        "/uploads",
        &[TUS, ("Upload-Length", &len), ("Upload-Metadata", &meta)],
    );
    assert_eq!(res.status(), 201);
    assert_eq!(header(&res, "tus-resumable"), "1.0.0");
    assert_eq!(header(&res, "upload-offset"), "0");
    assert!(header(&res, "upload-expires").ends_with(" GMT"));
    let location = header(&res, "location");
    let path = location
        .strip_prefix(&s.base)
        .expect("Location is absolute")
        .to_string();
    assert!(path.starts_with("/uploads/"), "{path}");
    (path, header(&res, "x-store-owner"))
}

fn offset_of(s: &Server, path: &str) -> u64 {
    let res = s.head_with(path, &[TUS]);
    assert_eq!(res.status(), 200);
    header(&res, "upload-offset").parse().unwrap()
}

#[test]
fn options_say_what_the_server_supports() {
    let s = Server::start();
    let answer = s.raw(b"OPTIONS /uploads HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let head = answer.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 204"), "{answer}");
    for line in [
        "tus-resumable: 1.0.0",
        "tus-version: 1.0.0",
        "tus-extension: creation,creation-with-upload,termination,checksum,expiration",
        "tus-checksum-algorithm: sha1,sha256",
        "tus-max-size: ",
    ] {
        assert!(head.contains(line), "{line} in {answer}");
    }
}

#[test]
fn patches_make_the_file_a_plain_upload_makes() {
    let s = Server::start();
    let body = b"# Notes\nfrom a resumable upload\n";
    let tags = format!(",tags {},ttl {}", b64(b"a,b"), b64(b"2d"));
    let (path, owner) = create(&s, body.len(), "notes.md", &tags);
    assert_eq!(owner.len(), 32, "an owner token: {owner}");
    // Before the last byte there is no file.
    assert_error(&mut s.get(&path), 404, "not_found");
    let res = patch_at(&s, &path, 0, &body[..10]);
    assert_eq!(res.status(), 204);
    assert_eq!(header(&res, "upload-offset"), "10");
    assert_eq!(header(&res, "tus-resumable"), "1.0.0");
    let head = s.head_with(&path, &[TUS]);
    assert_eq!(header(&head, "upload-length"), body.len().to_string());
    assert_eq!(header(&head, "cache-control"), "no-store");
    assert!(header(&head, "upload-metadata").contains(&b64(b"notes.md")));
    let res = patch_at(&s, &path, 10, &body[10..]);
    assert_eq!(res.status(), 204);
    let id = header(&res, "x-store-id");
    assert_eq!(header(&res, "x-store-url"), s.url(&format!("/{id}")));
    assert_eq!(header(&res, "upload-offset"), body.len().to_string());
    // The file, as a plain upload with the same options makes it.
    let made = json(&mut s.get(&path));
    let plain = json(&mut s.post("/?name=notes.md&tag=a&tag=b&ttl=2d", body));
    for field in [
        "name",
        "size",
        "content_type",
        "tags",
        "once",
        "protected",
        "editable",
    ] {
        assert_eq!(made[field], plain[field], "{field}: {made} vs {plain}");
    }
    // The same lifetime, counted from the last byte (a second may have
    // passed between the two answers).
    let left = |v: &serde_json::Value| v["expires_in"].as_u64().unwrap();
    assert!(left(&plain) - left(&made) <= 2, "{made} vs {plain}");
    assert_eq!(made["id"], id.as_str());
    let mut bytes = s.get(&format!("/{id}"));
    assert_eq!(crate::common::text(&mut bytes).as_bytes(), body);
    // The owner token of the upload is the file's.
    let res = s.post_empty(&format!("/{id}?ttl=1d"), &[("X-Store-Owner", &owner)]);
    assert_eq!(res.status(), 200);
    // Asked again (an answer lost on the way), the upload says it is
    // complete, and which file it made.
    let head = s.head_with(&path, &[TUS]);
    assert_eq!(head.status(), 200);
    assert_eq!(header(&head, "upload-offset"), body.len().to_string());
    assert_eq!(header(&head, "upload-length"), body.len().to_string());
    assert_eq!(header(&head, "x-store-id"), id);
}

#[test]
fn every_bad_request_gets_its_status_and_a_json_error() {
    let s = Server::start();
    let (path, _) = create(&s, 8, "a.bin", "");
    // No protocol version: 412, saying which is spoken.
    let mut res = s.patch(&path, &[OFFSET_BODY, ("Upload-Offset", "0")], b"abcd");
    assert_eq!(header(&res, "tus-version"), "1.0.0");
    assert_error(&mut res, 412, "precondition_failed");
    assert_error(
        &mut s.post_empty("/uploads", &[("Upload-Length", "1")]),
        412,
        "precondition_failed",
    );
    // Not the offset type: 415.
    let mut res = s.patch(
        &path,
        &[TUS, ("Content-Type", "text/plain"), ("Upload-Offset", "0")],
        b"abcd",
    );
    assert_error(&mut res, 415, "unsupported_media_type");
    // Another offset: 409, and nothing written.
    assert_error(&mut patch_at(&s, &path, 3, b"abcd"), 409, "conflict");
    assert_eq!(offset_of(&s, &path), 0);
    // Past the length: 413.
    assert_error(&mut patch_at(&s, &path, 0, b"123456789"), 413, "too_large");
    // A bad offset header: 400.
    let mut res = s.patch(&path, &[TUS, OFFSET_BODY, ("Upload-Offset", "-1")], b"a");
    assert_error(&mut res, 400, "bad_request");
    // Unknown upload: 404, with the protocol's header.
    let mut res = patch_at(&s, "/uploads/nosuchupload", 0, b"a");
    assert_eq!(header(&res, "tus-resumable"), "1.0.0");
    assert_error(&mut res, 404, "not_found");
    // Creation: no length, no filename, base64 that is not, too large.
    let meta = format!("filename {}", b64(b"a"));
    for (headers, status, code) in [
        (
            vec![TUS, ("Upload-Metadata", meta.as_str())],
            400,
            "bad_request",
        ),
        (vec![TUS, ("Upload-Length", "3")], 400, "bad_request"),
        (
            vec![
                TUS,
                ("Upload-Length", "3"),
                ("Upload-Metadata", "filename ***"),
            ],
            400,
            "bad_request",
        ),
        (
            vec![
                TUS,
                ("Upload-Length", "3"),
                ("Upload-Defer-Length", "1"),
                ("Upload-Metadata", meta.as_str()),
            ],
            201,
            "",
        ),
        (
            vec![
                TUS,
                ("Upload-Length", "99999999999999"),
                ("Upload-Metadata", meta.as_str()),
            ],
            413,
            "too_large",
        ),
    ] {
        let mut res = s.post_empty("/uploads", &headers);
        if status == 201 {
            assert_eq!(res.status(), 201, "a given length needs no deferring");
        } else {
            assert_error(&mut res, status, code);
        }
    }
}

#[test]
fn checksums_keep_matching_bytes_and_refuse_the_rest_whole() {
    let s = Server::start();
    let (path, _) = create(&s, 6, "c.txt", "");
    let sha1 = format!("sha1 {}", b64(&sha1_of(b"abc")));
    let wrong = format!("sha256 {}", b64(&[0u8; 32]));
    let mut res = s.patch(
        &path,
        &[
            TUS,
            OFFSET_BODY,
            ("Upload-Offset", "0"),
            ("Upload-Checksum", &wrong),
        ],
        b"abc",
    );
    assert_error(&mut res, 460, "checksum_mismatch");
    assert_eq!(offset_of(&s, &path), 0, "nothing of it kept");
    let res = s.patch(
        &path,
        &[
            TUS,
            OFFSET_BODY,
            ("Upload-Offset", "0"),
            ("Upload-Checksum", &sha1),
        ],
        b"abc",
    );
    assert_eq!(res.status(), 204);
    let sha256 = format!("sha256 {}", b64(&sha2::Sha256::digest(b"def")));
    let res = s.patch(
        &path,
        &[
            TUS,
            OFFSET_BODY,
            ("Upload-Offset", "3"),
            ("Upload-Checksum", &sha256),
        ],
        b"def",
    );
    assert_eq!(res.status(), 204);
    let id = header(&res, "x-store-id");
    assert_eq!(crate::common::text(&mut s.get(&format!("/{id}"))), "abcdef");
    let mut res = s.patch(
        "/uploads/any",
        &[
            TUS,
            OFFSET_BODY,
            ("Upload-Offset", "0"),
            ("Upload-Checksum", "md5 AAAA"),
        ],
        b"a",
    );
    assert_error(&mut res, 400, "bad_request");
}

fn sha1_of(bytes: &[u8]) -> Vec<u8> {
    use sha1::Digest as _;
    sha1::Sha1::digest(bytes).to_vec()
}

#[test]
fn creation_with_upload_and_termination() {
    let s = Server::start();
    let meta = format!("filename {},once", b64(b"secret.txt"));
    let res = s.post_with(
        "/uploads",
        &[
            TUS,
            OFFSET_BODY,
            ("Upload-Length", "10"),
            ("Upload-Metadata", &meta),
        ],
        b"0123",
    );
    assert_eq!(res.status(), 201);
    assert_eq!(header(&res, "upload-offset"), "4");
    let path = header(&res, "location")
        .strip_prefix(&s.base)
        .unwrap()
        .to_string();
    let res = patch_at(&s, &path, 4, b"456789");
    assert_eq!(res.status(), 204, "{:?}", res.headers());
    let id = header(&res, "x-store-id");
    let record = json(&mut s.get(&format!("/{id}?info=1")));
    assert_eq!(record["once"], true, "{record}");
    // Termination: the upload and its bytes go.
    let (other, _) = create(&s, 5, "gone.txt", "");
    assert_eq!(patch_at(&s, &other, 0, b"12").status(), 204);
    let res = s.delete(&other, &[TUS]);
    assert_eq!(res.status(), 204);
    assert_eq!(header(&res, "tus-resumable"), "1.0.0");
    // A HEAD answer has no body: its status says it.
    assert_eq!(s.head_with(&other, &[TUS]).status(), 404);
    assert_error(&mut s.delete(&other, &[TUS]), 404, "not_found");
}

#[test]
fn an_empty_file_is_made_at_its_creation() {
    // A client sends no PATCH for an empty file (tus-js-client calls it
    // done once created).
    let s = Server::start();
    let meta = format!("filename {}", b64(b"empty.txt"));
    let res = s.post_empty(
        "/uploads",
        &[TUS, ("Upload-Length", "0"), ("Upload-Metadata", &meta)],
    );
    assert_eq!(res.status(), 201);
    assert_eq!(header(&res, "upload-offset"), "0");
    let id = header(&res, "x-store-id");
    let path = header(&res, "location")
        .strip_prefix(&s.base)
        .unwrap()
        .to_string();
    let record = json(&mut s.get(&path));
    assert_eq!(record["id"], id.as_str(), "{record}");
    assert_eq!(record["size"], 0, "{record}");
    assert_eq!(crate::common::text(&mut s.get(&format!("/{id}"))), "");
}

#[test]
fn the_upload_token_gates_creation() {
    let s = Server::with_env(&[("STORE_UPLOAD_TOKEN", "door")]);
    let meta = format!("filename {}", b64(b"a"));
    let headers = [
        TUS,
        ("Upload-Length", "1"),
        ("Upload-Metadata", meta.as_str()),
    ];
    let mut refused = s.post_empty("/uploads", &headers);
    assert_eq!(
        header(&refused, "tus-resumable"),
        "1.0.0",
        "refused at the door too"
    );
    assert_error(&mut refused, 401, "write_denied");
    let mut with = headers.to_vec();
    with.push(("Authorization", "Bearer door"));
    assert_eq!(s.post_empty("/uploads", &with).status(), 201);
}

#[test]
fn a_patch_cut_short_keeps_what_arrived() {
    let s = Server::start();
    let (path, _) = create(&s, 10, "cut.bin", "");
    // Ten bytes announced, four sent, then the connection closes.
    let request = format!("{}abcd", patch_head(&path, 0, 10));
    s.send_and_close(request.as_bytes());
    let start = std::time::Instant::now();
    while offset_of(&s, &path) != 4 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "the four bytes were not kept"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The client resumes from there, at once: the cut PATCH let go.
    let res = patch_at(&s, &path, 4, b"efghij");
    assert_eq!(res.status(), 204);
    let id = header(&res, "x-store-id");
    assert_eq!(
        crate::common::text(&mut s.get(&format!("/{id}"))),
        "abcdefghij"
    );
}

/// A port free now, for a listener the test starts itself.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Interop: tuspy, a tus client no one here wrote, uploads 3 MiB through
/// a proxy that cuts its PATCH midway (tests/interop/tuspy_upload.py);
/// a new uploader resumes from what the server kept, and the file is the
/// one sent, byte for byte. tuspy comes from PyPI (scripts/interop, which
/// scripts/test runs).
#[test]
fn tuspy_uploads_and_resumes_after_its_connection_is_cut() {
    let proxy = free_port();
    let s = Server::with_env(&[
        ("STORE_BASE_URL", &format!("http://127.0.0.1:{proxy}")),
        ("STORE_MAX_FILE_BYTES", "8388608"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    let bytes = pattern(3 * 1024 * 1024);
    std::fs::write(&path, &bytes).unwrap();
    let server_port = s.base.rsplit(':').next().unwrap().to_string();
    let (stdout, stderr) = crate::common::run_interop(
        "tuspy_upload.py",
        &[proxy.to_string(), server_port, path.display().to_string()],
    );
    let mut lines = stdout.lines();
    let url = lines.next().unwrap();
    let kept: u64 = lines.next().unwrap().parse().unwrap();
    eprintln!("tuspy: {}; the server kept {kept} bytes", stderr.trim());
    assert!(
        kept > 0 && kept < bytes.len() as u64,
        "the server kept what came before the cut: {kept}"
    );
    let path = url
        .split_once("/uploads/")
        .map(|(_, id)| format!("/uploads/{id}"))
        .unwrap();
    let record = json(&mut s.get(&path));
    assert_eq!(record["size"], bytes.len());
    assert_eq!(record["name"], "big.bin");
    let id = record["id"].as_str().unwrap();
    let mut res = s.get(&format!("/{id}"));
    let got = res
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_vec()
        .unwrap();
    assert_eq!(
        sha2::Sha256::digest(&got),
        sha2::Sha256::digest(&bytes),
        "the same bytes"
    );
}

/// An upload left half done expires 24 h after its creation: libfaketime
/// runs a second process on the same data 25 h ahead, which sweeps as it
/// starts; the upload is gone, and so are its staged bytes and its room in
/// the pool. The embedded store only (scripts/passes.sh): it decides
/// expiry by the process's clock, where PostgreSQL decides by its own
/// (tests/faults.rs ages the records there instead).
#[test]
fn an_abandoned_upload_expires_by_the_clock_and_leaves_nothing() {
    assert_eq!(
        crate::common::backend(),
        crate::common::Backend::Sled,
        "an embedded-store test: the other passes leave it out"
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pool = [("STORE_POOL_BYTES", "1000")];
    let mut now = Server::on(data.clone(), None, &pool);
    let (path, _) = create(&now, 900, "half.bin", "");
    assert_eq!(patch_at(&now, &path, 0, &[7; 300]).status(), 204);
    assert_eq!(now.blob_count(), 1, "the staged bytes");
    // The pool holds the whole length: 900 of 1000 bytes are taken.
    let mut full = now.post("/?name=b.bin", &[1; 200]);
    assert_error(&mut full, 507, "pool_full");
    assert!(now.stop().success());
    let ahead = crate::common::clock_ahead("+25h");
    let mut env: Vec<(&str, &str)> = ahead
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    env.extend(pool);
    let later = Server::on(data, None, &env);
    let start = std::time::Instant::now();
    while later.head_with(&path, &[TUS]).status() != 404 || later.blob_count() != 0 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "not swept"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        later.post("/?name=b.bin", &[1; 900]).status(),
        201,
        "its room is free again"
    );
}

/// A PATCH that takes longer than its lease keeps the upload: it renews
/// its hold while its body comes, so a second PATCH is refused for as
/// long as the first lives (here over two leases of 4 s), and the first then
/// finishes. The probe asks for offset 1, which no state of the upload
/// allows: it writes nothing either way, and its answer says whether the
/// upload is still held ("another PATCH") or was let go ("not 1").
#[test]
fn a_slow_patch_renews_its_hold_on_the_upload() {
    use std::io::{Read as _, Write as _};
    let s = Server::with_env(&[("STORE_UPLOAD_LEASE_SECS", "4")]);
    let (path, _) = create(&s, 4, "slow.bin", "");
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    let head = format!("{}a", patch_head(&path, 0, 4));
    slow.write_all(head.as_bytes()).unwrap();
    let probe = |s: &Server| {
        let mut res = patch_at(s, &path, 1, b"z");
        assert_eq!(res.status(), 409);
        res.body_mut().read_to_string().unwrap()
    };
    let start = std::time::Instant::now();
    while !probe(&s).contains("another PATCH") {
        assert!(start.elapsed().as_secs() < 10, "the PATCH never began");
    }
    // Over two leases (well within the body's idle limit of 30 s); a
    // renewal every second leaves three seconds for a busy machine.
    let held = std::time::Instant::now();
    while held.elapsed() < std::time::Duration::from_secs(9) {
        let answer = probe(&s);
        assert!(
            answer.contains("another PATCH"),
            "let go after {:?}: {answer}",
            held.elapsed()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    slow.write_all(b"bcd").unwrap();
    let mut answer = [0u8; 512];
    let n = slow.read(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 204"), "{answer}");
    assert!(answer.contains("x-store-id"), "the file is made: {answer}");
}
