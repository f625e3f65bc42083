//! Use-case tests over the in-memory ports and a manual clock.

use std::io::Read;
use std::sync::atomic::AtomicBool;
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
        fetcher: Arc::new(store_testkit::FakeFetcher::new()),
        coordination: Default::default(),
    }
}

fn config(pool_bytes: u64) -> AppConfig {
    AppConfig {
        limits: Limits {
            pool_bytes,
            ..Limits::default()
        },
        retain_tokens: RetainTokens::from_csv("secret"),
        ..AppConfig::new("http://test")
    }
}

fn world() -> World {
    world_with(store_core::Limits::DEFAULT.pool_bytes)
}

fn upload(app: &App, bytes: &[u8]) -> Staged {
    let mut u = app
        .begin_upload(app.config().limits.file_bytes_max)
        .unwrap();
    u.push(bytes).unwrap();
    u.finish().unwrap()
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
    let Opened::File(mut d) = app.read(id, ReadIntent::Get)? else {
        panic!("{id} is not a single file");
    };
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
    assert_eq!(w.app.pool_used_bytes().unwrap(), 5);
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
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
}

#[test]
fn upkeep_sweeps_collects_and_stops_promptly() {
    let w = world();
    let v = put_file(
        &w.app,
        "a.txt",
        b"hello",
        NewFile::default(),
        RetainAuth::Absent,
    );
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
    assert!(w.app.read(&v.id, ReadIntent::Head).is_ok());
    assert!(w.app.read(&v.id, ReadIntent::Head).is_ok());
    assert_eq!(read(&w.app, &v.id).unwrap(), b"secret");
    assert_eq!(code(read(&w.app, &v.id)), ErrorCode::NotFound);
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
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
        code(w.app.retain(&v.id, RetainAuth::Absent)),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(w.app.retain(&v.id, RetainAuth::Invalid)),
        ErrorCode::WriteDenied
    );
    let r = w.app.retain(&v.id, RetainAuth::Valid).unwrap();
    assert_eq!(r.retention, "indefinite");
    assert_eq!(r.expires_at, None);
    // Idempotent.
    assert_eq!(w.app.retain(&v.id, RetainAuth::Valid).unwrap(), r);
    w.clock.advance_secs(10 * 365 * 86_400);
    w.app.sweep(100).unwrap();
    assert_eq!(read(&w.app, &v.id).unwrap(), b"hi");
    // Writes and deletes now need the token.
    assert_eq!(
        code(w.app.delete(&v.id, RetainAuth::Absent)),
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
    w.app.delete(&v.id, RetainAuth::Valid).unwrap();
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
    assert_eq!(w.app.pool_used_bytes().unwrap(), 7);
    assert_eq!(
        code(w.app.append_file(&v.id, b"\xff", RetainAuth::Absent)),
        ErrorCode::BadRequest
    );
    let big = vec![b'a'; store_core::Limits::DEFAULT.file_bytes_max as usize];
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
    assert_eq!(w.app.pool_used_bytes().unwrap(), 30);
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
    // Nothing evictable is large enough: 507, and nothing is evicted for it.
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
    assert!(
        read(&w.app, &late.id).is_ok(),
        "a refused upload evicted nothing"
    );
    assert!(
        read(&w.app, &new.id).is_ok(),
        "a refused upload evicted nothing"
    );
    assert_eq!(
        code(
            w.app
                .create_file(&req, upload(&w.app, &[0; 31]), RetainAuth::Absent)
        ),
        ErrorCode::PoolFull
    );
    assert!(w.app.pool_used_bytes().unwrap() <= 30);
}

/// Commits an orphan: bytes with no record, as a crash between a write's
/// two steps leaves them.
fn orphan(blobs: &MemoryBlobStore, bytes: &[u8]) -> store_core::BlobId {
    let mut w = store_core::ports::BlobStore::create(blobs).unwrap();
    w.write(bytes).unwrap();
    w.commit().unwrap()
}

