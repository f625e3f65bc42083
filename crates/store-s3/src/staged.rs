//! A resumable upload's bytes in the bucket (issue 33): a multipart upload
//! whose parts outlive the process that sent them. Where it stands (the
//! multipart upload's id, each part's ETag and length, and the bytes short
//! of a whole part) is kept in the upload's record as JSON
//! (`Staging::state`), so that the next PATCH goes on from any process.
//!
//! Every part but the last must hold at least 5 MiB (`part_bytes`), and a
//! PATCH may bring less: the bytes after the last whole part wait in an
//! object of their own under `<prefix>/staging/<blob>/`, read back by the
//! next PATCH. Parts are up to twice `part_bytes`, so that a PATCH ending
//! with at least `part_bytes` held sends them as a part instead: a client
//! sending PATCHes of 5 to 10 MiB (tus clients' usual chunks) moves each
//! byte to the bucket once, never through a waiting object. Each
//! pause writes a new one (its name is in the state): a PATCH whose record
//! write then fails must not have changed the bytes the record names. The
//! stale ones go with the rest of the directory when the upload completes
//! or is dropped. Parts sent by a PATCH that did not end are sent again
//! under the same numbers by the next; S3 keeps a part number's last.
//! An upload the bucket completed but whose record was not written (its
//! process died in between) is found by its object when the client
//! sends its last bytes again, and made the file then.

use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use store_core::ports::{StagedWriter, StorageResult};
use store_core::resumable::Staging;
use store_core::{ids, BlobId, StorageError};

use crate::writer::part_number;
use crate::{client, key, S3Blobs};

/// Where a staged blob stands.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    /// The multipart upload's id.
    upload: String,
    /// Each part sent, in order: its ETag and its length.
    #[serde(default)]
    parts: Vec<(String, u64)>,
    /// The object holding the bytes after the last part, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tail: Option<(String, u64)>,
}

impl State {
    fn read(staging: &Staging) -> StorageResult<Self> {
        serde_json::from_str(&staging.state).map_err(|e| {
            StorageError::new(format!(
                "the staged blob {} has a bad state: {e}",
                staging.blob.0
            ))
        })
    }

    fn len(&self) -> u64 {
        self.parts.iter().map(|(_, n)| n).sum::<u64>() + self.tail.as_ref().map_or(0, |t| t.1)
    }
}

impl S3Blobs {
    /// `<prefix>/staging/<blob>`: where a staged blob's short bytes wait.
    fn staging_dir(&self, blob: &BlobId) -> StorageResult<String> {
        let name = ids::minted_blob_name(blob)?;
        Ok(key(&self.shared.staging, name))
    }

    pub(crate) fn stage_new(&self) -> StorageResult<Staging> {
        let blob = ids::blob_id(self.shared.random.as_ref());
        let path = self.path(&blob)?;
        let client = Arc::clone(&self.shared.client);
        let upload = self
            .run(async move { client.create_multipart(&path).await })
            .map_err(|e| self.error("cannot start an upload to", e))?;
        let state = State {
            upload,
            ..State::default()
        };
        Ok(Staging {
            blob,
            state: serde_json::to_string(&state).expect("a state serialises"),
        })
    }

    pub(crate) fn resume_staged(&self, staging: &Staging, offset: u64) -> StorageResult<S3Staged> {
        let state = State::read(staging)?;
        let path = self.path(&staging.blob)?;
        if self.completed(&path)? {
            // The bucket completed the upload, but its record was not
            // written (the process died, or the database failed, in
            // between): the object holds every byte already. The client
            // sends again what the record lacks; those bytes are the
            // object's, and the last of them makes the file.
            return Ok(S3Staged {
                blobs: self.clone(),
                path,
                blob: staging.blob.clone(),
                state,
                held: Vec::new(),
                completed: true,
            });
        }
        if state.len() != offset {
            return Err(StorageError::new(format!(
                "the staged blob {} holds {} bytes, not the {offset} recorded",
                staging.blob.0,
                state.len()
            )));
        }
        let mut held = Vec::new();
        if let Some((name, _)) = &state.tail {
            let tail = key(&self.staging_dir(&staging.blob)?, name);
            let client = Arc::clone(&self.shared.client);
            let bytes = self
                .run(async move { client.get_all(&tail).await })
                .map_err(|e| self.error("cannot read a staged upload's last bytes from", e))?;
            held.extend_from_slice(&bytes);
        }
        Ok(S3Staged {
            blobs: self.clone(),
            path,
            blob: staging.blob.clone(),
            state,
            held,
            completed: false,
        })
    }

    /// Whether the multipart upload to `path` was completed: its object
    /// exists (an upload in progress has none).
    fn completed(&self, path: &str) -> StorageResult<bool> {
        let client = Arc::clone(&self.shared.client);
        let p = path.to_string();
        match self.run(async move { client.head(&p).await }) {
            Ok(_) => Ok(true),
            Err(client::Error::NotFound) => Ok(false),
            Err(e) => Err(self.error("cannot read an object's metadata in", e)),
        }
    }

