use std::ops::ControlFlow;
use std::path::Path;

use sled::transaction::{ConflictableTransactionError, TransactionError, TransactionalTree};
use sled::Transactional;
use store_core::digest::Sha256;
use store_core::events::{change_event, event_id, removal, Change, Claimed, Event, EventData};
use store_core::moderation::{AdminCursor, Block, Report};
use store_core::ports::{Repository, Rev, StorageResult};
use store_core::{BlobId, Listing, Object, ObjectKind, StorageError, Timestamp, Totals};

use crate::group::GroupCommit;
use crate::memo::Memo;

/// Records in sled. Nine trees:
/// - `objects`: key -> record as JSON (readable with any sled tool, and
///   tolerant of added fields);
/// - `expiry`: (expires_at, key) -> (), the order the sweeper and eviction
///   walk; retained objects have no entry;
/// - `tags`: (tag, 0, key) -> ();
/// - `listings`: (listing code, key) -> (), what `GET /browse`, `GET /d`
///   and `GET /pics` read ([`Object::listing`]);
/// - `search`: (term, 0, created_at inverted, key) -> (), what the
///   admin's pages read, newest first ([`Object::search_terms`]);
/// - `blocked`: digest -> [`Block`] as JSON, the blocklist;
/// - `reports`: (reported_at, id) -> [`Report`] as JSON, the admin's
///   queue, oldest first;
/// - `outbox`: sequence number -> the webhook event and its deliveries'
///   state (`Queued`), written in the transaction of the change it
///   tells of;
/// - `meta`: `totals` -> the sums over the records ([`Totals`]), changed
///   in the same transaction as the records, so that a restart reads one
///   value instead of every record.
#[derive(Debug, Clone)]
pub struct SledRepository {
    db: sled::Db,
    objects: sled::Tree,
    expiry: sled::Tree,
    tags: sled::Tree,
    listings: sled::Tree,
    search: sled::Tree,
    blocked: sled::Tree,
    reports: sled::Tree,
    outbox: sled::Tree,
    meta: sled::Tree,
    /// Whether record changes put their events in the outbox
    /// ([`Repository::keep_events`]).
    events: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The deliverers' claims on outbox events ([`Leases`]). One process
    /// serves a sled store, so a claim lives in its memory only: writing
    /// it to the tree would cost every event a write (and so every upload
    /// more to flush), and a restart, which forgets the claims, delivers
    /// their events again, as at-least-once allows.
    claims: std::sync::Arc<std::sync::Mutex<Leases>>,
    /// Shares flushes between concurrent writers (see [`GroupCommit`]).
    group: std::sync::Arc<GroupCommit>,
    /// Records already decoded, by the bytes they came from (see
    /// [`Memo`]): what [`Repository::get`] answers most reads with.
    memo: std::sync::Arc<Memo>,
}

fn storage(e: impl std::fmt::Display) -> StorageError {
    StorageError::new(e)
}

fn corrupt(e: impl std::fmt::Display) -> StorageError {
    StorageError::of(store_core::StorageErrorKind::Corrupt, e)
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
        return Err(corrupt("corrupt expiry index entry"));
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

fn listing_key(listing: Listing, key: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + key.len());
    k.push(listing.code());
    k.extend_from_slice(key.as_bytes());
    k
}

/// Instants in an order-keeping byte form, latest first: the sign bit
/// flipped makes an `i64` sort as unsigned, and the complement reverses.
fn newest_first(at: Timestamp) -> [u8; 8] {
    (!((at.as_millis() as u64) ^ (1 << 63))).to_be_bytes()
}

fn search_prefix(term: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(term.len() + 1);
    k.extend_from_slice(term.as_bytes());
    k.push(0);
    k
}

fn search_key(term: &str, at: Timestamp, key: &str) -> Vec<u8> {
    let mut k = search_prefix(term);
    k.extend_from_slice(&newest_first(at));
    k.extend_from_slice(key.as_bytes());
    k
}

/// The wall clock, for the time of an event: sled serves one process,
/// whose clock is the one the use cases read too.
fn wall_now() -> Timestamp {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::from_millis(since.as_millis() as i64)
}

/// Claims on outbox events: sequence number -> until when, and the key of
/// the event's object (so that a claim runs over events in flight without
/// decoding them again).
type Leases = std::collections::HashMap<u64, (Timestamp, String)>;

/// An event in the outbox, with its deliveries' state. (Entries written
/// before claims moved to memory also carry a `claimed_until`, which is
/// ignored.)
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Queued {
    event: Event,
    attempts: u32,
    next_at: Timestamp,
}

