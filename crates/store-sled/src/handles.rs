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
//! removal, and a file opened or taken before a removal is closed instead
//! of given back (the count is read before the open). So once
//! `FsBlobStore::remove` returns, this process holds the removed file
//! open only while a reader that opened it earlier is still reading.
//!
//! A store shared by several processes (`FsBlobStore::open_shared`) keeps
//! no files: another process's removal is not told of here, and a kept
//! file of a blob it swept would hold the disk space for as long as this
//! process stays quiet.
//!
//! The bound works as the record memo's does: two generations
//! (`generations.rs`) of half [`IDLE_FILES_MAX`] files each.

use std::fs::File;
use std::sync::{Mutex, PoisonError};

use store_core::BlobId;

use crate::generations::Generations;

/// Idle files kept at most, both generations together.
pub(crate) const IDLE_FILES_MAX: usize = 64;

#[derive(Debug)]
struct Inner {
    /// Idle files with their blob's length, each of weight 1.
    idle: Generations<BlobId, (File, u64)>,
    /// Removals so far: a file taken before one is not given back.
    removals: u64,
}

/// Idle files of blobs, by blob.
#[derive(Debug)]
pub(crate) struct Handles {
    inner: Mutex<Inner>,
}

impl Default for Handles {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Inner {
                idle: Generations::new(IDLE_FILES_MAX / 2),
                removals: 0,
            }),
        }
    }
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
        let (file, len) = g.idle.remove(id)?;
        Some((file, Self::lease(id, len, g.removals)))
    }

    /// The removals so far, read before a file is opened: a removal
    /// between this and the open is then seen when the file comes back.
    pub(crate) fn removals(&self) -> u64 {
        self.lock().removals
    }

    /// The lease of a file of `id`, `len` bytes long, opened after
    /// [`Handles::removals`] answered `removals`.
    pub(crate) fn lease(id: &BlobId, len: u64, removals: u64) -> Lease {
        Lease {
            id: id.clone(),
            len,
            removals,
        }
    }

    /// Keeps `file` for the next reader of its blob, unless a blob was
    /// removed since it was taken (it may have been this one) or another
    /// file of it is kept already.
    pub(crate) fn give_back(&self, file: File, lease: Lease) {
        let mut g = self.lock();
        if g.removals != lease.removals || g.idle.young(&lease.id).is_some() {
            return;
        }
        let aged = g.idle.insert(lease.id, (file, lease.len), 1);
        drop(g);
        // Closed after the lock: the last close of a removed file frees
        // its blocks, which is not quick.
        drop(aged);
    }

    /// Closes the idle file of `id`, which has just been removed (or
    /// replaced), and keeps files taken before now from coming back.
    pub(crate) fn forget(&self, id: &BlobId) {
        let mut g = self.lock();
        g.removals += 1;
        let kept = g.idle.remove(id);
        drop(g);
        drop(kept);
    }

    /// Idle files kept (for tests).
    #[cfg(test)]
    pub(crate) fn idle(&self) -> usize {
        self.lock().idle.size().0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_file() -> (tempfile::NamedTempFile, File) {
        let named = tempfile::NamedTempFile::new().unwrap();
        let file = named.reopen().unwrap();
        (named, file)
    }

    #[test]
    fn a_file_opened_before_a_removal_is_not_kept() {
        let handles = Handles::default();
        let id = BlobId("ab12".into());
        // The count is read, then the blob is removed while the file is
        // being opened, then the file is given back.
        let before = handles.removals();
        let (_named, file) = a_file();
        handles.forget(&id);
        handles.give_back(file, Handles::lease(&id, 1, before));
        assert_eq!(handles.idle(), 0);
        assert!(handles.take(&id).is_none());
    }

    #[test]
    fn a_file_given_back_serves_the_next_taker_once() {
        let handles = Handles::default();
        let id = BlobId("ab12".into());
        let (_named, file) = a_file();
        handles.give_back(file, Handles::lease(&id, 5, handles.removals()));
        let (file, lease) = handles.take(&id).expect("kept");
        assert_eq!(lease.len, 5);
        assert!(handles.take(&id).is_none(), "held by one reader at a time");
        handles.give_back(file, lease);
        assert_eq!(handles.idle(), 1);
    }
}
