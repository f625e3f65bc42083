//! What the use cases answer: domain records and what happened to them,
//! never URLs or JSON. Turning an outcome into an answer (its URLs, its
//! fields, its HTML) is the HTTP layer's job (store-http's `views`), so an
//! embedder gets the same outcomes and builds the answers it needs.

use store_core::gallery::{GalleryRecord, ImageRecord};
use store_core::{DirRecord, PoolUsage, Timestamp};

/// A record as the use case saw it at `now`. Answers that count down
/// (`expires_in`) count from this instant, not from whenever the answer
/// happens to be written, so a fresh upload says exactly its ttl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsOf<T> {
    /// The record as the use case loaded or wrote it.
    pub record: T,
    /// The moment the use case read the clock; countdowns count from it.
    pub now: Timestamp,
}

/// An outcome reads as its record: `made.id`, `made.size`.
impl<T> std::ops::Deref for AsOf<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.record
    }
}

/// A new single file or bundle: its record as of its creation, and its
/// owner token in the clear, in this answer only (the record keeps a
/// digest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created<T> {
    /// The new record.
    pub record: T,
    /// The moment it was created; countdowns count from it.
    pub now: Timestamp,
    /// The owner token in the clear: told only here (the record keeps a
    /// digest).
    pub owner_token: String,
}

impl<T> std::ops::Deref for Created<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.record
    }
}

/// The answer to POST /?dir=1 (and `share=`), which creates or finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirMade {
    /// The dir's record after the request: new, or found (with any posted
    /// files added).
    pub dir: DirRecord,
    /// False when a live dir of that name was found and reused.
    pub created: bool,
    /// The write token, in the clear: only in the answer to the creation
    /// that set it, never again (only its digest is stored).
    pub write_token: Option<String>,
    /// The owner token, in the clear: only when this answer made the dir.
    pub owner_token: Option<String>,
    /// The drop link's token (`drop=1`), in the clear: only in the answer
    /// to the creation, never again (only its secret's digest is stored).
    pub drop_token: Option<String>,
}

/// The answer to POST /pics?create=1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GalleryMade {
    /// The gallery's record: new, or the named gallery found.
    pub gallery: GalleryRecord,
    /// The admin token, in the clear, when the gallery was just made; none
    /// when a named gallery already existed.
    pub token: Option<String>,
}

impl GalleryMade {
    /// Whether this answer made the gallery (rather than found it).
    pub fn created(&self) -> bool {
        self.token.is_some()
    }
}

/// One page of a gallery as a visitor (or its admin) sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GalleryPage {
    /// The gallery's record.
    pub gallery: GalleryRecord,
    /// The images of this page, starred ones first.
    pub images: Vec<ImageRecord>,
    /// The starred images that exist and are visible, in the order asked.
    pub selected: Vec<String>,
    /// This page, counted from 1, and how many there are.
    pub page: usize,
    /// How many pages there are (at least 1).
    pub pages: usize,
    /// Bytes in use in the pics pool, against its capacity.
    pub pool: PoolUsage,
}

/// A gallery with its visible images: what its like counters count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GalleryTally {
    /// The gallery's record.
    pub gallery: GalleryRecord,
    /// Its images visitors can see (live and not hidden), in gallery order.
    pub visible: Vec<ImageRecord>,
}

/// A like toggled on an image or a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Liked {
    /// The image's or the comment's id.
    pub id: String,
    /// How many likes it has now.
    pub likes: usize,
    /// Whether this visitor now likes it (false: the like was taken back).
    pub liked: bool,
    /// The gallery it belongs to.
    pub gallery: String,
}
