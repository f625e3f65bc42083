//! Use-case tests over the in-memory ports and a manual clock.

use std::io::Read;
use std::sync::Arc;

use proptest::prelude::*;
use store_core::{ErrorCode, Limits, ReadIntent, RetainAuth, RetainTokens, Timestamp};
use store_testkit::{ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};

use super::*;

const T0: i64 = 1_795_359_845;

struct World {
    app: App,
    clock: Arc<ManualClock>,
    blobs: Arc<MemoryBlobStore>,
    repo: Arc<MemoryRepository>,
}

fn world_with(pool_bytes: u64) -> World {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let blobs = Arc::new(MemoryBlobStore::new());
    let repo = Arc::new(MemoryRepository::new());
    let (app, _) = App::open(ports(&clock, &blobs, &repo), config(pool_bytes)).unwrap();
    World {
        app,
        clock,
        blobs,
        repo,
    }
}

fn ports(
    clock: &Arc<ManualClock>,
    blobs: &Arc<MemoryBlobStore>,
    repo: &Arc<MemoryRepository>,
) -> Ports {
    Ports {
        repo: repo.clone(),
        blobs: blobs.clone(),
        clock: clock.clone(),
        random: Arc::new(SeededRandom::new(42)),
    }
}

fn config(pool_bytes: u64) -> AppConfig {
    AppConfig {
        base_url: "http://test".into(),
        limits: Limits {
            pool_bytes,
            ..Limits::default()
        },
        retain_tokens: RetainTokens::from_csv("secret"),
    }
}

fn world() -> World {
    world_with(store_core::limits::POOL_BYTES_DEFAULT)
}

fn upload(app: &App, bytes: &[u8]) -> Upload {
    let mut u = app
        .begin_upload(app.config().limits.file_bytes_max)
        .unwrap();
    u.push(bytes).unwrap();
    u
}

fn put_file(
    app: &App,
    name: &str,
    bytes: &[u8],
    req: NewFile,
    auth: RetainAuth,
) -> store_core::views::FileView {
    let req = NewFile {
        name: Some(name.into()),
        ..req
    };
    app.create_file(&req, upload(app, bytes), auth).unwrap()
}

fn read(app: &App, id: &str) -> AppResult<Vec<u8>> {
    let mut d = app.open_file(id, ReadIntent::Get)?;
    let mut out = vec![];
    d.reader.read_to_end(&mut out).unwrap();
    Ok(out)
}

fn code(r: AppResult<impl std::fmt::Debug>) -> ErrorCode {
    match r {
        Err(AppError::Domain(e)) => e.code(),
        other => panic!("expected a domain error, got {other:?}"),
    }
}

#[test]
fn upload_then_read_back() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"hello",
        NewFile::default(),
        RetainAuth::Absent,
    );
    assert_eq!(v.size, 5);
    assert_eq!(v.content_type, "text/plain");
    assert!(v.editable);
    assert_eq!(v.expires_in, Some(14_400));
    assert_eq!(v.url, format!("http://test/{}", v.id));
    assert_eq!(read(&w.app, &v.id).unwrap(), b"hello");
    assert_eq!(w.app.pool_used_bytes(), 5);
}

#[test]
fn binary_files_are_not_editable() {
    let w = world();
    let v = put_file(
        &w.app,
        "x.bin",
        b"\x89PNG\r\n\x1a\n\0\0",
        NewFile::default(),
        RetainAuth::Absent,
    );
    assert_eq!(v.content_type, "image/png");
    assert!(!v.editable);
    assert_eq!(
        code(w.app.check_edit(&v.id, RetainAuth::Absent)),
        ErrorCode::Forbidden
    );
    assert_eq!(
        code(w.app.append_file(&v.id, b"x", RetainAuth::Absent)),
        ErrorCode::Forbidden
    );
    assert_eq!(
        code(
            w.app
                .replace_file(&v.id, upload(&w.app, b"x"), RetainAuth::Absent)
        ),
        ErrorCode::Forbidden
    );
}

#[test]
fn expired_files_answer_not_found_and_are_swept() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"hello",
        NewFile::default(),
        RetainAuth::Absent,
    );
    w.clock.advance_secs(14_399);
    assert!(read(&w.app, &v.id).is_ok());
    w.clock.advance_secs(1);
    assert_eq!(code(read(&w.app, &v.id)), ErrorCode::NotFound);
    assert_eq!(w.blobs.count(), 1, "bytes stay until the sweep");
    let report = w.app.sweep(100).unwrap();
    assert_eq!(report.removed, 1);
    assert_eq!(report.next_expiry, None);
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes(), 0);
}

