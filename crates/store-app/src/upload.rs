use store_core::content::{Utf8Check, SNIFF_BYTES};
use store_core::ports::BlobWriter;
use store_core::{BlobId, StoreError};

use crate::AppResult;

/// A body being received into a new blob, with its limit enforced on every
/// chunk (the whole body is never held in memory). It remembers what the
/// use case needs to decide the file's type: the first bytes and whether
/// the whole is UTF-8 text. Dropped before [`Upload::commit`], it leaves
/// nothing behind.
pub struct Upload {
    writer: Box<dyn BlobWriter>,
    limit_bytes: u64,
    size: u64,
    head: Vec<u8>,
    utf8: Utf8Check,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("size", &self.size)
            .field("limit_bytes", &self.limit_bytes)
            .finish()
    }
}

impl Upload {
    pub(crate) fn new(writer: Box<dyn BlobWriter>, limit_bytes: u64) -> Self {
        Self {
            writer,
            limit_bytes,
            size: 0,
            head: Vec::new(),
            utf8: Utf8Check::new(),
        }
    }

    /// Appends a chunk; refuses it with 413 once the limit would be passed.
    pub fn push(&mut self, chunk: &[u8]) -> AppResult<()> {
        let size = self.size + chunk.len() as u64;
        if size > self.limit_bytes {
            return Err(StoreError::too_large(self.limit_bytes).into());
        }
        if self.head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        self.utf8.push(chunk);
        self.writer.write(chunk)?;
        self.size = size;
        Ok(())
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Valid UTF-8 without NUL bytes.
    pub fn is_utf8_text(&self) -> bool {
        self.utf8.is_text()
    }

    pub(crate) fn commit(self) -> AppResult<BlobId> {
        Ok(self.writer.commit()?)
    }
}
