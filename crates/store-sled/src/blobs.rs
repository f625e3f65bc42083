use std::fs::{self, File};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use store_core::ports::{BlobReader, BlobStore, BlobWriter, Random, StagedWriter, StorageResult};
use store_core::resumable::Staging;
use store_core::{ids, BlobId, StorageError};

use crate::cachedir::{self, Claim};
use crate::handles::{Handles, Lease};

/// How old a temp file must be before a store shared by several processes
/// deletes it at start: no upload takes a day.
pub const SHARED_TEMP_GRACE: Duration = Duration::from_secs(24 * 3600);

/// Bytes as files: `blobs/<first two hex digits>/<id>` for committed blobs,
/// `tmp/<random>` while writing. The fan-out keeps directories small.
#[derive(Clone)]
pub struct FsBlobStore {
    blobs: PathBuf,
    tmp: PathBuf,
    random: Arc<dyn Random>,
    /// Files of blobs that readers have finished with, for the next
    /// reader (see `handles.rs`); none for a store shared by several
    /// processes.
    handles: Option<Arc<Handles>>,
    /// Whether a commit is made durable (fsync of the file and its
    /// directory): always, but for a cache ([`FsBlobStore::open_cache`]).
    durable: bool,
    /// A cache's hold on its directory, released when the last clone of
    /// the store is dropped (or the process ends).
    _claim: Option<Arc<Claim>>,
}

impl std::fmt::Debug for FsBlobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsBlobStore")
            .field("blobs", &self.blobs)
            .finish()
    }
}

fn io(what: &str, path: &Path, e: std::io::Error) -> StorageError {
    StorageError::from_io(format!("{what} {}", path.display()), &e)
}

/// fsync of a directory, so that a rename or unlink in it is durable.
fn sync_dir(dir: &Path) -> StorageResult<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io("cannot sync", dir, e))
}

impl FsBlobStore {
    /// Opens (or creates) the store under `dir`, deleting temp files left
    /// by a crash: nothing ever points at them.
    pub fn open(dir: &Path, random: Arc<dyn Random>) -> StorageResult<Self> {
        Self::open_with(dir, random, Duration::ZERO)
    }

    /// Opens a store that other processes write at the same time (records
    /// in PostgreSQL, bytes in one shared directory): only temp files
    /// older than [`SHARED_TEMP_GRACE`] are deleted, since a younger one
    /// may be an upload in progress in another process.
    pub fn open_shared(dir: &Path, random: Arc<dyn Random>) -> StorageResult<Self> {
        Self::open_with(dir, random, SHARED_TEMP_GRACE)
    }

    /// Opens a cache of copies under `root` (issue 37: large blobs of a
    /// bucket kept on local disk), in a directory of this process's own
    /// (`cachedir.rs`): it starts empty, since nothing says what a
    /// directory held is current, and the directories of processes that
    /// have ended are removed. Commits are not fsynced, since a copy lost in
    /// a crash is only read again from where it came from.
    pub fn open_cache(root: &Path, random: Arc<dyn Random>) -> StorageResult<Self> {
        let claim = cachedir::claim(root, random.as_ref())?;
        let mut store = Self::open_with(claim.dir(), random, Duration::ZERO)?;
        store.durable = false;
        store._claim = Some(Arc::new(claim));
        Ok(store)
    }

