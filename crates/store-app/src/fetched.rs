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

use crate::files::{live_file_or_bundle, Admitted, Download, Opened};
use crate::{App, AppResult, ReadKey};

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
        let record = match self.admit_read(id, object, intent, key, now)? {
            Admitted::File(record, ReadDecision::Serve) => record,
            Admitted::File(..) => return Ok(FetchedRead::Writes),
            Admitted::Bundle(b) => return Ok(FetchedRead::Opened(Opened::Bundle(b))),
        };
        let counted = record.is_counted();
        match self.file_blob_at_hand(&record.blob, counted) {
            Some(reader) => Ok(FetchedRead::Opened(Opened::File(Download::of(
                record, counted, reader?,
            )))),
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
