//! # store-pg
//!
//! Records, key locks, pool ledgers and the rate limit in PostgreSQL, so
//! that any number of storesrv processes serve one store as one service
//! (CONTRACT.md, "More than one machine").
//!
//! - [`PgRepository`]: the records, their expiry and tag indexes, and the
//!   pool totals, kept by a trigger in the same transaction as each record.
//! - [`PgLocks`]: per-key mutual exclusion across processes, as session
//!   advisory locks held for the use case's whole change.
//! - [`PgLedgers`]: the pools, counted from the records plus the in-flight
//!   reservations of every live process, decided one at a time.
//! - [`PgRateLimits`]: GCRA state per client in one table.
//! - [`PgClock`]: the database's time, so that every process decides
//!   expiry, sweeps and rate windows by one clock.
//!
//! The ports are synchronous; this crate runs its own small tokio runtime
//! and waits on it from the caller's (blocking) thread, so it works the
//! same under the server's runtime, in tests and from plain threads.
//!
//! ## Start here
//!
//! `PgStore::connect(url)` creates or migrates the schema (safe when
//! several processes start at once) and hands out each port: `repository()`
//! for `Ports::repo`, and `locks()` and `ledgers(...)` for
//! `store_app::Coordination::Shared`; `rate_limits(per_min)` goes to
//! store-http's `ServeOptions::rate_limits`. The storesrv binary's
//! `bins/storesrv/src/stores.rs` wires all four, and its tests run against
//! a real PostgreSQL (`STORE_TEST_DATABASE_URL`).

mod clock;
mod ledgers;
mod locks;
mod rate;
mod repo;
mod schema;
mod tls;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use store_core::ports::{Random, StorageResult};
use store_core::{StorageError, StorageErrorKind};
use tokio_postgres::types::ToSql;

pub use clock::PgClock;
pub use ledgers::PgLedgers;
pub use locks::PgLocks;
pub use rate::PgRateLimits;
pub use repo::PgRepository;
pub use schema::SCHEMA_VERSION;
pub use store_bridge::Bridge;

/// Connections for records and ledgers, per process. A query holds one
/// for one statement or one short transaction.
const QUERY_CONNECTIONS_MAX: usize = 16;
/// Connections for the statements a server awaits on its own runtime
/// ([`Inner::query_here`]: a GET's record, a request's rate check), per
/// process. Each answers one primary-key lookup or one client's count at
/// a time, about a tenth of a millisecond of the database's time, so a
/// few keep its cores busy; requests beyond wait in the pool.
const READ_CONNECTIONS_MAX: usize = 8;
/// Connections that hold key locks, per process: one per use case holding
/// keys at the moment (waiters queue in memory first, see [`PgLocks`]).
const LOCK_CONNECTIONS_MAX: usize = 24;
/// How long a request waits for a free connection before it fails (503):
/// a pool that stays busy this long is a database that does not answer.
const CONNECTION_WAIT: Duration = Duration::from_secs(4);
/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(4);
/// How long one statement may run: the server cancels it then
/// (`statement_timeout`), and the client gives up on the connection a
/// moment later ([`STATEMENT_DEADLINE`]) in case the server cannot even
/// say so. A database that hangs fails a request at its first statement,
/// within 4 s of it; a request's waits add up past CONTRACT.md's 15 s
/// only when the database answers each step just before its bound.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(3);
/// The client's own bound on a statement's answer, past which the
/// connection is closed and never given back to the pool.
pub(crate) const STATEMENT_DEADLINE: Duration = Duration::from_secs(4);
/// TCP keepalives on every database connection: a database host that is
/// gone (not refusing, silent) is noticed within about 5 + 3 x 2 s.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_RETRIES: u32 = 3;

/// How long queued deletes wait by default: a download that read a record
/// before it changed reads its bytes for at most this long.
pub const DELETE_GRACE: Duration = Duration::from_secs(3600);

/// The class (first key) of this crate's two-key advisory locks, "stor"
/// as a number; the second key says which lock. `store_reserve` (the
/// schema) uses class + 3.
pub(crate) const ADVISORY_CLASS: i32 = 1_936_028_786;

