//! Records in PostgreSQL: one row per object in `store_objects`, with the
//! columns its indexes need beside the JSON record. Every method is one
//! statement (autocommitted, so durable when it returns) or, for the
//! sweep, one short transaction. The pool totals follow each row change
//! by trigger, in the same transaction.

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::{db_error, pool_error, Inner, Params};
use store_core::ports::{Repository, Settled, StorageResult};
use store_core::{Listing, Object, ObjectKind, StorageError, StorageErrorKind, Timestamp, Totals};

/// Records read per page by [`Repository::for_each`] and [`Repository::listed`].
const PAGE_ROWS: i64 = 500;

const UPSERT: &str =
    "INSERT INTO store_objects (key, body, expires_at, tags, pool_bytes, pics_bytes, listing)
     VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7)
     ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, expires_at = EXCLUDED.expires_at,
         tags = EXCLUDED.tags, pool_bytes = EXCLUDED.pool_bytes,
         pics_bytes = EXCLUDED.pics_bytes, listing = EXCLUDED.listing";

const INSERT_NEW: &str =
    "INSERT INTO store_objects (key, body, expires_at, tags, pool_bytes, pics_bytes, listing)
     VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7)
     ON CONFLICT (key) DO NOTHING
     RETURNING 1";

/// [`UPSERT`] and [`INSERT_NEW`] that also take `$9` bytes of pool `$10`
/// off the reservation row of process `$8`, in the same statement (one
/// transaction), and only if the record was written: the bytes move from
/// reserved to recorded with no moment counting them twice.
const UPSERT_SETTLED: &str = "WITH w AS (
     INSERT INTO store_objects (key, body, expires_at, tags, pool_bytes, pics_bytes, listing)
     VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7)
     ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, expires_at = EXCLUDED.expires_at,
         tags = EXCLUDED.tags, pool_bytes = EXCLUDED.pool_bytes,
         pics_bytes = EXCLUDED.pics_bytes, listing = EXCLUDED.listing
     RETURNING 1),
   s AS (UPDATE store_reservations SET bytes = greatest(bytes - $9, 0)
     WHERE process = $8 AND pool = $10 AND EXISTS (SELECT 1 FROM w))
   SELECT 1 FROM w";

const INSERT_NEW_SETTLED: &str = "WITH w AS (
     INSERT INTO store_objects (key, body, expires_at, tags, pool_bytes, pics_bytes, listing)
     VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7)
     ON CONFLICT (key) DO NOTHING
     RETURNING 1),
   s AS (UPDATE store_reservations SET bytes = greatest(bytes - $9, 0)
     WHERE process = $8 AND pool = $10 AND EXISTS (SELECT 1 FROM w))
   SELECT 1 FROM w";

/// The records of a store in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgRepository {
    inner: Arc<Inner>,
}

/// A record as the columns of its row.
struct Row {
    body: String,
    expires_at: Option<i64>,
    tags: Vec<String>,
    pool_bytes: i64,
    pics_bytes: i64,
    listing: Option<i16>,
}

