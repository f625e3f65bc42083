//! Records in PostgreSQL: one row per object in `store_objects`, with the
//! columns its indexes need beside the JSON record. Every method is one
//! statement (autocommitted, so durable when it returns) or, for the
//! sweep, one short transaction. The pool totals follow each row change
//! by trigger, in the same transaction.

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::{db_error, pool_error, Inner, Params};
use store_core::digest::Sha256;
use store_core::events::{event_id, Claimed, Event, EventData, EventType};
use store_core::moderation::{AdminCursor, Block, Report};
use store_core::ports::{AsyncGet, Repository, Rev, Settled, StorageResult};
use store_core::{
    BlobId, Listing, Object, ObjectKind, StorageError, StorageErrorKind, Timestamp, Totals,
};

/// Records read per page by [`Repository::for_each`] and [`Repository::listed`].
const PAGE_ROWS: i64 = 500;

/// A record by its key: what a GET reads.
const GET: &str = "SELECT body::text FROM store_objects WHERE key = $1";

const INSERT_NEW: &str = "INSERT INTO store_objects
         (key, body, expires_at, tags, pool_bytes, pics_bytes, listing, created_at, terms)
     VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (key) DO NOTHING
     RETURNING rev";

/// A conditional write (the fence): the row changes only if it is still at
/// revision `$10`, and gets a fresh one from the sequence. No row back means
/// someone else wrote it, or removed it, since it was read. The blobs `$12`
/// it stops naming join the deletion queue, due after `$11` seconds, in the
/// same statement and only if it wrote.
const REPLACE: &str = "WITH w AS (
     UPDATE store_objects SET body = $2::text::jsonb, expires_at = $3, tags = $4,
         pool_bytes = $5, pics_bytes = $6, listing = $7, created_at = $8, terms = $9,
         rev = nextval('store_rev_seq')
     WHERE key = $1 AND rev = $10
     RETURNING rev),
   d AS (INSERT INTO store_doomed (blob, due_at)
     SELECT b, now() + make_interval(secs => $11) FROM unnest($12::text[]) AS b
     WHERE EXISTS (SELECT 1 FROM w)
     ON CONFLICT (blob) DO NOTHING)
   SELECT rev FROM w";

/// The conditional removal, queueing the record's blobs `$4` as
/// [`REPLACE`] does.
const REMOVE_AT: &str = "WITH w AS (
     DELETE FROM store_objects WHERE key = $1 AND rev = $2 RETURNING 1),
   d AS (INSERT INTO store_doomed (blob, due_at)
     SELECT b, now() + make_interval(secs => $3) FROM unnest($4::text[]) AS b
     WHERE EXISTS (SELECT 1 FROM w)
     ON CONFLICT (blob) DO NOTHING)
   SELECT 1 FROM w";

/// [`REPLACE`] and [`INSERT_NEW`] that also take bytes of a pool off the
/// reservation row of this process, in the same statement (one
/// transaction), and only if the record was written: the bytes move from
/// reserved to recorded with no moment counting them twice. The process,
/// the bytes and the pool are the three parameters after the write's own
/// (`$13` to `$15` after [`REPLACE`]'s, `$10` to `$12` after an insert's
/// columns).
const REPLACE_SETTLED: &str = "WITH w AS (
     UPDATE store_objects SET body = $2::text::jsonb, expires_at = $3, tags = $4,
         pool_bytes = $5, pics_bytes = $6, listing = $7, created_at = $8, terms = $9,
         rev = nextval('store_rev_seq')
     WHERE key = $1 AND rev = $10
     RETURNING rev),
   d AS (INSERT INTO store_doomed (blob, due_at)
     SELECT b, now() + make_interval(secs => $11) FROM unnest($12::text[]) AS b
     WHERE EXISTS (SELECT 1 FROM w)
     ON CONFLICT (blob) DO NOTHING),
   s AS (UPDATE store_reservations SET bytes = greatest(bytes - $14, 0)
     WHERE process = $13 AND pool = $15 AND EXISTS (SELECT 1 FROM w))
   SELECT rev FROM w";