    fn open_with(dir: &Path, random: Arc<dyn Random>, grace: Duration) -> StorageResult<Self> {
        let blobs = dir.join("blobs");
        let tmp = dir.join("tmp");
        for d in [&blobs, &tmp] {
            fs::create_dir_all(d).map_err(|e| io("cannot create", d, e))?;
        }
        for entry in fs::read_dir(&tmp).map_err(|e| io("cannot list", &tmp, e))? {
            let entry = entry.map_err(|e| io("cannot list", &tmp, e))?;
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok());
            if grace.is_zero() || age.is_some_and(|a| a > grace) {
                let path = entry.path();
                match fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(io("cannot remove", &path, e))
                    }
                    _ => {}
                }
            }
        }
        // A shared store's blobs are removed by other processes too, which
        // a kept file would not learn of (handles.rs).
        let shared = !grace.is_zero();
        Ok(Self {
            blobs,
            tmp,
            random,
            handles: (!shared).then(Arc::default),
            durable: true,
            _claim: None,
        })
    }

    /// A writer to a new temp file, committing under `id` or a new one.
    fn writer(&self, id: Option<BlobId>) -> StorageResult<Box<dyn BlobWriter>> {
        let mut name = [0u8; 16];
        self.random.fill(&mut name);
        let tmp_path = self
            .tmp
            .join(name.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&tmp_path)
            .map_err(|e| io("cannot create", &tmp_path, e))?;
        Ok(Box::new(FsWriter {
            file: Some(file),
            tmp_path,
            id,
            store: self.clone(),
        }))
    }

    /// The path of a blob. Ids are minted here as lowercase hex; anything
    /// else is refused, so a corrupt record cannot name a path outside.
    fn path(&self, id: &BlobId) -> StorageResult<PathBuf> {
        let s = ids::minted_blob_name(id)?;
        Ok(self.blobs.join(&s[..2]).join(s))
    }
}

struct FsWriter {
    file: Option<File>,
    tmp_path: PathBuf,
    /// The id to commit under, or `None` to mint one.
    id: Option<BlobId>,
    store: FsBlobStore,
}

impl BlobWriter for FsWriter {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        let file = self
            .file
            .as_mut()
            .expect("a writer is used only until commit");
        file.write_all(chunk)
            .map_err(|e| io("cannot write", &self.tmp_path, e))
    }

    fn commit(mut self: Box<Self>) -> StorageResult<BlobId> {
        let file = self.file.take().expect("commit happens once");
        if self.store.durable {
            file.sync_all()
                .map_err(|e| io("cannot sync", &self.tmp_path, e))?;
        }
        drop(file);
        let given = self.id.take();
        let replaces = given.is_some();
        let id = given.unwrap_or_else(|| ids::blob_id(self.store.random.as_ref()));
        let path = self.store.path(&id)?;
        let parent = path.parent().expect("blob paths have a parent");
        fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
        fs::rename(&self.tmp_path, &path).map_err(|e| io("cannot rename to", &path, e))?;
        // A blob committed under an id it may have had before (a copy
        // between stores) is a new file: a kept file of the old one must
        // not serve it. A minted id is new, and nothing is kept of it.
        if let Some(handles) = self.store.handles.as_ref().filter(|_| replaces) {
            handles.forget(&id);
        }
        // The temp file is now the blob: nothing is left for Drop to clean.
        self.tmp_path = PathBuf::new();
        if self.store.durable {
            sync_dir(parent)?;
        }
        Ok(id)
    }
}

impl Drop for FsWriter {
    fn drop(&mut self) {
        if !self.tmp_path.as_os_str().is_empty() {
            // Best effort: a file left behind is removed at the next start.
            let _ = fs::remove_file(&self.tmp_path);
        }
    }
}

/// A blob's file, read from `start`, where it was opened, to `len` bytes
/// later. When dropped, it gives its file back to the store's idle files.
struct FsReader {
    /// Present until the reader is dropped.
    file: Option<std::io::Take<File>>,
    start: u64,
    len: u64,
    /// Where the file must be moved to before the first read, when it is
    /// not there already: seeking once, lazily, lets a reader that is
    /// opened and then narrowed seek only once.
    seek_to: Option<u64>,
    /// Where the file goes back to.
    home: Option<(Arc<Handles>, Lease)>,
}

impl FsReader {
    fn file(&mut self) -> &mut std::io::Take<File> {
        self.file
            .as_mut()
            .expect("the file is there until the reader is dropped")
    }
}

impl Drop for FsReader {
    fn drop(&mut self) {
        if let (Some(file), Some((handles, lease))) = (self.file.take(), self.home.take()) {
            handles.give_back(file.into_inner(), lease);
        }
    }
}

impl std::io::Read for FsReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(at) = self.seek_to.take() {
            self.file().get_mut().seek(std::io::SeekFrom::Start(at))?;
        }
        self.file().read(buf)
    }
}

