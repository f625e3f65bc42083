use std::fs::{self, File};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use store_core::ports::{BlobReader, BlobStore, BlobWriter, Random, StorageResult};
use store_core::{ids, BlobId, StorageError};

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
        Ok(Self { blobs, tmp, random })
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
        file.sync_all()
            .map_err(|e| io("cannot sync", &self.tmp_path, e))?;
        drop(file);
        let id = match self.id.take() {
            Some(id) => id,
            None => ids::blob_id(self.store.random.as_ref()),
        };
        let path = self.store.path(&id)?;
        let parent = path.parent().expect("blob paths have a parent");
        fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
        fs::rename(&self.tmp_path, &path).map_err(|e| io("cannot rename to", &path, e))?;
        // The temp file is now the blob: nothing is left for Drop to clean.
        self.tmp_path = PathBuf::new();
        sync_dir(parent)?;
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
/// later.
struct FsReader {
    file: std::io::Take<File>,
    start: u64,
    len: u64,
}

impl std::io::Read for FsReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.file.read(buf)
    }

    /// The file's own way: it reads into the vector's spare room as it is,
    /// where the provided method would zero it first (a memset as long as
    /// the read, 2% of a 64 KiB range's work).
    fn read_to_end(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        self.file.read_to_end(buf)
    }
}

impl BlobReader for FsReader {
    fn len(&self) -> u64 {
        self.len
    }

    /// A seek from where the reader was opened: no second open.
    fn narrow(&mut self, range: std::ops::Range<u64>) -> std::io::Result<bool> {
        let range = store_core::ports::clamp_range(range, self.len);
        self.start += range.start;
        self.file
            .get_mut()
            .seek(std::io::SeekFrom::Start(self.start))?;
        self.len = range.end - range.start;
        self.file.set_limit(self.len);
        Ok(true)
    }
}

impl BlobStore for FsBlobStore {
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
        let path = self.path(id)?;
        let mut file = File::open(&path).map_err(|e| io("cannot open", &path, e))?;
        let whole = file
            .metadata()
            .map_err(|e| io("cannot stat", &path, e))?
            .len();
        let std::ops::Range { start, end } = store_core::ports::clamp_range(range, whole);
        if start > 0 {
            file.seek(std::io::SeekFrom::Start(start))
                .map_err(|e| io("cannot seek in", &path, e))?;
        }
        let len = end - start;
        Ok(Box::new(FsReader {
            file: file.take(len),
            start,
            len,
        }))
    }

    fn remove(&self, id: &BlobId) -> StorageResult<()> {
        let path = self.path(id)?;
        match fs::remove_file(&path) {
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

    /// The file's modification time: a blob is written once, then renamed
    /// into place, so it is when the bytes were committed.
    fn written_at(&self, id: &BlobId) -> StorageResult<Option<store_core::Timestamp>> {
        let path = self.path(id)?;
        let modified = fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| io("cannot stat", &path, e))?;
        let ms = modified
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Ok(Some(store_core::Timestamp::from_millis(ms)))
    }
}