const INSERT_NEW_SETTLED: &str = "WITH w AS (
     INSERT INTO store_objects
         (key, body, expires_at, tags, pool_bytes, pics_bytes, listing, created_at, terms)
     VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (key) DO NOTHING
     RETURNING rev),
   s AS (UPDATE store_reservations SET bytes = greatest(bytes - $11, 0)
     WHERE process = $10 AND pool = $12 AND EXISTS (SELECT 1 FROM w))
   SELECT rev FROM w";

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
    created_at: i64,
    terms: Vec<String>,
}

/// The `listing` column's value for `object`.
pub(crate) fn listing_code(object: &Object) -> Option<i16> {
    object.listing().map(|l| i16::from(l.code()))
}

/// How long a drainer's claim on queued deletes lasts: a process killed
/// mid-drain leaves its rows to come due again after this. Also the
/// longest pause between two tries of a delete the bucket refused.
const DELETE_CLAIM_SECS: f64 = 30.0;
/// The pause before a refused delete is tried again grows by this much
/// with each failure, up to [`DELETE_CLAIM_SECS`].
const DELETE_RETRY_STEP_SECS: f64 = 5.0;

/// Blob ids as the queue's `text[]` parameter.
fn blob_names(blobs: &[BlobId]) -> Vec<String> {
    blobs.iter().map(|b| b.0.clone()).collect()
}

/// A revision as the `rev` column holds it (the sequence's values are
/// positive, so the cast is exact both ways).
fn rev_param(rev: Rev) -> i64 {
    rev.0 as i64
}

/// The revision in the first row of a write's answer, if it wrote.
fn first_rev(rows: &[tokio_postgres::Row]) -> Option<Rev> {
    rows.first().map(|r| Rev(r.get::<_, i64>(0) as u64))
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
            created_at: object.created_at().as_millis(),
            terms: object.search_terms(),
        })
    }
}

/// The parameters of an event put in the outbox beside another write
/// (`$4` to `$7`: key, type, time, body), all null without one.
fn push_event(params: &mut Params, event: Option<&Event>) -> StorageResult<()> {
    let (key, kind, at, body) = match event {
        Some(e) => (
            Some(e.data.key.clone()),
            Some(e.kind.as_str().to_string()),
            Some(e.at.as_millis()),
            Some(serde_json::to_string(&e.data).map_err(StorageError::new)?),
        ),
        None => (None, None, None, None),
    };
    params.push(Box::new(key));
    params.push(Box::new(kind));
    params.push(Box::new(at));
    params.push(Box::new(body));
    Ok(())
}

/// A claimed row of the outbox as its event: a record's events carry
/// the record (the trigger's), whose data store-core reads; a report's
/// or a block's carry their data.
fn claimed_of(row: &tokio_postgres::Row) -> StorageResult<Claimed> {
    let corrupt =
        |e: String| StorageError::of(StorageErrorKind::Corrupt, format!("corrupt event: {e}"));
    let seq = row.get::<_, i64>(0) as u64;
    let key: String = row.get(1);
    let kind: EventType = serde_json::from_value(serde_json::Value::String(row.get(2)))
        .map_err(|e| corrupt(e.to_string()))?;
    let at = Timestamp::from_millis(row.get(3));
    let body: &str = row.get(4);
    let data = match kind {
        EventType::Created | EventType::Deleted | EventType::Expired => {
            EventData::of(&key, &decode(&key, body)?)
        }
        EventType::Reported | EventType::Blocked => {
            serde_json::from_str(body).map_err(|e| corrupt(e.to_string()))?
        }
    };
    let mut event = Event::new(kind, at, data);
    event.id = event_id(seq, at);
    Ok(Claimed {
        seq,
        event,
        attempts: row.get::<_, i32>(5) as u32,
    })
}