impl BlobReader for FsReader {
    fn len(&self) -> u64 {
        self.len
    }

    /// Moves where the reader starts: no second open. Only a reader that
    /// has read nothing yet is narrowed (the port's rule).
    fn narrow(&mut self, range: std::ops::Range<u64>) -> std::io::Result<bool> {
        let range = store_core::ports::clamp_range(range, self.len);
        self.start += range.start;
        self.len = range.end - range.start;
        self.seek_to = Some(self.start);
        let len = self.len;
        self.file().set_limit(len);
        Ok(true)
    }
}

/// A resumable upload's bytes, written in place at the path of the blob
/// they become: a staged blob is referenced by its upload's record from
/// before its first byte, so orphan collection leaves it alone, and the
/// sweeper removes it with an expired upload as it removes any blob.
struct FsStaged {
    file: File,
    path: PathBuf,
    staging: Staging,
}

impl StagedWriter for FsStaged {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        self.file
            .write_all(chunk)
            .map_err(|e| io("cannot write", &self.path, e))
    }

    fn pause(self: Box<Self>) -> StorageResult<Staging> {
        self.file
            .sync_data()
            .map_err(|e| io("cannot sync", &self.path, e))?;
        sync_dir(self.path.parent().expect("blob paths have a parent"))?;
        Ok(self.staging)
    }

    fn complete(self: Box<Self>) -> StorageResult<BlobId> {
        Ok(self.pause()?.blob)
    }
}

impl FsBlobStore {
    fn resume_staged(&self, staging: &Staging, offset: u64) -> StorageResult<FsStaged> {
        let path = self.path(&staging.blob)?;
        let parent = path.parent().expect("blob paths have a parent");
        fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
        let mut file = File::options()
            .write(true)
            .create(offset == 0)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("cannot open", &path, e))?;
        let kept = file
            .metadata()
            .map_err(|e| io("cannot read", &path, e))?
            .len();
        if kept < offset {
            return Err(StorageError::new(format!(
                "staged blob {} holds {kept} bytes, fewer than the {offset} recorded",
                staging.blob.0
            )));
        }
        // Bytes past the offset are a PATCH's that died or was refused.
        file.set_len(offset)
            .and_then(|()| file.seek(std::io::SeekFrom::Start(offset)).map(drop))
            .map_err(|e| io("cannot truncate", &path, e))?;
        Ok(FsStaged {
            file,
            path,
            staging: staging.clone(),
        })
    }
}

impl BlobStore for FsBlobStore {
    fn stages(&self) -> bool {
        true
    }

    fn stage(&self) -> StorageResult<Staging> {
        Ok(Staging {
            blob: ids::blob_id(self.random.as_ref()),
            state: String::new(),
        })
    }

    fn resume(&self, staging: &Staging, offset: u64) -> StorageResult<Box<dyn StagedWriter>> {
        Ok(Box::new(self.resume_staged(staging, offset)?))
    }

    fn discard(&self, staging: &Staging) -> StorageResult<()> {
        self.remove(&staging.blob)
    }

    /// Both directories are there: a data directory unmounted or moved
    /// away under a running server is not ready.
    fn ping(&self) -> StorageResult<()> {
        for d in [&self.blobs, &self.tmp] {
            let meta = fs::metadata(d).map_err(|e| io("cannot reach", d, e))?;
            if !meta.is_dir() {
                return Err(StorageError::new(format!(
                    "{} is not a directory",
                    d.display()
                )));
            }
        }
        Ok(())
    }

    fn reads_wait(&self) -> bool {
        false
    }

    fn create(&self) -> StorageResult<Box<dyn BlobWriter>> {
        self.writer(None)
    }

    fn create_with_id(&self, id: &BlobId) -> StorageResult<Box<dyn BlobWriter>> {
        // Checked now rather than at commit: an id no store could mint
        // never gets as far as a temp file.
        self.path(id)?;
        self.writer(Some(id.clone()))
    }

