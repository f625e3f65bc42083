//! The pools, the sweep, the orphan collection, listings and telemetry.

use super::*;

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
    put_plain(&w.app, "a", b"abc");
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
    put_plain(&w.app, "a", b"abc");
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
            .record
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
    put_plain(&w.app, "b.txt", b"b");
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
fn telemetry_counts_kinds_sweeps_lag_and_refused_imports() {
    let w = world();
    let t = w.app.telemetry().unwrap();
    assert_eq!((t.totals.objects, t.store_pool.used_bytes), (0, 0));
    put_plain(&w.app, "a.txt", b"aa");
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
