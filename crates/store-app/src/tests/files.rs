//! Single files: upload, read, burn after reading, retention, edits, tags, browse.

use super::*;

#[test]
fn upload_then_read_back() {
    let w = world();
    let v = put_plain(&w.app, "a.txt", b"hello");
    assert_eq!(v.size, 5);
    assert_eq!(v.content_type, "text/plain");
    assert!(v.text);
    assert_eq!(expires_in(&v), Some(14_400));
    assert_eq!(read(&w.app, &v.id).unwrap(), b"hello");
    assert_eq!(w.app.pool_used_bytes().unwrap(), 5);
}

#[test]
fn binary_files_are_not_editable() {
    let w = world();
    let v = put_plain(&w.app, "x.bin", b"\x89PNG\r\n\x1a\n\0\0");
    assert_eq!(v.content_type, "image/png");
    assert!(!v.text);
    assert_eq!(
        code(w.app.check_edit(&v.id, &RetainAuth::Absent.into())),
        ErrorCode::Forbidden
    );
    assert_eq!(
        code(w.app.append_file(&v.id, b"x", &RetainAuth::Absent.into())),
        ErrorCode::Forbidden
    );
    assert_eq!(
        code(
            w.app
                .replace_file(&v.id, upload(&w.app, b"x"), &RetainAuth::Absent.into())
        ),
        ErrorCode::Forbidden
    );
}

#[test]
fn an_encrypted_file_is_checked_stored_and_served_as_it_came() {
    let w = world();
    let age = NewFile {
        encrypted: Some(store_core::Encryption::Age),
        ..NewFile::default()
    };
    // Ciphertext that happens to be UTF-8 and is named like a page: still
    // opaque bytes, never text, never HTML.
    let body = b"age-encryption.org/v1\n-> X25519 abc\n--- def\nxyz";
    let v = put_file(&w.app, "notes.html", body, age.clone(), RetainAuth::Absent);
    assert_eq!(v.content_type, "application/octet-stream");
    assert!(!v.text);
    assert_eq!(v.name, "notes.html");
    assert_eq!(v.encrypted, Some(store_core::Encryption::Age));
    assert_eq!(read(&w.app, &v.id).unwrap(), body);
    assert_eq!(
        code(w.app.append_file(&v.id, b"x", &RetainAuth::Absent.into())),
        ErrorCode::Forbidden
    );
    // No name: one that says what it is.
    let unnamed = w
        .app
        .create_file(&age, upload(&w.app, body), RetainAuth::Absent)
        .unwrap();
    assert_eq!(unnamed.name, "encrypted.age");
    // Not age: refused, and nothing is kept of it.
    let used = w.app.pool_used_bytes().unwrap();
    let refused = w
        .app
        .create_file(&age, upload(&w.app, b"plain text"), RetainAuth::Absent);
    assert_eq!(code(refused), ErrorCode::BadRequest);
    assert_eq!(w.app.pool_used_bytes().unwrap(), used);
    assert_eq!(w.blobs.count(), 2, "the refused body's blob is gone");
}

#[test]
fn expired_files_answer_not_found_and_are_swept() {
    let w = world();
    let v = put_plain(&w.app, "a.txt", b"hello");
    w.clock.advance_secs(14_399);
    assert!(read(&w.app, &v.id).is_ok());
    w.clock.advance_secs(1);
    assert_eq!(code(read(&w.app, &v.id)), ErrorCode::NotFound);
    assert_eq!(w.blobs.count(), 1, "bytes stay until the sweep");
    let report = w.app.sweep(100).unwrap();
    assert_eq!(report.removed, 1);
    assert_eq!(report.next_expiry, None);
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
}

