//! A GET whose record was fetched without a thread (issue 37): it decides
//! as the read that fetches its own record, and opens bytes across a
//! socket only where waiting is allowed.

use super::*;
use crate::FetchedRead;
use store_core::Object;

/// What a read came to, comparable across the two ways of reading.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The bytes, and whether their downloads are counted.
    Bytes(Vec<u8>, bool),
    Bundle,
    Writes,
    Refused(ErrorCode),
}

fn outcome(r: AppResult<Option<Opened>>) -> Outcome {
    match r {
        Ok(Some(Opened::File(mut d))) => {
            let mut out = vec![];
            d.reader.read_to_end(&mut out).unwrap();
            Outcome::Bytes(out, d.once)
        }
        Ok(Some(Opened::Bundle(_))) => Outcome::Bundle,
        Ok(None) => Outcome::Writes,
        Err(e) => Outcome::Refused(code(Err::<(), _>(e))),
    }
}

fn fetched_outcome(w: &World, id: &str, intent: ReadIntent) -> Outcome {
    let fetched = w.repo.get(id).unwrap();
    let read = w
        .app
        .read_fetched(id, fetched, intent, &crate::ReadKey::NONE);
    outcome(read.map(|r| match r {
        FetchedRead::Opened(o) => Some(o),
        FetchedRead::Writes => None,
        FetchedRead::BytesWait(_) => panic!("memory blobs never wait"),
    }))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the file (once, counted, protected, expired or not there)
    /// and whichever the intent, the fetched read answers what
    /// `read_without_writing` answers, and writes nothing either.
    #[test]
    fn a_fetched_read_decides_as_the_read_that_fetches(
        once in any::<bool>(),
        max_downloads in proptest::option::of(1u32..4),
        protected in any::<bool>(),
        later_secs in prop_oneof![Just(0u64), Just(100), Just(20_000)],
        head in any::<bool>(),
        missing in any::<bool>(),
    ) {
        let w = world();
        let req = NewFile {
            once,
            max_downloads: max_downloads.filter(|_| !once),
            ttl_secs: Some(3_600),
            ..NewFile::default()
        };
        let v = put_file(&w.app, "a.txt", b"bytes", req, RetainAuth::Absent);
        if protected {
            // A password on the record as an upload sets one, without
            // argon2's cost: no read here presents one.
            let Some(Object::File(mut f)) = w.repo.get(&v.id).unwrap() else {
                panic!("a file was stored");
            };
            f.password = Some(store_core::password::Protection {
                hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".to_string(),
                wrong: Default::default(),
            });
            w.repo.put(&v.id, &Object::File(f)).unwrap();
        }
        w.clock.advance_secs(later_secs);
        let id = if missing { "nothere".to_string() } else { v.id.clone() };
        let intent = if head { ReadIntent::Head } else { ReadIntent::Get };
        let expected = outcome(w.app.read_without_writing(&id, intent, &crate::ReadKey::NONE));
        prop_assert_eq!(fetched_outcome(&w, &id, intent), expected);
        // Neither read wrote: the file is as it was for the next reader.
        let again = outcome(w.app.read_without_writing(&id, intent, &crate::ReadKey::NONE));
        prop_assert_eq!(fetched_outcome(&w, &id, intent), again);
    }
}

#[test]
fn a_fetched_bundle_is_opened_as_a_bundle() {
    let w = world();
    let part = |name: &str, bytes: &[u8]| Part {
        name: Some(name.into()),
        declared_type: None,
        body: upload(&w.app, bytes),
    };
    let parts = vec![part("a.txt", b"a"), part("b.txt", b"b")];
    let b = w
        .app
        .create_bundle(&NewFile::default(), parts, RetainAuth::Absent)
        .unwrap();
    assert_eq!(fetched_outcome(&w, &b.id, ReadIntent::Get), Outcome::Bundle);
}

/// Bytes across a socket are left to `open_fetched`, which the server
/// runs where it may wait; once the cache holds them, they are at hand.
#[test]
fn bytes_across_a_socket_are_opened_where_waiting_is_allowed() {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let memory = Arc::new(MemoryBlobStore::new());
    let repo = Arc::new(MemoryRepository::new());
    let cached = Arc::new(crate::CachedBlobs::new(
        Arc::new(Remote::new(Arc::clone(&memory))),
        1 << 20,
        64 << 10,
    ));
    let mut ports = ports(&clock, &memory, &repo);
    ports.blobs = cached;
    let (app, _) = App::open(ports, config(1 << 30)).unwrap();
    let v = put_plain(&app, "a.txt", b"far away");
    let decide = || {
        app.read_fetched(
            &v.id,
            repo.get(&v.id).unwrap(),
            ReadIntent::Get,
            &crate::ReadKey::NONE,
        )
        .unwrap()
    };
    let FetchedRead::BytesWait(record) = decide() else {
        panic!("bytes not yet cached wait");
    };
    let opened = app.open_fetched(record);
    assert_eq!(
        outcome(opened.map(Some)),
        Outcome::Bytes(b"far away".to_vec(), false)
    );
    let FetchedRead::Opened(cached) = decide() else {
        panic!("the bytes just read are cached, so at hand");
    };
    assert_eq!(
        outcome(Ok(Some(cached))),
        Outcome::Bytes(b"far away".to_vec(), false)
    );
}
