//! The adapter against a real PostgreSQL (see store_testkit::pg): the same
//! conformance suites as memory and sled, plus what only a shared database
//! has to get right (migrations raced by several processes, two handles
//! on one store).

use std::sync::Arc;

use store_core::ports::Repository;
use store_testkit::{coordination, pg, suite};

use super::*;

fn fresh() -> PgStore {
    PgStore::connect(&pg::fresh_database()).unwrap()
}

/// Two "processes" on one fresh database.
fn pair() -> (PgStore, PgStore) {
    let url = pg::fresh_database();
    (
        PgStore::connect(&url).unwrap(),
        PgStore::connect(&url).unwrap(),
    )
}

#[test]
fn pg_repository_passes_the_suite() {
    suite::repository(&|| Box::new(fresh().repository()));
}

#[test]
fn pg_locks_pass_the_suite() {
    coordination::key_locks(&|| {
        let (a, b) = pair();
        (Arc::new(a.locks()), Arc::new(b.locks()))
    });
}

#[test]
fn pg_ledgers_pass_the_suite() {
    coordination::ledgers(&|| {
        let (a, b) = pair();
        (
            Arc::new(a.ledgers(100, 10, &store_testkit::SeededRandom::new(1))),
            Arc::new(b.ledgers(100, 10, &store_testkit::SeededRandom::new(2))),
            Arc::new(a.repository()),
        )
    });
}

#[test]
fn pg_rate_limits_pass_the_suite() {
    coordination::rate_limits(&|| {
        let (a, b) = pair();
        (Arc::new(a.rate_limits(100)), Arc::new(b.rate_limits(100)))
    });
}

/// A read awaited on the caller's runtime answers what `get` answers, on
/// a connection that runtime drives (a task of its own, not of the
/// bridge's); from a plain thread there is no such read.
#[test]
fn a_read_awaited_on_the_callers_runtime_answers_as_get() {
    let store = fresh();
    let repo = store.repository();
    let file = suite::sample_file("k", Some(100), &["t"]);
    repo.put("k", &file).unwrap();
    assert!(repo.get_async("k").is_none(), "no runtime on this thread");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (got, missing) = runtime.block_on(async {
        let got = repo.get_async("k").unwrap().await.unwrap();
        let missing = repo.get_async("nothere").unwrap().await.unwrap();
        (got, missing)
    });
    assert_eq!(got, repo.get("k").unwrap());
    assert_eq!(got, Some(file));
    assert_eq!(missing, None);
    assert_eq!(
        runtime.metrics().num_alive_tasks(),
        1,
        "the connection's task runs on the caller's runtime"
    );
}

/// A rate check awaited on the caller's runtime counts in the same rows
/// as `check`: the two, interleaved on one client, admit exactly the
/// limit, and the connection's task runs on that runtime.
#[test]
fn a_rate_check_awaited_on_the_callers_runtime_counts_with_check() {
    use store_core::ports::RateLimits;
    let store = fresh();
    let limits = store.rate_limits(3);
    let client: std::net::IpAddr = "192.0.2.7".parse().unwrap();
    let now = store_core::Timestamp::from_secs(1_000);
    assert!(limits.check_async(client, now).is_none(), "no runtime here");
    assert!(
        store.rate_limits(0).check_async(client, now).is_none(),
        "no limit, nothing to await"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut answers = Vec::new();
    for i in 0..5 {
        let answer = if i % 2 == 0 {
            runtime.block_on(async { limits.check_async(client, now).unwrap().await })
        } else {
            limits.check(client, now)
        };
        answers.push(answer.unwrap().is_ok());
    }
    assert_eq!(answers, [true, true, true, false, false], "3 a minute");
    assert_eq!(
        runtime.metrics().num_alive_tasks(),
        1,
        "the connection's task runs on the caller's runtime"
    );
}

#[test]
fn processes_starting_at_once_migrate_once() {
    let url = pg::fresh_database();
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgStore::connect(&url).map(drop))
        })
        .collect();
    for s in starts {
        s.join().unwrap().unwrap();
    }
    let store = PgStore::connect(&url).unwrap();
    let versions = store.inner.bridge.run({
        let pool = store.inner.queries.clone();
        async move {
            let c = pool.get().await.unwrap();
            c.query_one("SELECT count(*) FROM store_schema", &[])
                .await
                .unwrap()
                .get::<_, i64>(0)
        }
    });
    assert_eq!(
        versions,
        i64::from(SCHEMA_VERSION),
        "each migration ran once"
    );
}

