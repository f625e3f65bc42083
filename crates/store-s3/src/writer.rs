//! A blob written to the bucket: one PUT for a body that fits in one part,
//! a multipart upload whose parts go out as they fill for a larger one.
//! The writer holds at most one part in memory.

use std::sync::Arc;

use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStoreExt, PutPayload};
use store_core::ports::{BlobWriter, StorageResult};
use store_core::{ids, BlobId};

use crate::S3Blobs;

pub(crate) struct S3Writer {
    blobs: S3Blobs,
    id: BlobId,
    path: Path,
    /// Bytes not sent yet: at most one part.
    part: Vec<u8>,
    /// The multipart upload, once the body has outgrown one part.
    upload: Option<Box<dyn MultipartUpload>>,
    /// Parts sent so far.
    sent: usize,
}

impl S3Writer {
    /// A writer committing under `id`, or under an id minted now: random,
    /// so unique without asking the store (which could not promise it).
    pub(crate) fn new(blobs: S3Blobs, id: Option<BlobId>) -> Self {
        let id = id.unwrap_or_else(|| ids::blob_id(blobs.shared.random.as_ref()));
        let path = blobs.shared.blobs.clone().join(id.as_str());
        Self {
            blobs,
            id,
            path,
            part: Vec::new(),
            upload: None,
            sent: 0,
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
        self.sent
    }

    /// Sends the full part as the next part of the multipart upload,
    /// starting the upload first if this is its first part.
    fn send_part(&mut self) -> StorageResult<()> {
        let data = PutPayload::from(std::mem::take(&mut self.part));
        if self.upload.is_none() {
            let store = Arc::clone(&self.blobs.shared.store);
            let path = self.path.clone();
            let upload = self
                .blobs
                .run(async move { store.put_multipart(&path).await })
                .map_err(|e| self.blobs.error("cannot start an upload to", e))?;
            self.upload = Some(upload);
        }
        let sent = self.upload.as_mut().expect("started above").put_part(data);
        self.blobs
            .run(sent)
            .map_err(|e| self.blobs.error("cannot upload a part to", e))?;
        self.sent += 1;
        Ok(())
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
        let last = PutPayload::from(std::mem::take(&mut self.part));
        let blobs = self.blobs.clone();
        match self.upload.take() {
            None => {
                let store = Arc::clone(&blobs.shared.store);
                let path = self.path.clone();
                blobs
                    .run(async move { store.put(&path, last).await.map(drop) })
                    .map_err(|e| blobs.error("cannot write a blob to", e))?;
            }
            Some(mut upload) => {
                let result = blobs.run(async move {
                    let done = async {
                        if last.content_length() > 0 {
                            upload.put_part(last).await?;
                        }
                        upload.complete().await.map(drop)
                    }
                    .await;
                    if done.is_err() {
                        let _ = upload.abort().await;
                    }
                    done
                });
                result.map_err(|e| blobs.error("cannot complete an upload to", e))?;
            }
        }
        Ok(self.id.clone())
    }
}

impl Drop for S3Writer {
    /// An upload never committed is aborted, in the background, so that
    /// the store frees its parts; nothing was ever visible under the id.
    fn drop(&mut self) {
        if let Some(mut upload) = self.upload.take() {
            self.blobs.shared.bridge.spawn(async move {
                let _ = upload.abort().await;
            });
        }
    }
}
