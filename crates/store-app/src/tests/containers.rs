//! Bundles, dirs and show-dirs.

use super::*;

use store_core::DirRecord;

fn part(app: &App, name: &str, bytes: &[u8]) -> Part {
    Part {
        name: Some(name.into()),
        declared_type: None,
        body: upload(app, bytes),
    }
}

fn open_access() -> Access {
    Access::retain_only(RetainAuth::Absent)
}

fn read_dir_file(app: &App, key: &str, name: &str) -> AppResult<Vec<u8>> {
    let mut d = app.open_dir_file(key, name, &crate::ReadKey::NONE)?;
    let mut out = vec![];
    d.reader.read_to_end(&mut out).unwrap();
    Ok(out)
}

fn named(name: &str) -> NewDir {
    NewDir {
        name: Some(name.into()),
        ..NewDir::default()
    }
}

#[test]
fn bundles_are_immutable_snapshots() {
    let w = world();
    let parts = vec![
        part(&w.app, "a.txt", b"aa"),
        part(&w.app, "b.png", b"\x89PNG\r\n\x1a\n"),
    ];
    let b = w
        .app
        .create_bundle(&NewFile::default(), parts, RetainAuth::Absent)
        .unwrap();
    assert_eq!(b.files.len(), 2);
    assert_eq!(b.files[1].content_type, "image/png");
    assert_eq!(
        b.lifetime.expires_at(),
        Some(Timestamp::from_secs(T0 + 14_400))
    );
    assert!(matches!(
        w.app
            .read(&b.id, ReadIntent::Get, &crate::ReadKey::NONE)
            .unwrap(),
        Opened::Bundle(_)
    ));
    let mut m = w
        .app
        .open_member(&b.id, "a.txt", &crate::ReadKey::NONE)
        .unwrap();
    let mut s = String::new();
    m.reader.read_to_string(&mut s).unwrap();
    assert_eq!(s, "aa");
    assert_eq!(
        code(w.app.check_edit(&b.id, &RetainAuth::Absent.into())),
        ErrorCode::Forbidden
    );
    assert_eq!(
        code(w.app.append_file(&b.id, b"x", &RetainAuth::Absent.into())),
        ErrorCode::Forbidden
    );
    assert_eq!(w.app.pool_used_bytes().unwrap(), 10);
    w.app.retain(&b.id, RetainAuth::Valid).unwrap();
    w.clock.advance_secs(100 * 86_400);
    assert!(
        w.app
            .read(&b.id, ReadIntent::Get, &crate::ReadKey::NONE)
            .is_ok(),
        "a retained bundle never expires"
    );
    w.app.delete(&b.id, &RetainAuth::Valid.into()).unwrap();
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
}

#[test]
fn bad_bundles_leave_nothing() {
    let w = world();
    let dup = vec![part(&w.app, "a.txt", b"1"), part(&w.app, "a.txt", b"2")];
    assert_eq!(
        code(
            w.app
                .create_bundle(&NewFile::default(), dup, RetainAuth::Absent)
        ),
        ErrorCode::BadRequest
    );
    let unsafe_name = vec![part(&w.app, "../a", b"1"), part(&w.app, "b", b"2")];
    assert_eq!(
        code(
            w.app
                .create_bundle(&NewFile::default(), unsafe_name, RetainAuth::Absent)
        ),
        ErrorCode::BadRequest
    );
    let once = NewFile {
        once: true,
        ..NewFile::default()
    };
    let two = vec![part(&w.app, "a", b"1"), part(&w.app, "b", b"2")];
    assert_eq!(
        code(w.app.create_bundle(&once, two, RetainAuth::Absent)),
        ErrorCode::BadRequest
    );
    assert_eq!(w.blobs.count(), 0, "refused parts are removed");
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
}