fn decode_block(body: &str) -> StorageResult<Block> {
    serde_json::from_str(body)
        .map_err(|e| StorageError::of(StorageErrorKind::Corrupt, format!("corrupt block: {e}")))
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

    /// Writes `object` under `key` with `sql` (an insert, or a conditional
    /// update of the columns at `fence`'s revision, queueing its
    /// doomed blobs), answering the revision it returned, if it wrote.
    fn write(
        &self,
        sql: &'static str,
        key: &str,
        object: &Object,
        fence: Option<(Rev, &[BlobId])>,
    ) -> StorageResult<Option<Rev>> {
        let mut params = Self::params(key, object)?;
        self.push_fence(&mut params, fence);
        Ok(first_rev(&self.query(sql, params)?))
    }

    /// The parameters after the columns of a conditional write: the
    /// revision, the deletion queue's grace and the doomed blobs.
    fn push_fence(&self, params: &mut Params, fence: Option<(Rev, &[BlobId])>) {
        if let Some((rev, doomed)) = fence {
            params.push(Box::new(rev_param(rev)));
            params.push(Box::new(self.inner.delete_grace_secs()));
            params.push(Box::new(blob_names(doomed)));
        }
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
            Box::new(row.created_at),
            Box::new(row.terms),
        ])
    }

    /// [`PgRepository::write`] with `settled` taken off this process's
    /// reservation in the same statement (`sql` is a `_SETTLED` one);
    /// `plain` when there is nothing to settle or no ledger to settle in.
    fn write_settled(
        &self,
        (sql, plain): (&'static str, &'static str),
        (key, fence): (&str, Option<(Rev, &[BlobId])>),
        object: &Object,
        settled: Settled,
    ) -> StorageResult<Option<Rev>> {
        let Some(process) = self.inner.process.get().filter(|_| settled.bytes > 0) else {
            return self.write(plain, key, object, fence);
        };
        let mut params = Self::params(key, object)?;
        self.push_fence(&mut params, fence);
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
        let written = first_rev(&self.query(sql, params)?);
        if written.is_some() {
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
        (now, grace_secs): (Timestamp, f64),
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
        let removed: Vec<&String> = dead.keys().collect();
        tx.execute("DELETE FROM store_objects WHERE key = ANY($1)", &[&removed])
            .await
            .map_err(db_error)?;
        // Their bytes join the deletion queue in the same transaction.
        let blobs: Vec<String> = dead
            .values()
            .flat_map(|o| o.blobs().into_iter().map(|b| b.0.clone()))
            .collect();
        tx.execute(
            "INSERT INTO store_doomed (blob, due_at)
             SELECT b, now() + make_interval(secs => $1) FROM unnest($2::text[]) AS b
             ON CONFLICT (blob) DO NOTHING",
            &[&grace_secs, &blobs],
        )
        .await
        .map_err(db_error)?;
        tx.commit().await.map_err(db_error)?;
        Ok(keys.iter().map(|k| dead.remove(k)).collect())
    }
}

impl Repository for PgRepository {
    fn get(&self, key: &str) -> StorageResult<Option<Object>> {
        let rows = self.query(GET, vec![Box::new(key.to_string())])?;
        rows.first().map(|r| decode(key, r.get(0))).transpose()
    }

    /// The same statement, awaited on the caller's runtime; `None` off
    /// any tokio runtime (a plain thread), whose caller reads with `get`.
    fn get_async(&self, key: &str) -> Option<AsyncGet> {
        tokio::runtime::Handle::try_current().ok()?;
        let inner = Arc::clone(&self.inner);
        let key = key.to_string();
        Some(Box::pin(async move {
            let rows = inner.query_here(GET, vec![Box::new(key.clone())]).await?;
            rows.first().map(|r| decode(&key, r.get(0))).transpose()
        }))
    }

    fn load(&self, key: &str) -> StorageResult<Option<(Object, Rev)>> {
        let rows = self.query(
            "SELECT body::text, rev FROM store_objects WHERE key = $1",
            vec![Box::new(key.to_string())],
        )?;
        rows.first()
            .map(|r| Ok((decode(key, r.get(0))?, Rev(r.get::<_, i64>(1) as u64))))
            .transpose()
    }

    fn insert_new(&self, key: &str, object: &Object) -> StorageResult<bool> {
        Ok(self.write(INSERT_NEW, key, object, None)?.is_some())
    }

    fn replace(
        &self,
        key: &str,
        rev: Rev,
        object: &Object,
        doomed: &[BlobId],
    ) -> StorageResult<Rev> {
        self.write(REPLACE, key, object, Some((rev, doomed)))?
            .ok_or_else(|| StorageError::conflict(key))
    }

