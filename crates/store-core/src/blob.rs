//! Handles to stored bytes: a record names its bytes by a [`BlobId`],
//! which the blob store port minted, and an image its cached previews by
//! [`Thumbs`]. Their own module, below every record kind that names them.

use serde::{Deserialize, Serialize};

/// An opaque handle to stored bytes, minted by the blob store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BlobId(pub String);

impl BlobId {
    /// The id as the blob store minted it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Cached previews by box size. A list, not a map: integer map keys do
/// not survive serde's internally tagged enums, which buffer the record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Thumbs(Vec<(u32, BlobId)>);

impl Thumbs {
    /// The cached preview for box `size` (in pixels), if there is one.
    pub fn get(&self, size: &u32) -> Option<&BlobId> {
        self.0.iter().find(|(s, _)| s == size).map(|(_, b)| b)
    }

    /// Caches `blob` as the preview for box `size`, replacing any earlier one.
    pub fn insert(&mut self, size: u32, blob: BlobId) {
        self.0.retain(|(s, _)| *s != size);
        self.0.push((size, blob));
    }

    /// Every cached preview's blob.
    pub fn values(&self) -> impl Iterator<Item = &BlobId> {
        self.0.iter().map(|(_, b)| b)
    }
}
