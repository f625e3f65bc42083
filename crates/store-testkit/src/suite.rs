//! The conformance suites every adapter runs. A failing check panics with
//! a message naming the rule, so the adapter's own test shows what broke.

use std::io::Read;
use std::ops::ControlFlow;

use store_core::digest::Sha256;
use store_core::events::{Claimed, Event, EventData, EventType};
use store_core::gallery::GalleryRecord;
use store_core::moderation::{AdminCursor, Block, Report, ALL_TERM};
use store_core::ports::{BlobStore, Random, Repository, StorageResult};
use store_core::{BlobId, DirRecord, FileRecord, Lifetime, Listing, Object, Timestamp, Totals};

use crate::SeededRandom;

/// A file record for the suites: `key` expiring at `expires_secs` (or
/// retained when `None`), with `tags`.
pub fn sample_file(key: &str, expires_secs: Option<i64>, tags: &[&str]) -> Object {
    Object::File(FileRecord {
        id: key.to_string(),
        name: format!("{key}.txt"),
        content_type: "text/plain".into(),
        size: 10,
        blob: BlobId(format!("blob-{key}")),
        created_at: Timestamp::from_secs(1),
        updated_at: Timestamp::from_secs(1),
        lifetime: match expires_secs {
            Some(s) => Lifetime::Fixed {
                expires_at: Timestamp::from_secs(s),
            },
            None => Lifetime::Indefinite,
        },
        once: false,
        tags: tags.iter().map(|t| t.to_string()).collect(),
        text: true,
        link: false,
        thumbs: Default::default(),
        owner: None,
        downloads_left: None,
        encrypted: None,
        password: None,
        sha256: None,
    })
}

/// A dir record for the suites: `key`, listed or not, with no files.
pub fn sample_dir(key: &str, listed: bool) -> Object {
    Object::Dir(DirRecord {
        key: key.to_string(),
        name: Some(key.to_string()),
        created_at: Timestamp::from_secs(1),
        updated_at: Timestamp::from_secs(1),
        lifetime: Lifetime::sliding(Timestamp::from_secs(1), 3_600),
        ttl_secs: 3_600,
        listed,
        open: false,
        tags: vec![],
        write_token_hash: None,
        files: vec![],
        history: vec![],
        owner: None,
        password: None,
        drop: None,
    })
}

/// A gallery record for the suites: `gid`, listed or not, with no images.
pub fn sample_gallery(gid: &str, listed: bool) -> Object {
    Object::Gallery(GalleryRecord {
        gid: gid.to_string(),
        name: None,
        created_at: Timestamp::from_secs(1),
        updated_at: Timestamp::from_secs(1),
        lifetime: Lifetime::fixed(Timestamp::from_secs(1), 3_600),
        listed,
        token_hash: String::new(),
        fingerprint_key: "k".into(),
        images: vec![],
        comments: vec![],
        last_comment: Default::default(),
    })
}

/// Runs every repository check on fresh instances from `make`.
pub fn repository(make: &dyn Fn() -> Box<dyn Repository>) {
    insert_get_remove(make().as_ref());
    insert_new_refuses_taken_keys(make().as_ref());
    expiry_index_is_ordered_and_follows_updates(make().as_ref());
    tag_index_follows_updates(make().as_ref());
    for_each_visits_all_and_stops(make().as_ref());
    listings_follow_every_change(make().as_ref());
    remove_dead_many_removes_each_it_finds(make().as_ref());
    totals_follow_every_change(make().as_ref());
    conditional_writes_are_fenced(make().as_ref());
    a_stale_revision_changes_no_index_or_total(make().as_ref());
    intents_hold_until_they_end(make().as_ref());
    search_pages_newest_first_and_follows_changes(make().as_ref());
    blocklist_keeps_blocks(make().as_ref());
    reports_queue_oldest_first_until_cleared(make().as_ref());
    outbox_keeps_each_objects_events_in_order(make().as_ref());
}