/// A statement's parameters, owned so that the job can move to the
/// adapter's runtime.
pub(crate) type Params = Vec<Box<dyn ToSql + Send + Sync>>;

/// A PostgreSQL database holding one store: open it once per process and
/// take the ports from it.
#[derive(Debug, Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) bridge: Bridge,
    pub(crate) queries: Pool,
    /// Connections opened and driven on the runtime of whoever reads
    /// through them (the server's), never on the bridge: see
    /// [`Inner::query_here`].
    pub(crate) reads: Pool,
    pub(crate) locks: Pool,
    /// One session for this process's evictor (see [`PgLocks`]).
    pub(crate) eviction: Pool,
    /// The name of this process's reservation rows, once its ledgers are
    /// open: record writes settle reservations in their own transaction.
    pub(crate) process: std::sync::OnceLock<String>,
    /// This process's reservations, shared by its ledgers and its record
    /// writes (see [`ledgers::Reserved`]).
    pub(crate) reserved: std::sync::Mutex<ledgers::Reserved>,
    /// How long queued deletes wait, in whole seconds
    /// ([`PgStore::set_delete_grace`]).
    delete_grace_secs: std::sync::atomic::AtomicU64,
}

impl Inner {
    /// The deletion queue's grace, as the SQL's `make_interval` takes it.
    pub(crate) fn delete_grace_secs(&self) -> f64 {
        self.delete_grace_secs
            .load(std::sync::atomic::Ordering::Relaxed) as f64
    }

