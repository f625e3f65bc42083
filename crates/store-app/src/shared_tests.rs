//! Two "processes" on one store: two `App`s over the same records and
//! bytes, with one set of shared coordination (`Coordination::Shared`,
//! in its in-process form): what store-pg's ledgers and locks decide
//! across processes is checked by its own conformance suites; here, that
//! no use case keeps pool or record state of its own beside the ports. Property tests drive both
//! with interleaved operations, each operation sent to the process the
//! test picks, and check after every step what SPEC.md promises of the
//! service as a whole: the pool never passes its capacity and equals the
//! records' bytes; eviction removes the soonest-expiring first; a sweep
//! leaves nothing expired behind and removes each object once; a once
//! file is served once in total; an orphan collection on either process
//! takes no bytes of an upload in flight on the other, and every orphan.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use store_core::local::{LocalLedgers, StripedLocks};
use store_core::pool::PoolLedger;
use store_core::ports::{Clock, Repository};
use store_core::{Limits, ReadIntent, RetainAuth, RetainTokens, Timestamp};
use store_testkit::{FakeFetcher, ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};

use super::*;

/// The store pool of these tests: a few uploads fill it.
const POOL_BYTES: u64 = 400;

struct Pair {
    apps: [App; 2],
    clock: Arc<ManualClock>,
    repo: Arc<MemoryRepository>,
    blobs: Arc<MemoryBlobStore>,
}

fn pair() -> Pair {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
    let repo = Arc::new(MemoryRepository::new());
    let blobs = Arc::new(MemoryBlobStore::new());
    let locks: Arc<dyn store_core::ports::KeyLocks> = Arc::new(StripedLocks::default());
    let limits = Limits {
        pool_bytes: POOL_BYTES,
        ..Limits::default()
    };
    let ledgers: Arc<dyn store_core::ports::Ledgers> = Arc::new(LocalLedgers::new(
        PoolLedger::new(POOL_BYTES, 0),
        PoolLedger::new(limits.pics_pool_bytes, 0),
    ));
    let app = |seed: u64| {
        let ports = Ports {
            repo: repo.clone(),
            blobs: blobs.clone(),
            clock: clock.clone(),
            random: Arc::new(SeededRandom::new(seed)),
            fetcher: Arc::new(FakeFetcher::new()),
            coordination: Coordination::Shared {
                locks: Arc::clone(&locks),
                ledgers: Arc::clone(&ledgers),
            },
        };
        let config = AppConfig {
            limits: limits.clone(),
            retain_tokens: RetainTokens::from_csv("secret"),
            ..AppConfig::new("http://test")
        };
        App::open(ports, config).unwrap().0
    };
    Pair {
        apps: [app(1), app(2)],
        clock,
        repo,
        blobs,
    }
}

