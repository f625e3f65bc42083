//! Versioned migrations, applied at start by whichever process gets the
//! migration lock first; the others wait for it, then find nothing to do.

use store_core::StorageError;

use crate::{db_error, pool_error, Inner};

/// The migrations, in order: version n is `MIGRATIONS[n - 1]`. A released
/// migration is never edited; a change is a new one.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_records.sql"),
    include_str!("../migrations/0002_listings.sql"),
    include_str!("../migrations/0003_reserve_by_row.sql"),
    include_str!("../migrations/0004_kind_totals.sql"),
    include_str!("../migrations/0005_totals_per_statement.sql"),
    include_str!("../migrations/0006_revisions.sql"),
    include_str!("../migrations/0007_deletion_queue.sql"),
    include_str!("../migrations/0008_identity.sql"),
    include_str!("../migrations/0009_intents.sql"),
    include_str!("../migrations/0010_moderation.sql"),
    include_str!("../migrations/0011_cheaper_upload_statements.sql"),
    include_str!("../migrations/0012_rate_check_without_flush.sql"),
];

/// Rows the listings backfill reads per statement.
const BACKFILL_ROWS: i64 = 1_000;

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// The advisory lock serialising migrations between processes starting
/// at once.
const MIGRATION_LOCK: (i32, i32) = (crate::ADVISORY_CLASS, 1);

pub(crate) fn migrate(inner: &Inner) -> Result<(), StorageError> {
    let pool = inner.queries.clone();
    inner.bridge.run(async move {
        let client = pool.get().await.map_err(pool_error)?;
        // A migration rewrites every record (migration 6 numbers them) and
        // a process starting beside another waits for its migration: no
        // request's bound applies. This session lifts them, and goes back
        // to the pool only once they are back (below); otherwise it is
        // closed rather than pooled with them lifted.
        client.batch_execute(LIFT_BOUNDS).await.map_err(db_error)?;
        let client = Unpooled(Some(client));
        client
            .execute(
                "SELECT pg_advisory_lock($1, $2)",
                &[&MIGRATION_LOCK.0, &MIGRATION_LOCK.1],
            )
            .await
            .map_err(db_error)?;
        let mut client = client;
        let result = apply(client.session()).await;
        // Released even when a migration failed, so that another process
        // may try (and report the same failure).
        let unlocked = client
            .execute(
                "SELECT pg_advisory_unlock($1, $2)",
                &[&MIGRATION_LOCK.0, &MIGRATION_LOCK.1],
            )
            .await;
        result?;
        unlocked.map_err(db_error)?;
        // Every server start migrates, and a session is a new server
        // process: given back, it is the first the pool hands out.
        if client.batch_execute(RESTORE_BOUNDS).await.is_ok() {
            client.give_back();
        }
        Ok(())
    })
}

/// What the migration's session lifts: the bounds its role sets on every
/// request (`Role::options`).
const LIFT_BOUNDS: &str = "SET statement_timeout = 0; SET lock_timeout = 0;
     SET idle_in_transaction_session_timeout = 0";

/// The same settings back to the session's own defaults, which are the
/// role's options given when it connected.
const RESTORE_BOUNDS: &str = "RESET statement_timeout; RESET lock_timeout;
     RESET idle_in_transaction_session_timeout";

/// A pooled session that is closed when dropped, unless given back.
struct Unpooled(Option<deadpool_postgres::Object>);

impl Unpooled {
    /// Returns the session to its pool, to be used as any other.
    fn give_back(mut self) {
        drop(self.0.take());
    }

    fn session(&mut self) -> &mut deadpool_postgres::Object {
        self.0.as_mut().expect("held until dropped")
    }
}

impl std::ops::Deref for Unpooled {
    type Target = deadpool_postgres::Object;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref().expect("held until dropped")
    }
}

impl Drop for Unpooled {
    fn drop(&mut self) {
        if let Some(session) = self.0.take() {
            drop(deadpool_postgres::Object::take(session));
        }
    }
}

