//! Moving a store into another (`storesrv migrate`): every record with its
//! bytes, the bytes first, each blob under the id it had, so the records
//! move unchanged. A record already in the target (an earlier run that was
//! interrupted) is left as it is, so the move can be re-run until it
//! completes. It ends by checking, against the source, that every record
//! is in the target and every byte of theirs is there too.
//!
//! It runs with no server on either side: the source is a sled directory
//! (which sled locks), and a target written to by a running service at the
//! same time would still be correct, but its pools would only be trimmed
//! at the next upload.

use std::io::Read;
use std::ops::ControlFlow;

use serde::Serialize;
use store_core::ports::{BlobStore, Repository, StorageResult};
use store_core::{BlobId, Object, StorageError, StorageErrorKind};

/// One side of a move: records and the bytes they point at.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    /// The records and their indexes.
    pub repo: &'a dyn Repository,
    /// The bytes the records point at.
    pub blobs: &'a dyn BlobStore,
}

impl std::fmt::Debug for Side<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Side").finish_non_exhaustive()
    }
}

/// What a move found and did, and what its check counted.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct MigrationReport {
    /// Records in the source, less the uploads in progress.
    pub records: u64,
    /// Resumable uploads in progress, which stay behind: their staged
    /// bytes are the source store's own (a file being written, a
    /// multipart upload), which the target could not go on with; their
    /// clients start them again.
    pub uploads_left: u64,
    /// Records this run wrote to the target.
    pub records_copied: u64,
    /// Records the target held already (from an earlier run).
    pub records_present: u64,
    /// Records the target holds in another state than the source: changed
    /// there since an earlier run copied them. Kept, never overwritten.
    pub records_changed: u64,
    /// Blobs the records moved as they are point at.
    pub blobs: u64,
    /// Blobs this run copied.
    pub blobs_copied: u64,
    /// Blobs the target held already, at their full length.
    pub blobs_present: u64,
    /// Blobs a source record points at that the source has lost: the
    /// record moves as it is, and answers 404 there as it did here.
    pub blobs_missing: u64,
    /// The length of every blob the source has, summed; the check sums
    /// the target's copies to the same figure.
    pub blob_bytes: u64,
    /// What the records moved as they are count against the store pool
    /// and the pics pool.
    pub pool_bytes: u64,
    /// Bytes the records count against the pics pool.
    pub pics_bytes: u64,
}

/// How much of a blob is read and written at a time.
const COPY_CHUNK_BYTES: usize = 256 * 1024;

/// Moves every record of `from`, with its bytes, into `to`, then checks
/// the result. An error names what failed; whatever was copied stays, and
/// a new run carries on from there.
pub fn migrate(from: Side<'_>, to: Side<'_>) -> StorageResult<MigrationReport> {
    let mut report = MigrationReport::default();
    each_record(from.repo, &mut |key, obj| {
        copy_record(from, to, key, obj, &mut report)
    })?;
    verify(from, to, &report)?;
    Ok(report)
}