/// Puts `event` in the outbox, due at once, inside a transaction.
fn tx_add_event(outbox: &TransactionalTree, event: &Event) -> TxResult<()> {
    let queued = Queued {
        event: event.clone(),
        attempts: 0,
        next_at: event.at,
    };
    let body =
        serde_json::to_vec(&queued).map_err(|e| ConflictableTransactionError::Abort(storage(e)))?;
    let seq = outbox.generate_id()?;
    outbox.insert(&seq.to_be_bytes(), body)?;
    Ok(())
}

/// A report's place in the queue: when it came, then its id.
fn report_key(at: Timestamp, id: &str) -> Vec<u8> {
    let mut k = ((at.as_millis() as u64) ^ (1 << 63)).to_be_bytes().to_vec();
    k.extend_from_slice(id.as_bytes());
    k
}

fn decode(bytes: &[u8]) -> StorageResult<Object> {
    serde_json::from_slice(bytes).map_err(|e| corrupt(format!("corrupt record: {e}")))
}

/// Decodes the record under `key`, naming the key if it cannot be read, so
/// that the operator knows which entry is damaged.
fn decode_at(key: &[u8], bytes: &[u8]) -> StorageResult<Object> {
    decode(bytes).map_err(|e| {
        corrupt(format!(
            "{} (key {:?})",
            e.message,
            String::from_utf8_lossy(key)
        ))
    })
}

fn encode(obj: &Object) -> StorageResult<Vec<u8>> {
    serde_json::to_vec(obj).map_err(storage)
}

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

const TOTALS_KEY: &[u8] = b"totals";

/// Present once the listings index holds every record: databases written
/// before it existed get it built once, at open.
const LISTINGS_KEY: &[u8] = b"listings-v1";

/// Present once the search index holds every record, as
/// [`LISTINGS_KEY`] is for the listings.
const SEARCH_KEY: &[u8] = b"search-v1";

/// Big-endian u64s: objects, pool bytes, pics bytes, then the records of
/// each kind in `ObjectKind::ALL`'s order.
const TOTALS_FIELDS: usize = 3 + ObjectKind::ALL.len();
/// The length of the entry before the counts by kind were kept: such a
/// database gets its totals counted again once, at open.
const TOTALS_V1_BYTES: usize = 24;
/// The length of the entry before resumable uploads were a kind of their
/// own (five kinds): counted again once, at open, too.
const TOTALS_V2_BYTES: usize = (3 + 5) * 8;

fn encode_totals(t: &Totals) -> [u8; TOTALS_FIELDS * 8] {
    let mut out = [0u8; TOTALS_FIELDS * 8];
    let fields = [t.objects, t.pool_bytes, t.pics_bytes]
        .into_iter()
        .chain(t.by_kind);
    for (slot, v) in out.chunks_exact_mut(8).zip(fields) {
        slot.copy_from_slice(&v.to_be_bytes());
    }
    out
}

fn decode_totals(bytes: &[u8]) -> StorageResult<Totals> {
    if bytes.len() != TOTALS_FIELDS * 8 {
        return Err(corrupt("corrupt totals entry"));
    }
    let mut fields = bytes
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap_or_default()));
    let mut next = || fields.next().unwrap_or_default();
    let mut t = Totals {
        objects: next(),
        pool_bytes: next(),
        pics_bytes: next(),
        ..Totals::default()
    };
    t.by_kind = std::array::from_fn(|_| next());
    Ok(t)
}

/// Reads the totals inside a transaction. Transactions in sled run one at
/// a time, so this one hot key costs no conflicts.
fn tx_totals(m: &TransactionalTree) -> TxResult<Totals> {
    match m.get(TOTALS_KEY)? {
        Some(v) => decode_totals(&v).map_err(ConflictableTransactionError::Abort),
        None => Ok(Totals::default()),
    }
}

fn tx_set_totals(m: &TransactionalTree, t: &Totals) -> TxResult<()> {
    m.insert(TOTALS_KEY, &encode_totals(t)[..])?;
    Ok(())
}

/// The index trees inside a transaction.
struct TxIndexes<'a> {
    expiry: &'a TransactionalTree,
    tags: &'a TransactionalTree,
    listings: &'a TransactionalTree,
    search: &'a TransactionalTree,
    /// The outbox, when webhook events are kept.
    outbox: Option<&'a TransactionalTree>,
}

