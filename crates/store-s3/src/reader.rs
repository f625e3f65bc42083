//! A blob read from the bucket: one GET, whose body a task on the
//! adapter's runtime passes on through a small channel as the reader asks.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use store_core::ports::{BlobReader, StorageResult};
use tokio::sync::mpsc;

use crate::client::{self, next_chunk};
use crate::S3Blobs;

/// Chunks of the body fetched ahead of the reader: enough to keep the
/// socket busy while the reader copies one, little enough that a slow
/// client holds little memory (a chunk is what one socket read gave).
const CHUNKS_AHEAD: usize = 2;

/// Bodies up to this size are read whole at open, on the opening thread
/// (a blocking one): reading them later never waits, so a caller may read
/// a small body where it must not block (the HTTP shell answers bodies up
/// to 64 KiB inline, on its executor).
pub const PRELOAD_BYTES_MAX: u64 = 64 * 1024;

/// The bytes of one GET, in order. `len` is known from the response's
/// headers before any byte is read.
pub struct S3Reader {
    chunks: Option<mpsc::Receiver<client::Result<Bytes>>>,
    current: Bytes,
    len: u64,
}

impl std::fmt::Debug for S3Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Reader").field("len", &self.len).finish()
    }
}

impl S3Reader {
    /// Sends the GET (for `range`, or the whole object) and starts passing
    /// its body on. A missing object is a `Missing` error here, at open.
    pub(crate) fn open(
        blobs: &S3Blobs,
        key: String,
        range: Option<Range<u64>>,
    ) -> StorageResult<Self> {
        let client = Arc::clone(&blobs.shared.client);
        let (len, mut body) = blobs
            .run(async move { client.get(&key, range).await })
            .map_err(|e| blobs.error("cannot read a blob from", e))?;
        if len <= PRELOAD_BYTES_MAX {
            let whole = blobs
                .run(async move {
                    let mut whole = Vec::new();
                    while let Some(chunk) = next_chunk(&mut body).await? {
                        whole.extend_from_slice(&chunk);
                    }
                    Ok(Bytes::from(whole))
                })
                .map_err(|e| blobs.error("cannot read a blob from", e))?;
            return Ok(Self {
                chunks: None,
                current: whole,
                len,
            });
        }
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        blobs.shared.bridge.spawn(async move {
            loop {
                let chunk = match next_chunk(&mut body).await {
                    Ok(Some(chunk)) => Ok(chunk),
                    Ok(None) => break,
                    Err(e) => Err(e),
                };
                let failed = chunk.is_err();
                // A reader dropped early closes the channel: stop reading.
                if tx.send(chunk).await.is_err() || failed {
                    break;
                }
            }
        });
        Ok(Self {
            chunks: Some(rx),
            current: Bytes::new(),
            len,
        })
    }

    /// A reader of nothing, for an empty range: no request at all.
    pub(crate) fn empty() -> Self {
        Self {
            chunks: None,
            current: Bytes::new(),
            len: 0,
        }
    }
}

impl std::io::Read for S3Reader {
    /// Blocks for the next chunk: readers run on blocking threads (the
    /// server's blocking pool, a plain thread), never on a runtime's
    /// workers.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            let Some(chunks) = self.chunks.as_mut() else {
                return Ok(0);
            };
            match chunks.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(e)) => {
                    self.chunks = None;
                    return Err(std::io::Error::other(format!("reading a blob: {e}")));
                }
                None => self.chunks = None,
            }
        }
        let n = self.current.len().min(buf.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

impl BlobReader for S3Reader {
    fn len(&self) -> u64 {
        self.len
    }
}
