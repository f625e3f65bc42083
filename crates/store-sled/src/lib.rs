//! # store-sled
//!
//! The default persistence adapter: records and their indexes in sled
//! ([`SledRepository`]), bytes as files on disk ([`FsBlobStore`]).
//!
//! Durability: a blob is written to a temp file, fsynced and renamed (and
//! its directory fsynced) before it is visible; a record change is one sled
//! transaction over the record and its index entries, flushed before the
//! call returns. Concurrent writers share flushes ([`GroupCommit`]): each
//! still returns only after a flush that began after its change. The
//! use-case layer commits bytes before records, so a write acknowledged to
//! a client survives a crash of the process.
//!
//! ## Start here
//!
//! Both adapters open one data directory, which sled locks: one process
//! at a time serves it (several processes share a store through store-pg
//! and store-s3 instead). `examples/plain_thread.rs` goes on from here.
//!
//! ```
//! use std::sync::Arc;
//! use store_app::system::{OsRandom, SystemClock};
//! use store_app::{App, AppConfig, Ports};
//! use store_core::ports::Random;
//! use store_sled::{FsBlobStore, SledRepository};
//!
//! let data = tempfile::tempdir()?;
//! let random: Arc<dyn Random> = Arc::new(OsRandom);
//! let ports = Ports {
//!     repo: Arc::new(SledRepository::open(data.path())?),
//!     blobs: Arc::new(FsBlobStore::open(data.path(), Arc::clone(&random))?),
//!     clock: Arc::new(SystemClock),
//!     random,
//!     // Imports need a fetcher: store_fetch::UreqFetcher in the server.
//!     fetcher: Arc::new(store_testkit::FakeFetcher::new()),
//!     coordination: Default::default(),
//! };
//! let (app, recovery) = App::open(ports, AppConfig::new("http://localhost:8080"))?;
//! println!("{recovery:?}");
//! # drop(app);
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! ```

mod blobs;
mod cachedir;
mod generations;
mod group;
mod handles;
mod memo;
mod repo;

pub use blobs::{FsBlobStore, SHARED_TEMP_GRACE};
pub use group::GroupCommit;
pub use repo::SledRepository;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use store_core::ports::{BlobStore, Repository};
    use store_testkit::{suite, SeededRandom};

    #[test]
    fn sled_repository_passes_the_suite() {
        let dirs = std::cell::RefCell::new(vec![]);
        suite::repository(&|| {
            let dir = tempfile::tempdir().unwrap();
            let repo = SledRepository::open(dir.path()).unwrap();
            dirs.borrow_mut().push(dir);
            Box::new(repo)
        });
    }

    #[test]
    fn fs_blob_store_passes_the_suite() {
        let dirs = std::cell::RefCell::new(vec![]);
        suite::blob_store(&|| {
            let dir = tempfile::tempdir().unwrap();
            let store = FsBlobStore::open(dir.path(), Arc::new(SeededRandom::new(1))).unwrap();
            dirs.borrow_mut().push(dir);
            Box::new(store)
        });
    }

    /// Opens again a database this process just closed. sled's background
    /// flusher may hold the file lock for a moment after the last handle
    /// is dropped; across processes (the server's restarts) that never
    /// arises, so only this test waits for it.
    pub(crate) fn reopen(path: &std::path::Path) -> SledRepository {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            match SledRepository::open(path) {
                Ok(repo) => return repo,
                Err(e) if std::time::Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn records_and_indexes_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let a = suite::sample_file("a", Some(100), &["x"]);
        {
            let repo = SledRepository::open(dir.path()).unwrap();
            repo.put("a", &a).unwrap();
        }
        let repo = reopen(dir.path());
        assert_eq!(repo.get("a").unwrap(), Some(a));
        assert_eq!(repo.keys_with_tag("x").unwrap(), ["a"]);
        assert_eq!(repo.expiring(10).unwrap().len(), 1);
    }

    #[test]
    fn blobs_survive_reopening_and_temp_files_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let rng = Arc::new(SeededRandom::new(3));
        let id = {
            let store = FsBlobStore::open(dir.path(), rng.clone()).unwrap();
            let mut w = store.create().unwrap();
            w.write(b"kept").unwrap();
            let id = w.commit().unwrap();
            // A writer that never commits, as if the process died mid-upload.
            let mut w = store.create().unwrap();
            w.write(b"half").unwrap();
            std::mem::forget(w);
            id
        };
        let tmp = dir.path().join("tmp");
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            1,
            "the crash left a temp file"
        );
        let store = FsBlobStore::open(dir.path(), rng).unwrap();
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "opening cleans temp files"
        );
        assert_eq!(store.list().unwrap(), vec![id.clone()]);
        let mut s = String::new();
        std::io::Read::read_to_string(&mut store.open(&id).unwrap(), &mut s).unwrap();
        assert_eq!(s, "kept");
    }

    #[test]
    fn stray_files_in_the_blob_dir_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBlobStore::open(dir.path(), Arc::new(SeededRandom::new(1))).unwrap();
        let id = store.create().unwrap().commit().unwrap();
        let fan = dir.path().join("blobs").join(&id.as_str()[..2]);
        std::fs::write(fan.join(".DS_Store"), b"x").unwrap();
        std::fs::create_dir(fan.join("backup")).unwrap();
        assert_eq!(store.list().unwrap(), vec![id]);
    }

    #[test]
    fn blob_ids_cannot_escape_the_blob_dir() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBlobStore::open(dir.path(), Arc::new(SeededRandom::new(1))).unwrap();
        let evil = store_core::BlobId("../../etc/passwd".into());
        assert!(store.open(&evil).is_err());
        assert!(store.remove(&evil).is_err());
    }
}