#[test]
fn sweep_reports_the_next_deadline_and_leaves_live_files() {
    let w = world();
    let a = put_file(
        &w.app,
        "a.txt",
        b"a",
        NewFile::default(),
        RetainAuth::Absent,
    );
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
    assert_eq!(short.expires_in, Some(14_400));
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
    assert_eq!(long.expires_in, Some(1_209_600));
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
    assert!(w.app.open_file(&v.id, ReadIntent::Head).is_ok());
    assert!(w.app.open_file(&v.id, ReadIntent::Head).is_ok());
    assert_eq!(read(&w.app, &v.id).unwrap(), b"secret");
    assert_eq!(code(read(&w.app, &v.id)), ErrorCode::NotFound);
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes(), 0);
}

#[test]
fn once_files_are_served_once_to_concurrent_readers() {
    let w = Arc::new(world());
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
    assert_eq!(served, 1);
}

#[test]
fn retention_needs_the_token_and_lasts() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"hi",
        NewFile::default(),
        RetainAuth::Absent,
    );
    assert_eq!(
        code(w.app.retain_file(&v.id, RetainAuth::Absent)),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(w.app.retain_file(&v.id, RetainAuth::Invalid)),
        ErrorCode::WriteDenied
    );
    let r = w.app.retain_file(&v.id, RetainAuth::Valid).unwrap();
    assert_eq!(r.retention, "indefinite");
    assert_eq!(r.expires_at, None);
    // Idempotent.
    assert_eq!(w.app.retain_file(&v.id, RetainAuth::Valid).unwrap(), r);
    w.clock.advance_secs(10 * 365 * 86_400);
    w.app.sweep(100).unwrap();
    assert_eq!(read(&w.app, &v.id).unwrap(), b"hi");
    // Writes and deletes now need the token.
    assert_eq!(
        code(w.app.delete_file(&v.id, RetainAuth::Absent)),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(w.app.append_file(&v.id, b"!", RetainAuth::Absent)),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(
            w.app
                .tag_file(&v.id, &["x".into()], &[], RetainAuth::Absent)
        ),
        ErrorCode::WriteDenied
    );
    w.app.append_file(&v.id, b"!", RetainAuth::Valid).unwrap();
    w.app.delete_file(&v.id, RetainAuth::Valid).unwrap();
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
    assert_eq!(v.expires_at, None);
    assert_eq!(v.persistence.retention, Some("indefinite"));
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
    let v = put_file(
        &w.app,
        "a.txt",
        b"hi",
        NewFile::default(),
        RetainAuth::Absent,
    );
    let after = w
        .app
        .replace_file(&v.id, upload(&w.app, b"new"), RetainAuth::Valid)
        .unwrap();
    assert_eq!(after.expires_at, None);
    assert_eq!(read(&w.app, &v.id).unwrap(), b"new");
}

