//! A GET whose record is read without holding a thread (issue 37).
//!
//! Where the records are across a socket and their client is asynchronous
//! ([`store_core::Repository::get_async`]), the server awaits the record
//! on its executor, then hands it here to be decided, as
//! [`App::read_without_writing`] decides it: no blocking thread, and no
//! second runtime, per read. Deciding is pure, and opening the bytes
//! waits on nothing when they are on a local disk or in the blob cache;
//! bytes across a socket are opened by [`App::open_fetched`], which the
//! server runs where waiting is allowed.

use store_core::ports::AsyncGet;
use store_core::{FileRecord, Object, ReadDecision, ReadIntent};

use crate::files::{live_file_or_bundle, Download, Opened};
use crate::{blob_error, App, AppResult, ReadKey};

/// What a read whose record was fetched may do next.
#[derive(Debug)]
pub enum FetchedRead {
    /// Serve this: it wrote nothing and waited on nothing.
    Opened(Opened),
    /// Serving it would burn or count a download: [`App::read`] does
    /// that, under the key's lock, reading the record again.
    Writes,
    /// The bytes are across a socket and not in memory:
    /// [`App::open_fetched`] opens them, on a thread that may wait.
    BytesWait(FileRecord),
}

impl App {
    /// The record read of `GET /<id>` as a future that holds no thread,
    /// where the records have one; its answer goes to
    /// [`App::read_fetched`]. `None`: read with
    /// [`App::read_without_writing`].
    pub fn fetch_object(&self, id: &str) -> Option<AsyncGet> {
        self.ports.repo.get_async(id)
    }

    /// [`App::read_without_writing`] on the record [`App::fetch_object`]
    /// read: the same gates and the same decision, in the same order (the
    /// password gate before anything is counted). It reads the clock and,
    /// when they are at hand, opens the bytes; nothing else.
    pub fn read_fetched(
        &self,
        id: &str,
        fetched: Option<Object>,
        intent: ReadIntent,
        key: &ReadKey,
    ) -> AppResult<FetchedRead> {
        let now = self.now();
        let object = live_file_or_bundle(fetched, now)?;
        self.check_read(id, (object.protection(), object.owner()), key, now)?;
        let record = match object {
            Object::File(f) => f,
            Object::Bundle(b) => return Ok(FetchedRead::Opened(Opened::Bundle(b))),
            Object::Dir(_) | Object::Gallery(_) | Object::Image(_) | Object::Upload(_) => {
                unreachable!("live_file_or_bundle only returns files and bundles")
            }
        };
        if record.decide_read(now, intent)? != ReadDecision::Serve {
            return Ok(FetchedRead::Writes);
        }
        // A counted file's bytes (here a HEAD's) go through no cache.
        let counted = record.is_counted();
        let blobs = &self.ports.blobs;
        let at_hand = if counted {
            (!blobs.reads_wait()).then(|| blobs.open_once(&record.blob))
        } else {
            blobs.open_at_hand(&record.blob)
        };
        match at_hand {
            Some(reader) => {
                let reader = reader.map_err(blob_error)?;
                Ok(FetchedRead::Opened(Opened::File(Download::of(
                    record, counted, reader,
                ))))
            }
            None => Ok(FetchedRead::BytesWait(record)),
        }
    }

    /// Opens the bytes of a record [`App::read_fetched`] decided to
    /// serve: it may wait on the network, so never on an executor.
    pub fn open_fetched(&self, record: FileRecord) -> AppResult<Opened> {
        let counted = record.is_counted();
        let reader = self.open_file_blob(&record.blob, counted)?;
        Ok(Opened::File(Download::of(record, counted, reader)))
    }
}