#[test]
fn upkeep_sweeps_collects_and_stops_promptly() {
    let w = world();
    let v = put_plain(&w.app, "a.txt", b"hello");
    // An orphan: bytes no record names, written behind the app's back (as
    // a crash before this start would have left them).
    let mut orphan = store_core::BlobStore::create(w.blobs.as_ref()).unwrap();
    orphan.write(b"orphan").unwrap();
    orphan.commit().unwrap();
    w.clock.advance_secs(14_400);
    assert_eq!(w.blobs.count(), 2);
    let app = Arc::new(w.app);
    let upkeep = app
        .start_upkeep(|why| panic!("no damage here: {why}"))
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while w.blobs.count() > 0 {
        assert!(std::time::Instant::now() < deadline, "swept and collected");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(code(read(&app, &v.id)), ErrorCode::NotFound);
    // The sweeper now sleeps for a minute (nothing expires): stopping
    // wakes it rather than waiting that out.
    let started = std::time::Instant::now();
    upkeep.stop();
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn sweep_reports_the_next_deadline_and_leaves_live_files() {
    let w = world();
    let a = put_plain(&w.app, "a.txt", b"a");
    let b = put_file(
        &w.app,
        "b.txt",
        b"b",
        NewFile {
            ttl_secs: Some(86_400),
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    let r = w.app.sweep(100).unwrap();
    assert_eq!(r.removed, 0);
    assert_eq!(r.next_expiry, Some(Timestamp::from_secs(T0 + 14_400)));
    w.clock.advance_secs(20_000);
    let r = w.app.sweep(100).unwrap();
    assert_eq!(r.removed, 1);
    assert_eq!(r.next_expiry, Some(Timestamp::from_secs(T0 + 86_400)));
    assert!(read(&w.app, &a.id).is_err());
    assert!(read(&w.app, &b.id).is_ok());
}

#[test]
fn ttl_is_clamped() {
    let w = world();
    let short = put_file(
        &w.app,
        "a",
        b"a",
        NewFile {
            ttl_secs: Some(60),
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    assert_eq!(expires_in(&short), Some(14_400));
    let long = put_file(
        &w.app,
        "a",
        b"a",
        NewFile {
            ttl_secs: Some(100 * 86_400),
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    assert_eq!(expires_in(&long), Some(1_209_600));
}

#[test]
fn once_files_burn_on_first_get_but_not_on_head() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"secret",
        NewFile {
            once: true,
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    assert!(w
        .app
        .read(&v.id, ReadIntent::Head, &crate::ReadKey::NONE)
        .is_ok());
    assert!(w
        .app
        .read(&v.id, ReadIntent::Head, &crate::ReadKey::NONE)
        .is_ok());
    assert_eq!(read(&w.app, &v.id).unwrap(), b"secret");
    assert_eq!(code(read(&w.app, &v.id)), ErrorCode::NotFound);
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
}

#[test]
fn once_files_are_served_once_to_concurrent_readers() {
    let once = NewFile {
        once: true,
        ..NewFile::default()
    };
    assert_eq!(concurrent_downloads(once), 1);
}

#[test]
fn limited_files_are_served_exactly_their_count_to_concurrent_readers() {
    for n in [2, 5, 15] {
        let limited = NewFile {
            max_downloads: Some(n),
            ..NewFile::default()
        };
        assert_eq!(concurrent_downloads(limited), n as usize, "{n}");
    }
}

#[test]
fn download_limits_are_bounded_and_counted_on_the_record() {
    let w = world();
    for (once, max) in [(false, 0), (false, 1001), (true, 2)] {
        let req = NewFile {
            once,
            max_downloads: Some(max),
            ..NewFile::default()
        };
        assert_eq!(
            code(
                w.app
                    .create_file(&req, upload(&w.app, b"x"), RetainAuth::Absent)
            ),
            ErrorCode::BadRequest,
            "{once} {max}"
        );
    }
    let v = put_file(
        &w.app,
        "a.txt",
        b"abc",
        NewFile {
            max_downloads: Some(3),
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    for left in [3, 2, 1] {
        assert_eq!(
            w.app
                .file_info(&v.id, &crate::ReadKey::NONE)
                .unwrap()
                .downloads_remaining(),
            Some(left)
        );
        let Opened::File(_) = w
            .app
            .read(&v.id, ReadIntent::Head, &crate::ReadKey::NONE)
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(read(&w.app, &v.id).unwrap(), b"abc");
    }
    assert_eq!(
        code(w.app.file_info(&v.id, &crate::ReadKey::NONE)),
        ErrorCode::NotFound
    );
    assert_eq!(
        w.app.pool_used_bytes().unwrap(),
        0,
        "its bytes went with it"
    );
}

/// Sixteen readers at once of a file uploaded with `req`: how many got it.
fn concurrent_downloads(req: NewFile) -> usize {
    let w = Arc::new(world());
    let v = put_file(&w.app, "a.txt", b"secret", req, RetainAuth::Absent);
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let w = Arc::clone(&w);
            let id = v.id.clone();
            std::thread::spawn(move || read(&w.app, &id).is_ok())
        })
        .collect();
    let served = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|ok| *ok)
        .count();
    assert_eq!(code(read(&w.app, &v.id)), ErrorCode::NotFound, "all used");
    served
}

#[test]
fn retention_needs_the_token_and_lasts() {
    let w = world();
    let v = put_plain(&w.app, "a.txt", b"hi");
    assert_eq!(
        code(w.app.retain(&v.id, RetainAuth::Absent)),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(w.app.retain(&v.id, RetainAuth::Invalid)),
        ErrorCode::WriteDenied
    );
    let r = w.app.retain(&v.id, RetainAuth::Valid).unwrap();
    assert!(r.lifetime().is_retained());
    // Idempotent.
    assert_eq!(w.app.retain(&v.id, RetainAuth::Valid).unwrap(), r);
    w.clock.advance_secs(10 * 365 * 86_400);
    w.app.sweep(100).unwrap();
    assert_eq!(read(&w.app, &v.id).unwrap(), b"hi");
    // Writes and deletes now need the token.
    assert_eq!(
        code(w.app.delete(&v.id, &RetainAuth::Absent.into())),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(w.app.append_file(&v.id, b"!", &RetainAuth::Absent.into())),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(
            w.app
                .tag_file(&v.id, &["x".into()], &[], &RetainAuth::Absent.into())
        ),
        ErrorCode::WriteDenied
    );
    w.app
        .append_file(&v.id, b"!", &RetainAuth::Valid.into())
        .unwrap();
    w.app.delete(&v.id, &RetainAuth::Valid.into()).unwrap();
    assert_eq!(code(read(&w.app, &v.id)), ErrorCode::NotFound);
}

#[test]
fn upload_with_token_is_retained_and_a_wrong_token_is_refused() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"hi",
        NewFile::default(),
        RetainAuth::Valid,
    );
    assert_eq!(v.lifetime, store_core::Lifetime::Indefinite);
    let req = NewFile {
        name: Some("a".into()),
        ..NewFile::default()
    };
    assert_eq!(
        code(
            w.app
                .create_file(&req, upload(&w.app, b"x"), RetainAuth::Invalid)
        ),
        ErrorCode::WriteDenied
    );
    assert_eq!(w.blobs.count(), 1, "a refused upload leaves no bytes");
}

#[test]
fn edit_with_token_retains_implicitly() {
    let w = world();
    let v = put_plain(&w.app, "a.txt", b"hi");
    let after = w
        .app
        .replace_file(&v.id, upload(&w.app, b"new"), &RetainAuth::Valid.into())
        .unwrap();
    assert_eq!(after.lifetime.expires_at(), None);
    assert_eq!(read(&w.app, &v.id).unwrap(), b"new");
}

#[test]
fn put_replaces_and_patch_appends() {
    let w = world();
    let v = put_plain(&w.app, "a.txt", b"hello");
    let r = w
        .app
        .replace_file(&v.id, upload(&w.app, b"bye"), &RetainAuth::Absent.into())
        .unwrap();
    assert_eq!(r.size, 3);
    assert_eq!(
        r.lifetime.expires_at(),
        v.lifetime.expires_at(),
        "edits do not move a single file's expiry"
    );
    let r = w
        .app
        .append_file(&v.id, b" now", &RetainAuth::Absent.into())
        .unwrap();
    assert_eq!(r.size, 7);
    assert_eq!(read(&w.app, &v.id).unwrap(), b"bye now");
    assert_eq!(w.blobs.count(), 1, "old bytes are freed");
    assert_eq!(w.app.pool_used_bytes().unwrap(), 7);
    assert_eq!(
        code(
            w.app
                .append_file(&v.id, b"\xff", &RetainAuth::Absent.into())
        ),
        ErrorCode::BadRequest
    );
    let big = vec![b'a'; store_core::Limits::DEFAULT.file_bytes_max as usize];
    assert_eq!(
        code(w.app.append_file(&v.id, &big, &RetainAuth::Absent.into())),
        ErrorCode::TooLarge
    );
    assert_eq!(
        read(&w.app, &v.id).unwrap(),
        b"bye now",
        "a refused append changes nothing"
    );
}

#[test]
fn concurrent_appends_all_land() {
    let w = Arc::new(world());
    let v = put_plain(&w.app, "log.txt", b"");
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let w = Arc::clone(&w);
            let id = v.id.clone();
            std::thread::spawn(move || {
                w.app
                    .append_file(&id, format!("{i}\n").as_bytes(), &RetainAuth::Absent.into())
                    .unwrap()
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = String::from_utf8(read(&w.app, &v.id).unwrap()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines, ["0", "1", "2", "3", "4", "5", "6", "7"]);
}

#[test]
fn tags_change_without_touching_content_or_expiry() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"hi",
        NewFile {
            tags: vec!["one".into()],
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    let t = w
        .app
        .tag_file(
            &v.id,
            &["two".into()],
            &["one".into()],
            &RetainAuth::Absent.into(),
        )
        .unwrap();
    assert_eq!(t.tags, ["two"]);
    assert_eq!(t.lifetime.expires_at(), v.lifetime.expires_at());
    assert_eq!(read(&w.app, &v.id).unwrap(), b"hi");
    assert_eq!(
        code(
            w.app
                .tag_file(&v.id, &["Bad".into()], &[], &RetainAuth::Absent.into())
        ),
        ErrorCode::BadRequest
    );
}

#[test]
fn bad_requests_change_nothing() {
    let w = world();
    let cases = [
        NewFile {
            name: Some("a/b".into()),
            ..NewFile::default()
        },
        NewFile {
            tags: vec!["UPPER".into()],
            ..NewFile::default()
        },
        NewFile {
            tags: (0..6).map(|i| format!("t{i}")).collect(),
            ..NewFile::default()
        },
        NewFile {
            once: true,
            share: Some("shared".into()),
            ..NewFile::default()
        },
    ];
    for req in cases {
        assert_eq!(
            code(
                req.validate(&store_core::Limits::DEFAULT)
                    .map_err(AppError::from)
            ),
            ErrorCode::BadRequest,
            "{req:?}"
        );
        assert_eq!(
            code(
                w.app
                    .create_file(&req, upload(&w.app, b"x"), RetainAuth::Absent)
            ),
            ErrorCode::BadRequest
        );
    }
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
}

#[test]
fn uploads_over_the_limit_are_refused_while_streaming() {
    let w = world();
    let mut u = w.app.begin_upload(10).unwrap();
    u.push(b"0123456789").unwrap();
    assert!(matches!(
        u.push(b"x"),
        Err(AppError::Domain(store_core::StoreError::TooLarge(_)))
    ));
}

#[test]
fn browse_filters_and_sorts() {
    let w = world();
    let tagged = |name: &str, tags: &[&str], once: bool| {
        w.clock.advance_secs(1);
        let req = NewFile {
            tags: tags.iter().map(|t| t.to_string()).collect(),
            once,
            ..NewFile::default()
        };
        put_file(&w.app, name, name.as_bytes(), req, RetainAuth::Absent)
    };
    tagged("alpha.txt", &["rust", "docs"], false);
    tagged("beta.txt", &["rust"], false);
    tagged("gamma-longer.txt", &["go"], false);
    tagged("secret.txt", &["rust"], true);
    put_plain(&w.app, "untagged.txt", b"x");
    let names = |q: BrowseQuery| {
        w.app
            .browse(&q)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(BrowseQuery::default()),
        ["gamma-longer.txt", "beta.txt", "alpha.txt"]
    );
    assert_eq!(
        names(BrowseQuery {
            tags: vec!["rust".into()],
            ..Default::default()
        }),
        ["beta.txt", "alpha.txt"]
    );
    assert_eq!(
        names(BrowseQuery {
            tags: vec!["rust".into(), "docs".into()],
            ..Default::default()
        }),
        ["alpha.txt"]
    );
    assert_eq!(
        names(BrowseQuery {
            q: Some("GAM".into()),
            ..Default::default()
        }),
        ["gamma-longer.txt"]
    );
    assert_eq!(
        names(BrowseQuery {
            q: Some("doc".into()),
            ..Default::default()
        }),
        ["alpha.txt"]
    );
    assert_eq!(
        names(BrowseQuery {
            sort: BrowseSort::Size,
            order: SortOrder::Asc,
            ..Default::default()
        }),
        ["beta.txt", "alpha.txt", "gamma-longer.txt"]
    );
    assert_eq!(
        names(BrowseQuery {
            sort: BrowseSort::Name,
            order: SortOrder::Asc,
            ..Default::default()
        }),
        ["alpha.txt", "beta.txt", "gamma-longer.txt"]
    );
}

#[test]
fn a_text_preview_is_the_start_of_a_text_file_and_nothing_of_a_counted_one() {
    let w = world();
    let csv = put_plain(&w.app, "t.csv", "a,b\n1,2\n".as_bytes());
    let p = w.app.text_preview(&csv.record, 1024).unwrap().unwrap();
    assert_eq!((p.text.as_str(), p.whole), ("a,b\n1,2\n", true));
    // Cut at a character's end, never inside one.
    let long = put_plain(&w.app, "u.txt", "é".repeat(10).as_bytes());
    let p = w.app.text_preview(&long.record, 5).unwrap().unwrap();
    assert_eq!((p.text.as_str(), p.whole), ("éé", false));
    let png = put_plain(&w.app, "b.bin", &[0, 159, 146, 150]);
    assert_eq!(w.app.text_preview(&png.record, 1024).unwrap(), None);
    // A counted file's bytes are read by its downloads only.
    let req = NewFile {
        once: true,
        ..NewFile::default()
    };
    let once = put_file(&w.app, "o.txt", b"secret", req, RetainAuth::Absent);
    assert_eq!(w.app.text_preview(&once.record, 1024).unwrap(), None);
    assert_eq!(read(&w.app, &once.record.id).unwrap(), b"secret");
}
