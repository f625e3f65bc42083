//! Moderation (issue 36): digests recorded as bytes arrive, the admin's
//! search, and blocks that refuse uploads and remove live copies.

use store_core::digest::Sha256;
use store_core::moderation::{AdminSearch, AdminToken};

use super::*;

fn moderated() -> World {
    let mut w = world();
    let mut config = w.app.config().clone();
    config.admin_token = AdminToken::new(Some("admin-secret"));
    w.app = App::open(ports(&w.clock, &w.blobs, &w.repo), config)
        .unwrap()
        .0;
    w
}

fn dir_with(app: &App, name: &str, files: &[(&str, &[u8])]) -> DirMade {
    let parts = files
        .iter()
        .map(|(n, b)| Part {
            name: Some(n.to_string()),
            declared_type: None,
            body: upload(app, b),
        })
        .collect();
    let req = NewDir {
        name: Some(name.into()),
        ..NewDir::default()
    };
    app.create_dir(&req, parts, &Access::retain_only(RetainAuth::Absent))
        .unwrap()
}

#[test]
fn without_moderation_nothing_is_hashed() {
    let w = world();
    let f = put_plain(&w.app, "a.txt", b"hello");
    assert_eq!(f.record.sha256, None);
}

#[test]
fn uploads_record_the_digest_of_their_bytes_edits_included() {
    let w = moderated();
    let f = put_plain(&w.app, "a.txt", b"hello");
    assert_eq!(f.record.sha256, Some(Sha256::of(b"hello")));
    let appended = w
        .app
        .append_file(&f.record.id, b" world", &Access::from(RetainAuth::Valid))
        .unwrap();
    assert_eq!(appended.record.sha256, Some(Sha256::of(b"hello world")));
    let d = dir_with(&w.app, "box-one", &[("x.txt", b"x"), ("y.txt", b"y")]);
    let digests: Vec<_> = d.dir.files.iter().map(|f| f.sha256).collect();
    assert_eq!(digests, [Some(Sha256::of(b"x")), Some(Sha256::of(b"y"))]);
}

#[test]
fn the_admin_finds_objects_newest_first_by_words_types_digests_and_ids() {
    let w = moderated();
    let old = put_plain(&w.app, "holiday photo.txt", b"one");
    w.clock.advance_secs(5);
    let new = put_plain(&w.app, "notes.txt", b"two");
    dir_with(&w.app, "photo-box", &[("z.bin", b"three")]);
    let search = |q: &str| -> Vec<String> {
        let page = w.app.admin_page(&AdminSearch::parse(q), None, 50).unwrap();
        page.objects.into_iter().map(|(k, _)| k).collect()
    };
    assert_eq!(search("").len(), 3);
    assert_eq!(search("photo"), ["d/photo-box", old.record.id.as_str()]);
    assert_eq!(search("photo holiday"), [old.record.id.as_str()]);
    assert_eq!(search(&Sha256::of(b"two").hex()), [new.record.id.as_str()]);
    assert_eq!(search("text/plain").len(), 2);
    assert_eq!(search(&new.record.id)[0], new.record.id);
    let first = w.app.admin_page(&AdminSearch::parse(""), None, 2).unwrap();
    assert_eq!(first.objects.len(), 2);
    let rest = w
        .app
        .admin_page(&AdminSearch::parse(""), first.next.as_ref(), 2)
        .unwrap();
    assert_eq!(rest.objects.len(), 1);
    assert!(rest.next.is_none(), "the last page says so");
}

#[test]
fn a_block_removes_live_copies_and_refuses_every_kind_of_upload() {
    let w = moderated();
    let bad: &[u8] = b"forbidden bytes";
    let file = put_plain(&w.app, "bad.txt", bad);
    let keep = put_plain(&w.app, "good.txt", b"fine");
    dir_with(&w.app, "mixed", &[("bad.txt", bad), ("ok.txt", b"ok")]);
    let done = w.app.block(Sha256::of(bad), "malware").unwrap();
    assert_eq!(done.removed.len(), 2, "{:?}", done.removed);
    assert_eq!(code(read(&w.app, &file.record.id)), ErrorCode::NotFound);
    assert_eq!(read(&w.app, &keep.record.id).unwrap(), b"fine");
    let Some(Object::Dir(d)) = w.repo.get("d/mixed").unwrap() else {
        panic!("the dir stays")
    };
    assert_eq!(d.files.len(), 1, "only the blocked file left it");
    let again = w
        .app
        .create_file(&NewFile::default(), upload(&w.app, bad), RetainAuth::Absent);
    assert_eq!(code(again), ErrorCode::Blocked);
    let in_dir = w.app.create_dir(
        &NewDir::default(),
        vec![Part {
            name: Some("a.txt".into()),
            declared_type: None,
            body: upload(&w.app, bad),
        }],
        &Access::retain_only(RetainAuth::Absent),
    );
    assert_eq!(code(in_dir), ErrorCode::Blocked);
    // Appending that makes the blocked bytes is refused too.
    let prefix = put_plain(&w.app, "p.txt", b"forbidden");
    let grown = w.app.append_file(
        &prefix.record.id,
        b" bytes",
        &Access::from(RetainAuth::Valid),
    );
    assert_eq!(code(grown), ErrorCode::Blocked);
    assert_eq!(read(&w.app, &prefix.record.id).unwrap(), b"forbidden");
    assert_eq!(w.app.blocks().unwrap().len(), 1);
    assert!(
        w.app.block(Sha256::of(b"x"), " ").is_err(),
        "a reason is needed"
    );
}

#[test]
fn without_an_admin_token_nothing_is_refused() {
    let w = world();
    w.repo
        .block(
            &store_core::moderation::Block {
                sha256: Sha256::of(b"b"),
                reason: "r".into(),
                blocked_at: Timestamp::from_secs(T0),
            },
            None,
        )
        .unwrap();
    put_plain(&w.app, "b.txt", b"b");
}