    fn insert_new_settled(
        &self,
        key: &str,
        object: &Object,
        settled: Settled,
    ) -> StorageResult<bool> {
        let sql = (INSERT_NEW_SETTLED, INSERT_NEW);
        Ok(self
            .write_settled(sql, (key, None), object, settled)?
            .is_some())
    }

    fn replace_settled(
        &self,
        (key, rev): (&str, Rev),
        object: &Object,
        doomed: &[BlobId],
        settled: Settled,
    ) -> StorageResult<Rev> {
        let sql = (REPLACE_SETTLED, REPLACE);
        self.write_settled(sql, (key, Some((rev, doomed))), object, settled)?
            .ok_or_else(|| StorageError::conflict(key))
    }

    fn remove_at(&self, key: &str, rev: Rev, doomed: &[BlobId]) -> StorageResult<()> {
        let rows = self.query(
            REMOVE_AT,
            vec![
                Box::new(key.to_string()),
                Box::new(rev_param(rev)),
                Box::new(self.inner.delete_grace_secs()),
                Box::new(blob_names(doomed)),
            ],
        )?;
        if rows.is_empty() {
            return Err(StorageError::conflict(key));
        }
        Ok(())
    }

    fn remove_dead_many(
        &self,
        keys: &[String],
        now: Timestamp,
    ) -> StorageResult<Vec<Option<Object>>> {
        let pool = self.inner.queries.clone();
        let keys = keys.to_vec();
        let at = (now, self.inner.delete_grace_secs());
        self.inner.bridge.run(async move {
            let mut client = pool.get().await.map_err(pool_error)?;
            let deadline = 2 * crate::STATEMENT_DEADLINE;
            let answer =
                tokio::time::timeout(deadline, Self::remove_dead_claimed(&mut client, keys, at))
                    .await;
            answer.unwrap_or_else(|_| Err(crate::gave_up(client, deadline)))
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

    fn searched(
        &self,
        term: &str,
        after: Option<&AdminCursor>,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        let mut cursor = after.cloned();
        loop {
            // Past the cursor in the pages' order (newest first, then by
            // key); a first page starts past every row.
            let (at, key) = cursor.as_ref().map_or((i64::MAX, String::new()), |c| {
                (c.created_at.as_millis(), c.key.clone())
            });
            let rows = self.query(
                "SELECT key, body::text, created_at FROM store_objects
                 WHERE terms @> ARRAY[$1::text]
                   AND (created_at < $2 OR (created_at = $2 AND key > $3))
                 ORDER BY created_at DESC, key LIMIT $4",
                vec![
                    Box::new(term.to_string()),
                    Box::new(at),
                    Box::new(key),
                    Box::new(PAGE_ROWS),
                ],
            )?;
            for row in &rows {
                let key: &str = row.get(0);
                if visit(key, &decode(key, row.get(1))?).is_break() {
                    return Ok(());
                }
            }
            match rows.last() {
                Some(last) if rows.len() as i64 == PAGE_ROWS => {
                    cursor = Some(AdminCursor {
                        created_at: Timestamp::from_millis(last.get(2)),
                        key: last.get(0),
                    });
                }
                _ => return Ok(()),
            }
        }
    }

    fn block(&self, block: &Block, event: Option<&Event>) -> StorageResult<()> {
        let body = serde_json::to_string(block).map_err(StorageError::new)?;
        let mut params: Params = vec![
            Box::new(block.sha256.hex()),
            Box::new(body),
            Box::new(block.blocked_at.as_millis()),
        ];
        push_event(&mut params, event)?;
        self.query(
            "WITH w AS (INSERT INTO store_blocked (sha256, body, blocked_at)
                 VALUES ($1, $2::text::jsonb, $3)
                 ON CONFLICT (sha256) DO UPDATE SET body = excluded.body, blocked_at = excluded.blocked_at),
             e AS (INSERT INTO store_outbox (key, type, at, body, next_at)
                 SELECT $4::text, $5::text, $6::bigint, $7::text::jsonb, $6::bigint
                 WHERE $4::text IS NOT NULL AND (SELECT events FROM store_outbox_state))
             SELECT 1",
            params,
        )
        .map(drop)
    }

    fn blocked(&self, digests: &[Sha256]) -> StorageResult<Option<Block>> {
        if digests.is_empty() {
            return Ok(None);
        }
        let hexes: Vec<String> = digests.iter().map(Sha256::hex).collect();
        let rows = self.query(
            "SELECT body::text FROM store_blocked WHERE sha256 = ANY($1) LIMIT 1",
            vec![Box::new(hexes)],
        )?;
        rows.first().map(|r| decode_block(r.get(0))).transpose()
    }

    fn report(&self, report: &Report, event: Option<&Event>) -> StorageResult<()> {
        let body = serde_json::to_string(report).map_err(StorageError::new)?;
        let mut params: Params = vec![
            Box::new(report.id.clone()),
            Box::new(report.reported_at.as_millis()),
            Box::new(body),
        ];
        push_event(&mut params, event)?;
        self.query(
            "WITH w AS (INSERT INTO store_reports (id, reported_at, body)
                 VALUES ($1, $2, $3::text::jsonb) ON CONFLICT (id) DO NOTHING),
             e AS (INSERT INTO store_outbox (key, type, at, body, next_at)
                 SELECT $4::text, $5::text, $6::bigint, $7::text::jsonb, $6::bigint
                 WHERE $4::text IS NOT NULL AND (SELECT events FROM store_outbox_state))
             SELECT 1",
            params,
        )
        .map(drop)
    }

    fn reports(&self, limit: usize) -> StorageResult<Vec<Report>> {
        let rows = self.query(
            "SELECT body::text FROM store_reports ORDER BY reported_at, id LIMIT $1",
            vec![Box::new(to_i64(limit as u64))],
        )?;
        rows.iter()
            .map(|r| {
                serde_json::from_str(r.get(0)).map_err(|e| {
                    StorageError::of(StorageErrorKind::Corrupt, format!("corrupt report: {e}"))
                })
            })
            .collect()
    }

    fn clear_report(&self, id: &str) -> StorageResult<bool> {
        let rows = self.query(
            "DELETE FROM store_reports WHERE id = $1 RETURNING 1",
            vec![Box::new(id.to_string())],
        )?;
        Ok(!rows.is_empty())
    }

    fn keep_events(&self, on: bool) {
        // The switch is the store's, read by the trigger that writes the
        // events of records: every server of a store sets it alike.
        if let Err(e) = self.query(
            "UPDATE store_outbox_state SET events = $1",
            vec![Box::new(on)],
        ) {
            tracing::error!(error = %e, "could not set whether webhook events are kept");
        }
    }

    fn claim_events(
        &self,
        now: Timestamp,
        lease_ms: u64,
        limit: usize,
    ) -> StorageResult<Vec<Claimed>> {
        let rows = self.query(
            "WITH c AS (
                 SELECT seq FROM store_outbox o
                 WHERE next_at <= $1 AND claimed_until <= $1
                   AND NOT EXISTS (SELECT 1 FROM store_outbox e WHERE e.key = o.key AND e.seq < o.seq)
                 ORDER BY seq LIMIT $3
                 FOR UPDATE SKIP LOCKED)
             UPDATE store_outbox o SET claimed_until = $2 FROM c WHERE o.seq = c.seq
             RETURNING o.seq, o.key, o.type, o.at, o.body::text, o.attempts",
            vec![
                Box::new(now.as_millis()),
                Box::new(Timestamp::from_millis(now.as_millis() + lease_ms as i64).as_millis()),
                Box::new(to_i64(limit as u64)),
            ],
        )?;
        let mut claimed: Vec<Claimed> =
            rows.iter().map(claimed_of).collect::<StorageResult<_>>()?;
        claimed.sort_by_key(|c| c.seq);
        Ok(claimed)
    }

