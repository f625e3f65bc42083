use std::ops::ControlFlow;
use std::path::Path;

use sled::transaction::{ConflictableTransactionError, TransactionError, TransactionalTree};
use sled::Transactional;
use store_core::ports::{Repository, StorageResult};
use store_core::{Object, StorageError, Timestamp};

use crate::group::GroupCommit;

/// Records in sled. Three trees:
/// - `objects`: key -> record as JSON (readable with any sled tool, and
///   tolerant of added fields);
/// - `expiry`: (expires_at, key) -> (), the order the sweeper and eviction
///   walk; retained objects have no entry;
/// - `tags`: (tag, 0, key) -> ().
#[derive(Debug, Clone)]
pub struct SledRepository {
    db: sled::Db,
    objects: sled::Tree,
    expiry: sled::Tree,
    tags: sled::Tree,
    /// Shares flushes between concurrent writers (see [`GroupCommit`]).
    group: std::sync::Arc<GroupCommit>,
}

fn storage(e: impl std::fmt::Display) -> StorageError {
    StorageError::new(e)
}

/// sled's own errors, with a full disk told apart from other faults.
fn sled_error(e: sled::Error) -> StorageError {
    match &e {
        sled::Error::Io(io) => StorageError::from_io("database", io),
        _ => StorageError::new(e),
    }
}

/// Big-endian with the sign bit flipped, so that byte order is time order
/// even for instants before 1970.
fn expiry_key(at: Timestamp, key: &str) -> Vec<u8> {
    let mut k = ((at.as_millis() as u64) ^ (1 << 63)).to_be_bytes().to_vec();
    k.extend_from_slice(key.as_bytes());
    k
}

fn decode_expiry_key(k: &[u8]) -> StorageResult<(Timestamp, String)> {
    if k.len() < 8 {
        return Err(storage("corrupt expiry index entry"));
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&k[..8]);
    let at = Timestamp::from_millis((u64::from_be_bytes(raw) ^ (1 << 63)) as i64);
    let key = String::from_utf8(k[8..].to_vec()).map_err(storage)?;
    Ok((at, key))
}

/// Tags are `[a-z0-9-]`, so a 0 byte cannot occur in one and separates
/// the tag from the key unambiguously.
fn tag_key(tag: &str, key: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(tag.len() + 1 + key.len());
    k.extend_from_slice(tag.as_bytes());
    k.push(0);
    k.extend_from_slice(key.as_bytes());
    k
}

fn decode(bytes: &[u8]) -> StorageResult<Object> {
    serde_json::from_slice(bytes).map_err(|e| storage(format!("corrupt record: {e}")))
}

fn encode(obj: &Object) -> StorageResult<Vec<u8>> {
    serde_json::to_vec(obj).map_err(storage)
}

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

fn tx_unindex(
    e: &TransactionalTree,
    t: &TransactionalTree,
    key: &str,
    old: &Object,
) -> TxResult<()> {
    if let Some(at) = old.lifetime().expires_at() {
        e.remove(expiry_key(at, key))?;
    }
    for tag in old.tags() {
        t.remove(tag_key(tag, key))?;
    }
    Ok(())
}

fn tx_index(e: &TransactionalTree, t: &TransactionalTree, key: &str, new: &Object) -> TxResult<()> {
    if let Some(at) = new.lifetime().expires_at() {
        e.insert(expiry_key(at, key), &[])?;
    }
    for tag in new.tags() {
        t.insert(tag_key(tag, key), &[])?;
    }
    Ok(())
}

fn tx_decode(bytes: &[u8]) -> TxResult<Object> {
    decode(bytes).map_err(ConflictableTransactionError::Abort)
}

fn flatten<T>(r: Result<T, TransactionError<StorageError>>) -> StorageResult<T> {
    r.map_err(|e| match e {
        TransactionError::Abort(e) => e,
        TransactionError::Storage(e) => sled_error(e),
    })
}

/// sled's page cache. Its default is 1 GiB, which a store of a million
/// records would grow into; 64 MiB holds the hot records and the indexes'
/// upper levels, and keeps the whole server well under its 300 MB budget
/// (docs/PERFORMANCE.md, scenario 6).
const CACHE_BYTES: u64 = 64 * 1024 * 1024;

impl SledRepository {
    /// Opens (or creates) the database under `dir/db`.
    pub fn open(dir: &Path) -> StorageResult<Self> {
        let db = sled::Config::new()
            .path(dir.join("db"))
            .cache_capacity(CACHE_BYTES)
            .open()
            .map_err(|e| {
                storage(format!(
                    "cannot open the database in {}: {e}",
                    dir.display()
                ))
            })?;
        Ok(Self {
            objects: db.open_tree("objects").map_err(storage)?,
            expiry: db.open_tree("expiry").map_err(storage)?,
            tags: db.open_tree("tags").map_err(storage)?,
            db,
            group: std::sync::Arc::default(),
        })
    }

