//! A directory of its own for each process's disk cache (issue 37).
//!
//! Processes of a cluster may share one `--data` (and the tests start two
//! on one). Before, each wiped `--data/blob-cache` as it started, so two
//! starting at once raced, and a process that restarted wiped the copies
//! of the others. Now each claims `<root>/<name>/`, named at random, and
//! holds an exclusive `flock` on `<root>/<name>.lock` for as long as its
//! store lives. The kernel drops that lock when the file is closed, which
//! it does when the process ends however it ends (a crash, `kill -9`), so
//! a lock that can be taken marks a directory nobody uses. Each claim
//! removes those, and anything else under the root without a lock file
//! (the layout before this: `blobs/` and `tmp/` straight under the root).
//!
//! The lock file exists before its directory does (it is made under a
//! temporary name, locked, then renamed into place), so a directory whose
//! lock file is missing never belongs to a live process.

use std::fs::{self, File};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::fs::{flock, FlockOperation};
use store_core::ports::{Random, StorageResult};
use store_core::StorageError;

/// The ending of a claim's lock file, beside its directory.
const LOCK_SUFFIX: &str = ".lock";
/// The ending of a lock file before it is renamed into place.
const NEW_LOCK_SUFFIX: &str = ".lock.new";
/// How old an unrenamed lock file must be before a claim removes it: the
/// process that made it renames it at once, unless it died in between.
const NEW_LOCK_GRACE: Duration = Duration::from_secs(60);

/// A directory claimed for this process's cache, held until dropped.
#[derive(Debug)]
pub struct Claim {
    dir: PathBuf,
    /// Holds the lock: closing it (on drop, or at the process's end) is
    /// what frees the directory for the next claim to remove.
    _lock: File,
}

impl Claim {
    /// The directory of this process's copies (not yet created).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn io(what: &str, path: &Path, e: std::io::Error) -> StorageError {
    StorageError::from_io(format!("{what} {}", path.display()), &e)
}

/// Claims a new directory under `root` for this process, after removing
/// the directories of processes that have ended.
pub fn claim(root: &Path, random: &dyn Random) -> StorageResult<Claim> {
    fs::create_dir_all(root).map_err(|e| io("cannot create", root, e))?;
    let mut bytes = [0u8; 8];
    random.fill(&mut bytes);
    let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let new = root.join(format!("{name}{NEW_LOCK_SUFFIX}"));
    let lock = File::options()
        .write(true)
        .create_new(true)
        .open(&new)
        .map_err(|e| io("cannot create", &new, e))?;
    flock(&lock, FlockOperation::NonBlockingLockExclusive)
        .map_err(|e| io("cannot lock", &new, e.into()))?;
    let placed = root.join(format!("{name}{LOCK_SUFFIX}"));
    fs::rename(&new, &placed).map_err(|e| io("cannot rename", &new, e))?;
    reclaim(root, &name)?;
    Ok(Claim {
        dir: root.join(name),
        _lock: lock,
    })
}

/// Removes what under `root` belongs to no live process, but `own`. A
/// leftover that cannot be removed (say, a directory another user owns)
/// is logged and left: it costs room, not this process's cache.
fn reclaim(root: &Path, own: &str) -> StorageResult<()> {
    for entry in fs::read_dir(root).map_err(|e| io("cannot list", root, e))? {
        let entry = entry.map_err(|e| io("cannot list", root, e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // Our own lock file exists (it is made before the claim looks),
        // so our directory is never taken for one without a lock.
        let unrenamed = name.ends_with(NEW_LOCK_SUFFIX);
        let reclaimed = match name.strip_suffix(LOCK_SUFFIX) {
            Some(stem) if stem == own => Ok(()),
            Some(stem) => reclaim_locked(&root.join(stem), &path),
            // Renamed at once by a live claim, unless it died in between;
            // its lock tells a claim that stalled for long from a dead one.
            None if unrenamed && is_older_than(&path, NEW_LOCK_GRACE) => {
                reclaim_locked(&path, &path)
            }
            None if unrenamed => Ok(()),
            None if root.join(format!("{name}{LOCK_SUFFIX}")).exists() => Ok(()),
            None => remove(&path),
        };
        if let Err(e) = reclaimed {
            tracing::warn!(error = %e, "a disk cache's leftover stays");
        }
    }
    Ok(())
}

/// Removes `dir` and then the lock file `lock` if no process holds that
/// lock (`dir` may be the lock file itself). Holding it meanwhile keeps
/// two claims from both removing, and lets the directory go before its
/// lock, as the order of a claim requires.
fn reclaim_locked(dir: &Path, lock: &Path) -> StorageResult<()> {
    let file = match File::open(lock) {
        Ok(file) => file,
        // Another claim removed it first.
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("cannot open", lock, e)),
    };
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => return Ok(()),
        Err(e) => return Err(io("cannot lock", lock, e.into())),
    }
    // Another claim may have removed both between the open and the lock:
    // then there is nothing left to do, and the unlinked file is dropped.
    if !lock.exists() {
        return Ok(());
    }
    remove(dir)?;
    remove(lock)
}