#[test]
fn named_creation_is_create_or_get_and_flags_apply_once() {
    let w = world();
    let first = NewDir {
        listed: true,
        tags: vec!["one".into()],
        ttl_secs: Some(86_400),
        ..named("proj-x")
    };
    let made = w.app.create_dir(&first, vec![], &open_access()).unwrap();
    assert!(made.created);
    assert_eq!(made.dir.ttl_secs, 86_400);
    let second = NewDir {
        listed: false,
        tags: vec!["two".into()],
        ttl_secs: Some(3 * 86_400),
        ..named("proj-x")
    };
    let made = w
        .app
        .create_dir(&second, vec![part(&w.app, "a.txt", b"a")], &open_access())
        .unwrap();
    assert!(!made.created);
    let again = made.dir;
    assert!(again.listed, "flags of a later create are ignored");
    assert_eq!(again.tags, ["one"]);
    assert_eq!(again.ttl_secs, 86_400);
    assert_eq!(
        again.files.len(),
        1,
        "parts posted to an existing named dir are added"
    );
    // Retry-safe: the same part again replaces, not duplicates.
    let again = w
        .app
        .create_dir(&second, vec![part(&w.app, "a.txt", b"a")], &open_access())
        .unwrap()
        .dir;
    assert_eq!(again.files.len(), 1);
    assert_eq!(w.blobs.count(), 1);
}

#[test]
fn concurrent_creates_of_one_name_yield_one_dir() {
    let w = Arc::new(world());
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                w.app
                    .create_dir(&named("same-name"), vec![], &open_access())
                    .unwrap()
                    .created
            })
        })
        .collect();
    let created = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|c| *c)
        .count();
    assert_eq!(created, 1);
}

#[test]
fn activity_slides_expiry_and_records_history() {
    let w = world();
    let v = w
        .app
        .create_dir(
            &NewDir {
                ttl_secs: Some(14_400),
                ..named("slide")
            },
            vec![],
            &open_access(),
        )
        .unwrap()
        .dir;
    assert_eq!(
        v.lifetime.expires_at(),
        Some(Timestamp::from_secs(T0 + 14_400))
    );
    w.clock.advance_secs(3600);
    let v = w
        .app
        .add_to_dir(
            "slide",
            vec![part(&w.app, "a.txt", b"hello")],
            &open_access(),
        )
        .unwrap();
    assert_eq!(
        v.lifetime.expires_at(),
        Some(Timestamp::from_secs(T0 + 28_800)),
        "slides by ttl"
    );
    assert_eq!(v.updated_at, Timestamp::from_secs(T0 + 3600));
    w.app
        .append_dir_file("slide", "a.txt", b" world", &open_access())
        .unwrap();
    assert_eq!(
        read_dir_file(&w.app, "slide", "a.txt").unwrap(),
        b"hello world"
    );
    w.app
        .delete_dir_file("slide", "a.txt", &open_access())
        .unwrap();
    let h = w.app.dir_history("slide", &crate::ReadKey::NONE).unwrap();
    let actions: Vec<_> = h.iter().map(|e| format!("{:?}", e.action)).collect();
    assert_eq!(actions, ["Delete", "Append", "Add"]);
    assert_eq!(h[1].bytes, 6);
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
    // Expiry: reads answer 404, and the sweep reclaims the dir.
    w.clock.advance_secs(31 * 86_400);
    assert_eq!(
        code(w.app.get_dir("slide", &crate::ReadKey::NONE)),
        ErrorCode::NotFound
    );
    assert_eq!(w.app.sweep(10).unwrap().removed, 1);
}

/// One write to a dir, as the gate tables run it.
type DirWriteFn = fn(&App, &Access) -> AppResult<()>;