#[test]
fn put_replaces_and_patch_appends() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"hello",
        NewFile::default(),
        RetainAuth::Absent,
    );
    let r = w
        .app
        .replace_file(&v.id, upload(&w.app, b"bye"), RetainAuth::Absent)
        .unwrap();
    assert_eq!(r.size, 3);
    assert_eq!(
        r.expires_at, v.expires_at,
        "edits do not move a single file's expiry"
    );
    let r = w
        .app
        .append_file(&v.id, b" now", RetainAuth::Absent)
        .unwrap();
    assert_eq!(r.size, 7);
    assert_eq!(read(&w.app, &v.id).unwrap(), b"bye now");
    assert_eq!(w.blobs.count(), 1, "old bytes are freed");
    assert_eq!(w.app.pool_used_bytes(), 7);
    assert_eq!(
        code(w.app.append_file(&v.id, b"\xff", RetainAuth::Absent)),
        ErrorCode::BadRequest
    );
    let big = vec![b'a'; store_core::limits::FILE_BYTES_MAX as usize];
    assert_eq!(
        code(w.app.append_file(&v.id, &big, RetainAuth::Absent)),
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
    let v = put_file(
        &w.app,
        "log.txt",
        b"",
        NewFile::default(),
        RetainAuth::Absent,
    );
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let w = Arc::clone(&w);
            let id = v.id.clone();
            std::thread::spawn(move || {
                w.app
                    .append_file(&id, format!("{i}\n").as_bytes(), RetainAuth::Absent)
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
        .tag_file(&v.id, &["two".into()], &["one".into()], RetainAuth::Absent)
        .unwrap();
    assert_eq!(t.tags, ["two"]);
    assert_eq!(t.expires_at, v.expires_at);
    assert_eq!(read(&w.app, &v.id).unwrap(), b"hi");
    assert_eq!(
        code(
            w.app
                .tag_file(&v.id, &["Bad".into()], &[], RetainAuth::Absent)
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
            code(req.validate().map_err(AppError::from)),
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
    assert_eq!(w.app.pool_used_bytes(), 0);
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
fn pool_evicts_soonest_expiry_first_and_never_retained() {
    let w = world_with(30);
    let kept = put_file(
        &w.app,
        "k",
        &[b'k'; 10],
        NewFile::default(),
        RetainAuth::Valid,
    );
    let late = put_file(
        &w.app,
        "l",
        &[b'l'; 10],
        NewFile {
            ttl_secs: Some(86_400),
            ..NewFile::default()
        },
        RetainAuth::Absent,
    );
    let soon = put_file(
        &w.app,
        "s",
        &[b's'; 10],
        NewFile::default(),
        RetainAuth::Absent,
    );
    assert_eq!(w.app.pool_used_bytes(), 30);
    let new = put_file(
        &w.app,
        "n",
        &[b'n'; 10],
        NewFile::default(),
        RetainAuth::Absent,
    );
    assert!(
        read(&w.app, &soon.id).is_err(),
        "the soonest-expiring file went first"
    );
    assert!(read(&w.app, &late.id).is_ok());
    assert!(read(&w.app, &kept.id).is_ok());
    assert!(read(&w.app, &new.id).is_ok());
    // Nothing evictable is large enough: 507, and nothing is lost.
    let req = NewFile {
        name: Some("big".into()),
        ..NewFile::default()
    };
    assert_eq!(
        code(
            w.app
                .create_file(&req, upload(&w.app, &[0; 25]), RetainAuth::Absent)
        ),
        ErrorCode::PoolFull
    );
    assert!(read(&w.app, &kept.id).is_ok());
    assert!(w.app.pool_used_bytes() <= 30);
}

#[test]
fn open_recomputes_the_pool_and_collects_orphans() {
    let w = world();
    put_file(&w.app, "a", b"abc", NewFile::default(), RetainAuth::Absent);
    // An orphan: bytes committed but no record (a crash between the steps).
    let mut orphan = store_core::ports::BlobStore::create(w.blobs.as_ref()).unwrap();
    orphan.write(b"lost").unwrap();
    orphan.commit().unwrap();
    assert_eq!(w.blobs.count(), 2);
    let (app, rec) = App::open(ports(&w.clock, &w.blobs, &w.repo), config(1000)).unwrap();
    assert_eq!(
        rec,
        Recovery {
            objects: 1,
            pool_used_bytes: 3,
            orphan_blobs_removed: 1
        }
    );
    assert_eq!(app.pool_used_bytes(), 3);
    assert_eq!(w.blobs.count(), 1);
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
    put_file(
        &w.app,
        "untagged.txt",
        b"x",
        NewFile::default(),
        RetainAuth::Absent,
    );
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

/// One step of a random history.
#[derive(Debug, Clone)]
enum Op {
    Upload {
        size: u8,
        ttl_hours: Option<u16>,
        once: bool,
        retain: bool,
    },
    Advance {
        secs: u32,
    },
    Read {
        pick: usize,
    },
    Head {
        pick: usize,
    },
    Retain {
        pick: usize,
    },
    Append {
        pick: usize,
    },
    Delete {
        pick: usize,
    },
    Sweep,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (
            1u8..40,
            prop::option::of(1u16..400),
            any::<bool>(),
            prop::bool::weighted(0.2)
        )
            .prop_map(|(size, ttl_hours, once, retain)| Op::Upload {
                size,
                ttl_hours,
                once,
                retain
            }),
        (0u32..200_000).prop_map(|secs| Op::Advance { secs }),
        any::<usize>().prop_map(|pick| Op::Read { pick }),
        any::<usize>().prop_map(|pick| Op::Head { pick }),
        any::<usize>().prop_map(|pick| Op::Retain { pick }),
        any::<usize>().prop_map(|pick| Op::Append { pick }),
        any::<usize>().prop_map(|pick| Op::Delete { pick }),
        Just(Op::Sweep),
    ]
}

/// What the model remembers of a file.
#[derive(Debug)]
struct Known {
    id: String,
    expires_at: Option<Timestamp>,
    once: bool,
    served: usize,
    gone: bool,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// No sequence of operations makes an expired non-retained file
    /// readable; retained files never expire; a once file is served at most
    /// once; ttl lands in [4h, 14d]; the pool never passes its capacity and
    /// always equals the bytes of the files still stored.
    #[test]
    fn lifetimes_hold_under_any_history(ops in prop::collection::vec(op(), 1..60)) {
        let w = world_with(400);
        let mut known: Vec<Known> = vec![];
        for op in ops {
            let now = w.clock.now();
            match op {
                Op::Upload { size, ttl_hours, once, retain } => {
                    let req = NewFile {
                        name: Some("f.txt".into()),
                        ttl_secs: ttl_hours.map(|h| u64::from(h) * 3600),
                        once,
                        ..NewFile::default()
                    };
                    let auth = if retain { RetainAuth::Valid } else { RetainAuth::Absent };
                    match w.app.create_file(&req, upload(&w.app, &vec![b'x'; size.into()]), auth) {
                        Ok(v) => {
                            if let Some(secs) = v.expires_in {
                                prop_assert!((14_400..=1_209_600).contains(&secs));
                            }
                            prop_assert_eq!(v.expires_at.is_none(), retain);
                            known.push(Known {
                                id: v.id,
                                expires_at: (!retain).then(|| now.plus_secs(v.expires_in.unwrap())),
                                once,
                                served: 0,
                                gone: false,
                            });
                        }
                        Err(e) => prop_assert_eq!(code(Err::<(), _>(e)), ErrorCode::PoolFull),
                    }
                }
                Op::Advance { secs } => w.clock.advance_secs(secs.into()),
                Op::Read { pick } | Op::Head { pick } if !known.is_empty() => {
                    let intent = if matches!(op, Op::Read { .. }) { ReadIntent::Get } else { ReadIntent::Head };
                    let n = known.len();
                    let k = &mut known[pick % n];
                    let result = w.app.open_file(&k.id, intent);
                    let expired = k.expires_at.is_some_and(|at| now >= at);
                    if expired {
                        prop_assert!(result.is_err(), "an expired file was readable");
                    }
                    if k.expires_at.is_none() && !k.gone {
                        prop_assert!(result.is_ok(), "a retained file was not readable");
                    }
                    if result.is_ok() && intent == ReadIntent::Get {
                        k.served += 1;
                        if k.once { k.gone = true; }
                    }
                    if k.once { prop_assert!(k.served <= 1, "a once file was served twice"); }
                    // Evicted files may be gone too; a gone file stays gone.
                    if result.is_err() { k.gone = true; }
                }
                Op::Retain { pick } if !known.is_empty() => {
                    let n = known.len();
                    let k = &mut known[pick % n];
                    if w.app.retain_file(&k.id, RetainAuth::Valid).is_ok() {
                        prop_assert!(k.expires_at.is_none_or(|at| now < at), "an expired file was retained");
                        k.expires_at = None;
                    }
                }
                Op::Append { pick } if !known.is_empty() => {
                    let n = known.len();
                    let k = &mut known[pick % n];
                    let _ = w.app.append_file(&k.id, b"+", RetainAuth::Valid);
                    if w.app.file_info(&k.id).is_ok_and(|v| v.expires_at.is_none()) {
                        k.expires_at = None;
                    }
                }
                Op::Delete { pick } if !known.is_empty() => {
                    let n = known.len();
                    let k = &mut known[pick % n];
                    if w.app.delete_file(&k.id, RetainAuth::Valid).is_ok() { k.gone = true; }
                }
                Op::Sweep => { w.app.sweep(1000).unwrap(); }
                _ => {}
            }
            prop_assert!(w.app.pool_used_bytes() <= 400);
            let mut stored = 0u64;
            store_core::ports::Repository::for_each(w.repo.as_ref(), &mut |_, o| {
                stored += o.pool_bytes();
                std::ops::ControlFlow::Continue(())
            }).unwrap();
            prop_assert_eq!(w.app.pool_used_bytes(), stored, "the pool drifted from the records");
        }
    }
}