fn is_older_than(path: &Path, age: Duration) -> bool {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|a| a > age)
}

/// Removes a file or a whole directory; one already gone is no error.
fn remove(path: &Path) -> StorageResult<()> {
    let removed = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(io("cannot remove", path, e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store_testkit::SeededRandom;

    /// Asserts that `root` holds exactly the entries `expected`, in any
    /// order.
    fn assert_entries(root: &Path, mut expected: Vec<String>) {
        let mut names: Vec<String> = fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        expected.sort();
        assert_eq!(names, expected);
    }

    /// The name of a claim's directory.
    fn name(c: &Claim) -> String {
        c.dir().file_name().unwrap().to_string_lossy().into_owned()
    }

    /// Two live claims on one root keep each other's directories; a claim
    /// dropped (as its process ending drops it) is removed by the next.
    #[test]
    fn a_claim_keeps_live_directories_and_removes_ended_ones() {
        let root = tempfile::tempdir().unwrap();
        let random = SeededRandom::new(3);
        let first = claim(root.path(), &random).unwrap();
        fs::create_dir_all(first.dir().join("blobs")).unwrap();
        let second = claim(root.path(), &random).unwrap();
        fs::create_dir_all(second.dir().join("blobs")).unwrap();
        assert_ne!(first.dir(), second.dir());
        assert!(first.dir().join("blobs").is_dir(), "the first is kept");
        let gone = first.dir().to_path_buf();
        drop(first);
        let third = claim(root.path(), &random).unwrap();
        assert!(!gone.exists(), "the ended claim's directory was removed");
        assert!(second.dir().join("blobs").is_dir(), "the live one is kept");
        // The third's directory is made by its store, not by the claim.
        let expected = vec![
            name(&second),
            format!("{}{LOCK_SUFFIX}", name(&second)),
            format!("{}{LOCK_SUFFIX}", name(&third)),
        ];
        assert_entries(root.path(), expected);
    }

    /// What the layout before claims left (copies straight under the root)
    /// and a fresh unrenamed lock file of a claim under way: the first is
    /// removed, the second kept.
    #[test]
    fn a_claim_removes_the_old_layout_but_not_a_claim_under_way() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("blobs/ab")).unwrap();
        fs::write(root.path().join("blobs/ab/abcdef"), b"old copy").unwrap();
        fs::create_dir_all(root.path().join("tmp")).unwrap();
        let under_way = root.path().join(format!("0011{NEW_LOCK_SUFFIX}"));
        fs::write(&under_way, b"").unwrap();
        let held = claim(root.path(), &SeededRandom::new(5)).unwrap();
        let expected = vec![
            format!("0011{NEW_LOCK_SUFFIX}"),
            format!("{}{LOCK_SUFFIX}", name(&held)),
        ];
        assert_entries(root.path(), expected);
    }

    /// An unrenamed lock file past its grace is removed only when no
    /// process holds it: one held belongs to a claim that stalled.
    #[test]
    fn an_old_unrenamed_lock_goes_only_when_nobody_holds_it() {
        let root = tempfile::tempdir().unwrap();
        let long_ago = std::time::SystemTime::now() - 2 * NEW_LOCK_GRACE;
        let make = |name: &str| {
            let path = root.path().join(format!("{name}{NEW_LOCK_SUFFIX}"));
            let file = File::create(&path).unwrap();
            file.set_modified(long_ago).unwrap();
            file
        };
        let stalled = make("aa");
        flock(&stalled, FlockOperation::NonBlockingLockExclusive).unwrap();
        drop(make("bb"));
        let held = claim(root.path(), &SeededRandom::new(9)).unwrap();
        let expected = vec![
            format!("aa{NEW_LOCK_SUFFIX}"),
            format!("{}{LOCK_SUFFIX}", name(&held)),
        ];
        assert_entries(root.path(), expected);
        drop(stalled);
    }
}