/// Runs `sql` on `store`'s database, outside any port.
fn execute(store: &PgStore, sql: impl Into<String>) {
    let sql = sql.into();
    let pool = store.inner.queries.clone();
    store.inner.bridge.run(async move {
        pool.get().await.unwrap().batch_execute(&sql).await.unwrap();
    });
}

#[test]
fn the_listings_migration_indexes_the_records_written_before_it() {
    use store_core::Listing;
    let url = pg::fresh_database();
    let store = PgStore::connect(&url).unwrap();
    let repo = store.repository();
    for i in 0..1_200 {
        let tags: &[&str] = if i % 3 == 0 { &["t"] } else { &[] };
        let key = format!("k{i:04}");
        repo.put(&key, &suite::sample_file(&key, Some(100), tags))
            .unwrap();
    }
    repo.put("d/x", &suite::sample_dir("x", true)).unwrap();
    // As a database at version 1 holds them: no listing column, no
    // counts by kind (migration 4 counts them from the records), and
    // version 1's per-record trigger (migration 5 replaced it), no
    // revisions (migration 6), no deletion queue (migration 7), no
    // identity (migration 8), no intents (migration 9), no search terms
    // nor blocklist (migration 10), nor the row trigger counting inserts
    // (migration 11).
    execute(
        &store,
        "ALTER TABLE store_objects DROP COLUMN listing;
         ALTER TABLE store_objects DROP COLUMN rev;
         ALTER TABLE store_objects DROP COLUMN created_at;
         ALTER TABLE store_objects DROP COLUMN terms;
         DROP TABLE store_blocked;
         DROP TABLE store_reports;
         DROP TRIGGER store_objects_outbox ON store_objects;
         DROP FUNCTION store_outbox_change();
         DROP TABLE store_outbox;
         DROP TABLE store_outbox_state;
         DROP SEQUENCE store_rev_seq;
         DROP TABLE store_doomed;
         DROP TABLE store_identity;
         DROP TABLE store_intents;
         DROP TABLE store_kind_totals;
         DROP TRIGGER store_objects_count_insert_row ON store_objects;
         DROP FUNCTION store_count_insert();
         DROP TRIGGER store_objects_count_update ON store_objects;
         DROP TRIGGER store_objects_count_delete ON store_objects;
         DROP FUNCTION store_count_statement();
         DROP FUNCTION store_apply_totals(store_delta[]);
         DROP TYPE store_delta;
         DELETE FROM store_schema WHERE version >= 2",
    );
    let v1 = include_str!("../migrations/0001_records.sql");
    let start = v1.find("CREATE FUNCTION store_count()").unwrap();
    let end = start + v1[start..].find("-- Bytes reserved").unwrap();
    execute(&store, &v1[start..end]);
    drop((repo, store));
    let repo = PgStore::connect(&url).unwrap().repository();
    let browsed = suite::listed_keys(&repo, Listing::Browse);
    assert_eq!(
        browsed.len(),
        400,
        "every tagged file, across backfill pages"
    );
    assert_eq!(browsed.first().map(String::as_str), Some("k0000"));
    assert_eq!(suite::listed_keys(&repo, Listing::Dirs), ["d/x"]);
    assert_eq!(
        repo.totals().unwrap(),
        repo.totals_by_scan().unwrap(),
        "totals untouched, and the kinds counted"
    );
}