/// The webhooks' outbox: off, no change writes an event; on, a creation,
/// a replacement (none), a removal of a live record (deleted) and of a
/// dead one (expired) each write theirs, with a report's or a block's
/// given event. A claim takes each object's earliest event only, holds
/// it for its lease, and a failure makes it due again later; a delivery
/// or the end of its retries takes it out.
fn outbox_keeps_each_objects_events_in_order(repo: &dyn Repository) {
    use store_core::events::EventType::*;
    let far = 4_000_000_000; // 2096: live whatever the wall clock says.
    repo.put("quiet", &sample_file("quiet", Some(far), &[]))
        .unwrap();
    let now = Timestamp::from_secs(2_000_000_000);
    assert!(
        repo.claim_events(now, 30_000, 10).unwrap().is_empty(),
        "off: nothing"
    );
    repo.keep_events(true);
    repo.put("a", &sample_file("a", Some(far), &[])).unwrap();
    repo.put("a", &sample_file("a", Some(far), &["t"])).unwrap();
    repo.put("b", &sample_file("b", Some(1), &[])).unwrap();
    repo.remove("a").unwrap();
    repo.remove_dead_many(&["b".to_string()], now).unwrap();
    let reported = Event::new(
        Reported,
        now,
        EventData {
            reason: Some("spam".into()),
            ..EventData::of("quiet", &repo.get("quiet").unwrap().unwrap())
        },
    );
    let report = Report {
        id: "r1".into(),
        key: "quiet".into(),
        reason: "spam".into(),
        reported_at: now,
    };
    repo.report(&report, Some(&reported)).unwrap();
    let kinds = |c: &[Claimed]| -> Vec<(String, EventType)> {
        c.iter()
            .map(|c| (c.event.data.key.clone(), c.event.kind))
            .collect()
    };
    let first = repo.claim_events(now, 30_000, 10).unwrap();
    let k = |key: &str, e| (key.to_string(), e);
    assert_eq!(
        kinds(&first),
        [k("a", Created), k("b", Created), k("quiet", Reported)]
    );
    assert!(first
        .iter()
        .all(|c| c.event.id.starts_with("msg_") && c.attempts == 0));
    assert!(
        repo.claim_events(now, 30_000, 10).unwrap().is_empty(),
        "claimed"
    );
    for c in &first {
        repo.event_delivered(c.seq).unwrap();
    }
    let second = repo.claim_events(now, 30_000, 10).unwrap();
    assert_eq!(kinds(&second), [k("a", Deleted), k("b", Expired)]);
    let later = now.plus_secs(5);
    repo.event_failed(second[0].seq, Some(later)).unwrap();
    repo.event_failed(second[1].seq, None).unwrap();
    assert!(
        repo.claim_events(now.plus_secs(4), 30_000, 10)
            .unwrap()
            .is_empty(),
        "not due yet"
    );
    let again = repo.claim_events(later, 30_000, 10).unwrap();
    assert_eq!(kinds(&again), [k("a", Deleted)]);
    assert_eq!(again[0].attempts, 1);
    assert_eq!(again[0].event.id, second[0].event.id, "one id on every try");
    // A claim whose deliverer died runs out, and the event is due again.
    let expired = repo.claim_events(later.plus_secs(31), 30_000, 10).unwrap();
    assert_eq!(kinds(&expired), [k("a", Deleted)]);
    repo.event_delivered(expired[0].seq).unwrap();
    assert!(repo
        .claim_events(later.plus_secs(100), 30_000, 10)
        .unwrap()
        .is_empty());
}

/// The admin's report queue: oldest first, bounded by the limit asked,
/// and a cleared report leaves it (once).
fn reports_queue_oldest_first_until_cleared(repo: &dyn Repository) {
    let report = |id: &str, secs: i64| Report {
        id: id.to_string(),
        key: format!("key-{id}"),
        reason: "spam".into(),
        reported_at: Timestamp::from_secs(secs),
    };
    assert!(repo.reports(10).unwrap().is_empty());
    repo.report(&report("rb", 20), None).unwrap();
    repo.report(&report("ra", 10), None).unwrap();
    repo.report(&report("rc", 30), None).unwrap();
    assert_eq!(
        repo.reports(10).unwrap(),
        [report("ra", 10), report("rb", 20), report("rc", 30)]
    );
    assert_eq!(repo.reports(1).unwrap(), [report("ra", 10)]);
    assert!(repo.clear_report("rb").unwrap());
    assert!(
        !repo.clear_report("rb").unwrap(),
        "a report is cleared once"
    );
    assert_eq!(
        repo.reports(10).unwrap(),
        [report("ra", 10), report("rc", 30)]
    );
}

