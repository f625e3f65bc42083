//! Open files of blobs, kept between readers.
//!
//! Opening a blob is a path walk (`openat`), a `statx` for its length and,
//! at the end, a `close`: 9% of the work of serving a 64 KiB range, more
//! than the read itself costs (docs/PERFORMANCE.md, issue 15). Blobs never
//! change once committed, so a file a reader has finished with can serve
//! the next reader of the same blob, after a seek.
//!
//! A file is held by one reader at a time (each needs its own offset):
//! [`Handles::take`] hands an idle one out, and the reader gives it back
//! when it is dropped. Two readers of one blob at once open a second file;
//! only one of them is kept.
//!
//! Removal: [`Handles::forget`] closes the blob's idle file and counts a
//! removal, and a file taken before a removal is closed instead of given
//! back. So after `FsBlobStore::remove` returns, this process holds the
//! removed file open only while a reader that opened it earlier is still
//! reading. A blob removed by another process sharing the directory (see
//! `FsBlobStore::open_shared`) is not told of: its idle file, if any,
//! keeps the disk space until newer files push it out. That is at most
//! [`IDLE_FILES_MAX`] files, and such a file is never read again: its
//! record is gone, so no reader asks for it.
//!
//! The bound works as the record memo's does (`memo.rs`): two generations,
//! the older dropped when the younger fills.

use std::collections::HashMap;
use std::fs::File;
use std::sync::{Mutex, PoisonError};

use store_core::BlobId;

/// Idle files kept at most, both generations together.
pub(crate) const IDLE_FILES_MAX: usize = 64;

/// An idle file and the blob's length.
type Idle = HashMap<BlobId, (File, u64)>;

#[derive(Debug, Default)]
struct Inner {
    young: Idle,
    old: Idle,
    /// Removals so far: a file taken before one is not given back.
    removals: u64,
}

/// Idle files of blobs, by blob.
#[derive(Debug, Default)]
pub(crate) struct Handles {
    inner: Mutex<Inner>,
}

/// A file taken from [`Handles`] (or opened afresh), to give back after.
#[derive(Debug)]
pub(crate) struct Lease {
    pub id: BlobId,
    /// The blob's whole length.
    pub len: u64,
    /// [`Inner::removals`] when the file was taken or opened.
    removals: u64,
}

impl Handles {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every change is whole under the lock: a panic leaves none half
        // made.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An idle file of `id` with the blob's length, if one is kept.
    pub(crate) fn take(&self, id: &BlobId) -> Option<(File, Lease)> {
        let mut g = self.lock();
        let (file, len) = match g.young.remove(id) {
            Some(kept) => kept,
            None => g.old.remove(id)?,
        };
        let lease = Lease {
            id: id.clone(),
            len,
            removals: g.removals,
        };
        Some((file, lease))
    }

    /// The lease of a file of `id` just opened, `len` bytes long.
    pub(crate) fn lease(&self, id: &BlobId, len: u64) -> Lease {
        Lease {
            id: id.clone(),
            len,
            removals: self.lock().removals,
        }
    }

    /// Keeps `file` for the next reader of its blob, unless a blob was
    /// removed since it was taken (it may have been this one) or another
    /// file of it is kept already.
    pub(crate) fn give_back(&self, file: File, lease: Lease) {
        let mut g = self.lock();
        if g.removals != lease.removals || g.young.contains_key(&lease.id) {
            return;
        }
        if g.young.len() >= IDLE_FILES_MAX / 2 {
            // Files dropped here are closed under the lock; a close of a
            // file nobody writes is quick.
            g.old = std::mem::take(&mut g.young);
        }
        g.old.remove(&lease.id);
        g.young.insert(lease.id, (file, lease.len));
    }

    /// Closes the idle file of `id`, which has just been removed (or
    /// replaced), and keeps files taken before now from coming back.
    pub(crate) fn forget(&self, id: &BlobId) {
        let mut g = self.lock();
        g.removals += 1;
        g.young.remove(id);
        g.old.remove(id);
    }

    /// Idle files kept (for tests).
    #[cfg(test)]
    pub(crate) fn idle(&self) -> usize {
        let g = self.lock();
        g.young.len() + g.old.len()
    }
}