/// Runs `step` on every record of `repo`, stopping at the first error.
fn each_record(
    repo: &dyn Repository,
    step: &mut dyn FnMut(&str, &Object) -> StorageResult<()>,
) -> StorageResult<()> {
    let mut failed = None;
    repo.for_each(&mut |key, obj| match step(key, obj) {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => {
            failed = Some(e);
            ControlFlow::Break(())
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// Bytes first, then the record: the target never holds a record whose
/// bytes are still to come. A record the target holds in another state
/// is the target's now, and moves no bytes.
fn copy_record(
    from: Side<'_>,
    to: Side<'_>,
    key: &str,
    obj: &Object,
    report: &mut MigrationReport,
) -> StorageResult<()> {
    if matches!(obj, Object::Upload(_)) {
        report.uploads_left += 1;
        return Ok(());
    }
    report.records += 1;
    let existing = to.repo.get(key)?;
    if existing.as_ref().is_some_and(|e| e != obj) {
        report.records_changed += 1;
        return Ok(());
    }
    let mut blobs = MigrationReport::default();
    for id in obj.blobs() {
        blobs.blobs += 1;
        match copy_blob(from.blobs, to.blobs, id)? {
            BlobCopy::Copied(len) => {
                blobs.blobs_copied += 1;
                blobs.blob_bytes += len;
            }
            BlobCopy::Present(len) => {
                blobs.blobs_present += 1;
                blobs.blob_bytes += len;
            }
            BlobCopy::Missing => blobs.blobs_missing += 1,
        }
    }
    if existing.is_some() {
        report.records_present += 1;
    } else if to.repo.insert_new(key, obj)? {
        report.records_copied += 1;
    } else {
        // Written in the target since it was read: the target's now.
        report.records_changed += 1;
        return Ok(());
    }
    report.add_moved(obj, &blobs);
    Ok(())
}

impl MigrationReport {
    /// Counts a record moved as it is, and its blobs.
    fn add_moved(&mut self, obj: &Object, blobs: &Self) {
        self.pool_bytes += obj.pool_bytes();
        self.pics_bytes += obj.pics_bytes();
        self.blobs += blobs.blobs;
        self.blobs_copied += blobs.blobs_copied;
        self.blobs_present += blobs.blobs_present;
        self.blobs_missing += blobs.blobs_missing;
        self.blob_bytes += blobs.blob_bytes;
    }
}

enum BlobCopy {
    /// Copied now: this many bytes.
    Copied(u64),
    /// The target had it whole: this many bytes.
    Present(u64),
    /// The source does not have it.
    Missing,
}

fn copy_blob(from: &dyn BlobStore, to: &dyn BlobStore, id: &BlobId) -> StorageResult<BlobCopy> {
    let mut source = match from.open(id) {
        Ok(reader) => reader,
        Err(e) if e.kind == StorageErrorKind::Missing => return Ok(BlobCopy::Missing),
        Err(e) => return Err(e),
    };
    let len = source.len();
    // A commit is whole, so a copy of the right length is the copy. Moving
    // within one directory finds every blob in place this way.
    match to.open(id) {
        Ok(copy) if copy.len() == len => return Ok(BlobCopy::Present(len)),
        Ok(_) => {}
        Err(e) if e.kind == StorageErrorKind::Missing => {}
        Err(e) => return Err(e),
    }
    let mut writer = to.create_with_id(id)?;
    let mut buf = vec![0; COPY_CHUNK_BYTES];
    loop {
        let n = source
            .read(&mut buf)
            .map_err(|e| StorageError::from_io(format!("cannot read blob {}", id.as_str()), &e))?;
        if n == 0 {
            break;
        }
        writer.write(&buf[..n])?;
    }
    writer.commit()?;
    Ok(BlobCopy::Copied(len))
}

/// What the check counts in the target, to compare with the report.
#[derive(Default)]
struct Found {
    records: u64,
    blob_bytes: u64,
    /// The first few problems, for the error.
    problems: Vec<String>,
}

/// How many problems an error lists before it only counts them.
const PROBLEMS_SHOWN_MAX: usize = 5;

impl Found {
    fn problem(&mut self, what: String) {
        if self.problems.len() < PROBLEMS_SHOWN_MAX {
            self.problems.push(what);
        }
    }
}

/// Reads the source once more and finds each record, and the full length
/// of each of its blobs, in the target.
fn verify(from: Side<'_>, to: Side<'_>, report: &MigrationReport) -> StorageResult<()> {
    let mut found = Found::default();
    each_record(from.repo, &mut |key, obj| {
        check_record(from, to, key, obj, &mut found)
    })?;
    if found.records == report.records && found.blob_bytes == report.blob_bytes {
        return Ok(());
    }
    Err(StorageError::new(format!(
        "the check after the move failed: {} of {} records and {} of {} bytes are in the target ({})",
        found.records,
        report.records,
        found.blob_bytes,
        report.blob_bytes,
        found.problems.join("; ")
    )))
}

fn check_record(
    from: Side<'_>,
    to: Side<'_>,
    key: &str,
    obj: &Object,
    found: &mut Found,
) -> StorageResult<()> {
    if matches!(obj, Object::Upload(_)) {
        return Ok(());
    }
    let Some(copy) = to.repo.get(key)? else {
        found.problem(format!("record {key:?} is missing"));
        return Ok(());
    };
    found.records += 1;
    if &copy != obj {
        // Changed in the target since it was copied: its bytes are the
        // target's business, and the report did not count them.
        return Ok(());
    }
    for id in obj.blobs() {
        let want = match from.blobs.open(id) {
            Ok(reader) => reader.len(),
            Err(e) if e.kind == StorageErrorKind::Missing => continue,
            Err(e) => return Err(e),
        };
        match to.blobs.open(id) {
            Ok(copy) if copy.len() == want => found.blob_bytes += want,
            Ok(copy) => {
                found.blob_bytes += copy.len();
                found.problem(format!("blob {} of {key:?} is short", id.as_str()));
            }
            Err(e) if e.kind == StorageErrorKind::Missing => {
                found.problem(format!("blob {} of {key:?} is missing", id.as_str()));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