    fn event_delivered(&self, seq: u64) -> StorageResult<()> {
        self.query(
            "DELETE FROM store_outbox WHERE seq = $1",
            vec![Box::new(to_i64(seq))],
        )
        .map(drop)
    }

    fn event_failed(&self, seq: u64, next: Option<Timestamp>) -> StorageResult<()> {
        let Some(next) = next else {
            return self.event_delivered(seq);
        };
        self.query(
            "UPDATE store_outbox SET attempts = attempts + 1, next_at = $2, claimed_until = 0
             WHERE seq = $1",
            vec![Box::new(to_i64(seq)), Box::new(next.as_millis())],
        )
        .map(drop)
    }

    fn blocks(&self) -> StorageResult<Vec<Block>> {
        let rows = self.query(
            "SELECT body::text FROM store_blocked ORDER BY blocked_at DESC, sha256",
            vec![],
        )?;
        rows.iter().map(|r| decode_block(r.get(0))).collect()
    }

    fn ping(&self) -> StorageResult<()> {
        self.query("SELECT 1", vec![]).map(drop)
    }

    fn queues_deletes(&self) -> bool {
        true
    }

    fn delete_grace(&self) -> std::time::Duration {
        self.inner.delete_grace()
    }

    fn deletes_due(&self, limit: usize) -> StorageResult<Vec<BlobId>> {
        let rows = self.query(
            "UPDATE store_doomed SET due_at = now() + make_interval(secs => $2),
                 attempts = attempts + 1
             WHERE blob IN (SELECT blob FROM store_doomed WHERE due_at <= now()
                            ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
             RETURNING blob",
            vec![Box::new(to_i64(limit as u64)), Box::new(DELETE_CLAIM_SECS)],
        )?;
        Ok(rows.iter().map(|r| BlobId(r.get(0))).collect())
    }

    fn deletes_done(&self, blobs: &[BlobId]) -> StorageResult<()> {
        if blobs.is_empty() {
            return Ok(());
        }
        self.query(
            "DELETE FROM store_doomed WHERE blob = ANY($1)",
            vec![Box::new(blob_names(blobs))],
        )
        .map(drop)
    }

    fn deletes_failed(&self, blobs: &[BlobId]) -> StorageResult<()> {
        if blobs.is_empty() {
            return Ok(());
        }
        self.query(
            "UPDATE store_doomed
             SET due_at = now() + make_interval(secs => least(attempts * $2::float8, $3::float8))
             WHERE blob = ANY($1)",
            vec![
                Box::new(blob_names(blobs)),
                Box::new(DELETE_RETRY_STEP_SECS),
                Box::new(DELETE_CLAIM_SECS),
            ],
        )
        .map(drop)
    }

    fn keeps_intents(&self) -> bool {
        true
    }

    fn intend(&self, blob: &BlobId, until: Timestamp) -> StorageResult<()> {
        self.query(
            "INSERT INTO store_intents (blob, until_ms) VALUES ($1, $2)
             ON CONFLICT (blob) DO UPDATE
             SET until_ms = greatest(store_intents.until_ms, EXCLUDED.until_ms)",
            vec![Box::new(blob.0.clone()), Box::new(until.as_millis())],
        )
        .map(drop)
    }

    fn intended(&self, now: Timestamp) -> StorageResult<Vec<BlobId>> {
        let rows = self.query(
            "SELECT blob FROM store_intents WHERE until_ms > $1",
            vec![Box::new(now.as_millis())],
        )?;
        Ok(rows.iter().map(|r| BlobId(r.get(0))).collect())
    }

    fn forget_intents(&self, now: Timestamp, limit: usize) -> StorageResult<usize> {
        let rows = self.query(
            "DELETE FROM store_intents WHERE blob IN (
                 SELECT blob FROM store_intents WHERE until_ms <= $1
                 LIMIT $2 FOR UPDATE SKIP LOCKED)
             RETURNING 1",
            vec![Box::new(now.as_millis()), Box::new(to_i64(limit as u64))],
        )?;
        Ok(rows.len())
    }

    fn is_queued(&self, blob: &BlobId) -> StorageResult<bool> {
        let rows = self.query(
            "SELECT 1 FROM store_doomed WHERE blob = $1",
            vec![Box::new(blob.0.clone())],
        )?;
        Ok(!rows.is_empty())
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