impl TxIndexes<'_> {
    /// Puts the event of a change of `key` (from `old` to `new`) in the
    /// outbox, if events are kept and the change is one.
    fn event(
        &self,
        key: &str,
        (old, new): (Option<&Object>, Option<&Object>),
        how: Change,
    ) -> TxResult<()> {
        let Some(outbox) = self.outbox else {
            return Ok(());
        };
        let Some(kind) = change_event(old, new, how) else {
            return Ok(());
        };
        let object = new.or(old).expect("an event has an object");
        let event = Event::new(kind, wall_now(), EventData::of(key, object));
        tx_add_event(outbox, &event)
    }

    fn unindex(&self, key: &str, old: &Object) -> TxResult<()> {
        if let Some(at) = old.lifetime().expires_at() {
            self.expiry.remove(expiry_key(at, key))?;
        }
        for tag in old.tags() {
            self.tags.remove(tag_key(tag, key))?;
        }
        if let Some(listing) = old.listing() {
            self.listings.remove(listing_key(listing, key))?;
        }
        let at = old.created_at();
        for term in old.search_terms() {
            self.search.remove(search_key(&term, at, key))?;
        }
        Ok(())
    }

    fn index(&self, key: &str, new: &Object) -> TxResult<()> {
        if let Some(at) = new.lifetime().expires_at() {
            self.expiry.insert(expiry_key(at, key), &[])?;
        }
        for tag in new.tags() {
            self.tags.insert(tag_key(tag, key), &[])?;
        }
        if let Some(listing) = new.listing() {
            self.listings.insert(listing_key(listing, key), &[])?;
        }
        let at = new.created_at();
        for term in new.search_terms() {
            self.search.insert(search_key(&term, at, key), &[])?;
        }
        Ok(())
    }
}

/// The revision of a record stored as `bytes`: a hash of them. A record
/// is written whole, so a write that changes it changes its bytes, and a
/// record made again under a removed key has fresh tokens and instants.
/// Equal bytes (a like given and taken back) get the same revision, which
/// the port allows: a write decided on them is still right. Revisions live
/// only in the process that reads them.
fn rev_of(bytes: &[u8]) -> Rev {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Rev(h.finish())
}