#[test]
fn open_reads_the_totals_and_the_collection_removes_orphans() {
    let w = world();
    put_file(&w.app, "a", b"abc", NewFile::default(), RetainAuth::Absent);
    orphan(&w.blobs, b"lost");
    assert_eq!(w.blobs.count(), 2);
    let (app, rec) = App::open(ports(&w.clock, &w.blobs, &w.repo), config(1000)).unwrap();
    assert_eq!(
        rec,
        Recovery {
            objects: 1,
            pool_used_bytes: 3,
        }
    );
    assert_eq!(app.pool_used_bytes().unwrap(), 3);
    assert_eq!(
        w.blobs.count(),
        2,
        "opening leaves the orphan to the collection"
    );
    let stop = AtomicBool::new(false);
    assert_eq!(
        app.collect_orphans(&stop).unwrap(),
        OrphanReport {
            removed: 1,
            gave_up: false
        }
    );
    assert_eq!(w.blobs.count(), 1);
}

#[test]
fn the_collection_spares_bytes_committed_since_opening() {
    let w = world();
    orphan(&w.blobs, b"lost");
    let (app, _) = App::open(ports(&w.clock, &w.blobs, &w.repo), config(1000)).unwrap();
    // An upload in flight: its bytes are committed, its record not yet
    // written when the collection runs.
    let staged = upload(&app, b"in flight");
    assert_eq!(w.blobs.count(), 2);
    let stop = AtomicBool::new(false);
    assert_eq!(app.collect_orphans(&stop).unwrap().removed, 1);
    let req = NewFile {
        name: Some("late.txt".into()),
        ..NewFile::default()
    };
    let view = app.create_file(&req, staged, RetainAuth::Absent).unwrap();
    assert_eq!(read(&app, &view.id).unwrap(), b"in flight");
    // A second collection would no longer know what is fresh: it does
    // nothing rather than guess.
    orphan(&w.blobs, b"later");
    let again = app.collect_orphans(&stop).unwrap();
    assert!(again.gave_up);
    assert_eq!(again.removed, 0);
}

#[test]
fn a_stopped_collection_removes_nothing() {
    let w = world();
    put_file(&w.app, "a", b"abc", NewFile::default(), RetainAuth::Absent);
    orphan(&w.blobs, b"lost");
    let (app, _) = App::open(ports(&w.clock, &w.blobs, &w.repo), config(1000)).unwrap();
    let report = app.collect_orphans(&AtomicBool::new(true)).unwrap();
    assert!(report.gave_up);
    assert_eq!(w.blobs.count(), 2);
}

#[test]
fn the_sweep_removes_in_batches_and_waits_for_busy_keys() {
    let w = world();
    let ttl = NewFile {
        ttl_secs: Some(3600),
        ..NewFile::default()
    };
    let ids: Vec<String> = (0..300)
        .map(|i| {
            put_file(
                &w.app,
                &format!("f{i}"),
                b"abcd",
                ttl.clone(),
                RetainAuth::Absent,
            )
            .id
        })
        .collect();
    let day = NewFile {
        ttl_secs: Some(86_400),
        ..NewFile::default()
    };
    let kept = put_file(&w.app, "kept", b"xy", day, RetainAuth::Absent);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 1202);
    // The shortest lifetime is 4h.
    w.clock.advance_secs(5 * 3600);
    // A request holds one expired key's lock while the sweep runs: the sweep
    // waits for it instead of skipping it.
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let report = std::thread::scope(|s| {
        s.spawn(|| {
            let _guard = w.app.lock(&[&ids[17]]).unwrap();
            held_tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(50));
        });
        held_rx.recv().unwrap();
        w.app.sweep(1000).unwrap()
    });
    assert_eq!(report.removed, 300);
    assert_eq!(
        w.app.pool_used_bytes().unwrap(),
        2,
        "each removal gave its bytes back"
    );
    assert_eq!(w.blobs.count(), 1, "and its blob went");
    assert!(read(&w.app, &kept.id).is_ok());
    assert_eq!(w.app.sweep(1000).unwrap().removed, 0);
}

#[test]
fn listings_read_their_index_never_every_record() {
    let w = world();
    let tags = NewFile {
        tags: vec!["rust".into()],
        ..NewFile::default()
    };
    put_file(&w.app, "a.txt", b"a", tags, RetainAuth::Absent);
    put_file(
        &w.app,
        "b.txt",
        b"b",
        NewFile::default(),
        RetainAuth::Absent,
    );
    let before = w.repo.full_scans();
    assert_eq!(w.app.browse(&BrowseQuery::default()).unwrap().len(), 1);
    w.app.list_dirs(&DirQuery::default()).unwrap();
    w.app.list_galleries().unwrap();
    assert_eq!(
        w.repo.full_scans(),
        before,
        "no listing walked every record"
    );
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
                    let result = w.app.read(&k.id, intent);
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
                    if w.app.retain(&k.id, RetainAuth::Valid).is_ok() {
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
                    if w.app.delete(&k.id, RetainAuth::Valid).is_ok() { k.gone = true; }
                }
                Op::Sweep => { w.app.sweep(1000).unwrap(); }
                _ => {}
            }
            prop_assert!(w.app.pool_used_bytes().unwrap() <= 400);
            let mut stored = 0u64;
            store_core::ports::Repository::for_each(w.repo.as_ref(), &mut |_, o| {
                stored += o.pool_bytes();
                std::ops::ControlFlow::Continue(())
            }).unwrap();
            prop_assert_eq!(w.app.pool_used_bytes().unwrap(), stored, "the pool drifted from the records");
        }
    }
}