/// The keys `repo` finds by `term`, after `after`, at most `limit`.
pub fn searched_keys(
    repo: &dyn Repository,
    term: &str,
    after: Option<&AdminCursor>,
    limit: usize,
) -> Vec<String> {
    let mut keys = vec![];
    repo.searched(term, after, &mut |k, obj| {
        assert!(
            obj.search_terms().iter().any(|t| t == term),
            "{k} carries {term}"
        );
        keys.push(k.to_string());
        if keys.len() == limit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .unwrap();
    keys
}

/// The admin's search (issue 36): every record under the all-term,
/// newest first then by key, paged by cursor; a term finds the records
/// carrying it, and follows replacements and removals.
fn search_pages_newest_first_and_follows_changes(repo: &dyn Repository) {
    let file = |key: &str, secs: i64, name: &str, bytes: &[u8]| {
        let Object::File(mut f) = sample_file(key, Some(10_000), &[]) else {
            unreachable!()
        };
        f.created_at = Timestamp::from_secs(secs);
        f.name = name.to_string();
        f.sha256 = Some(Sha256::of(bytes));
        Object::File(f)
    };
    repo.put("old", &file("old", 10, "report.pdf", b"a"))
        .unwrap();
    repo.put("new", &file("new", 30, "photo.jpg", b"b"))
        .unwrap();
    repo.put("mid2", &file("mid2", 20, "photo.png", b"a"))
        .unwrap();
    repo.put("mid1", &file("mid1", 20, "notes.txt", b"c"))
        .unwrap();
    let all = searched_keys(repo, ALL_TERM, None, 100);
    assert_eq!(
        all,
        ["new", "mid1", "mid2", "old"],
        "newest first, then by key"
    );
    let first = searched_keys(repo, ALL_TERM, None, 2);
    let cursor = AdminCursor::after("mid1", &repo.get("mid1").unwrap().unwrap());
    assert_eq!(first, ["new", "mid1"]);
    assert_eq!(
        searched_keys(repo, ALL_TERM, Some(&cursor), 100),
        ["mid2", "old"]
    );
    let by_a = format!("sha256:{}", Sha256::of(b"a"));
    assert_eq!(searched_keys(repo, &by_a, None, 100), ["mid2", "old"]);
    assert_eq!(
        searched_keys(repo, "word:photo", None, 100),
        ["new", "mid2"]
    );
    repo.put("mid2", &file("mid2", 20, "holiday.png", b"d"))
        .unwrap();
    assert_eq!(
        searched_keys(repo, &by_a, None, 100),
        ["old"],
        "a replacement reindexes"
    );
    assert_eq!(searched_keys(repo, "word:photo", None, 100), ["new"]);
    repo.remove("old").unwrap();
    assert!(
        searched_keys(repo, &by_a, None, 100).is_empty(),
        "a removal unindexes"
    );
    assert_eq!(
        searched_keys(repo, ALL_TERM, None, 100),
        ["new", "mid1", "mid2"]
    );
}

/// The blocklist keeps each digest once (a second block replaces the
/// first), answers the first blocked of several, and lists the latest
/// first.
fn blocklist_keeps_blocks(repo: &dyn Repository) {
    let block = |bytes: &[u8], secs: i64, reason: &str| Block {
        sha256: Sha256::of(bytes),
        reason: reason.to_string(),
        blocked_at: Timestamp::from_secs(secs),
    };
    assert_eq!(repo.blocked(&[Sha256::of(b"x")]).unwrap(), None);
    assert_eq!(repo.blocked(&[]).unwrap(), None);
    repo.block(&block(b"x", 1, "spam"), None).unwrap();
    repo.block(&block(b"y", 2, "malware"), None).unwrap();
    repo.block(&block(b"x", 3, "spam, again"), None).unwrap();
    assert_eq!(
        repo.blocked(&[Sha256::of(b"z"), Sha256::of(b"x")]).unwrap(),
        Some(block(b"x", 3, "spam, again"))
    );
    let all = repo.blocks().unwrap();
    assert_eq!(
        all,
        [block(b"x", 3, "spam, again"), block(b"y", 2, "malware")]
    );
}

/// Uploads' intents (docs/ARCHITECTURE.md, "Bytes in flight"), in a
/// repository that keeps them: an intent holds until its end, a renewal
/// never shortens it, and ended ones are forgotten in batches, live ones
/// never.
fn intents_hold_until_they_end(repo: &dyn Repository) {
    if !repo.keeps_intents() {
        assert!(repo.intended(Timestamp::from_secs(0)).unwrap().is_empty());
        return;
    }
    let t = |secs: i64| Timestamp::from_secs(1_800_000_000 + secs);
    let (slow, quick) = (BlobId("abc123".into()), BlobId("def456".into()));
    repo.intend(&slow, t(600)).unwrap();
    repo.intend(&slow, t(300)).unwrap();
    repo.intend(&quick, t(60)).unwrap();
    let mut held = repo.intended(t(0)).unwrap();
    held.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(held, vec![slow.clone(), quick.clone()]);
    assert_eq!(
        repo.intended(t(60)).unwrap(),
        vec![slow.clone()],
        "ended at its end"
    );
    assert_eq!(
        repo.intended(t(599)).unwrap(),
        vec![slow.clone()],
        "a renewal never shortens an intent"
    );
    repo.intend(&slow, t(900)).unwrap();
    assert_eq!(
        repo.intended(t(700)).unwrap(),
        vec![slow.clone()],
        "renewed"
    );
    assert!(repo.intended(t(900)).unwrap().is_empty());
    let third = BlobId("0123ab".into());
    repo.intend(&third, t(100)).unwrap();
    assert_eq!(
        repo.forget_intents(t(700), 10).unwrap(),
        2,
        "the ended ones"
    );
    assert_eq!(
        repo.intended(t(0)).unwrap(),
        vec![slow.clone()],
        "the live one stays"
    );
    assert_eq!(repo.forget_intents(t(900), 1).unwrap(), 1);
    assert_eq!(repo.forget_intents(t(900), 1).unwrap(), 0, "none left");
}

/// Whether `r` failed as a conditional write that found another revision.
fn is_conflict<T: std::fmt::Debug>(r: StorageResult<T>) -> bool {
    matches!(r, Err(e) if e.kind == store_core::StorageErrorKind::Conflict)
}

/// The fence (docs/ARCHITECTURE.md, "Fenced writes"): a write conditioned
/// on a revision lands only on that revision; one that finds the record
/// changed or gone fails and changes nothing, so a writer that lost its
/// lock can neither undo a newer write nor bring a removed record back.
fn conditional_writes_are_fenced(repo: &dyn Repository) {
    let first = sample_file("a", Some(100), &[]);
    let second = sample_file("a", Some(200), &["x"]);
    let third = sample_file("a", Some(300), &["y"]);
    assert!(repo.insert_new("a", &first).unwrap());
    let (loaded, old) = repo.load("a").unwrap().expect("inserted");
    assert_eq!(loaded, first, "load answers the record");
    let new = repo.replace("a", old, &second, &[]).unwrap();
    assert_ne!(new, old, "a write changes the revision");
    assert_eq!(repo.load("a").unwrap(), Some((second.clone(), new)));
    assert!(
        is_conflict(repo.replace("a", old, &third, &[])),
        "a write at a stale revision is refused"
    );
    assert!(
        is_conflict(repo.remove_at("a", old, &[])),
        "a removal at a stale revision is refused"
    );
    assert_eq!(repo.get("a").unwrap(), Some(second), "and changes nothing");
    repo.remove_at("a", new, &[]).unwrap();
    assert_eq!(
        repo.get("a").unwrap(),
        None,
        "a removal at the revision lands"
    );
    assert!(
        is_conflict(repo.replace("a", new, &third, &[])),
        "a removed record is not written back"
    );
    assert!(
        is_conflict(repo.remove_at("a", new, &[])),
        "nor removed twice"
    );
    assert_eq!(repo.get("a").unwrap(), None, "it stays removed");
    // Made again under the same key (a dir's name): the old revisions
    // name the old record, not this one.
    assert!(repo.insert_new("a", &first).unwrap());
    assert!(
        is_conflict(repo.replace("a", new, &third, &[])),
        "a revision of a removed record does not fit its successor"
    );
    let (_, again) = repo.load("a").unwrap().unwrap();
    assert_ne!(again, new, "a record made again has a revision of its own");
}

/// A refused conditional write leaves the indexes and the totals as they
/// were: the whole change is one atomic step, the check included.
fn a_stale_revision_changes_no_index_or_total(repo: &dyn Repository) {
    assert!(repo.insert_new("k", &sized("k", 10, Some(100))).unwrap());
    let (_, old) = repo.load("k").unwrap().unwrap();
    repo.replace("k", old, &sized("k", 20, Some(200)), &[])
        .unwrap();
    let before = repo.totals().unwrap();
    let mut stale = sized("k", 999, Some(50));
    if let Object::File(f) = &mut stale {
        f.tags = vec!["t".into()];
    }
    assert!(is_conflict(repo.replace("k", old, &stale, &[])));
    assert!(is_conflict(repo.remove_at("k", old, &[])));
    assert_eq!(repo.totals().unwrap(), before, "totals unchanged");
    assert_eq!(repo.totals_by_scan().unwrap(), before, "and true");
    assert!(
        repo.keys_with_tag("t").unwrap().is_empty(),
        "no tag indexed"
    );
    assert_eq!(
        repo.expiring(10).unwrap()[0].0,
        Timestamp::from_secs(200),
        "the expiry index holds the record's own expiry"
    );
}

fn insert_get_remove(repo: &dyn Repository) {
    let a = sample_file("a", Some(100), &[]);
    assert!(repo.insert_new("a", &a).unwrap());
    assert_eq!(
        repo.get("a").unwrap(),
        Some(a.clone()),
        "get returns what was inserted"
    );
    assert_eq!(repo.get("b").unwrap(), None, "unknown keys are absent");
    assert_eq!(
        repo.remove("a").unwrap(),
        Some(a),
        "remove returns the record"
    );
    assert_eq!(repo.get("a").unwrap(), None, "removed records are gone");
    assert_eq!(
        repo.remove("a").unwrap(),
        None,
        "removing twice is harmless"
    );
    assert!(
        repo.expiring(10).unwrap().is_empty(),
        "remove clears the expiry index"
    );
}

fn insert_new_refuses_taken_keys(repo: &dyn Repository) {
    let a = sample_file("a", Some(100), &[]);
    let other = sample_file("a", Some(200), &["x"]);
    assert!(repo.insert_new("a", &a).unwrap());
    assert!(
        !repo.insert_new("a", &other).unwrap(),
        "a taken key is refused"
    );
    assert_eq!(
        repo.get("a").unwrap(),
        Some(a),
        "a refused insert changes nothing"
    );
    assert!(
        repo.keys_with_tag("x").unwrap().is_empty(),
        "a refused insert indexes nothing"
    );
}

fn expiry_index_is_ordered_and_follows_updates(repo: &dyn Repository) {
    repo.put("late", &sample_file("late", Some(300), &[]))
        .unwrap();
    repo.put("early", &sample_file("early", Some(100), &[]))
        .unwrap();
    repo.put("kept", &sample_file("kept", None, &[])).unwrap();
    repo.put("mid", &sample_file("mid", Some(200), &[]))
        .unwrap();
    let keys = |v: Vec<(Timestamp, String)>| v.into_iter().map(|(_, k)| k).collect::<Vec<_>>();
    assert_eq!(
        keys(repo.expiring(10).unwrap()),
        ["early", "mid", "late"],
        "soonest first, retained absent"
    );
    assert_eq!(
        keys(repo.expiring(2).unwrap()),
        ["early", "mid"],
        "limit is honoured"
    );
    // Moving an expiry moves its index entry; retaining removes it.
    repo.put("early", &sample_file("early", Some(400), &[]))
        .unwrap();
    repo.put("mid", &sample_file("mid", None, &[])).unwrap();
    let got = repo.expiring(10).unwrap();
    assert_eq!(keys(got.clone()), ["late", "early"], "index follows put");
    assert_eq!(
        got[1].0,
        Timestamp::from_secs(400),
        "index carries the new expiry"
    );
}

fn tag_index_follows_updates(repo: &dyn Repository) {
    repo.put("a", &sample_file("a", Some(1), &["x", "y"]))
        .unwrap();
    repo.put("b", &sample_file("b", Some(1), &["y"])).unwrap();
    let mut y = repo.keys_with_tag("y").unwrap();
    y.sort();
    assert_eq!(y, ["a", "b"]);
    repo.put("a", &sample_file("a", Some(1), &["z"])).unwrap();
    assert!(
        repo.keys_with_tag("x").unwrap().is_empty(),
        "untagging clears the index"
    );
    assert_eq!(repo.keys_with_tag("y").unwrap(), ["b"]);
    assert_eq!(repo.keys_with_tag("z").unwrap(), ["a"]);
    repo.remove("b").unwrap();
    assert!(
        repo.keys_with_tag("y").unwrap().is_empty(),
        "remove clears tags"
    );
}

fn for_each_visits_all_and_stops(repo: &dyn Repository) {
    for k in ["a", "b", "c"] {
        repo.put(k, &sample_file(k, Some(1), &[])).unwrap();
    }
    let mut seen = vec![];
    repo.for_each(&mut |k, _| {
        seen.push(k.to_string());
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(seen, ["a", "b", "c"], "for_each visits in key order");
    let mut n = 0;
    repo.for_each(&mut |_, _| {
        n += 1;
        ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(n, 1, "for_each stops when told");
}

/// The keys `repo` lists under `listing`, in the order it visits them.
pub fn listed_keys(repo: &dyn Repository, listing: Listing) -> Vec<String> {
    let mut keys = vec![];
    repo.listed(listing, &mut |k, obj| {
        assert_eq!(
            obj.listing(),
            Some(listing),
            "{k} is listed where it belongs"
        );
        keys.push(k.to_string());
        ControlFlow::Continue(())
    })
    .unwrap();
    keys
}

fn listings_follow_every_change(repo: &dyn Repository) {
    let once = match sample_file("once", Some(100), &["t"]) {
        Object::File(mut f) => {
            f.once = true;
            Object::File(f)
        }
        _ => unreachable!(),
    };
    let records = [
        ("b", sample_file("b", Some(100), &["t"])),
        ("a", sample_file("a", None, &["t", "u"])),
        ("plain", sample_file("plain", Some(100), &[])),
        ("once", once),
        ("d/x", sample_dir("x", true)),
        ("d/y", sample_dir("y", false)),
        ("g/x", sample_gallery("x", true)),
        ("g/y", sample_gallery("y", false)),
    ];
    for (key, obj) in &records {
        assert!(repo.insert_new(key, obj).unwrap());
    }
    assert_eq!(
        listed_keys(repo, Listing::Browse),
        ["a", "b"],
        "tagged files, key order"
    );
    assert_eq!(
        listed_keys(repo, Listing::Dirs),
        ["d/x"],
        "listed dirs only"
    );
    assert_eq!(
        listed_keys(repo, Listing::Galleries),
        ["g/x"],
        "listed galleries only"
    );

    // A put that changes what the record is moves it between listings.
    repo.put("a", &sample_file("a", None, &[])).unwrap();
    repo.put("plain", &sample_file("plain", Some(100), &["v"]))
        .unwrap();
    repo.put("d/y", &sample_dir("y", true)).unwrap();
    assert_eq!(
        listed_keys(repo, Listing::Browse),
        ["b", "plain"],
        "puts re-index"
    );
    assert_eq!(listed_keys(repo, Listing::Dirs), ["d/x", "d/y"]);

    repo.remove("b").unwrap();
    repo.remove_dead_many(
        &["d/x".to_string(), "g/x".to_string()],
        Timestamp::from_secs(10_000),
    )
    .unwrap();
    assert_eq!(
        listed_keys(repo, Listing::Browse),
        ["plain"],
        "removals unlist"
    );
    assert_eq!(
        listed_keys(repo, Listing::Dirs),
        ["d/y"],
        "the sweep unlists"
    );
    assert!(listed_keys(repo, Listing::Galleries).is_empty());

    let mut visits = 0;
    repo.listed(Listing::Dirs, &mut |_, _| {
        visits += 1;
        ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(visits, 1, "listed stops when told");
}

fn remove_dead_many_removes_each_it_finds(repo: &dyn Repository) {
    let a = sample_file("a", Some(1), &["x"]);
    let c = sample_file("c", Some(2), &[]);
    let live = sample_file("e", Some(100), &[]);
    repo.put("a", &a).unwrap();
    repo.put("c", &c).unwrap();
    repo.put("d", &sample_file("d", Some(3), &[])).unwrap();
    repo.put("e", &live).unwrap();
    let keys = ["a", "b", "c", "e"].map(String::from);
    assert_eq!(
        repo.remove_dead_many(&keys, Timestamp::from_secs(50))
            .unwrap(),
        vec![Some(a), None, Some(c), None],
        "each key answers what it removed, in the order given"
    );
    assert_eq!(repo.get("a").unwrap(), None, "removed records are gone");
    assert_eq!(repo.get("e").unwrap(), Some(live), "a live record stays");
    assert_eq!(
        repo.expiring(10).unwrap(),
        vec![
            (Timestamp::from_secs(3), "d".to_string()),
            (Timestamp::from_secs(100), "e".to_string())
        ],
        "their expiry entries are gone, the others stay"
    );
    assert!(
        repo.keys_with_tag("x").unwrap().is_empty(),
        "their tag entries are gone"
    );
}

/// A record of `size` bytes, for the totals check.
fn sized(key: &str, size: u64, expires_secs: Option<i64>) -> Object {
    let mut obj = sample_file(key, expires_secs, &[]);
    if let Object::File(f) = &mut obj {
        f.size = size;
    }
    obj
}

/// Seeded random changes over a few keys; after each one the kept totals
/// must equal the sums over the records. This is the rule that lets a
/// restart read them instead of every record.
fn totals_follow_every_change(repo: &dyn Repository) {
    let rng = SeededRandom::new(7);
    let next = |n: u64| {
        let mut b = [0u8; 8];
        rng.fill(&mut b);
        u64::from_le_bytes(b) % n
    };
    for step in 0..300 {
        let key = format!("k{}", next(12));
        // Every kind the totals count apart, files most often.
        let obj = match next(4) {
            0 => sample_dir(&key, false),
            1 => sample_gallery(&key, false),
            _ => sized(&key, next(5000), Some(next(100) as i64 + 1)),
        };
        match next(6) {
            0 => {
                repo.insert_new(&key, &obj).unwrap();
            }
            1 | 2 => repo.put(&key, &obj).unwrap(),
            3 => {
                repo.remove(&key).unwrap();
            }
            4 => {
                repo.remove_dead(&key).unwrap();
            }
            _ => {
                let keys = [key, format!("k{}", next(12))];
                let now = Timestamp::from_secs(next(100) as i64);
                repo.remove_dead_many(&keys, now).unwrap();
            }
        }
        assert_eq!(
            repo.totals().unwrap(),
            repo.totals_by_scan().unwrap(),
            "the kept totals equal the sums over the records after step {step}"
        );
    }
    let kinds = repo.totals().unwrap().by_kind;
    assert_eq!(kinds.iter().sum::<u64>(), repo.totals().unwrap().objects);
    for k in 0..12 {
        repo.remove(&format!("k{k}")).unwrap();
    }
    assert_eq!(
        repo.totals().unwrap(),
        Totals::default(),
        "an emptied store totals zero"
    );
}

/// Runs every blob store check on fresh instances from `make`.
pub fn blob_store(make: &dyn Fn() -> Box<dyn BlobStore>) {
    let store = make();
    let mut w = store.create().unwrap();
    w.write(b"hello ").unwrap();
    w.write(b"world").unwrap();
    let id = w.commit().unwrap();
    let mut r = store.open(&id).unwrap();
    assert_eq!(r.len(), 11, "length is known before reading");
    let mut s = String::new();
    r.read_to_string(&mut s).unwrap();
    assert_eq!(s, "hello world", "bytes come back as written");
    assert_eq!(
        store.list().unwrap(),
        vec![id.clone()],
        "committed blobs are listed"
    );

    // An open reader survives removal (burn after reading relies on it).
    let mut r = store.open(&id).unwrap();
    store.remove(&id).unwrap();
    let mut s = String::new();
    r.read_to_string(&mut s).unwrap();
    assert_eq!(s, "hello world", "an open reader outlives remove");
    assert_eq!(
        store.open(&id).err().map(|e| e.kind),
        Some(store_core::StorageErrorKind::Missing),
        "removed blobs cannot be opened, and are missing"
    );
    store.remove(&id).unwrap();

    // Bytes moved from another store keep their id, and replace whole.
    for body in [&b"moved"[..], b"moved again"] {
        let mut w = store.create_with_id(&id).unwrap();
        w.write(body).unwrap();
        assert_eq!(w.commit().unwrap(), id, "committed under the given id");
        let mut back = vec![];
        store.open(&id).unwrap().read_to_end(&mut back).unwrap();
        assert_eq!(back, body);
    }
    store.remove(&id).unwrap();

    // An abandoned writer leaves nothing behind.
    let mut w = store.create().unwrap();
    w.write(b"partial").unwrap();
    drop(w);
    assert!(
        store.list().unwrap().is_empty(),
        "an uncommitted blob is invisible"
    );

    let a = store.create().unwrap().commit().unwrap();
    let b = store.create().unwrap().commit().unwrap();
    assert_ne!(a, b, "every commit mints a new id");
    assert_eq!(store.open(&a).unwrap().len(), 0, "empty blobs are fine");
    for id in [a, b] {
        store.remove(&id).unwrap();
    }
    blob_ranges(store.as_ref());
    large_blob(store.as_ref(), LARGE_BLOB_BYTES);
    staged_blobs(store.as_ref());
}

/// A staged blob (a resumable upload's), written by three requests, each
/// going on from where the last paused, one of which died midway without
/// pausing: completed, it reads back whole under the id it was staged
/// with. A discarded one cannot be resumed, and discarding twice is fine.
pub fn staged_blobs(store: &dyn BlobStore) {
    if !store.stages() {
        return;
    }
    let data: Vec<u8> = (0..700_000u32).map(|i| (i % 251) as u8).collect();
    let staged = store.stage().unwrap();
    let mut w = store.resume(&staged, 0).unwrap();
    w.write(&data[..150_000]).unwrap();
    w.write(&data[150_000..300_000]).unwrap();
    let paused = w.pause().unwrap();
    let mut dead = store.resume(&paused, 300_000).unwrap();
    dead.write(&[9; 100]).unwrap();
    drop(dead);
    let mut w = store.resume(&paused, 300_000).unwrap();
    w.write(&data[300_000..]).unwrap();
    let id = w.complete().unwrap();
    assert_eq!(id, staged.blob, "a staged blob keeps its id");
    let mut back = Vec::new();
    store.open(&id).unwrap().read_to_end(&mut back).unwrap();
    assert!(back == data, "the staged bytes come back whole, in order");
    store.remove(&id).unwrap();

    let staged = store.stage().unwrap();
    let mut w = store.resume(&staged, 0).unwrap();
    w.write(b"abc").unwrap();
    let paused = w.pause().unwrap();
    store.discard(&paused).unwrap();
    store.discard(&paused).unwrap();
    assert!(
        store.resume(&paused, 3).is_err(),
        "discarded bytes are gone"
    );
    assert!(store.list().unwrap().is_empty(), "nothing left behind");
}

/// The size of the large blob of the suite: a whole file at the default
/// limit.
pub const LARGE_BLOB_BYTES: usize = 5 * 1024 * 1024;

/// Ranged reads: the bytes of the range, clamped to the blob, with the
/// clamped length known before reading.
pub fn blob_ranges(store: &dyn BlobStore) {
    let mut w = store.create().unwrap();
    w.write(b"0123456789").unwrap();
    let id = w.commit().unwrap();
    for (range, want) in [
        (0..10, "0123456789"),
        (0..u64::MAX, "0123456789"),
        (3..7, "3456"),
        (9..10, "9"),
        (8..100, "89"),
        (10..20, ""),
        (20..30, ""),
        (5..5, ""),
    ] {
        let mut r = store.open_range(&id, range.clone()).unwrap();
        assert_eq!(r.len(), want.len() as u64, "length of {range:?}");
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!(s, want, "bytes of {range:?}");
        // A whole reader narrowed, where the store's readers can be,
        // reads the same.
        let mut whole = store.open(&id).unwrap();
        if whole.narrow(range.clone()).unwrap() {
            assert_eq!(
                whole.len(),
                want.len() as u64,
                "narrowed length of {range:?}"
            );
            let mut s = String::new();
            whole.read_to_string(&mut s).unwrap();
            assert_eq!(s, want, "narrowed bytes of {range:?}");
        }
    }
    store.remove(&id).unwrap();
    assert_eq!(
        store.open_range(&id, 0..1).err().map(|e| e.kind),
        Some(store_core::StorageErrorKind::Missing),
        "a range of a missing blob is missing"
    );
}

/// The byte at `i` of the large blob: not a repeating pattern of any
/// chunk size, so that a chunk out of place shows.
fn large_byte(i: usize) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// A blob of `size` bytes written in 64 KiB chunks comes back byte for
/// byte, read whole and from near its end.
pub fn large_blob(store: &dyn BlobStore, size: usize) {
    const CHUNK_BYTES: usize = 64 * 1024;
    let mut w = store.create().unwrap();
    let mut chunk = Vec::with_capacity(CHUNK_BYTES);
    for start in (0..size).step_by(CHUNK_BYTES) {
        chunk.clear();
        chunk.extend((start..size.min(start + CHUNK_BYTES)).map(large_byte));
        w.write(&chunk).unwrap();
    }
    let id = w.commit().unwrap();
    let mut r = store.open(&id).unwrap();
    assert_eq!(r.len(), size as u64);
    let mut back = Vec::with_capacity(size);
    r.read_to_end(&mut back).unwrap();
    assert_eq!(back.len(), size, "every byte comes back");
    let wrong = (0..size).find(|&i| back[i] != large_byte(i));
    assert_eq!(wrong, None, "the first byte that differs");
    let tail = size.saturating_sub(1000) as u64;
    let mut r = store.open_range(&id, tail..size as u64).unwrap();
    let mut back = vec![];
    r.read_to_end(&mut back).unwrap();
    let want: Vec<u8> = (tail as usize..size).map(large_byte).collect();
    assert!(back == want, "the last 1000 bytes, read as a range");
    store.remove(&id).unwrap();
}
