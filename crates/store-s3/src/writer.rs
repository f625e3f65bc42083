//! A blob written to the bucket: one PUT for a body that fits in one part,
//! a multipart upload whose parts go out as they fill for a larger one.
//! The writer holds at most one part in memory.

use std::sync::Arc;

use bytes::Bytes;
use store_core::ports::{BlobWriter, StorageResult};
use store_core::{ids, BlobId};

use crate::S3Blobs;

pub(crate) struct S3Writer {
    blobs: S3Blobs,
    id: BlobId,
    key: String,
    /// Bytes not sent yet: at most one part.
    part: Vec<u8>,
    /// The multipart upload's id, once the body has outgrown one part.
    upload: Option<String>,
    /// The ETags of the parts sent so far, in order.
    etags: Vec<String>,
}

impl S3Writer {
    /// A writer committing under `id`, or under an id minted now: random,
    /// so unique without asking the store (which could not promise it).
    pub(crate) fn new(blobs: S3Blobs, id: Option<BlobId>) -> Self {
        let id = id.unwrap_or_else(|| ids::blob_id(blobs.shared.random.as_ref()));
        let key = crate::key(&blobs.shared.blobs, id.as_str());
        Self {
            blobs,
            id,
            key,
            part: Vec::new(),
            upload: None,
            etags: Vec::new(),
        }
    }

    /// Bytes held, not sent yet.
    #[cfg(test)]
    pub(crate) fn part_len(&self) -> usize {
        self.part.len()
    }

    /// Parts sent so far.
    #[cfg(test)]
    pub(crate) fn parts_sent(&self) -> usize {
        self.etags.len()
    }

    /// Sends the full part as the next part of the multipart upload,
    /// starting the upload first if this is its first part.
    fn send_part(&mut self) -> StorageResult<()> {
        let data = Bytes::from(std::mem::take(&mut self.part));
        let client = Arc::clone(&self.blobs.shared.client);
        let upload = match &self.upload {
            Some(upload) => upload.clone(),
            None => {
                let (client, key) = (Arc::clone(&client), self.key.clone());
                let upload = self
                    .blobs
                    .run(async move { client.create_multipart(&key).await })
                    .map_err(|e| self.blobs.error("cannot start an upload to", e))?;
                self.upload = Some(upload.clone());
                upload
            }
        };
        let number = part_number(self.etags.len())?;
        let key = self.key.clone();
        let etag = self
            .blobs
            .run(async move { client.upload_part(&key, &upload, number, data).await })
            .map_err(|e| self.blobs.error("cannot upload a part to", e))?;
        self.etags.push(etag);
        Ok(())
    }
}

/// The number S3 gives the part after `sent` parts: from 1, at most
/// 10,000.
pub(crate) fn part_number(sent: usize) -> StorageResult<u16> {
    match u16::try_from(sent + 1) {
        Ok(n) if n <= 10_000 => Ok(n),
        _ => Err(store_core::StorageError::new(
            "a blob of more than 10,000 parts, the most S3 takes in one upload",
        )),
    }
}

impl BlobWriter for S3Writer {
    /// A part is sent only once the next byte arrives, so that a body of
    /// exactly one part is one PUT rather than a multipart upload.
    fn write(&mut self, mut chunk: &[u8]) -> StorageResult<()> {
        let part_bytes = self.blobs.shared.part_bytes;
        while !chunk.is_empty() {
            if self.part.len() == part_bytes {
                self.send_part()?;
            }
            let take = (part_bytes - self.part.len()).min(chunk.len());
            self.part.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        Ok(())
    }

    /// The object exists, whole, once this returns: S3 makes a PUT or a
    /// completed multipart upload visible at once and never in part.
    fn commit(mut self: Box<Self>) -> StorageResult<BlobId> {
        let last = Bytes::from(std::mem::take(&mut self.part));
        let blobs = self.blobs.clone();
        let client = Arc::clone(&blobs.shared.client);
        let key = self.key.clone();
        let Some(upload) = self.upload.take() else {
            blobs
                .run(async move { client.put(&key, last).await })
                .map_err(|e| blobs.error("cannot write a blob to", e))?;
            return Ok(self.id.clone());
        };
        let mut etags = std::mem::take(&mut self.etags);
        let number = part_number(etags.len())?;
        let result = blobs.run(async move {
            let done = async {
                if !last.is_empty() {
                    etags.push(client.upload_part(&key, &upload, number, last).await?);
                }
                client.complete_multipart(&key, &upload, &etags).await
            }
            .await;
            if done.is_err() {
                let _ = client.abort_multipart(&key, &upload).await;
            }
            done
        });
        result.map_err(|e| blobs.error("cannot complete an upload to", e))?;
        Ok(self.id.clone())
    }
}

impl Drop for S3Writer {
    /// An upload never committed is aborted, in the background, so that
    /// the store frees its parts; nothing was ever visible under the id.
    fn drop(&mut self) {
        if let Some(upload) = self.upload.take() {
            let client = Arc::clone(&self.blobs.shared.client);
            let key = std::mem::take(&mut self.key);
            self.blobs.shared.bridge.spawn(async move {
                let _ = client.abort_multipart(&key, &upload).await;
            });
        }
    }
}