#[derive(Debug, Clone)]
enum Op {
    Upload {
        via: usize,
        size: u8,
        ttl_hours: u16,
        once: bool,
    },
    Advance {
        secs: u32,
    },
    Sweep {
        via: usize,
    },
    Read {
        via: usize,
        pick: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let via = 0..2usize;
    prop_oneof![
        4 => (via.clone(), 1..=200u8, 4..=336u16, any::<bool>())
            .prop_map(|(via, size, ttl_hours, once)| Op::Upload { via, size, ttl_hours, once }),
        2 => (1..=200_000u32).prop_map(|secs| Op::Advance { secs }),
        1 => via.clone().prop_map(|via| Op::Sweep { via }),
        2 => (via, any::<usize>()).prop_map(|(via, pick)| Op::Read { via, pick }),
    ]
}

/// Every record's key and expiry.
fn records(repo: &MemoryRepository) -> BTreeMap<String, Option<Timestamp>> {
    let mut out = BTreeMap::new();
    repo.for_each(&mut |k, o| {
        out.insert(k.to_string(), o.lifetime().expires_at());
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    out
}

fn upload(app: &App, size: u8, ttl_hours: u16, once: bool) -> AppResult<String> {
    let mut u = app.begin_upload(app.config().limits.file_bytes_max)?;
    u.push(&vec![b'x'; usize::from(size)])?;
    let req = NewFile {
        name: Some("f.txt".into()),
        ttl_secs: Some(u64::from(ttl_hours) * 3_600),
        once,
        ..NewFile::default()
    };
    Ok(app
        .create_file(&req, u.finish()?, RetainAuth::Absent)?
        .record
        .id)
}

/// The files removed by an upload were due no later than any that stayed.
fn evicted_soonest_first(
    before: &BTreeMap<String, Option<Timestamp>>,
    after: &BTreeMap<String, Option<Timestamp>>,
) -> Result<(), TestCaseError> {
    let gone: Vec<_> = before
        .iter()
        .filter(|(k, _)| !after.contains_key(*k))
        .collect();
    for (key, due) in &gone {
        for (other, stays) in after.iter().filter(|(k, _)| before.contains_key(*k)) {
            prop_assert!(
                due.zip(*stays).is_none_or(|(d, s)| d <= s),
                "{key} (due {due:?}) was evicted before {other} (due {stays:?})"
            );
        }
    }
    Ok(())
}

/// The pool never passes its capacity, and the ledger both processes
/// share equals what the records hold.
fn pool_holds(p: &Pair) -> Result<(), TestCaseError> {
    let mut stored = 0;
    p.repo
        .for_each(&mut |_, o| {
            stored += o.pool_bytes();
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
    prop_assert!(
        stored <= POOL_BYTES,
        "{stored} bytes in a pool of {POOL_BYTES}"
    );
    for app in &p.apps {
        prop_assert_eq!(app.pool_used_bytes().unwrap(), stored, "the ledger drifted");
    }
    Ok(())
}

/// Sweeps through one process: everything expired goes, once.
fn sweep_once(p: &Pair, via: usize) -> Result<(), TestCaseError> {
    let now = p.clock.now();
    let due = records(&p.repo)
        .values()
        .filter(|at| at.is_some_and(|at| at <= now))
        .count();
    let first = p.apps[via].sweep(1_000).unwrap().removed;
    let second = p.apps[1 - via].sweep(1_000).unwrap().removed;
    prop_assert_eq!(first, due, "the sweep removed what was due");
    prop_assert_eq!(second, 0, "the other process found nothing left");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn two_processes_keep_one_pool_evict_in_order_and_sweep_once(
        ops in prop::collection::vec(op(), 1..80)
    ) {
        let p = pair();
        let mut once_files: BTreeMap<String, u32> = BTreeMap::new();
        let mut ids: Vec<String> = vec![];
        for op in ops {
            match op {
                Op::Upload { via, size, ttl_hours, once } => {
                    let before = records(&p.repo);
                    match upload(&p.apps[via], size, ttl_hours, once) {
                        Ok(id) => {
                            evicted_soonest_first(&before, &records(&p.repo))?;
                            if once {
                                once_files.insert(id.clone(), 0);
                            }
                            ids.push(id);
                        }
                        Err(AppError::Domain(e)) => prop_assert_eq!(
                            e.code(), store_core::ErrorCode::PoolFull, "{:?}", e
                        ),
                        Err(e) => prop_assert!(false, "a storage fault: {e}"),
                    }
                }
                Op::Advance { secs } => p.clock.advance_secs(secs.into()),
                Op::Sweep { via } => sweep_once(&p, via)?,
                Op::Read { via, pick } if !ids.is_empty() => {
                    let id = &ids[pick % ids.len()];
                    if p.apps[via].read(id, ReadIntent::Get, &crate::ReadKey::NONE).is_ok() {
                        if let Some(served) = once_files.get_mut(id) {
                            *served += 1;
                            prop_assert!(*served <= 1, "a once file was served twice");
                        }
                    }
                }
                Op::Read { .. } => {}
            }
            pool_holds(&p)?;
        }
    }
}

/// What the orphan collection test does, each on the process it picks.
#[derive(Debug, Clone)]
enum Flight {
    /// An upload commits its bytes; its record is not written yet.
    Stage {
        via: usize,
        size: u8,
    },
    /// An upload in flight writes its record.
    Record {
        pick: usize,
    },
    /// Bytes no record names and no upload means to: a crash's orphan.
    Orphan,
    Collect {
        via: usize,
    },
    /// A drainer round forgets a few ended intents.
    Forget {
        via: usize,
    },
    Advance {
        secs: u16,
    },
}

fn flight() -> impl Strategy<Value = Flight> {
    prop_oneof![
        3 => (0..2usize, 1..=50u8).prop_map(|(via, size)| Flight::Stage { via, size }),
        2 => any::<usize>().prop_map(|pick| Flight::Record { pick }),
        1 => Just(Flight::Orphan),
        2 => (0..2usize).prop_map(|via| Flight::Collect { via }),
        1 => (0..2usize).prop_map(|via| Flight::Forget { via }),
        2 => (1..=900u16).prop_map(|secs| Flight::Advance { secs }),
    ]
}

/// Blobs the records name.
fn referenced(repo: &MemoryRepository) -> usize {
    let mut n = 0;
    repo.for_each(&mut |_, o| {
        n += o.blobs().len();
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    n
}

/// An upload in flight: its bytes, what they are, and when committed.
struct InFlight {
    staged: crate::Staged,
    bytes: Vec<u8>,
    at: Timestamp,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// An upload's bytes, committed on one process and recorded later,
    /// survive every orphan collection of either process in between
    /// (within the intent's lease, which the deadlines of a request keep
    /// far from); every collection takes every other blob no record names.
    #[test]
    fn orphan_collections_take_orphans_and_no_bytes_in_flight(
        ops in prop::collection::vec(flight(), 1..60)
    ) {
        let p = pair();
        let mut flying: Vec<InFlight> = vec![];
        let mut recorded: Vec<(String, Vec<u8>)> = vec![];
        let stop = std::sync::atomic::AtomicBool::new(false);
        for op in ops {
            // An upload older than its lease has failed by its deadlines.
            let now = p.clock.now();
            flying.retain(|f| now < f.at.plus_secs(orphans::INTENT_LEASE_SECS));
            match op {
                Flight::Stage { via, size } => {
                    let bytes = vec![b'a' + size % 26; usize::from(size)];
                    let mut u = p.apps[via].begin_upload(1_000).unwrap();
                    u.push(&bytes).unwrap();
                    flying.push(InFlight { staged: u.finish().unwrap(), bytes, at: now });
                }
                Flight::Record { pick } if !flying.is_empty() => {
                    let f = flying.remove(pick % flying.len());
                    let req = NewFile { name: Some("f.txt".into()), ..NewFile::default() };
                    let view = p.apps[pick % 2].create_file(&req, f.staged, RetainAuth::Absent);
                    recorded.push((view.unwrap().record.id, f.bytes));
                }
                Flight::Record { .. } => {}
                Flight::Orphan => {
                    let mut w = store_core::ports::BlobStore::create(p.blobs.as_ref()).unwrap();
                    w.write(b"orphan").unwrap();
                    w.commit().unwrap();
                }
                Flight::Collect { via } => {
                    let report = p.apps[via].collect_orphans(&stop).unwrap();
                    prop_assert!(!report.gave_up);
                    prop_assert_eq!(
                        p.blobs.count(),
                        referenced(&p.repo) + flying.len(),
                        "an orphan stayed, or bytes in flight went"
                    );
                }
                Flight::Forget { via } => {
                    p.apps[via].forget_ended_intents(2).unwrap();
                }
                Flight::Advance { secs } => p.clock.advance_secs(secs.into()),
            }
        }
        for (id, bytes) in &recorded {
            let read = p.apps[0].read(id, ReadIntent::Get, &crate::ReadKey::NONE);
            // Evicted for room in the small pool: gone with its record.
            if matches!(&read, Err(AppError::Domain(e)) if e.code() == store_core::ErrorCode::NotFound) {
                continue;
            }
            let Ok(Opened::File(mut d)) = read else {
                return Err(TestCaseError::fail(format!("{id} lost its bytes: {:?}", read.err())));
            };
            let mut body = vec![];
            std::io::Read::read_to_end(&mut d.reader, &mut body).unwrap();
            prop_assert_eq!(&body, bytes);
        }
    }
}
