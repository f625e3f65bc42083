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

mod ledgers;
mod locks;
mod rate;
mod repo;
mod schema;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use store_core::ports::{Random, StorageResult};
use store_core::{StorageError, StorageErrorKind};
use tokio_postgres::types::ToSql;

pub use ledgers::PgLedgers;
pub use locks::PgLocks;
pub use rate::PgRateLimits;
pub use repo::PgRepository;
pub use schema::SCHEMA_VERSION;
pub use store_bridge::Bridge;

/// Connections for records and ledgers, per process. A query holds one
/// for one statement or one short transaction.
const QUERY_CONNECTIONS_MAX: usize = 16;
/// Connections that hold key locks, per process: one per use case holding
/// keys at the moment (waiters queue in memory first, see [`PgLocks`]).
const LOCK_CONNECTIONS_MAX: usize = 24;
/// How long a request waits for a free connection before it fails.
const CONNECTION_WAIT: Duration = Duration::from_secs(30);
/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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
    pub(crate) locks: Pool,
    /// One session for this process's evictor (see [`PgLocks`]).
    pub(crate) eviction: Pool,
    /// The name of this process's reservation rows, once its ledgers are
    /// open: record writes settle reservations in their own transaction.
    pub(crate) process: std::sync::OnceLock<String>,
    /// This process's reservations, shared by its ledgers and its record
    /// writes (see [`ledgers::Reserved`]).
    pub(crate) reserved: std::sync::Mutex<ledgers::Reserved>,
}

impl Inner {
    /// Runs one statement, prepared once per connection, on a pooled
    /// connection, and answers its rows.
    pub(crate) fn query(
        &self,
        sql: &'static str,
        params: Params,
    ) -> StorageResult<Vec<tokio_postgres::Row>> {
        let pool = self.queries.clone();
        self.bridge.run(async move {
            let client = pool.get().await.map_err(pool_error)?;
            let statement = client.prepare_cached(sql).await.map_err(db_error)?;
            let refs: Vec<&(dyn ToSql + Sync)> = params
                .iter()
                .map(|p| p.as_ref() as &(dyn ToSql + Sync))
                .collect();
            client.query(&statement, &refs).await.map_err(db_error)
        })
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
    pub fn connect(url: &str) -> Result<Self, StorageError> {
        let config = tokio_postgres::Config::from_str(url).map_err(|e| {
            StorageError::new(format!(
                "STORE_DATABASE_URL is not a PostgreSQL URL ({})",
                redact_error(&e.to_string(), url)
            ))
        })?;
        let bridge = Bridge::new("store-pg")?;
        let queries = pool(&bridge, &config, QUERY_CONNECTIONS_MAX)?;
        let locks = pool(&bridge, &config, LOCK_CONNECTIONS_MAX)?;
        let eviction = pool(&bridge, &config, 1)?;
        let store = Self {
            inner: Arc::new(Inner {
                bridge,
                queries,
                locks,
                eviction,
                process: std::sync::OnceLock::new(),
                reserved: std::sync::Mutex::default(),
            }),
        };
        schema::migrate(&store.inner)?;
        Ok(store)
    }

    pub fn repository(&self) -> PgRepository {
        PgRepository::new(Arc::clone(&self.inner))
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

fn pool(
    bridge: &Bridge,
    config: &tokio_postgres::Config,
    max: usize,
) -> Result<Pool, StorageError> {
    let mut config = config.clone();
    config.connect_timeout(CONNECT_TIMEOUT);
    config.application_name("storesrv");
    let manager = Manager::from_config(
        config,
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
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
        // The server shut down or cut this database off (57P01..57P03).
        Some(c) if c.code().starts_with("57P") => StorageErrorKind::Unavailable,
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