/// The `listing` column's value for `object`.
pub(crate) fn listing_code(object: &Object) -> Option<i16> {
    object.listing().map(|l| i16::from(l.code()))
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Row {
    fn of(object: &Object) -> StorageResult<Self> {
        Ok(Self {
            body: serde_json::to_string(object).map_err(StorageError::new)?,
            expires_at: object.lifetime().expires_at().map(Timestamp::as_millis),
            tags: object.tags().to_vec(),
            pool_bytes: to_i64(object.pool_bytes()),
            pics_bytes: to_i64(object.pics_bytes()),
            listing: listing_code(object),
        })
    }
}

pub(crate) fn decode(key: &str, body: &str) -> StorageResult<Object> {
    serde_json::from_str(body).map_err(|e| {
        StorageError::of(
            StorageErrorKind::Corrupt,
            format!("corrupt record: {e} (key {key:?})"),
        )
    })
}

impl PgRepository {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Self { inner }
    }

    /// Writes `object` under `key` with `sql` (an insert of the six
    /// columns), answering the rows it returned.
    fn write(&self, sql: &'static str, key: &str, object: &Object) -> StorageResult<usize> {
        self.query(sql, Self::params(key, object)?)
            .map(|rows| rows.len())
    }

    fn params(key: &str, object: &Object) -> StorageResult<Params> {
        let row = Row::of(object)?;
        Ok(vec![
            Box::new(key.to_string()),
            Box::new(row.body),
            Box::new(row.expires_at),
            Box::new(row.tags),
            Box::new(row.pool_bytes),
            Box::new(row.pics_bytes),
            Box::new(row.listing),
        ])
    }

    /// [`PgRepository::write`] with `settled` taken off this process's
    /// reservation in the same statement (`sql` is a `_SETTLED` one);
    /// `plain` when there is nothing to settle or no ledger to settle in.
    fn write_settled(
        &self,
        (sql, plain): (&'static str, &'static str),
        key: &str,
        object: &Object,
        settled: Settled,
    ) -> StorageResult<usize> {
        let Some(process) = self.inner.process.get().filter(|_| settled.bytes > 0) else {
            return self.write(plain, key, object);
        };
        let mut params = Self::params(key, object)?;
        params.push(Box::new(process.clone()));
        params.push(Box::new(i64::try_from(settled.bytes).unwrap_or(i64::MAX)));
        params.push(Box::new(crate::ledgers::pool_name(settled.pool)));
        let reserved = || {
            self.inner
                .reserved
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        let before = reserved().row_writes;
        // Not under the count's lock: record commits of one process go on
        // in parallel, as reservations never could.
        let written = self.query(sql, params)?.len();
        if written == 1 {
            let mut r = reserved();
            let i = crate::ledgers::index(settled.pool);
            r.mine[i] = r.mine[i].saturating_sub(settled.bytes);
            r.settled_by_records[i] += settled.bytes;
            // A write of the count in between (a cancel or a settle) wrote
            // the row from a count that still held these bytes: write it
            // again, now right, rather than leave it overstated until the
            // next one. (Reservations add to the row, so they need nothing.)
            if r.row_writes != before {
                crate::ledgers::publish(&self.inner, process, settled.pool, r.mine[i]);
            }
        }
        Ok(written)
    }

    /// Visits the rows `sql` selects (key, body), page by page in key
    /// order: `$1` is the last key seen, `$2` the page size, and `more`
    /// gives the parameters from `$3` on. No statement holds more than a
    /// page in memory, and a long walk holds no snapshot open.
    fn walk(
        &self,
        sql: &'static str,
        more: &dyn Fn() -> Params,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        let mut after = String::new();
        loop {
            let mut params: Params = vec![Box::new(after.clone()), Box::new(PAGE_ROWS)];
            params.extend(more());
            let rows = self.query(sql, params)?;
            for row in &rows {
                let key: &str = row.get(0);
                if visit(key, &decode(key, row.get(1))?).is_break() {
                    return Ok(());
                }
            }
            match rows.last() {
                Some(last) if rows.len() as i64 == PAGE_ROWS => after = last.get(0),
                _ => return Ok(()),
            }
        }
    }

    fn query(&self, sql: &'static str, params: Params) -> StorageResult<Vec<tokio_postgres::Row>> {
        self.inner.query(sql, params)
    }

    /// Claims the rows of `keys` no other transaction holds, removes those
    /// past their lifetime at `now`, and answers what each removed.
    async fn remove_dead_claimed(
        client: &mut deadpool_postgres::Object,
        keys: Vec<String>,
        now: Timestamp,
    ) -> StorageResult<Vec<Option<Object>>> {
        let tx = client.transaction().await.map_err(db_error)?;
        // SKIP LOCKED: a row another process is removing (or changing) is
        // left to it; each expired object is removed by one process.
        let rows = tx
            .query(
                "SELECT key, body::text FROM store_objects WHERE key = ANY($1)
                 FOR UPDATE SKIP LOCKED",
                &[&keys],
            )
            .await
            .map_err(db_error)?;
        let mut dead = std::collections::HashMap::new();
        for row in rows {
            let key: String = row.get(0);
            let object = decode(&key, row.get(1))?;
            if !object.lifetime().is_live(now) {
                dead.insert(key, object);
            }
        }
        let doomed: Vec<&String> = dead.keys().collect();
        tx.execute("DELETE FROM store_objects WHERE key = ANY($1)", &[&doomed])
            .await
            .map_err(db_error)?;
        tx.commit().await.map_err(db_error)?;
        Ok(keys.iter().map(|k| dead.remove(k)).collect())
    }
}

impl Repository for PgRepository {
    fn get(&self, key: &str) -> StorageResult<Option<Object>> {
        let rows = self.query(
            "SELECT body::text FROM store_objects WHERE key = $1",
            vec![Box::new(key.to_string())],
        )?;
        rows.first().map(|r| decode(key, r.get(0))).transpose()
    }

    fn insert_new(&self, key: &str, object: &Object) -> StorageResult<bool> {
        Ok(self.write(INSERT_NEW, key, object)? == 1)
    }

    fn put(&self, key: &str, object: &Object) -> StorageResult<()> {
        self.write(UPSERT, key, object).map(drop)
    }

    fn insert_new_settled(
        &self,
        key: &str,
        object: &Object,
        settled: Settled,
    ) -> StorageResult<bool> {
        let sql = (INSERT_NEW_SETTLED, INSERT_NEW);
        Ok(self.write_settled(sql, key, object, settled)? == 1)
    }

    fn put_settled(&self, key: &str, object: &Object, settled: Settled) -> StorageResult<()> {
        self.write_settled((UPSERT_SETTLED, UPSERT), key, object, settled)
            .map(drop)
    }

    fn remove(&self, key: &str) -> StorageResult<Option<Object>> {
        let rows = self.query(
            "DELETE FROM store_objects WHERE key = $1 RETURNING body::text",
            vec![Box::new(key.to_string())],
        )?;
        rows.first().map(|r| decode(key, r.get(0))).transpose()
    }

    fn remove_dead_many(
        &self,
        keys: &[String],
        now: Timestamp,
    ) -> StorageResult<Vec<Option<Object>>> {
        let pool = self.inner.queries.clone();
        let keys = keys.to_vec();
        self.inner.bridge.run(async move {
            let mut client = pool.get().await.map_err(pool_error)?;
            Self::remove_dead_claimed(&mut client, keys, now).await
        })
    }

    fn totals(&self) -> StorageResult<Totals> {
        // One statement, one snapshot: the counts by kind add up to the
        // count of records.
        let rows = self.query(
            "SELECT NULL::text, sum(objects)::bigint, sum(pool_bytes)::bigint,
                    sum(pics_bytes)::bigint
               FROM store_totals
             UNION ALL
             SELECT kind, sum(objects)::bigint, 0::bigint, 0::bigint
               FROM store_kind_totals GROUP BY kind",
            vec![],
        )?;
        let n = |row: &tokio_postgres::Row, i: usize| {
            u64::try_from(row.get::<_, Option<i64>>(i).unwrap_or(0)).unwrap_or(0)
        };
        let mut totals = Totals::default();
        for row in &rows {
            match row.get::<_, Option<String>>(0) {
                None => {
                    totals.objects = n(row, 1);
                    totals.pool_bytes = n(row, 2);
                    totals.pics_bytes = n(row, 3);
                }
                Some(name) => {
                    if let Some(kind) = ObjectKind::ALL.iter().find(|k| k.name() == name) {
                        totals.by_kind[kind.index()] = n(row, 1);
                    }
                }
            }
        }
        Ok(totals)
    }

    fn expiring(&self, limit: usize) -> StorageResult<Vec<(Timestamp, String)>> {
        let rows = self.query(
            "SELECT expires_at, key FROM store_objects WHERE expires_at IS NOT NULL
             ORDER BY expires_at, key LIMIT $1",
            vec![Box::new(to_i64(limit as u64))],
        )?;
        Ok(rows
            .iter()
            .map(|r| (Timestamp::from_millis(r.get(0)), r.get(1)))
            .collect())
    }

    fn keys_with_tag(&self, tag: &str) -> StorageResult<Vec<String>> {
        let rows = self.query(
            "SELECT key FROM store_objects WHERE tags @> ARRAY[$1::text] ORDER BY key",
            vec![Box::new(tag.to_string())],
        )?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn listed(
        &self,
        listing: Listing,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        let code = i16::from(listing.code());
        self.walk(
            "SELECT key, body::text FROM store_objects
             WHERE listing = $3 AND key > $1 ORDER BY key LIMIT $2",
            &|| vec![Box::new(code)],
            visit,
        )
    }

    fn ping(&self) -> StorageResult<()> {
        self.query("SELECT 1", vec![]).map(drop)
    }

    fn reads_wait(&self) -> bool {
        true
    }

    fn for_each(
        &self,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        self.walk(
            "SELECT key, body::text FROM store_objects WHERE key > $1 ORDER BY key LIMIT $2",
            &Vec::new,
            visit,
        )
    }
}