#[test]
fn write_tokens_gate_writes_but_not_reads() {
    let w = world();
    let req = NewDir {
        write: Some(WriteRequest::Generate),
        ..named("locked")
    };
    let v = w
        .app
        .create_dir(&req, vec![part(&w.app, "a.txt", b"a")], &open_access())
        .unwrap();
    let token = v
        .write_token
        .clone()
        .expect("the token is returned at creation");
    assert!(token.len() >= 22);
    let again = w
        .app
        .create_dir(&named("locked"), vec![], &open_access())
        .unwrap();
    assert_eq!(again.write_token, None, "the token is returned once");
    // Every write the token gates, one row each: refused without the token
    // and with a wrong one, changing nothing; then done with the token.
    let gated: [(&str, DirWriteFn); 6] = [
        ("add", |app, a| {
            app.add_to_dir("locked", vec![part(app, "b", b"b")], a)
                .map(drop)
        }),
        ("put", |app, a| {
            app.put_dir_file("locked", "a.txt", upload(app, b"new"), a)
                .map(drop)
        }),
        ("append", |app, a| {
            app.append_dir_file("locked", "a.txt", b"+", a).map(drop)
        }),
        ("delete a file", |app, a| {
            app.delete_dir_file("locked", "b", a).map(drop)
        }),
        ("create-or-get with files", |app, a| {
            app.create_dir(&named("locked"), vec![part(app, "c", b"c")], a)
                .map(drop)
        }),
        ("delete the dir", |app, a| app.delete_dir("locked", a)),
    ];
    let wrong = Access {
        retain: RetainAuth::Absent,
        write_token: Some("not-the-token-at-all".into()),
        owner: None,
    };
    let ok = Access {
        retain: RetainAuth::Absent,
        write_token: Some(token),
        owner: None,
    };
    for (what, write) in gated {
        let before = w.app.get_dir("locked", &crate::ReadKey::NONE).unwrap();
        for denied in [&open_access(), &wrong] {
            assert_eq!(
                code(write(&w.app, denied)),
                ErrorCode::WriteDenied,
                "{what}"
            );
        }
        assert_eq!(
            w.app.get_dir("locked", &crate::ReadKey::NONE).unwrap(),
            before,
            "{what}"
        );
        assert!(
            read_dir_file(&w.app, "locked", "a.txt").is_ok(),
            "reads stay open"
        );
        write(&w.app, &ok).unwrap_or_else(|e| panic!("{what} with the token: {e:?}"));
    }
    assert_eq!(
        code(w.app.get_dir("locked", &crate::ReadKey::NONE)),
        ErrorCode::NotFound
    );
    let custom = NewDir {
        write: Some(WriteRequest::Custom("my-own-token-1234".into())),
        ..named("mine1")
    };
    w.app.create_dir(&custom, vec![], &open_access()).unwrap();
    let mine = Access {
        retain: RetainAuth::Absent,
        write_token: Some("my-own-token-1234".into()),
        owner: None,
    };
    w.app
        .add_to_dir("mine1", vec![part(&w.app, "c", b"c")], &mine)
        .unwrap();
    let bad = NewDir {
        write: Some(WriteRequest::Custom("short".into())),
        ..named("mine2")
    };
    assert_eq!(
        code(w.app.create_dir(&bad, vec![], &open_access())),
        ErrorCode::BadRequest
    );
}

#[test]
fn show_dirs_are_open_to_writers_and_never_expire() {
    let w = world();
    let req = NewDir {
        show: true,
        ..named("gallery-wall")
    };
    assert_eq!(
        code(w.app.create_dir(&req, vec![], &open_access())),
        ErrorCode::WriteDenied
    );
    let admin = Access {
        retain: RetainAuth::Valid,
        write_token: None,
        owner: None,
    };
    let v = w.app.create_dir(&req, vec![], &admin).unwrap().dir;
    assert!(v.open);
    assert_eq!(
        v.lifetime,
        store_core::Lifetime::Indefinite,
        "a show-dir neither expires nor slides"
    );
    w.app
        .add_to_dir(
            "gallery-wall",
            vec![part(&w.app, "a.txt", b"a")],
            &open_access(),
        )
        .unwrap();
    w.app
        .delete_dir_file("gallery-wall", "a.txt", &open_access())
        .unwrap();
    assert_eq!(
        code(w.app.delete_dir("gallery-wall", &open_access())),
        ErrorCode::WriteDenied
    );
    w.clock.advance_secs(400 * 86_400);
    assert!(w.app.get_dir("gallery-wall", &crate::ReadKey::NONE).is_ok());
    // Flipping an existing dir needs the token and is idempotent.
    w.app
        .create_dir(&named("plain-dir"), vec![], &open_access())
        .unwrap();
    assert_eq!(
        code(w.app.show_dir("plain-dir", RetainAuth::Absent)),
        ErrorCode::WriteDenied
    );
    assert!(w.app.show_dir("plain-dir", RetainAuth::Valid).unwrap().open);
    assert!(w.app.show_dir("plain-dir", RetainAuth::Valid).unwrap().open);
    w.app.delete_dir("gallery-wall", &admin).unwrap();
}