#[test]
fn totals_follow_records_written_through_two_handles() {
    let (a, b) = pair();
    let (a, b) = (a.repository(), b.repository());
    for i in 0..20 {
        let repo: &dyn Repository = if i % 2 == 0 { &a } else { &b };
        repo.put(
            &format!("k{i}"),
            &suite::sample_file(&format!("k{i}"), Some(100), &["t"]),
        )
        .unwrap();
    }
    b.remove("k3").unwrap();
    assert_eq!(a.totals().unwrap(), a.totals_by_scan().unwrap());
    assert_eq!(a.totals().unwrap().objects, 19);
}

/// Two sweepers, one per handle, each removing `keys` (expired by then)
/// 16 at a time, one DELETE a batch; each thread answers how many it
/// removed.
fn sweep_in_two(
    repos: [&Arc<repo::PgRepository>; 2],
    keys: &[String],
) -> Vec<std::thread::JoinHandle<usize>> {
    let now = store_core::Timestamp::from_secs(20);
    repos
        .into_iter()
        .map(|repo| {
            let (repo, keys) = (Arc::clone(repo), keys.to_vec());
            std::thread::spawn(move || {
                keys.chunks(16)
                    .flat_map(|c| repo.remove_dead_many(c, now).unwrap())
                    .filter(Option::is_some)
                    .count()
            })
        })
        .collect()
}

/// Several rounds, because a lock-order deadlock between the two sweepers
/// (each removing a batch in one DELETE) showed in about one round in
/// three before the totals were applied per statement in shard order.
#[test]
fn a_sweep_in_two_processes_removes_each_object_once() {
    const ROUNDS: usize = 5;
    let (a, b) = pair();
    let (a, b) = (Arc::new(a.repository()), Arc::new(b.repository()));
    for round in 0..ROUNDS {
        let keys: Vec<String> = (0..200).map(|i| format!("e{round}-{i}")).collect();
        for k in &keys {
            a.put(k, &suite::sample_file(k, Some(10), &[])).unwrap();
        }
        let sweepers = sweep_in_two([&a, &b], &keys);
        let removed: usize = sweepers.into_iter().map(|s| s.join().unwrap()).sum();
        assert_eq!(removed, 200, "every expired object removed exactly once");
    }
    assert_eq!(a.totals().unwrap(), a.totals_by_scan().unwrap());
}

/// Inserts count themselves by a row trigger (migration 11) while
/// sweepers remove batches by statement triggers: neither may deadlock the
/// other, and the totals stay those of the rows.
#[test]
fn inserts_beside_two_sweepers_keep_the_totals_exact() {
    let (a, b) = pair();
    let (a, b) = (Arc::new(a.repository()), Arc::new(b.repository()));
    let doomed: Vec<String> = (0..300).map(|i| format!("e{i}")).collect();
    for k in &doomed {
        a.put(k, &suite::sample_file(k, Some(10), &[])).unwrap();
    }
    let sweepers = sweep_in_two([&a, &b], &doomed);
    let writers: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .enumerate()
        .map(|(w, repo)| {
            std::thread::spawn(move || {
                for i in 0..150 {
                    let k = format!("n{w}-{i}");
                    let file = suite::sample_file(&k, Some(4_000_000_000), &[]);
                    assert!(repo.insert_new(&k, &file).unwrap());
                }
            })
        })
        .collect();
    writers.into_iter().for_each(|w| w.join().unwrap());
    let removed: usize = sweepers.into_iter().map(|s| s.join().unwrap()).sum();
    assert_eq!(removed, 300, "every expired object removed exactly once");
    let totals = a.totals().unwrap();
    assert_eq!(totals, a.totals_by_scan().unwrap());
    assert_eq!(totals.objects, 300, "the new records, counted once each");
}

/// A reservation (migration 11) and a rate check (migration 12) do not
/// wait for the WAL flush, and the setting ends with the transaction: the
/// next statement on the same pooled connection commits durably again.
#[test]
fn a_reservation_alone_commits_without_waiting_for_the_disk() {
    commits_without_waiting("SELECT store_reserve('store', 't', 0, 1, 1000)");
}