    fn open(&self, id: &BlobId) -> StorageResult<Box<dyn BlobReader>> {
        self.open_range(id, 0..u64::MAX)
    }

    /// Seeks to the range: a 5 MiB file read from its last byte costs one
    /// read, not five megabytes of them.
    fn open_range(
        &self,
        id: &BlobId,
        range: std::ops::Range<u64>,
    ) -> StorageResult<Box<dyn BlobReader>> {
        let kept = self.handles.as_ref().and_then(|h| h.take(id));
        let (file, len, lease, reused) = match kept {
            Some((file, lease)) => (file, lease.len, Some(lease), true),
            None => {
                let removals = self.handles.as_ref().map(|h| h.removals());
                let path = self.path(id)?;
                let file = File::open(&path).map_err(|e| io("cannot open", &path, e))?;
                let whole = file
                    .metadata()
                    .map_err(|e| io("cannot stat", &path, e))?
                    .len();
                let lease = removals.map(|r| Handles::lease(id, whole, r));
                (file, whole, lease, false)
            }
        };
        let std::ops::Range { start, end } = store_core::ports::clamp_range(range, len);
        Ok(Box::new(FsReader {
            file: Some(file.take(end - start)),
            start,
            len: end - start,
            // A file kept from an earlier reader is wherever that one
            // stopped; a new one is at 0.
            seek_to: (start > 0 || reused).then_some(start),
            home: self.handles.clone().zip(lease),
        }))
    }

    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        let path = self.path(id)?;
        let removed = fs::remove_file(&path);
        // After the unlink: a file opened or taken before now is not kept.
        if let Some(handles) = &self.handles {
            handles.forget(id);
        }
        match removed {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("cannot remove", &path, e)),
        }
    }

    fn list(&self) -> StorageResult<Vec<BlobId>> {
        let mut out = vec![];
        for fan in fs::read_dir(&self.blobs).map_err(|e| io("cannot list", &self.blobs, e))? {
            let fan = fan.map_err(|e| io("cannot list", &self.blobs, e))?.path();
            if !fan.is_dir() {
                continue;
            }
            for entry in fs::read_dir(&fan).map_err(|e| io("cannot list", &fan, e))? {
                let entry = entry.map_err(|e| io("cannot list", &fan, e))?;
                let id = entry.file_name().to_str().map(|n| BlobId(n.to_string()));
                match id {
                    // Only names this store minted are blobs; anything else
                    // (an editor's backup, a stray folder) is not ours to
                    // collect or to choke on.
                    Some(id) if self.path(&id).is_ok() => out.push(id),
                    _ => tracing::warn!(
                        path = %entry.path().display(),
                        "ignoring a file in the blob store: not a blob"
                    ),
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::IDLE_FILES_MAX;
    use store_core::StorageErrorKind;
    use store_testkit::SeededRandom;

    fn store() -> (tempfile::TempDir, FsBlobStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBlobStore::open(dir.path(), Arc::new(SeededRandom::new(7))).unwrap();
        (dir, store)
    }

    fn put(store: &FsBlobStore, bytes: &[u8]) -> BlobId {
        let mut w = store.create().unwrap();
        w.write(bytes).unwrap();
        w.commit().unwrap()
    }

    /// Files the store keeps for the next reader.
    fn idle(store: &FsBlobStore) -> usize {
        store.handles.as_ref().expect("a store of its own").idle()
    }

    fn read(store: &FsBlobStore, id: &BlobId, range: std::ops::Range<u64>) -> Vec<u8> {
        let mut out = vec![];
        store
            .open_range(id, range)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    /// A cache's store starts empty whatever its root held, and keeps
    /// what is committed to it until it ends; another cache opened on the
    /// same root meanwhile (another process on one `--data`) neither sees
    /// nor removes its copies.
    #[test]
    fn a_cache_starts_empty_and_keeps_its_copies_from_another() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("cache");
        let random = Arc::new(SeededRandom::new(7));
        let open = || FsBlobStore::open_cache(&at, random.clone()).unwrap();
        let cache = open();
        let id = put(&cache, b"copy");
        assert_eq!(read(&cache, &id, 0..4), b"copy");
        assert_eq!(cache.list().unwrap(), vec![id.clone()]);
        let other = open();
        assert!(other.list().unwrap().is_empty());
        // Listed from the directory, not from a file kept open.
        assert_eq!(
            cache.list().unwrap(),
            vec![id.clone()],
            "the first kept its copy"
        );
        drop(cache);
        let cache = open();
        assert!(cache.list().unwrap().is_empty());
        assert!(cache.open(&id).is_err());
        drop((cache, other));
    }

    #[test]
    fn a_kept_file_serves_the_next_reader_from_its_own_start() {
        let (_dir, store) = store();
        let id = put(&store, b"0123456789");
        assert_eq!(read(&store, &id, 2..5), b"234");
        assert_eq!(idle(&store), 1, "the file was kept");
        assert_eq!(read(&store, &id, 0..u64::MAX), b"0123456789");
        // A reader that stops half way leaves the file mid-blob.
        let mut half = store.open(&id).unwrap();
        let mut three = [0u8; 3];
        half.read_exact(&mut three).unwrap();
        drop(half);
        assert_eq!(read(&store, &id, 7..10), b"789");
        let mut narrowed = store.open(&id).unwrap();
        assert!(narrowed.narrow(4..6).unwrap());
        let mut out = vec![];
        narrowed.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"45");
        drop(narrowed);
        assert_eq!(idle(&store), 1, "one file kept per blob");
    }

    #[test]
    fn readers_at_once_each_have_their_own_file() {
        let (_dir, store) = store();
        let body: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let id = put(&store, &body);
        read(&store, &id, 0..1);
        let mut a = store.open(&id).unwrap();
        let mut b = store.open(&id).unwrap();
        let (mut got_a, mut got_b) = (vec![], vec![]);
        let mut chunk = [0u8; 1000];
        for _ in 0..10 {
            a.read_exact(&mut chunk).unwrap();
            got_a.extend_from_slice(&chunk);
            b.read_exact(&mut chunk).unwrap();
            got_b.extend_from_slice(&chunk);
        }
        assert!(got_a == body && got_b == body);
        drop((a, b));
        assert_eq!(idle(&store), 1, "the second file was closed");
    }

    #[test]
    fn a_removed_blob_is_never_read_from_a_kept_file() {
        let (_dir, store) = store();
        let id = put(&store, b"gone soon");
        read(&store, &id, 0..u64::MAX);
        // A reader that outlives the removal does not give its file back.
        let reading = store.open(&id).unwrap();
        store.remove(&id).unwrap();
        drop(reading);
        assert_eq!(idle(&store), 0);
        let err = store.open(&id).err().expect("the blob is gone");
        assert_eq!(err.kind, StorageErrorKind::Missing);
    }

    #[test]
    fn a_blob_committed_again_under_its_id_is_read_anew() {
        let (_dir, store) = store();
        let id = put(&store, b"first");
        assert_eq!(read(&store, &id, 0..u64::MAX), b"first");
        let mut w = store.create_with_id(&id).unwrap();
        w.write(b"second").unwrap();
        w.commit().unwrap();
        assert_eq!(read(&store, &id, 0..u64::MAX), b"second");
    }

    #[test]
    fn a_shared_store_keeps_no_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBlobStore::open_shared(dir.path(), Arc::new(SeededRandom::new(8))).unwrap();
        let id = put(&store, b"shared");
        assert_eq!(read(&store, &id, 1..u64::MAX), b"hared");
        assert_eq!(read(&store, &id, 0..3), b"sha");
        assert!(store.handles.is_none());
    }

    #[test]
    fn idle_files_are_bounded() {
        let (_dir, store) = store();
        for i in 0..3 * IDLE_FILES_MAX {
            let id = put(&store, format!("blob {i}").as_bytes());
            assert_eq!(
                read(&store, &id, 0..u64::MAX),
                format!("blob {i}").as_bytes()
            );
            assert!(idle(&store) <= IDLE_FILES_MAX);
        }
        assert!(idle(&store) >= IDLE_FILES_MAX / 2);
    }
}