#[test]
fn retained_dirs_need_the_token_to_write() {
    let w = world();
    w.app
        .create_dir(
            &named("kept-dir"),
            vec![part(&w.app, "a", b"a")],
            &open_access(),
        )
        .unwrap();
    let r = w.app.retain_dir("kept-dir", RetainAuth::Valid).unwrap();
    assert!(r.lifetime.is_retained());
    assert_eq!(
        code(
            w.app
                .add_to_dir("kept-dir", vec![part(&w.app, "b", b"b")], &open_access())
        ),
        ErrorCode::WriteDenied
    );
    w.clock.advance_secs(400 * 86_400);
    assert!(w.app.get_dir("kept-dir", &crate::ReadKey::NONE).is_ok());
}

#[test]
fn a_dir_is_evicted_as_a_whole_and_show_dirs_never() {
    let w = world_with(30);
    let admin = Access {
        retain: RetainAuth::Valid,
        write_token: None,
        owner: None,
    };
    w.app
        .create_dir(
            &NewDir {
                show: true,
                ..named("show-wall")
            },
            vec![part(&w.app, "s", &[1; 10])],
            &admin,
        )
        .unwrap();
    w.app
        .create_dir(
            &named("old-dir"),
            vec![part(&w.app, "a", &[1; 5]), part(&w.app, "b", &[1; 5])],
            &open_access(),
        )
        .unwrap();
    put_file(
        &w.app,
        "f",
        &[1; 10],
        NewFile {
            ttl_secs: Some(30 * 86_400),
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    // The dir expires in 7 days, the file in 14: the dir goes first, whole.
    put_file(
        &w.app,
        "g",
        &[1; 10],
        NewFile::default(),
        RetainAuth::Absent,
    );
    assert_eq!(
        code(w.app.get_dir("old-dir", &crate::ReadKey::NONE)),
        ErrorCode::NotFound
    );
    assert!(w.app.get_dir("show-wall", &crate::ReadKey::NONE).is_ok());
    assert_eq!(w.app.pool_used_bytes().unwrap(), 30);
}

#[test]
fn list_dirs_filters_and_sorts() {
    let w = world();
    for (name, listed, tags) in [
        ("alpha-dir", true, vec!["x"]),
        ("beta-dir", true, vec![]),
        ("hidden-dir", false, vec![]),
    ] {
        w.clock.advance_secs(10);
        let req = NewDir {
            listed,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..named(name)
        };
        w.app.create_dir(&req, vec![], &open_access()).unwrap();
    }
    w.clock.advance_secs(10);
    w.app
        .add_to_dir("alpha-dir", vec![part(&w.app, "a", b"a")], &open_access())
        .unwrap();
    let names = |q: DirQuery| {
        w.app
            .list_dirs(&q)
            .unwrap()
            .into_iter()
            .map(|d: DirRecord| d.key)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(DirQuery::default()), ["beta-dir", "alpha-dir"]);
    assert_eq!(
        names(DirQuery {
            sort: DirSort::Updated,
            ..Default::default()
        }),
        ["alpha-dir", "beta-dir"]
    );
    assert_eq!(
        names(DirQuery {
            sort: DirSort::Name,
            order: SortOrder::Asc,
            ..Default::default()
        }),
        ["alpha-dir", "beta-dir"]
    );
    assert_eq!(
        names(DirQuery {
            q: Some("x".into()),
            ..Default::default()
        }),
        ["alpha-dir"]
    );
    assert_eq!(
        names(DirQuery {
            q: Some("bet".into()),
            ..Default::default()
        }),
        ["beta-dir"]
    );
    assert_eq!(
        names(DirQuery {
            created_after: Some(Timestamp::from_secs(T0 + 15)),
            ..Default::default()
        }),
        ["beta-dir"]
    );
    assert_eq!(
        names(DirQuery {
            updated_before: Some(Timestamp::from_secs(T0 + 35)),
            ..Default::default()
        }),
        ["beta-dir"]
    );
}

#[test]
fn concurrent_appends_to_one_dir_file_all_land() {
    let w = Arc::new(world());
    w.app
        .create_dir(
            &named("log-dir"),
            vec![part(&w.app, "log.txt", b"")],
            &open_access(),
        )
        .unwrap();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                w.app
                    .append_dir_file(
                        "log-dir",
                        "log.txt",
                        format!("{i}\n").as_bytes(),
                        &open_access(),
                    )
                    .unwrap()
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = String::from_utf8(read_dir_file(&w.app, "log-dir", "log.txt").unwrap()).unwrap();
    assert_eq!(text.lines().count(), 8);
}