#[test]
fn a_rate_check_alone_commits_without_waiting_for_the_disk() {
    commits_without_waiting("SELECT store_rate_check('192.0.2.1', 1000, 60)");
}

/// Runs `call` (a function answering 0 when it let the caller through)
/// alone in a transaction, and answers the setting during and after it.
fn commits_without_waiting(call: &'static str) {
    let store = fresh();
    let pool = store.inner.queries.clone();
    let (during, after) = store.inner.bridge.run(async move {
        let mut client = pool.get().await.unwrap();
        // The test cluster runs with it off (scripts/pg-cluster); a
        // deployment runs with PostgreSQL's default.
        client
            .batch_execute("SET synchronous_commit = on")
            .await
            .unwrap();
        let tx = client.transaction().await.unwrap();
        let answer: i64 = tx.query_one(call, &[]).await.unwrap().get(0);
        assert_eq!(answer, 0, "let through");
        let during: String = tx
            .query_one("SHOW synchronous_commit", &[])
            .await
            .unwrap()
            .get(0);
        tx.commit().await.unwrap();
        let after: String = client
            .query_one("SHOW synchronous_commit", &[])
            .await
            .unwrap()
            .get(0);
        client
            .batch_execute("RESET synchronous_commit")
            .await
            .unwrap();
        (during, after)
    });
    assert_eq!(during, "off");
    assert_eq!(after, "on");
}

#[test]
fn passwords_are_redacted() {
    let url = "postgres://user:s3cret@127.0.0.1:5432/db";
    assert_eq!(redact_url(url), "postgres://user:***@127.0.0.1:5432/db");
    let err =
        PgStore::connect("postgres://user:s3cret@127.0.0.1:1/db?connect_timeout=x").unwrap_err();
    assert!(!err.message.contains("s3cret"), "{}", err.message);
}

#[test]
fn a_record_write_settles_its_reservation_in_its_own_transaction() {
    use store_core::ports::{Ledgers, Pool, Settled};
    use store_core::Object;
    let (a, b) = pair();
    let ledgers = a.ledgers(1000, 1000, &store_testkit::SeededRandom::new(1));
    let other = b.ledgers(1000, 1000, &store_testkit::SeededRandom::new(2));
    let repo = a.repository();
    let file = suite::sample_file("f", Some(4_000_000_000), &[]);
    let size = file.pool_bytes();
    assert_eq!(size, 10);
    let settled = Settled {
        pool: Pool::Store,
        bytes: size,
    };
    // Reserved, then recorded: between the write and the ledger's settle,
    // another process sees the bytes once, not twice.
    ledgers.try_reserve(Pool::Store, size).unwrap().unwrap();
    assert_eq!(other.usage(Pool::Store).unwrap().used_bytes, size);
    assert!(repo.insert_new_settled("f", &file, settled).unwrap());
    assert_eq!(
        other.usage(Pool::Store).unwrap().used_bytes,
        size,
        "counted once while the writer has not settled yet"
    );
    ledgers.settle(Pool::Store, size);
    assert_eq!(other.usage(Pool::Store).unwrap().used_bytes, size);
    // A write that does not land settles nothing: the key is taken.
    ledgers.try_reserve(Pool::Store, size).unwrap().unwrap();
    assert!(!repo.insert_new_settled("f", &file, settled).unwrap());
    assert_eq!(other.usage(Pool::Store).unwrap().used_bytes, 2 * size);
    ledgers.cancel(Pool::Store, size);
    // An update settles the growth it was reserved for.
    ledgers.try_reserve(Pool::Store, 5).unwrap().unwrap();
    let Object::File(mut grown) = file else {
        unreachable!()
    };
    grown.size = 15;
    let grown = Object::File(grown);
    let growth = Settled {
        pool: Pool::Store,
        bytes: 5,
    };
    let (_, rev) = repo.load("f").unwrap().unwrap();
    repo.replace_settled(("f", rev), &grown, &[], growth)
        .unwrap();
    assert_eq!(other.usage(Pool::Store).unwrap().used_bytes, 15);
    ledgers.settle(Pool::Store, 5);
    assert_eq!(other.usage(Pool::Store).unwrap().used_bytes, 15);
}