mod containers {
    use super::*;
    use store_core::views::DirView;

    fn part(app: &App, name: &str, bytes: &[u8]) -> Part {
        Part {
            name: Some(name.into()),
            declared_type: None,
            body: upload(app, bytes),
        }
    }

    fn open_access() -> DirAccess {
        DirAccess {
            retain: RetainAuth::Absent,
            write_token: None,
        }
    }

    fn read_dir_file(app: &App, key: &str, name: &str) -> AppResult<Vec<u8>> {
        let mut d = app.open_dir_file(key, name)?;
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
        assert!(b.bundle && !b.editable);
        assert_eq!(b.files.len(), 2);
        assert_eq!(b.files[1].content_type, "image/png");
        assert_eq!(
            b.expires_at,
            Some(Timestamp::from_secs(T0 + 14_400).to_string())
        );
        assert!(matches!(
            w.app.read(&b.id, ReadIntent::Get).unwrap(),
            Opened::Bundle(_)
        ));
        let mut m = w.app.open_member(&b.id, "a.txt").unwrap();
        let mut s = String::new();
        m.reader.read_to_string(&mut s).unwrap();
        assert_eq!(s, "aa");
        assert_eq!(
            code(w.app.check_edit(&b.id, RetainAuth::Absent)),
            ErrorCode::Forbidden
        );
        assert_eq!(
            code(w.app.append_file(&b.id, b"x", RetainAuth::Absent)),
            ErrorCode::Forbidden
        );
        assert_eq!(w.app.pool_used_bytes().unwrap(), 10);
        w.app.retain(&b.id, RetainAuth::Valid).unwrap();
        w.clock.advance_secs(100 * 86_400);
        assert!(
            w.app.read(&b.id, ReadIntent::Get).is_ok(),
            "a retained bundle never expires"
        );
        w.app.delete(&b.id, RetainAuth::Valid).unwrap();
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
        let (v, created) = w.app.create_dir(&first, vec![], &open_access()).unwrap();
        assert!(created);
        assert_eq!(v.max_age, 86_400);
        let second = NewDir {
            listed: false,
            tags: vec!["two".into()],
            ttl_secs: Some(3 * 86_400),
            ..named("proj-x")
        };
        let (again, created) = w
            .app
            .create_dir(&second, vec![part(&w.app, "a.txt", b"a")], &open_access())
            .unwrap();
        assert!(!created);
        assert!(again.listed, "flags of a later create are ignored");
        assert_eq!(again.tags, ["one"]);
        assert_eq!(again.max_age, 86_400);
        assert_eq!(
            again.files.len(),
            1,
            "parts posted to an existing named dir are added"
        );
        // Retry-safe: the same part again replaces, not duplicates.
        let (again, _) = w
            .app
            .create_dir(&second, vec![part(&w.app, "a.txt", b"a")], &open_access())
            .unwrap();
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
                        .1
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
        let (v, _) = w
            .app
            .create_dir(
                &NewDir {
                    ttl_secs: Some(14_400),
                    ..named("slide")
                },
                vec![],
                &open_access(),
            )
            .unwrap();
        assert_eq!(
            v.expires_at,
            Some(Timestamp::from_secs(T0 + 14_400).to_string())
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
            v.expires_at,
            Some(Timestamp::from_secs(T0 + 28_800).to_string()),
            "slides by ttl"
        );
        assert_eq!(v.updated_at, Timestamp::from_secs(T0 + 3600).to_string());
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
        let h = w.app.dir_history("slide").unwrap();
        let actions: Vec<_> = h.iter().map(|e| format!("{:?}", e.action)).collect();
        assert_eq!(actions, ["Delete", "Append", "Add"]);
        assert_eq!(h[1].bytes, 6);
        assert_eq!(w.blobs.count(), 0);
        assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
        // Expiry: reads answer 404, and the sweep reclaims the dir.
        w.clock.advance_secs(31 * 86_400);
        assert_eq!(code(w.app.get_dir("slide")), ErrorCode::NotFound);
        assert_eq!(w.app.sweep(10).unwrap().removed, 1);
    }