    /// How long queued deletes wait ([`PgStore::set_delete_grace`]).
    pub(crate) fn delete_grace(&self) -> Duration {
        Duration::from_secs(
            self.delete_grace_secs
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// Runs one statement, prepared once per connection, on a pooled
    /// connection, and answers its rows.
    pub(crate) fn query(
        &self,
        sql: &'static str,
        params: Params,
    ) -> StorageResult<Vec<tokio_postgres::Row>> {
        self.bridge
            .run(run_statement(self.queries.clone(), sql, params))
    }

    /// [`Inner::query`] awaited on the caller's runtime instead of run on
    /// the bridge, through the `reads` pool: a connection it opens is
    /// driven by a task of that runtime, so a read crosses no thread of
    /// this crate's (a GET on the bridge took a blocking thread, the
    /// bridge's and back: docs/PERFORMANCE.md, issue 37). Bounded as
    /// [`Inner::query`] is. Only from inside a tokio runtime.
    pub(crate) async fn query_here(
        &self,
        sql: &'static str,
        params: Params,
    ) -> StorageResult<Vec<tokio_postgres::Row>> {
        // A task of its own, awaited: a request dropped mid-statement (its
        // client went away) must not give the connection back to the pool
        // with the statement still on it; the task runs it to its end or
        // to the deadline, which closes the connection.
        let job = tokio::spawn(run_statement(self.reads.clone(), sql, params));
        job.await
            .map_err(|e| StorageError::new(format!("a database read ended: {e}")))?
    }

    /// [`Inner::query`] for a statement that answers one row.
    pub(crate) fn query_one(
        &self,
        sql: &'static str,
        params: Params,
    ) -> StorageResult<tokio_postgres::Row> {
        self.query(sql, params)?
            .into_iter()
            .next()
            .ok_or_else(|| StorageError::new(format!("no row from {sql:?}")))
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db`), then
    /// creates or migrates the schema (one process at a time, under an
    /// advisory lock). The password never appears in an error.
    ///
    /// `sslmode=require` encrypts the connections, and `verify-full` (with
    /// `sslrootcert=FILE`, or the system's roots) checks the server's
    /// certificate too (see `tls.rs`).
    pub fn connect(url: &str) -> Result<Self, StorageError> {
        let (plain, tls) =
            tls::split(url).map_err(|e| StorageError::new(redact_error(&e.message, url)))?;
        let config = tokio_postgres::Config::from_str(&plain).map_err(|e| {
            StorageError::new(format!(
                "STORE_DATABASE_URL is not a PostgreSQL URL ({})",
                redact_error(&e.to_string(), url)
            ))
        })?;
        let bridge = Bridge::new("store-pg")?;
        let queries = pool(
            &bridge,
            (&config, &tls),
            Role::Queries,
            QUERY_CONNECTIONS_MAX,
        )?;
        let reads = pool(
            &bridge,
            (&config, &tls),
            Role::Queries,
            READ_CONNECTIONS_MAX,
        )?;
        let locks = pool(&bridge, (&config, &tls), Role::Locks, LOCK_CONNECTIONS_MAX)?;
        let eviction = pool(&bridge, (&config, &tls), Role::Locks, 1)?;
        let store = Self {
            inner: Arc::new(Inner {
                bridge,
                queries,
                reads,
                locks,
                eviction,
                process: std::sync::OnceLock::new(),
                reserved: std::sync::Mutex::default(),
                delete_grace_secs: DELETE_GRACE.as_secs().into(),
            }),
        };
        schema::migrate(&store.inner)?;
        Ok(store)
    }

    /// How long bytes that records stopped naming wait in the deletion
    /// queue before they are deleted (default [`DELETE_GRACE`]): longer
    /// than any download that read the old record may take.
    pub fn set_delete_grace(&self, grace: Duration) {
        self.inner
            .delete_grace_secs
            .store(grace.as_secs(), std::sync::atomic::Ordering::Relaxed);
    }

    pub fn repository(&self) -> PgRepository {
        PgRepository::new(Arc::clone(&self.inner))
    }

    /// The `Clock` port on the database's time (see [`PgClock`]), so that
    /// every process decides expiry by one clock.
    pub fn clock(&self) -> Result<PgClock, StorageError> {
        PgClock::start(&self.inner)
    }

    /// The database's own id (migration 8): what a bucket prefix's marker
    /// names as its owner.
    pub fn identity(&self) -> Result<String, StorageError> {
        Ok(self
            .inner
            .query_one("SELECT id FROM store_identity", vec![])?
            .get(0))
    }

    pub fn locks(&self) -> PgLocks {
        PgLocks::new(Arc::clone(&self.inner))
    }

    /// The pools' ledgers of this process, against the given capacities.
    /// `random` names the process's reservation rows.
    pub fn ledgers(&self, store_bytes: u64, pics_bytes: u64, random: &dyn Random) -> PgLedgers {
        PgLedgers::open(Arc::clone(&self.inner), store_bytes, pics_bytes, random)
    }

    pub fn rate_limits(&self, per_min: u32) -> PgRateLimits {
        PgRateLimits::new(Arc::clone(&self.inner), per_min)
    }
}

/// What a pool's sessions are for, which decides their server-side bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Statements and short transactions.
    Queries,
    /// Sessions that hold advisory locks (see [`locks`]).
    Locks,
}

impl Role {
    /// The session settings, as the `options` startup parameter: sent with
    /// the connection, so that no statement runs unbounded, even the first.
    fn options(self) -> String {
        let statement = STATEMENT_TIMEOUT.as_millis();
        let idle_tx = 2 * STATEMENT_DEADLINE.as_millis();
        match self {
            Self::Queries => format!(
                "-c statement_timeout={statement} -c lock_timeout={statement} \
                 -c idle_in_transaction_session_timeout={idle_tx}"
            ),
            // The lease (idle_session_timeout) is set while locks are held
            // only (see locks.rs).
            Self::Locks => format!(
                "-c statement_timeout={} -c lock_timeout={}",
                locks::LOCK_WAIT.as_millis() + 500,
                locks::LOCK_WAIT.as_millis(),
            ),
        }
    }
}

/// Runs one statement, prepared once per connection, on a connection of
/// `pool`, within [`STATEMENT_DEADLINE`]: what [`Inner::query`] and
/// [`Inner::query_here`] each run, on the bridge and on the caller's
/// runtime.
async fn run_statement(
    pool: Pool,
    sql: &'static str,
    params: Params,
) -> StorageResult<Vec<tokio_postgres::Row>> {
    let client = pool.get().await.map_err(pool_error)?;
    let answer = tokio::time::timeout(STATEMENT_DEADLINE, async {
        let statement = client.prepare_cached(sql).await.map_err(db_error)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        client.query(&statement, &refs).await.map_err(db_error)
    })
    .await;
    answer.unwrap_or_else(|_| Err(gave_up(client, STATEMENT_DEADLINE)))
}

/// What a job on `client` that gave no answer within its deadline
/// answers: an unavailable error, and the connection closed instead of
/// going back to the pool, since a statement may still be running on it (a
/// frozen backend, a stuck pooler) and the next user would wait behind it.
pub(crate) fn gave_up(client: deadpool_postgres::Object, deadline: Duration) -> StorageError {
    drop(deadpool_postgres::Object::take(client));
    StorageError::of(
        StorageErrorKind::Unavailable,
        format!("database: no answer within {} ms", deadline.as_millis()),
    )
}

fn pool(
    bridge: &Bridge,
    (config, tls): (&tokio_postgres::Config, &tls::Tls),
    role: Role,
    max: usize,
) -> Result<Pool, StorageError> {
    let mut config = config.clone();
    config.connect_timeout(CONNECT_TIMEOUT);
    config.keepalives(true);
    config.keepalives_idle(KEEPALIVE_IDLE);
    config.keepalives_interval(KEEPALIVE_INTERVAL);
    config.keepalives_retries(KEEPALIVE_RETRIES);
    config.tcp_user_timeout(KEEPALIVE_IDLE + KEEPALIVE_INTERVAL * KEEPALIVE_RETRIES);
    // The operator's own options (from the URL) come after ours: theirs win.
    let options = match config.get_options() {
        Some(own) => format!("{} {own}", role.options()),
        None => role.options(),
    };
    config.options(&options);
    config.application_name("storesrv");
    let manager_config = ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    };
    let manager = match tls {
        tls::Tls::Off => Manager::from_config(config, tokio_postgres::NoTls, manager_config),
        tls::Tls::On(client) => Manager::from_config(
            config,
            tokio_postgres_rustls::MakeRustlsConnect::new((**client).clone()),
            manager_config,
        ),
    };
    let _entered = bridge.enter();
    Pool::builder(manager)
        .max_size(max)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(CONNECTION_WAIT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(StorageError::new)
}

/// A database error as a storage fault. tokio-postgres never puts the
/// connection's password in its messages.
pub(crate) fn db_error(e: tokio_postgres::Error) -> StorageError {
    let kind = match e.code() {
        // disk_full, out of memory, too many connections: retry later.
        Some(c) if c.code() == "53100" => StorageErrorKind::Full,
        // The server shut down, cut this database off or ended an idle
        // session (57P01..57P05).
        Some(c) if c.code().starts_with("57P") => StorageErrorKind::Unavailable,
        // A bound ran out: statement_timeout (57014), lock_timeout
        // (55P03); or the database chose this transaction to fail
        // (serialization, deadlock: 40001, 40P01). A retry may succeed.
        Some(c) if ["57014", "55P03", "40001", "40P01"].contains(&c.code()) => {
            StorageErrorKind::Unavailable
        }
        // No answer at all: the connection closed or its socket failed.
        None if e.is_closed() || io_cause(&e) => StorageErrorKind::Unavailable,
        _ => StorageErrorKind::Other,
    };
    let detail = e
        .as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_string());
    StorageError::of(kind, format!("database: {detail}"))
}

fn io_cause(e: &tokio_postgres::Error) -> bool {
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// No connection could be had: the database cannot be reached now.
pub(crate) fn pool_error(e: deadpool_postgres::PoolError) -> StorageError {
    StorageError::of(
        StorageErrorKind::Unavailable,
        format!("database connection: {e}"),
    )
}

/// `message` with the password of `url`, if any, blotted out: a parse
/// error may quote the URL it could not read.
pub fn redact_error(message: &str, url: &str) -> String {
    match password_of(url) {
        Some(p) if !p.is_empty() => message.replace(p, "***"),
        _ => message.to_string(),
    }
}

/// The URL with its password replaced by `***`, for logs.
pub fn redact_url(url: &str) -> String {
    redact_error(url, url)
}

fn password_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let userinfo = rest.split(['/', '?']).next()?.rsplit_once('@')?.0;
    userinfo.split_once(':').map(|(_, p)| p)
}

#[cfg(test)]
mod tests;