/// Whether the session of one of `store`'s pooled connections is
/// encrypted, as the server sees it.
fn encrypted(store: &PgStore) -> bool {
    store
        .inner
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            vec![],
        )
        .unwrap()
        .get(0)
}

/// The certificate authority of the test cluster's server certificate:
/// scripts/pg-cluster writes `ca.pem` beside it.
fn test_ca() -> String {
    let cert = pg::psql(&pg::cluster_url(), "SHOW ssl_cert_file");
    assert!(
        pg::psql(&pg::cluster_url(), "SHOW ssl") == "on" && cert.ends_with("server.pem"),
        "the TLS test needs a cluster with TLS on, as scripts/pg-cluster starts one"
    );
    cert.replace("server.pem", "ca.pem")
}

/// CONTRACT.md: STORE_DATABASE_URL honours sslmode=require and
/// sslmode=verify-full with sslrootcert=, as managed services need; a
/// server whose certificate the roots do not vouch for is refused.
#[test]
fn tls_is_used_when_asked_for_and_the_server_is_checked() {
    let url = pg::fresh_database();
    let plain = PgStore::connect(&url).unwrap();
    assert!(!encrypted(&plain), "no sslmode, no TLS");
    let required = PgStore::connect(&format!("{url}?sslmode=require")).unwrap();
    assert!(encrypted(&required), "sslmode=require encrypts");
    let ca = test_ca();
    let verified =
        PgStore::connect(&format!("{url}?sslmode=verify-full&sslrootcert={ca}")).unwrap();
    assert!(encrypted(&verified), "verify-full encrypts");
    verified.repository().ping().unwrap();
    // Another CA's certificate (a throwaway one of this test's own): the
    // server is not vouched for, so no connection is made.
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.pem");
    let made = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=another CA", "-keyout"])
        .arg(dir.path().join("other.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .expect("openssl runs");
    assert!(made.status.success());
    let refused = PgStore::connect(&format!(
        "{url}?sslmode=verify-full&sslrootcert={}",
        other.display()
    ));
    let e = refused.expect_err("a server the roots do not vouch for is refused");
    assert_eq!(e.kind, store_core::StorageErrorKind::Unavailable, "{e}");
    assert!(!e.message.contains(&password(&url)), "{e}");
}

fn password(url: &str) -> String {
    password_of(url).unwrap_or_default().to_string()
}

/// The migration's session, whose bounds were lifted while it migrated,
/// goes back to the query pool with the role's bounds again: the pool
/// holds one idle session once `connect` returns, the same backend every
/// query then uses, and its settings are those every query session gets.
#[test]
fn the_migrations_session_is_pooled_with_its_bounds_back() {
    let store = fresh();
    let status = store.inner.queries.status();
    assert_eq!((status.size, status.available), (1, 1), "{status:?}");
    let pool = store.inner.queries.clone();
    // pg_settings shows each in milliseconds, whatever unit SHOW would pick.
    let settings: Vec<String> = store.inner.bridge.run(async move {
        let client = pool.get().await.unwrap();
        let rows = client
            .query(
                "SELECT setting FROM pg_settings WHERE name IN \
                 ('statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout') \
                 ORDER BY name",
                &[],
            )
            .await
            .unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    });
    let statement = STATEMENT_TIMEOUT.as_millis().to_string();
    let idle = (2 * STATEMENT_DEADLINE.as_millis()).to_string();
    // In name order: idle_in_transaction_session_timeout, lock_timeout,
    // statement_timeout.
    assert_eq!(settings, [idle, statement.clone(), statement]);
    assert_eq!(store.inner.queries.status().size, 1, "no second session");
}