    /// Aborts the multipart upload and drops the waiting bytes; gone
    /// already is fine.
    pub(crate) fn discard_staged(&self, staging: &Staging) -> StorageResult<()> {
        let state = State::read(staging)?;
        let path = self.path(&staging.blob)?;
        let client = Arc::clone(&self.shared.client);
        match self.run(async move { client.abort_multipart(&path, &state.upload).await }) {
            Ok(()) | Err(client::Error::NotFound) => {}
            Err(e) => return Err(self.error("cannot abort an upload to", e)),
        }
        self.drop_staging_dir(&staging.blob)
    }

    fn drop_staging_dir(&self, blob: &BlobId) -> StorageResult<()> {
        let dir = format!("{}/", self.staging_dir(blob)?);
        let client = Arc::clone(&self.shared.client);
        self.run(async move {
            for key in client.list(&dir).await? {
                client.delete(&key).await?;
            }
            Ok(())
        })
        .map_err(|e| self.error("cannot drop a staged upload's bytes from", e))
    }
}

/// A staged blob being written by one PATCH: at most two parts' worth in
/// memory.
pub(crate) struct S3Staged {
    blobs: S3Blobs,
    path: String,
    blob: BlobId,
    state: State,
    /// Bytes after the last part sent: fewer than two parts.
    held: Vec<u8>,
    /// The bucket completed the upload already (see `resume_staged`):
    /// the bytes written are the object's, and nothing is sent.
    completed: bool,
}

impl S3Staged {
    fn send_part(&mut self, data: Vec<u8>) -> StorageResult<()> {
        let len = data.len() as u64;
        let client = Arc::clone(&self.blobs.shared.client);
        let number = part_number(self.state.parts.len())?;
        let (path, upload) = (self.path.clone(), self.state.upload.clone());
        let etag = self
            .blobs
            .run(async move {
                client
                    .upload_part(&path, &upload, number, Bytes::from(data))
                    .await
            })
            .map_err(|e| self.blobs.error("cannot upload a part to", e))?;
        self.state.parts.push((etag, len));
        self.state.tail = None;
        Ok(())
    }

    /// Drops the waiting bytes of a completed upload. Left behind, they
    /// are bytes no record names; the upload is complete whatever happens
    /// to them.
    fn drop_staged_bytes(&self) {
        if let Err(e) = self.blobs.drop_staging_dir(&self.blob) {
            tracing::warn!(error = %e, "could not drop a completed upload's staged bytes");
        }
    }

    fn staging(&self) -> Staging {
        Staging {
            blob: self.blob.clone(),
            state: serde_json::to_string(&self.state).expect("a state serialises"),
        }
    }
}

impl StagedWriter for S3Staged {
    /// A part goes out once two parts' worth are held. (Bytes read back
    /// from an earlier PATCH are fewer than a part, unless the part size
    /// was configured smaller since: they then go out as one larger part.)
    fn write(&mut self, mut chunk: &[u8]) -> StorageResult<()> {
        if self.completed {
            return Ok(());
        }
        let held_max = 2 * self.blobs.shared.part_bytes;
        loop {
            if self.held.len() >= held_max {
                let part = std::mem::take(&mut self.held);
                self.send_part(part)?;
            }
            if chunk.is_empty() {
                return Ok(());
            }
            let take = held_max.saturating_sub(self.held.len()).min(chunk.len());
            self.held.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
    }

    /// The bytes held go out as a part if they are enough for one, else
    /// to a new object of their own.
    fn pause(mut self: Box<Self>) -> StorageResult<Staging> {
        if self.completed {
            return Ok(self.staging());
        }
        self.state.tail = None;
        if self.held.len() >= self.blobs.shared.part_bytes {
            let part = std::mem::take(&mut self.held);
            self.send_part(part)?;
        }
        if !self.held.is_empty() {
            let mut name = [0u8; 8];
            self.blobs.shared.random.fill(&mut name);
            let name: String = name.iter().map(|b| format!("{b:02x}")).collect();
            let key = key(&self.blobs.staging_dir(&self.blob)?, &name);
            let client = Arc::clone(&self.blobs.shared.client);
            let data = Bytes::from(std::mem::take(&mut self.held));
            let len = data.len() as u64;
            self.blobs
                .run(async move { client.put(&key, data).await })
                .map_err(|e| {
                    self.blobs
                        .error("cannot keep a staged upload's last bytes in", e)
                })?;
            self.state.tail = Some((name, len));
        }
        Ok(self.staging())
    }

    /// The last part, then the object whole; an upload of no bytes at all
    /// is a PUT of nothing (a multipart upload needs a part).
    fn complete(mut self: Box<Self>) -> StorageResult<BlobId> {
        if self.completed {
            self.drop_staged_bytes();
            return Ok(self.blob);
        }
        if !self.held.is_empty() {
            let part = std::mem::take(&mut self.held);
            self.send_part(part)?;
        }
        let client = Arc::clone(&self.blobs.shared.client);
        let (path, upload) = (self.path.clone(), self.state.upload.clone());
        let etags: Vec<String> = self
            .state
            .parts
            .iter()
            .map(|(etag, _)| etag.clone())
            .collect();
        let done = self.blobs.run(async move {
            if etags.is_empty() {
                client.abort_multipart(&path, &upload).await?;
                return client.put(&path, Bytes::new()).await;
            }
            client.complete_multipart(&path, &upload, &etags).await
        });
        done.map_err(|e| self.blobs.error("cannot complete an upload to", e))?;
        self.drop_staged_bytes();
        Ok(self.blob)
    }
}