    /// Makes every committed change durable. The server calls it once more
    /// at shutdown.
    pub fn flush(&self) -> StorageResult<()> {
        self.db.flush().map(|_| ()).map_err(sled_error)
    }

    /// Makes the caller's applied change durable before returning, sharing
    /// one flush with every writer that is waiting at the same time.
    fn durable(&self) -> StorageResult<()> {
        self.group.commit(|| self.flush())
    }

    /// Bulk load of new keys, for tools and benchmarks: writes records
    /// and their index entries in batches of 10,000 and flushes once at the
    /// end. Answers how many were written. Not for serving: it assumes the
    /// keys are new (old index entries are not removed), and nothing is
    /// durable until it returns.
    pub fn load(
        &self,
        records: impl IntoIterator<Item = (String, Object)>,
    ) -> StorageResult<usize> {
        let mut n = 0;
        let mut iter = records.into_iter().peekable();
        while iter.peek().is_some() {
            let (mut o, mut e, mut t) = (
                sled::Batch::default(),
                sled::Batch::default(),
                sled::Batch::default(),
            );
            for (key, object) in iter.by_ref().take(10_000) {
                o.insert(key.as_bytes(), encode(&object)?);
                if let Some(at) = object.lifetime().expires_at() {
                    e.insert(expiry_key(at, &key), &[]);
                }
                for tag in object.tags() {
                    t.insert(tag_key(tag, &key), &[]);
                }
                n += 1;
            }
            self.objects.apply_batch(o).map_err(sled_error)?;
            self.expiry.apply_batch(e).map_err(sled_error)?;
            self.tags.apply_batch(t).map_err(sled_error)?;
        }
        self.flush()?;
        Ok(n)
    }

    /// One transaction removing a record and its index entries.
    fn remove_unflushed(&self, key: &str) -> StorageResult<Option<Object>> {
        let old = flatten(self.trees().transaction(|(o, e, t)| {
            let Some(old) = o.remove(key)? else {
                return Ok(None);
            };
            let old = tx_decode(&old)?;
            tx_unindex(e, t, key, &old)?;
            Ok(Some(old))
        }))?;
        Ok(old)
    }

    /// How many flushes served the changes so far (fewer than the changes
    /// when writers overlapped).
    pub fn flushes(&self) -> u64 {
        self.group.flushes()
    }

    fn trees(&self) -> (&sled::Tree, &sled::Tree, &sled::Tree) {
        (&self.objects, &self.expiry, &self.tags)
    }
}

impl Repository for SledRepository {
    fn get(&self, key: &str) -> StorageResult<Option<Object>> {
        self.objects
            .get(key)
            .map_err(storage)?
            .map(|v| decode(&v))
            .transpose()
    }

    fn insert_new(&self, key: &str, object: &Object) -> StorageResult<bool> {
        let bytes = encode(object)?;
        let inserted = flatten(self.trees().transaction(|(o, e, t)| {
            if o.get(key)?.is_some() {
                return Ok(false);
            }
            tx_index(e, t, key, object)?;
            o.insert(key, bytes.as_slice())?;
            Ok(true)
        }))?;
        if inserted {
            self.durable()?;
        }
        Ok(inserted)
    }

    fn put(&self, key: &str, object: &Object) -> StorageResult<()> {
        let bytes = encode(object)?;
        flatten(self.trees().transaction(|(o, e, t)| {
            if let Some(old) = o.insert(key, bytes.as_slice())? {
                tx_unindex(e, t, key, &tx_decode(&old)?)?;
            }
            tx_index(e, t, key, object)?;
            Ok(())
        }))?;
        self.durable()
    }

    fn remove(&self, key: &str) -> StorageResult<Option<Object>> {
        let old = self.remove_unflushed(key)?;
        if old.is_some() {
            self.durable()?;
        }
        Ok(old)
    }

    fn remove_dead(&self, key: &str) -> StorageResult<Option<Object>> {
        // sled's own flusher (every 500 ms) makes it durable soon enough.
        self.remove_unflushed(key)
    }

    fn expiring(&self, limit: usize) -> StorageResult<Vec<(Timestamp, String)>> {
        self.expiry
            .iter()
            .keys()
            .take(limit)
            .map(|k| decode_expiry_key(&k.map_err(storage)?))
            .collect()
    }

    fn keys_with_tag(&self, tag: &str) -> StorageResult<Vec<String>> {
        let prefix = tag_key(tag, "");
        self.tags
            .scan_prefix(&prefix)
            .keys()
            .map(|k| {
                let k = k.map_err(storage)?;
                String::from_utf8(k[prefix.len()..].to_vec()).map_err(storage)
            })
            .collect()
    }

    fn for_each(
        &self,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        for entry in self.objects.iter() {
            let (k, v) = entry.map_err(storage)?;
            let key = std::str::from_utf8(&k).map_err(storage)?;
            if visit(key, &decode(&v)?).is_break() {
                break;
            }
        }
        Ok(())
    }
}