    #[test]
    fn write_tokens_gate_writes_but_not_reads() {
        let w = world();
        let req = NewDir {
            write: Some(WriteRequest::Generate),
            ..named("locked")
        };
        let (v, _) = w
            .app
            .create_dir(&req, vec![part(&w.app, "a.txt", b"a")], &open_access())
            .unwrap();
        let token = v
            .write_token
            .clone()
            .expect("the token is returned at creation");
        assert!(token.len() >= 22);
        let (again, _) = w
            .app
            .create_dir(&named("locked"), vec![], &open_access())
            .unwrap();
        assert_eq!(again.write_token, None, "the token is returned once");
        assert_eq!(
            code(
                w.app
                    .add_to_dir("locked", vec![part(&w.app, "b", b"b")], &open_access())
            ),
            ErrorCode::WriteDenied
        );
        assert_eq!(
            code(w.app.delete_dir_file("locked", "a.txt", &open_access())),
            ErrorCode::WriteDenied
        );
        assert_eq!(
            code(w.app.delete_dir("locked", &open_access())),
            ErrorCode::WriteDenied
        );
        assert_eq!(
            code(w.app.create_dir(
                &named("locked"),
                vec![part(&w.app, "b", b"b")],
                &open_access()
            )),
            ErrorCode::WriteDenied
        );
        assert!(
            read_dir_file(&w.app, "locked", "a.txt").is_ok(),
            "reads stay open"
        );
        let ok = DirAccess {
            retain: RetainAuth::Absent,
            write_token: Some(token),
        };
        w.app
            .add_to_dir("locked", vec![part(&w.app, "b", b"b")], &ok)
            .unwrap();
        let custom = NewDir {
            write: Some(WriteRequest::Custom("my-own-token-1234".into())),
            ..named("mine1")
        };
        w.app.create_dir(&custom, vec![], &open_access()).unwrap();
        let mine = DirAccess {
            retain: RetainAuth::Absent,
            write_token: Some("my-own-token-1234".into()),
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
        let admin = DirAccess {
            retain: RetainAuth::Valid,
            write_token: None,
        };
        let (v, _) = w.app.create_dir(&req, vec![], &admin).unwrap();
        assert!(v.open);
        assert_eq!(v.expires_at, None);
        assert_eq!(v.persistence.retention, Some("indefinite"));
        assert_eq!(v.persistence.extendable_by, "none");
        assert_eq!(v.persistence.max_age, None);
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
        assert!(w.app.get_dir("gallery-wall").is_ok());
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
        assert_eq!(r.persistence.kind, store_core::views::PersistenceType::Dir);
        assert_eq!(
            code(
                w.app
                    .add_to_dir("kept-dir", vec![part(&w.app, "b", b"b")], &open_access())
            ),
            ErrorCode::WriteDenied
        );
        w.clock.advance_secs(400 * 86_400);
        assert!(w.app.get_dir("kept-dir").is_ok());
    }

    #[test]
    fn a_dir_is_evicted_as_a_whole_and_show_dirs_never() {
        let w = world_with(30);
        let admin = DirAccess {
            retain: RetainAuth::Valid,
            write_token: None,
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
        assert_eq!(code(w.app.get_dir("old-dir")), ErrorCode::NotFound);
        assert!(w.app.get_dir("show-wall").is_ok());
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
                .map(|d: DirView| d.id)
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
}

mod imports {
    use super::*;
    use store_core::FetchError;
    use store_testkit::FakeFetcher;

    fn world_with_fetcher(fetcher: Arc<FakeFetcher>) -> World {
        let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
        let blobs = Arc::new(MemoryBlobStore::new());
        let repo = Arc::new(MemoryRepository::new());
        let mut p = ports(&clock, &blobs, &repo);
        p.fetcher = fetcher;
        let (app, _) = App::open(p, config(store_core::Limits::DEFAULT.pool_bytes)).unwrap();
        World {
            app,
            clock,
            blobs,
            repo,
        }
    }

    fn req(url: &str) -> ImportRequest {
        ImportRequest {
            url: url.into(),
            ..ImportRequest::default()
        }
    }

    #[test]
    fn names_come_from_the_header_then_the_path_then_the_request() {
        let f = Arc::new(FakeFetcher::new());
        f.serve(
            "https://e.example/files/report.csv",
            Some("text/csv"),
            None,
            b"a,b",
        );
        f.serve(
            "https://e.example/dl?id=7",
            Some("application/pdf"),
            Some("paper.pdf"),
            b"%PDF-1.4",
        );
        f.serve("https://e.example/", None, None, b"plain");
        let w = world_with_fetcher(f);
        let v = w
            .app
            .import(
                &req("https://e.example/files/report.csv"),
                RetainAuth::Absent,
            )
            .unwrap();
        assert_eq!(
            (v.name.as_str(), v.content_type.as_str()),
            ("report.csv", "text/csv")
        );
        let v = w
            .app
            .import(&req("https://e.example/dl?id=7"), RetainAuth::Absent)
            .unwrap();
        assert_eq!(v.name, "paper.pdf");
        let v = w
            .app
            .import(&req("https://e.example/"), RetainAuth::Absent)
            .unwrap();
        assert_eq!(v.name, "upload.txt", "a safe default");
        let named = ImportRequest {
            file: NewFile {
                name: Some("mine.csv".into()),
                ..NewFile::default()
            },
            ..req("https://e.example/files/report.csv")
        };
        assert_eq!(
            w.app.import(&named, RetainAuth::Absent).unwrap().name,
            "mine.csv"
        );
        assert_eq!(read(&w.app, &v.id).unwrap(), b"plain");
    }

    #[test]
    fn failures_store_nothing() {
        let f = Arc::new(FakeFetcher::new());
        f.fail("https://blocked.example/", FetchError::Refused);
        f.serve("https://big.example/", None, None, &vec![0u8; 5_242_881]);
        let w = world_with_fetcher(f);
        assert_eq!(
            code(
                w.app
                    .import(&req("https://blocked.example/"), RetainAuth::Absent)
            ),
            ErrorCode::BadRequest
        );
        assert_eq!(
            code(
                w.app
                    .import(&req("https://big.example/"), RetainAuth::Absent)
            ),
            ErrorCode::TooLarge
        );
        let share = ImportRequest {
            file: NewFile {
                share: Some("a-dir".into()),
                ..NewFile::default()
            },
            ..req("https://x.example/")
        };
        assert_eq!(
            code(w.app.import(&share, RetainAuth::Absent)),
            ErrorCode::BadRequest
        );
        assert_eq!(w.blobs.count(), 0);
        assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
    }

    #[test]
    fn link_stores_an_editable_redirect_document() {
        let w = world_with_fetcher(Arc::new(FakeFetcher::new()));
        let r = ImportRequest {
            link: true,
            ..req("https://example.com/a?b=\"c\"")
        };
        let v = w.app.import(&r, RetainAuth::Absent).unwrap();
        assert_eq!(v.name, "link.html");
        assert_eq!(v.content_type, "text/html");
        assert!(v.editable);
        let doc = String::from_utf8(read(&w.app, &v.id).unwrap()).unwrap();
        assert_eq!(
            store_core::import::link_target(&doc).as_deref(),
            Some("https://example.com/a?b=\"c\"")
        );
        let Opened::File(d) = w.app.read(&v.id, ReadIntent::Head).unwrap() else {
            panic!()
        };
        assert!(d.link);
        assert_eq!(
            code(w.app.import(
                &ImportRequest {
                    link: true,
                    ..req("javascript:alert(1)")
                },
                RetainAuth::Absent
            )),
            ErrorCode::BadRequest
        );
    }
}

mod pics {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        // A minimal valid PNG of w x h (one grey row repeated), made by hand
        // so the app tests need no image library.
        fn chunk(t: &[u8], d: &[u8]) -> Vec<u8> {
            let mut c = (d.len() as u32).to_be_bytes().to_vec();
            c.extend_from_slice(t);
            c.extend_from_slice(d);
            let mut crc = 0xFFFF_FFFFu32;
            for b in t.iter().chain(d) {
                crc ^= u32::from(*b);
                for _ in 0..8 {
                    crc = if crc & 1 == 1 {
                        (crc >> 1) ^ 0xEDB8_8320
                    } else {
                        crc >> 1
                    };
                }
            }
            c.extend_from_slice(&(!crc).to_be_bytes());
            c
        }
        let mut ihdr = w.to_be_bytes().to_vec();
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
        // Stored (uncompressed) deflate blocks of filter byte 0 + w grey bytes per row.
        let raw: Vec<u8> = (0..h)
            .flat_map(|_| std::iter::once(0u8).chain(std::iter::repeat_n(128u8, w as usize)))
            .collect();
        let mut z = vec![0x78, 0x01];
        for (i, block) in raw.chunks(65_535).enumerate() {
            let last = (i + 1) * 65_535 >= raw.len();
            z.push(u8::from(last));
            z.extend_from_slice(&(block.len() as u16).to_le_bytes());
            z.extend_from_slice(&(!(block.len() as u16)).to_le_bytes());
            z.extend_from_slice(block);
        }
        let (mut a, mut b) = (1u32, 0u32);
        for x in &raw {
            a = (a + u32::from(*x)) % 65_521;
            b = (b + a) % 65_521;
        }
        z.extend_from_slice(&((b << 16) | a).to_be_bytes());
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        out.extend(chunk(b"IHDR", &ihdr));
        out.extend(chunk(b"IDAT", &z));
        out.extend(chunk(b"IEND", &[]));
        out
    }

    fn visitor(ua: &str) -> Visitor {
        Visitor {
            ip: "203.0.113.9".into(),
            user_agent: ua.into(),
        }
    }

    fn put_image(w: &World, gid: &str) -> crate::ImageView {
        w.app
            .upload_image(gid, Some("p.png"), upload(&w.app, &png(40, 30)))
            .unwrap()
    }

    #[test]
    fn galleries_are_created_once_per_name() {
        let w = world();
        let (g, created) = w.app.create_gallery(Some("holiday-2026"), true).unwrap();
        assert!(created);
        assert_eq!(g.id, "holiday-2026");
        let token = g.token.clone().unwrap();
        assert_eq!(
            g.admin_url,
            Some(format!("http://test/pics/g/holiday-2026/{token}"))
        );
        let (again, created) = w.app.create_gallery(Some("holiday-2026"), false).unwrap();
        assert!(!created);
        assert_eq!(
            (again.existed, again.token, again.admin_url),
            (Some(true), None, None)
        );
        let (other, _) = w
            .app
            .create_gallery(Some("Summer in Köln!"), false)
            .unwrap();
        assert_eq!(other.id.len(), 32, "a display name gets a hex id");
        assert_eq!(other.name.as_deref(), Some("Summer in Köln!"));
        assert_eq!(w.app.list_galleries().unwrap().len(), 1, "only listed ones");
    }

    #[test]
    fn uploads_likes_and_visibility() {
        let w = world();
        let (g, _) = w.app.create_gallery(Some("likes-test"), false).unwrap();
        let img = put_image(&w, &g.id);
        assert_eq!(
            (img.width, img.height, img.content_type.as_str()),
            (40, 30, "image/png")
        );
        assert_eq!(w.app.pics_used_bytes().unwrap(), img.size);
        let a = w.app.like_image(&img.id, &visitor("a")).unwrap();
        assert_eq!((a.likes, a.liked), (1, true));
        let b = w.app.like_image(&img.id, &visitor("b")).unwrap();
        assert_eq!((b.likes, b.liked), (2, true));
        let a = w.app.like_image(&img.id, &visitor("a")).unwrap();
        assert_eq!((a.likes, a.liked), (1, false), "a second toggle unlikes");
        assert_eq!(w.app.counters(&g.id).unwrap().likes[&img.id], 1);
        let secret = g.token.unwrap();
        w.app
            .administer(&g.id, &secret, AdminAction::Hide, &img.id)
            .unwrap();
        assert_eq!(code(w.app.open_image(&img.id, None)), ErrorCode::NotFound);
        assert_eq!(
            code(w.app.open_image(&img.id, Some("160"))),
            ErrorCode::NotFound
        );
        assert_eq!(
            code(w.app.like_image(&img.id, &visitor("a"))),
            ErrorCode::NotFound
        );
        assert!(w
            .app
            .gallery(&g.id, 1, &[], None)
            .unwrap()
            .images
            .is_empty());
        assert_eq!(
            w.app
                .gallery(&g.id, 1, &[], Some(&secret))
                .unwrap()
                .images
                .len(),
            1,
            "admins see hidden images"
        );
        w.app
            .administer(&g.id, &secret, AdminAction::Unhide, &img.id)
            .unwrap();
        assert!(w.app.open_image(&img.id, None).is_ok());
        // Images expire after 90 days.
        w.clock.advance_secs(90 * 86_400);
        assert_eq!(code(w.app.open_image(&img.id, None)), ErrorCode::NotFound);
    }

    #[test]
    fn comments_cool_down_per_visitor_and_admins_act() {
        let w = world();
        let (g, _) = w.app.create_gallery(Some("guestbook"), false).unwrap();
        let c = w.app.comment(&g.id, &visitor("a"), None, "hello").unwrap();
        assert_eq!(c.name, "Gast");
        let err = w.app.comment(&g.id, &visitor("a"), Some("A"), "again");
        assert!(matches!(
            err,
            Err(AppError::Domain(store_core::StoreError::RateLimited {
                retry_after_secs: 20
            }))
        ));
        w.app
            .comment(&g.id, &visitor("b"), Some("B"), "another visitor")
            .unwrap();
        w.clock.advance_secs(20);
        w.app
            .comment(&g.id, &visitor("a"), Some("A"), "later")
            .unwrap();
        let liked = w.app.like_comment(&g.id, &c.id, &visitor("z")).unwrap();
        assert_eq!((liked.likes, liked.liked), (1, true));
        assert_eq!(w.app.counters(&g.id).unwrap().cl[&c.id], 1);
        assert_eq!(w.app.counters(&g.id).unwrap().comments, 3);
        let secret = g.token.unwrap();
        assert_eq!(
            code(
                w.app
                    .administer(&g.id, "wrong", AdminAction::DeleteComment, &c.id)
            ),
            ErrorCode::NotFound
        );
        w.app
            .administer(&g.id, &secret, AdminAction::DeleteComment, &c.id)
            .unwrap();
        assert_eq!(w.app.counters(&g.id).unwrap().comments, 2);
        let one = put_image(&w, &g.id);
        let two = put_image(&w, &g.id);
        w.app
            .administer(&g.id, &secret, AdminAction::Up, &two.id)
            .unwrap();
        let order: Vec<_> = w
            .app
            .gallery(&g.id, 1, &[], None)
            .unwrap()
            .images
            .into_iter()
            .map(|i| i.id)
            .collect();
        assert_eq!(order, [two.id.clone(), one.id.clone()]);
        let starred = w
            .app
            .gallery(&g.id, 1, &[one.id.clone(), "nope".into()], None)
            .unwrap();
        assert_eq!(starred.selected, std::slice::from_ref(&one.id));
        assert_eq!(starred.images[0].id, one.id, "stars sort first");
        w.app
            .administer(&g.id, &secret, AdminAction::Delete, &one.id)
            .unwrap();
        assert_eq!(code(w.app.open_image(&one.id, None)), ErrorCode::NotFound);
        assert_eq!(w.app.pics_used_bytes().unwrap(), two.size);
    }

    #[test]
    fn the_superadmin_administers_every_gallery() {
        let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
        let blobs = Arc::new(MemoryBlobStore::new());
        let repo = Arc::new(MemoryRepository::new());
        let mut cfg = config(1 << 30);
        cfg.superadmin_token = Some("root-secret".into());
        let (app, _) = App::open(ports(&clock, &blobs, &repo), cfg).unwrap();
        let (g, _) = app.create_gallery(None, false).unwrap();
        assert!(app.gallery(&g.id, 1, &[], Some("root-secret")).is_ok());
        assert_eq!(
            code(app.gallery(&g.id, 1, &[], Some("root-secre"))),
            ErrorCode::NotFound
        );
    }

    #[test]
    fn the_pics_pool_never_evicts() {
        let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
        let blobs = Arc::new(MemoryBlobStore::new());
        let repo = Arc::new(MemoryRepository::new());
        let mut cfg = config(1 << 30);
        cfg.limits.pics_pool_bytes = 3000;
        let (app, _) = App::open(ports(&clock, &blobs, &repo), cfg).unwrap();
        let w = World {
            app,
            clock,
            blobs,
            repo,
        };
        let (g, _) = w.app.create_gallery(Some("tiny-pool"), false).unwrap();
        let first = put_image(&w, &g.id);
        let mut refused = None;
        for _ in 0..10 {
            if let Err(e) = w
                .app
                .upload_image(&g.id, None, upload(&w.app, &png(40, 30)))
            {
                refused = Some(e);
                break;
            }
        }
        let Some(AppError::Domain(e)) = refused else {
            panic!("the pool filled")
        };
        assert_eq!(e.code(), ErrorCode::PoolFull);
        assert_eq!(e.retry_after_secs(), Some(300));
        assert!(
            w.app.open_image(&first.id, None).is_ok(),
            "nothing was evicted"
        );
    }

    // Regression (review of issue 5): concurrent first requests for a
    // preview each made one, and all but the last were left orphaned.
    #[test]
    fn concurrent_preview_requests_keep_one_preview() {
        let w = Arc::new(world());
        let (g, _) = w.app.create_gallery(Some("thumbs-race"), false).unwrap();
        let img = put_image(&w, &g.id);
        let before = w.blobs.count();
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (w, id) = (Arc::clone(&w), img.id.clone());
                std::thread::spawn(move || w.app.open_image(&id, Some("160")).map(|_| ()).unwrap())
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        // Every size is made from the one decode: one set, no orphans.
        let sizes = store_core::gallery::THUMB_SIZES.len();
        assert_eq!(
            w.blobs.count(),
            before + sizes,
            "one set of previews, no orphans"
        );
        // The other sizes were made with it: asking for them adds nothing.
        w.app.open_image(&img.id, Some("640")).unwrap();
        w.app.open_image(&img.id, Some("1")).unwrap();
        assert_eq!(w.blobs.count(), before + sizes);
    }

    #[test]
    fn a_refused_upload_leaves_no_image_and_no_pool_bytes() {
        let w = world();
        assert_eq!(
            code(
                w.app
                    .upload_image("never-created", None, upload(&w.app, &png(4, 4)))
            ),
            ErrorCode::NotFound
        );
        assert_eq!(w.app.pics_used_bytes().unwrap(), 0);
        assert_eq!(w.blobs.count(), 0);
    }

    #[test]
    fn hostile_images_are_refused() {
        let w = world();
        let (g, _) = w.app.create_gallery(Some("hostile"), false).unwrap();
        assert_eq!(
            code(
                w.app
                    .upload_image(&g.id, None, upload(&w.app, b"<svg onload=alert(1)>"))
            ),
            ErrorCode::BadRequest
        );
        assert_eq!(
            code(
                w.app
                    .upload_image("no-such-gallery", None, upload(&w.app, &png(2, 2)))
            ),
            ErrorCode::NotFound
        );
        assert_eq!(w.app.pics_used_bytes().unwrap(), 0);
    }
}

#[test]
fn telemetry_counts_kinds_sweeps_lag_and_refused_imports() {
    let w = world();
    let t = w.app.telemetry().unwrap();
    assert_eq!((t.totals.objects, t.store_pool.used_bytes), (0, 0));
    put_file(
        &w.app,
        "a.txt",
        b"aa",
        NewFile::default(),
        RetainAuth::Absent,
    );
    let day = NewFile {
        ttl_secs: Some(86_400),
        ..NewFile::default()
    };
    put_file(&w.app, "b.txt", b"bbb", day, RetainAuth::Absent);
    let t = w.app.telemetry().unwrap();
    assert_eq!(t.totals.of_kind(store_core::ObjectKind::File), 2);
    assert_eq!(t.totals.of_kind(store_core::ObjectKind::Dir), 0);
    assert_eq!(t.store_pool.used_bytes, 5);
    assert_eq!((t.sweep_lag_secs, t.sweep_removed), (0, 0));

    // a expired at 4 h; nothing swept it yet: the lag grows.
    w.clock.advance_secs(20_000);
    assert_eq!(w.app.telemetry().unwrap().sweep_lag_secs, 20_000 - 14_400);
    assert_eq!(w.app.sweep(100).unwrap().removed, 1);
    let t = w.app.telemetry().unwrap();
    assert_eq!((t.sweep_lag_secs, t.sweep_removed), (0, 1));
    assert_eq!(t.totals.of_kind(store_core::ObjectKind::File), 1);

    let refused = ImportRequest {
        url: "http://unknown.test/x".into(),
        ..ImportRequest::default()
    };
    assert!(w.app.import(&refused, RetainAuth::Absent).is_err());
    assert_eq!(w.app.telemetry().unwrap().import_refused, 1);
    assert_eq!(w.app.telemetry().unwrap().media_jobs_running, 0);
}