async fn apply(client: &mut deadpool_postgres::Object) -> Result<(), StorageError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS store_schema (
                 version     int PRIMARY KEY,
                 applied_at  timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await
        .map_err(db_error)?;
    let row = client
        .query_one("SELECT coalesce(max(version), 0) FROM store_schema", &[])
        .await
        .map_err(db_error)?;
    let current: i32 = row.get(0);
    if current > SCHEMA_VERSION {
        return Err(StorageError::new(format!(
            "the database schema is at version {current}, newer than this storesrv knows ({SCHEMA_VERSION}): upgrade storesrv"
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let version = i as i32 + 1;
        let tx = client.transaction().await.map_err(db_error)?;
        tx.batch_execute(sql).await.map_err(db_error)?;
        if version == 2 {
            backfill_listings(&tx).await?;
        }
        if version == 10 {
            backfill_terms(&tx).await?;
        }
        tx.execute(
            "INSERT INTO store_schema (version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(db_error)?;
        tx.commit().await.map_err(db_error)?;
    }
    Ok(())
}

/// Sets the `listing` column of the rows written before version 2, in the
/// migration's transaction: the code comes from [`store_core::Object::listing`],
/// the one definition of what each listing holds, rather than from SQL
/// that would repeat it over the JSON.
async fn backfill_listings(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StorageError> {
    let mut after = String::new();
    loop {
        let rows = tx
            .query(
                "SELECT key, body::text FROM store_objects WHERE key > $1 ORDER BY key LIMIT $2",
                &[&after, &BACKFILL_ROWS],
            )
            .await
            .map_err(db_error)?;
        let (mut keys, mut codes) = (vec![], vec![]);
        for row in &rows {
            let key: String = row.get(0);
            if let Some(code) = crate::repo::listing_code(&crate::repo::decode(&key, row.get(1))?) {
                keys.push(key);
                codes.push(code);
            }
        }
        tx.execute(
            "UPDATE store_objects o SET listing = c.code
             FROM unnest($1::text[], $2::smallint[]) AS c(key, code) WHERE o.key = c.key",
            &[&keys, &codes],
        )
        .await
        .map_err(db_error)?;
        match rows.last() {
            Some(last) if rows.len() as i64 == BACKFILL_ROWS => after = last.get(0),
            _ => return Ok(()),
        }
    }
}

/// Sets the `created_at` and `terms` columns of the rows written before
/// version 10, as [`backfill_listings`] does the listing codes: from
/// [`store_core::Object::search_terms`], the one definition of them.
async fn backfill_terms(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StorageError> {
    let mut after = String::new();
    loop {
        let rows = tx
            .query(
                "SELECT key, body::text FROM store_objects WHERE key > $1 ORDER BY key LIMIT $2",
                &[&after, &BACKFILL_ROWS],
            )
            .await
            .map_err(db_error)?;
        let (mut keys, mut created, mut terms) = (vec![], vec![], vec![]);
        for row in &rows {
            let key: String = row.get(0);
            let object = crate::repo::decode(&key, row.get(1))?;
            keys.push(key);
            created.push(object.created_at().as_millis());
            // One JSON text per row: unnest cannot pair rows with an
            // array of arrays of different lengths.
            terms.push(serde_json::to_string(&object.search_terms()).map_err(StorageError::new)?);
        }
        tx.execute(
            "UPDATE store_objects o SET created_at = c.created_at,
                 terms = ARRAY(SELECT jsonb_array_elements_text(c.terms::jsonb))
             FROM unnest($1::text[], $2::bigint[], $3::text[]) AS c(key, created_at, terms)
             WHERE o.key = c.key",
            &[&keys, &created, &terms],
        )
        .await
        .map_err(db_error)?;
        match rows.last() {
            Some(last) if rows.len() as i64 == BACKFILL_ROWS => after = last.get(0),
            _ => return Ok(()),
        }
    }
}