/// The stored bytes under `key` inside a transaction, if they are at `rev`;
/// otherwise the transaction is aborted with a conflict.
fn tx_at(o: &TransactionalTree, key: &str, rev: Rev) -> TxResult<sled::IVec> {
    match o.get(key)? {
        Some(raw) if rev_of(&raw) == rev => Ok(raw),
        _ => Err(ConflictableTransactionError::Abort(StorageError::conflict(
            key,
        ))),
    }
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
    ///
    /// A database written before the totals were kept gets them computed
    /// once, here, by reading every record.
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
        let repo = Self {
            objects: db.open_tree("objects").map_err(storage)?,
            expiry: db.open_tree("expiry").map_err(storage)?,
            tags: db.open_tree("tags").map_err(storage)?,
            listings: db.open_tree("listings").map_err(storage)?,
            search: db.open_tree("search").map_err(storage)?,
            blocked: db.open_tree("blocked").map_err(storage)?,
            reports: db.open_tree("reports").map_err(storage)?,
            outbox: db.open_tree("outbox").map_err(storage)?,
            events: std::sync::Arc::default(),
            claims: std::sync::Arc::default(),
            meta: db.open_tree("meta").map_err(storage)?,
            db,
            group: std::sync::Arc::default(),
            memo: std::sync::Arc::default(),
        };
        let kept = repo.meta.get(TOTALS_KEY).map_err(sled_error)?;
        if kept.is_none_or(|v| [TOTALS_V1_BYTES, TOTALS_V2_BYTES].contains(&v.len())) {
            let totals = store_core::ports::Repository::totals_by_scan(&repo)?;
            repo.meta
                .insert(TOTALS_KEY, &encode_totals(&totals)[..])
                .map_err(sled_error)?;
            repo.flush()?;
        }
        if repo.meta.get(LISTINGS_KEY).map_err(sled_error)?.is_none() {
            repo.build_listings()?;
        }
        if repo.meta.get(SEARCH_KEY).map_err(sled_error)?.is_none() {
            repo.build_search()?;
        }
        Ok(repo)
    }

    /// Opens the database under `dir/db` once more and closes it, waiting
    /// up to `patience` for the previous handles' file lock to go.
    ///
    /// sled writes the snapshot of its page table only while opening, and
    /// replays every change logged since the last snapshot at the next
    /// open: about 4 s for a million records written since the server
    /// started (docs/PERFORMANCE.md, scenario 9). Folding the log at a
    /// clean shutdown moves that work out of the next start, which then
    /// reads the snapshot alone. Call it once every handle is dropped.
    pub fn fold_log(dir: &Path, patience: std::time::Duration) -> StorageResult<()> {
        let deadline = std::time::Instant::now() + patience;
        loop {
            match Self::open(dir) {
                Ok(repo) => return repo.flush(),
                // sled's flusher thread may hold the lock for a moment after
                // the last handle went; past the deadline, a handle is
                // still alive somewhere and the next start will replay.
                Err(e) if std::time::Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
    }

    /// Makes every committed change durable. The server calls it once more
    /// at shutdown.
    pub fn flush(&self) -> StorageResult<()> {
        self.db.flush().map(|_| ()).map_err(sled_error)
    }

    /// Drops a deliverer's claim on event `seq`, once its outcome is
    /// recorded.
    fn release(&self, seq: u64) {
        let mut leases = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        leases.remove(&seq);
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
    pub fn bulk_load(
        &self,
        records: impl IntoIterator<Item = (String, Object)>,
    ) -> StorageResult<usize> {
        let mut n = 0;
        let mut added = Totals::default();
        let mut iter = records.into_iter().peekable();
        while iter.peek().is_some() {
            let [mut o, mut e, mut t, mut l, mut s]: [sled::Batch; 5] = Default::default();
            for (key, object) in iter.by_ref().take(10_000) {
                o.insert(key.as_bytes(), encode(&object)?);
                if let Some(at) = object.lifetime().expires_at() {
                    e.insert(expiry_key(at, &key), &[]);
                }
                for tag in object.tags() {
                    t.insert(tag_key(tag, &key), &[]);
                }
                if let Some(listing) = object.listing() {
                    l.insert(listing_key(listing, &key), &[]);
                }
                for term in object.search_terms() {
                    s.insert(search_key(&term, object.created_at(), &key), &[]);
                }
                added.add(&object);
                n += 1;
            }
            self.objects.apply_batch(o).map_err(sled_error)?;
            self.expiry.apply_batch(e).map_err(sled_error)?;
            self.tags.apply_batch(t).map_err(sled_error)?;
            self.listings.apply_batch(l).map_err(sled_error)?;
            self.search.apply_batch(s).map_err(sled_error)?;
        }
        let mut totals = self.totals_stored()?;
        totals.add_all(&added);
        self.meta
            .insert(TOTALS_KEY, &encode_totals(&totals)[..])
            .map_err(sled_error)?;
        self.flush()?;
        Ok(n)
    }

    /// One transaction removing records and their index entries: every
    /// record of `keys`, or with `dead_at`, only those past their lifetime
    /// then (the others are put back untouched).
    fn remove_unflushed(
        &self,
        keys: &[&str],
        dead_at: Option<Timestamp>,
    ) -> StorageResult<Vec<Option<Object>>> {
        flatten(self.trees().transaction(|(o, e, t, l, s, x, m)| {
            let ix = TxIndexes {
                expiry: e,
                tags: t,
                listings: l,
                search: s,
                outbox: self.events_on().then_some(x),
            };
            let mut totals = tx_totals(m)?;
            let mut removed = Vec::with_capacity(keys.len());
            for key in keys {
                let Some(raw) = o.get(*key)? else {
                    removed.push(None);
                    continue;
                };
                let old = tx_decode(&raw)?;
                if dead_at.is_some_and(|now| old.lifetime().is_live(now)) {
                    removed.push(None);
                    continue;
                }
                o.remove(*key)?;
                ix.unindex(key, &old)?;
                let how = removal(&old, dead_at.unwrap_or_else(wall_now));
                ix.event(key, (Some(&old), None), how)?;
                totals.remove(&old);
                removed.push(Some(old));
            }
            tx_set_totals(m, &totals)?;
            Ok(removed)
        }))
    }

    fn totals_stored(&self) -> StorageResult<Totals> {
        match self.meta.get(TOTALS_KEY).map_err(sled_error)? {
            Some(v) => decode_totals(&v),
            None => Ok(Totals::default()),
        }
    }

    /// How many flushes served the changes so far (fewer than the changes
    /// when writers overlapped).
    pub fn flushes(&self) -> u64 {
        self.group.flushes()
    }

    /// How many changes waited for a flush (see [`GroupCommit::commits`]).
    pub fn commits(&self) -> u64 {
        self.group.commits()
    }

    /// The trees every record change touches, in the order the
    /// transactions take them.
    fn trees(
        &self,
    ) -> (
        &sled::Tree,
        &sled::Tree,
        &sled::Tree,
        &sled::Tree,
        &sled::Tree,
        &sled::Tree,
        &sled::Tree,
    ) {
        (
            &self.objects,
            &self.expiry,
            &self.tags,
            &self.listings,
            &self.search,
            &self.outbox,
            &self.meta,
        )
    }

    /// Builds the listings index from every record, once, for a database
    /// written before it existed, and marks it built.
    fn build_listings(&self) -> StorageResult<()> {
        let mut batch = sled::Batch::default();
        for entry in self.objects.iter() {
            let (k, v) = entry.map_err(storage)?;
            let key = std::str::from_utf8(&k).map_err(corrupt)?;
            if let Some(listing) = decode_at(&k, &v)?.listing() {
                batch.insert(listing_key(listing, key), &[]);
            }
        }
        self.listings.apply_batch(batch).map_err(sled_error)?;
        self.meta.insert(LISTINGS_KEY, &[]).map_err(sled_error)?;
        self.flush()
    }

    /// Whether record changes put their events in the outbox.
    fn events_on(&self) -> bool {
        self.events.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Runs `write` on `tree` in one transaction with `event` put in the
    /// outbox (when events are kept), then makes it durable.
    fn with_event(
        &self,
        (tree, event): (&sled::Tree, Option<&Event>),
        write: impl Fn(&TransactionalTree) -> TxResult<()>,
    ) -> StorageResult<()> {
        let event = event.filter(|_| self.events_on());
        flatten((tree, &self.outbox).transaction(|(t, x)| {
            write(t)?;
            if let Some(event) = event {
                tx_add_event(x, event)?;
            }
            Ok(())
        }))?;
        self.durable()
    }

    /// Builds the search index from every record, once, as
    /// [`SledRepository::build_listings`] does the listings.
    fn build_search(&self) -> StorageResult<()> {
        let mut batch = sled::Batch::default();
        for entry in self.objects.iter() {
            let (k, v) = entry.map_err(storage)?;
            let key = std::str::from_utf8(&k).map_err(corrupt)?;
            let object = decode_at(&k, &v)?;
            for term in object.search_terms() {
                batch.insert(search_key(&term, object.created_at(), key), &[]);
            }
        }
        self.search.apply_batch(batch).map_err(sled_error)?;
        self.meta.insert(SEARCH_KEY, &[]).map_err(sled_error)?;
        self.flush()
    }
}

impl Repository for SledRepository {
    fn get(&self, key: &str) -> StorageResult<Option<Object>> {
        self.objects
            .get(key)
            .map_err(storage)?
            .map(|v| {
                self.memo
                    .decode(key.as_bytes(), v, |v| decode_at(key.as_bytes(), v))
            })
            .transpose()
    }

    fn insert_new(&self, key: &str, object: &Object) -> StorageResult<bool> {
        let bytes = encode(object)?;
        let inserted = flatten(self.trees().transaction(|(o, e, t, l, s, x, m)| {
            let ix = TxIndexes {
                expiry: e,
                tags: t,
                listings: l,
                search: s,
                outbox: self.events_on().then_some(x),
            };
            if o.get(key)?.is_some() {
                return Ok(false);
            }
            ix.index(key, object)?;
            ix.event(key, (None, Some(object)), Change::Written)?;
            o.insert(key, bytes.as_slice())?;
            let mut totals = tx_totals(m)?;
            totals.add(object);
            tx_set_totals(m, &totals)?;
            Ok(true)
        }))?;
        if inserted {
            self.durable()?;
        }
        Ok(inserted)
    }

    fn load(&self, key: &str) -> StorageResult<Option<(Object, Rev)>> {
        let Some(raw) = self.objects.get(key).map_err(storage)? else {
            return Ok(None);
        };
        let rev = rev_of(&raw);
        let object = self
            .memo
            .decode(key.as_bytes(), raw, |v| decode_at(key.as_bytes(), v))?;
        Ok(Some((object, rev)))
    }

    fn replace(
        &self,
        key: &str,
        rev: Rev,
        object: &Object,
        _doomed: &[BlobId],
    ) -> StorageResult<Rev> {
        let bytes = encode(object)?;
        flatten(self.trees().transaction(|(o, e, t, l, s, x, m)| {
            let ix = TxIndexes {
                expiry: e,
                tags: t,
                listings: l,
                search: s,
                outbox: self.events_on().then_some(x),
            };
            let old = tx_decode(&tx_at(o, key, rev)?)?;
            let mut totals = tx_totals(m)?;
            o.insert(key, bytes.as_slice())?;
            ix.unindex(key, &old)?;
            totals.replace(&old, object);
            ix.index(key, object)?;
            ix.event(key, (Some(&old), Some(object)), Change::Written)?;
            tx_set_totals(m, &totals)?;
            Ok(())
        }))?;
        self.durable()?;
        Ok(rev_of(&bytes))
    }

    fn remove_at(&self, key: &str, rev: Rev, _doomed: &[BlobId]) -> StorageResult<()> {
        flatten(self.trees().transaction(|(o, e, t, l, s, x, m)| {
            let ix = TxIndexes {
                expiry: e,
                tags: t,
                listings: l,
                search: s,
                outbox: self.events_on().then_some(x),
            };
            let old = tx_decode(&tx_at(o, key, rev)?)?;
            o.remove(key)?;
            ix.unindex(key, &old)?;
            ix.event(key, (Some(&old), None), removal(&old, wall_now()))?;
            let mut totals = tx_totals(m)?;
            totals.remove(&old);
            tx_set_totals(m, &totals)
        }))?;
        self.durable()
    }

    fn remove(&self, key: &str) -> StorageResult<Option<Object>> {
        let old = self.remove_unflushed(&[key], None)?.pop().flatten();
        if old.is_some() {
            self.durable()?;
        }
        Ok(old)
    }

    fn remove_dead(&self, key: &str) -> StorageResult<Option<Object>> {
        // sled's own flusher (every 500 ms) makes it durable soon enough.
        Ok(self.remove_unflushed(&[key], None)?.pop().flatten())
    }

    fn remove_dead_many(
        &self,
        keys: &[String],
        now: Timestamp,
    ) -> StorageResult<Vec<Option<Object>>> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        self.remove_unflushed(&keys, Some(now))
    }

    fn totals(&self) -> StorageResult<Totals> {
        self.totals_stored()
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

    fn listed(
        &self,
        listing: Listing,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        let prefix = [listing.code()];
        for entry in self.listings.scan_prefix(prefix).keys() {
            let k = entry.map_err(storage)?;
            let key = std::str::from_utf8(&k[1..]).map_err(corrupt)?;
            // The record went between the index read and this one: the
            // index entry went with it, so there is nothing to list.
            let Some(object) = self.get(key)? else {
                continue;
            };
            if visit(key, &object).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn searched(
        &self,
        term: &str,
        after: Option<&AdminCursor>,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        let prefix = search_prefix(term);
        let start = match after {
            // Just past the cursor's own entry: its key with a byte added.
            Some(c) => {
                let mut k = search_key(term, c.created_at, &c.key);
                k.push(0);
                k
            }
            None => prefix.clone(),
        };
        for entry in self.search.range(start..).keys() {
            let k = entry.map_err(storage)?;
            if !k.starts_with(&prefix) {
                break;
            }
            let key = std::str::from_utf8(&k[prefix.len() + 8..]).map_err(corrupt)?;
            // Gone between the index read and this one: nothing to list.
            let Some(object) = self.get(key)? else {
                continue;
            };
            if visit(key, &object).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn block(&self, block: &Block, event: Option<&Event>) -> StorageResult<()> {
        let body = serde_json::to_vec(block).map_err(storage)?;
        self.with_event((&self.blocked, event), |tree| {
            tree.insert(&block.sha256.0, body.as_slice())?;
            Ok(())
        })
    }

    fn blocked(&self, digests: &[Sha256]) -> StorageResult<Option<Block>> {
        for d in digests {
            if let Some(v) = self.blocked.get(d.0).map_err(storage)? {
                return serde_json::from_slice(&v).map(Some).map_err(corrupt);
            }
        }
        Ok(None)
    }

    fn report(&self, report: &Report, event: Option<&Event>) -> StorageResult<()> {
        let body = serde_json::to_vec(report).map_err(storage)?;
        let key = report_key(report.reported_at, &report.id);
        self.with_event((&self.reports, event), |tree| {
            tree.insert(key.as_slice(), body.as_slice())?;
            Ok(())
        })
    }

    fn reports(&self, limit: usize) -> StorageResult<Vec<Report>> {
        self.reports
            .iter()
            .values()
            .take(limit)
            .map(|v| serde_json::from_slice(&v.map_err(storage)?).map_err(corrupt))
            .collect()
    }

    fn clear_report(&self, id: &str) -> StorageResult<bool> {
        // The queue is keyed by time first; a clear finds its entry by the
        // id at the key's end (the queue is the admin's, and short).
        let found = self.reports.iter().keys().find_map(|k| match k {
            Ok(k) if k.ends_with(id.as_bytes()) && k.len() == 8 + id.len() => Some(Ok(k)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        });
        let Some(key) = found.transpose().map_err(storage)? else {
            return Ok(false);
        };
        self.reports.remove(key).map_err(sled_error)?;
        self.durable()?;
        Ok(true)
    }

    fn keep_events(&self, on: bool) {
        self.events.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    fn claim_events(
        &self,
        now: Timestamp,
        lease_ms: u64,
        limit: usize,
    ) -> StorageResult<Vec<Claimed>> {
        // Claims are taken in turn, under the lock of the lease table,
        // so that no two deliverers of this process take one event.
        let mut leases = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        leases.retain(|_, (until, _)| *until > now);
        let until = Timestamp::from_millis(now.as_millis() + lease_ms as i64);
        let mut seen = std::collections::HashSet::new();
        let mut out = vec![];
        for entry in self.outbox.iter() {
            if out.len() == limit {
                break;
            }
            let (k, v) = entry.map_err(storage)?;
            let seq = u64::from_be_bytes(k.as_ref().try_into().map_err(corrupt)?);
            // Only the earliest event of each object goes, due or not: an
            // object with an event in flight waits for its outcome.
            if let Some((_, key)) = leases.get(&seq) {
                seen.insert(key.clone());
                continue;
            }
            let queued: Queued = serde_json::from_slice(&v).map_err(corrupt)?;
            if !seen.insert(queued.event.data.key.clone()) || queued.next_at > now {
                continue;
            }
            leases.insert(seq, (until, queued.event.data.key.clone()));
            let mut event = queued.event;
            event.id = event_id(seq, event.at);
            out.push(Claimed {
                seq,
                event,
                attempts: queued.attempts,
            });
        }
        Ok(out)
    }

    fn event_delivered(&self, seq: u64) -> StorageResult<()> {
        // Not flushed here: sled's own flusher makes it durable within
        // half a second, and a delivery a crash forgets is delivered
        // again, which at-least-once allows. A flush per delivery would
        // cost every upload a second fsync.
        self.outbox.remove(seq.to_be_bytes()).map_err(sled_error)?;
        self.release(seq);
        Ok(())
    }

    fn event_failed(&self, seq: u64, next: Option<Timestamp>) -> StorageResult<()> {
        let key = seq.to_be_bytes();
        let Some(next) = next else {
            return self.event_delivered(seq);
        };
        let Some(v) = self.outbox.get(key).map_err(storage)? else {
            self.release(seq);
            return Ok(());
        };
        let mut queued: Queued = serde_json::from_slice(&v).map_err(corrupt)?;
        queued.attempts += 1;
        queued.next_at = next;
        let body = serde_json::to_vec(&queued).map_err(storage)?;
        // Not flushed either: a crash forgets a pause, not the event.
        self.outbox.insert(key, body).map_err(sled_error)?;
        self.release(seq);
        Ok(())
    }

    fn blocks(&self) -> StorageResult<Vec<Block>> {
        let mut all: Vec<Block> = self
            .blocked
            .iter()
            .values()
            .map(|v| serde_json::from_slice(&v.map_err(storage)?).map_err(corrupt))
            .collect::<StorageResult<_>>()?;
        all.sort_by_key(|b| std::cmp::Reverse(b.blocked_at));
        Ok(all)
    }

    fn for_each(
        &self,
        visit: &mut dyn FnMut(&str, &Object) -> ControlFlow<()>,
    ) -> StorageResult<()> {
        for entry in self.objects.iter() {
            let (k, v) = entry.map_err(storage)?;
            let key = std::str::from_utf8(&k).map_err(corrupt)?;
            if visit(key, &decode_at(&k, &v)?).is_break() {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::reopen;
    use store_testkit::suite::sample_file;

    #[test]
    fn totals_survive_reopening_and_are_computed_for_older_databases() {
        let dir = tempfile::tempdir().unwrap();
        let expected = {
            let repo = SledRepository::open(dir.path()).unwrap();
            repo.put("a", &sample_file("a", Some(5), &[])).unwrap();
            repo.put("b", &sample_file("b", None, &[])).unwrap();
            let loaded = repo
                .bulk_load([("c".to_string(), sample_file("c", Some(9), &["t"]))])
                .unwrap();
            assert_eq!(loaded, 1);
            let totals = repo.totals().unwrap();
            assert_eq!(totals, repo.totals_by_scan().unwrap(), "load counts too");
            assert_eq!(totals.objects, 3);
            totals
        };
        assert_eq!(reopen(dir.path()).totals().unwrap(), expected);
        {
            // As written by a version that kept no totals.
            let repo = reopen(dir.path());
            repo.meta.remove(TOTALS_KEY).unwrap();
            repo.flush().unwrap();
        }
        let repo = reopen(dir.path());
        assert_eq!(
            repo.totals().unwrap(),
            expected,
            "opening computes the missing totals from the records"
        );
        drop(repo);
        {
            // As written by a version that kept no counts by kind.
            let repo = reopen(dir.path());
            let v1 = &encode_totals(&expected)[..TOTALS_V1_BYTES];
            repo.meta.insert(TOTALS_KEY, v1).unwrap();
            repo.flush().unwrap();
        }
        let totals = reopen(dir.path()).totals().unwrap();
        assert_eq!(totals, expected, "opening counts the kinds once");
        assert_eq!(totals.of_kind(ObjectKind::File), 3);
        {
            // As written by a version with five kinds (before uploads).
            let repo = reopen(dir.path());
            let v2 = &encode_totals(&expected)[..TOTALS_V2_BYTES];
            repo.meta.insert(TOTALS_KEY, v2).unwrap();
            repo.flush().unwrap();
        }
        let totals = reopen(dir.path()).totals().unwrap();
        assert_eq!(totals, expected, "opening counts them again once");
    }

    #[test]
    fn listings_are_built_for_older_databases_and_kept_by_load() {
        use store_testkit::suite::{listed_keys, sample_dir};
        let dir = tempfile::tempdir().unwrap();
        {
            let repo = SledRepository::open(dir.path()).unwrap();
            repo.put("a", &sample_file("a", Some(5), &["t"])).unwrap();
            repo.bulk_load([
                ("b".to_string(), sample_file("b", Some(9), &["t"])),
                ("c".to_string(), sample_file("c", Some(9), &[])),
                ("d/x".to_string(), sample_dir("x", true)),
            ])
            .unwrap();
            assert_eq!(
                listed_keys(&repo, Listing::Browse),
                ["a", "b"],
                "load indexes"
            );
            // As written by a version that kept no listings index.
            repo.listings.clear().unwrap();
            repo.meta.remove(LISTINGS_KEY).unwrap();
            repo.flush().unwrap();
        }
        let repo = reopen(dir.path());
        assert_eq!(
            listed_keys(&repo, Listing::Browse),
            ["a", "b"],
            "built at open"
        );
        assert_eq!(listed_keys(&repo, Listing::Dirs), ["d/x"]);
    }

    #[test]
    fn folding_the_log_keeps_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let a = sample_file("a", Some(5), &["t"]);
        {
            let repo = SledRepository::open(dir.path()).unwrap();
            repo.put("a", &a).unwrap();
        }
        SledRepository::fold_log(dir.path(), std::time::Duration::from_secs(5)).unwrap();
        let repo = reopen(dir.path());
        assert_eq!(repo.get("a").unwrap(), Some(a));
        assert_eq!(repo.keys_with_tag("t").unwrap(), ["a"]);
        assert_eq!(repo.totals().unwrap().objects, 1);
        // With a handle alive, the lock is never free: an error, in time.
        let started = std::time::Instant::now();
        assert!(
            SledRepository::fold_log(dir.path(), std::time::Duration::from_millis(200)).is_err()
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn corrupt_totals_are_an_error_not_a_guess() {
        assert!(decode_totals(&[0; 23]).is_err());
        assert!(decode_totals(&[0; TOTALS_V1_BYTES]).is_err());
        assert!(decode_totals(&[0; TOTALS_V2_BYTES]).is_err());
        let t = Totals {
            objects: 3,
            pool_bytes: u64::MAX,
            pics_bytes: 7,
            by_kind: [1, 0, 0, 2, 0, 0],
        };
        assert_eq!(decode_totals(&encode_totals(&t)).unwrap(), t);
    }

    #[test]
    fn claims_live_in_memory_so_a_restart_delivers_them_again_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let now = Timestamp::from_secs(2_000_000_000);
        {
            let repo = SledRepository::open(dir.path()).unwrap();
            repo.keep_events(true);
            repo.put("a", &sample_file("a", Some(4_000_000_000), &[]))
                .unwrap();
            assert_eq!(repo.claim_events(now, 60_000, 10).unwrap().len(), 1);
            assert!(repo.claim_events(now, 60_000, 10).unwrap().is_empty());
            let written = repo.outbox.iter().values().next().unwrap().unwrap();
            let written = String::from_utf8(written.to_vec()).unwrap();
            assert!(!written.contains("claimed"), "a claim writes nothing");
            repo.flush().unwrap();
        }
        let repo = reopen(dir.path());
        let again = repo.claim_events(now, 60_000, 10).unwrap();
        assert_eq!(again.len(), 1, "the claim went with the process");
        repo.event_delivered(again[0].seq).unwrap();
        assert!(repo
            .claim_events(now.plus_secs(61), 60_000, 10)
            .unwrap()
            .is_empty());
    }
}
