//! Stored records. A record points at its bytes through an opaque
//! [`BlobId`]; the bytes themselves belong to the blob store port.

use serde::{Deserialize, Serialize};

use crate::auth::Owner;
pub use crate::blob::{BlobId, Thumbs};
use crate::container::{BundleRecord, DirRecord};
use crate::error::StoreError;
use crate::gallery::{GalleryRecord, ImageRecord};
use crate::lifetime::Lifetime;
use crate::resumable::UploadRecord;
use crate::time::Timestamp;

/// A single file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// The file's id (`ids::object_id`): its URL `/<id>` and its repository key.
    pub id: String,
    /// The file's name: the client's, or `upload.<ext>` from its type when it gave none.
    pub name: String,
    /// The media type the file is served with.
    pub content_type: String,
    /// Size of the content, in bytes.
    pub size: u64,
    /// The blob in the blob store that holds the content.
    pub blob: BlobId,
    /// When the file was uploaded.
    pub created_at: Timestamp,
    /// When the record last changed: new content (PUT, PATCH), retaining it or a new
    /// `?ttl=`.
    pub updated_at: Timestamp,
    /// When the file expires: fixed, or indefinite once retained.
    pub lifetime: Lifetime,
    /// Burn after reading: the first download deletes it.
    pub once: bool,
    /// `max_downloads=N` (N of 2 or more; N = 1 is `once`): the whole
    /// downloads left before the file is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downloads_left: Option<u32>,
    /// The file's tags; a file with at least one is listed in `GET /browse`, unless its
    /// downloads are counted. Empty when it has none.
    pub tags: Vec<String>,
    /// A text file (CONTRACT.md): a text-family type and valid UTF-8. Only
    /// these may be replaced or appended to.
    pub text: bool,
    /// A `link=1` import: a redirect document browsers are sent on from.
    #[serde(default)]
    pub link: bool,
    /// Cached `thumb=` previews of a raster image, by box size.
    #[serde(default)]
    pub thumbs: Thumbs,
    /// Who made it; none for files stored before owner tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// `encrypted=age`: ciphertext its client made, served as it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<crate::encryption::Encryption>,
    /// A password reading it needs (or the owner token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<crate::password::Protection>,
    /// The SHA-256 of the content, computed as it arrived (issue 36);
    /// none for content stored before digests were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<crate::digest::Sha256>,
}

/// Whether a GET burns the file it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadDecision {
    /// Serve it and change nothing (a HEAD, or a file whose downloads are not counted).
    Serve,
    /// Serve this once, and delete the file in the same step.
    ServeAndBurn,
    /// Serve it, and count the download in the same step (downloads are
    /// left after this one).
    ServeAndCount,
}

/// GET or HEAD: HEAD never burns a once file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadIntent {
    /// A GET: serves the body, and may burn or count a download.
    Get,
    /// A HEAD: never burns or counts a download.
    Head,
}

impl FileRecord {
    /// Decides a read: expired files are not found; a once file is burnt by
    /// the first GET (but not by HEAD); a download-limited file counts
    /// each GET and is burnt by its last.
    pub fn decide_read(
        &self,
        now: Timestamp,
        intent: ReadIntent,
    ) -> Result<ReadDecision, StoreError> {
        if !self.lifetime.is_live(now) {
            return Err(StoreError::not_found());
        }
        if intent == ReadIntent::Head {
            return Ok(ReadDecision::Serve);
        }
        Ok(match self.downloads_remaining() {
            Some(0 | 1) => ReadDecision::ServeAndBurn,
            Some(_) => ReadDecision::ServeAndCount,
            None => ReadDecision::Serve,
        })
    }

    /// Whole downloads left before the file goes: 1 for a once file, the
    /// count for a `max_downloads` file, none for every other file.
    pub fn downloads_remaining(&self) -> Option<u32> {
        if self.once {
            Some(1)
        } else {
            self.downloads_left
        }
    }

    /// Whether `GET /browse` lists it: a tagged file whose downloads are
    /// not counted and that has no password.
    pub fn is_browsable(&self) -> bool {
        !self.is_counted() && !self.tags.is_empty() && self.password.is_none()
    }

    /// Whether its downloads are counted (`once=1` or `max_downloads`):
    /// such a file ignores ranges and validators, is never cached and
    /// never listed, because every whole GET of it changes it.
    pub fn is_counted(&self) -> bool {
        self.downloads_remaining().is_some()
    }

    /// One whole download served: the count goes down by one.
    pub fn count_download(&mut self) {
        if let Some(left) = &mut self.downloads_left {
            *left = left.saturating_sub(1);
        }
    }

    /// PUT and PATCH apply to text files only.
    pub fn ensure_editable(&self) -> Result<(), StoreError> {
        if self.text {
            Ok(())
        } else {
            Err(StoreError::forbidden(
                "only text files can be replaced or appended to (PUT/PATCH)",
            ))
        }
    }
}

/// Every kind of stored object, as the repository keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Object {
    /// A single file.
    File(FileRecord),
    /// A bundle: an immutable snapshot of several files.
    Bundle(BundleRecord),
    /// A dir: a mutable collection with a sliding lifetime.
    Dir(DirRecord),
    /// A gallery (pics).
    Gallery(GalleryRecord),
    /// An image in a gallery.
    Image(ImageRecord),
    /// A resumable upload in progress, under the id of the file it becomes.
    Upload(UploadRecord),
}

/// The kinds of [`Object`], named as the record's `kind` field names them:
/// what an operator counts (the metrics' `storesrv_objects{kind}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKind {
    /// A single file (`file`).
    File,
    /// A bundle (`bundle`).
    Bundle,
    /// A dir (`dir`).
    Dir,
    /// A gallery (`gallery`).
    Gallery,
    /// A gallery image (`image`).
    Image,
    /// A resumable upload in progress (`upload`).
    Upload,
}

impl ObjectKind {
    /// Every kind, in the order of [`ObjectKind::index`].
    pub const ALL: [Self; 6] = [
        Self::File,
        Self::Bundle,
        Self::Dir,
        Self::Gallery,
        Self::Image,
        Self::Upload,
    ];

    /// The name the record's serde form uses (`"kind": "file"`), which the
    /// PostgreSQL adapter reads back from its rows.
    pub fn name(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Bundle => "bundle",
            Self::Dir => "dir",
            Self::Gallery => "gallery",
            Self::Image => "image",
            Self::Upload => "upload",
        }
    }

    /// Its place in [`Self::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A public listing an object can appear in. Adapters keep an index per
/// listing, so that a listing request reads the listed records and never
/// every record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Listing {
    /// `GET /browse`: files with at least one tag, except burn-after-reading ones.
    Browse,
    /// `GET /d`: dirs created with `listed=1`.
    Dirs,
    /// `GET /pics`: galleries created with `listed=1`.
    Galleries,
}

impl Listing {
    /// Every listing.
    pub const ALL: [Self; 3] = [Self::Browse, Self::Dirs, Self::Galleries];

    /// The listing's code in an index: stable, since stores keep it.
    pub fn code(self) -> u8 {
        match self {
            Self::Browse => 1,
            Self::Dirs => 2,
            Self::Galleries => 3,
        }
    }
}

/// The repository key of a gallery.
pub fn gallery_storage_key(gid: &str) -> String {
    format!("g/{gid}")
}

/// The repository key of a gallery image.
pub fn image_storage_key(id: &str) -> String {
    format!("i/{id}")
}

/// The repository key of a dir. Dirs live in their own key space, so that a
/// dir name can never collide with a single file's or bundle's id.
pub fn dir_storage_key(key: &str) -> String {
    format!("d/{key}")
}

impl Object {
    /// Who made it: single files, bundles and dirs stored since owner
    /// tokens exist have an owner; galleries have their admin token.
    pub fn owner(&self) -> Option<&Owner> {
        match self {
            Self::File(f) => f.owner.as_ref(),
            Self::Bundle(b) => b.owner.as_ref(),
            Self::Dir(d) => d.owner.as_ref(),
            Self::Upload(u) => Some(&u.owner),
            Self::Gallery(_) | Self::Image(_) => None,
        }
    }

    /// The object's kind.
    pub fn kind(&self) -> ObjectKind {
        match self {
            Self::File(_) => ObjectKind::File,
            Self::Bundle(_) => ObjectKind::Bundle,
            Self::Dir(_) => ObjectKind::Dir,
            Self::Gallery(_) => ObjectKind::Gallery,
            Self::Image(_) => ObjectKind::Image,
            Self::Upload(_) => ObjectKind::Upload,
        }
    }

    /// The key the repository stores this object under.
    pub fn storage_key(&self) -> String {
        match self {
            Self::File(f) => f.id.clone(),
            Self::Bundle(b) => b.id.clone(),
            Self::Dir(d) => dir_storage_key(&d.key),
            Self::Gallery(g) => gallery_storage_key(&g.gid),
            Self::Image(i) => image_storage_key(&i.id),
            Self::Upload(u) => u.id.clone(),
        }
    }

    /// The object's lifetime, whatever its kind.
    pub fn lifetime(&self) -> &Lifetime {
        match self {
            Self::File(f) => &f.lifetime,
            Self::Bundle(b) => &b.lifetime,
            Self::Dir(d) => &d.lifetime,
            Self::Gallery(g) => &g.lifetime,
            Self::Image(i) => &i.lifetime,
            Self::Upload(u) => &u.lifetime,
        }
    }

    /// The password reading it needs, if any: single files, bundles and
    /// dirs may have one.
    pub fn protection(&self) -> Option<&crate::password::Protection> {
        match self {
            Self::File(f) => f.password.as_ref(),
            Self::Bundle(b) => b.password.as_ref(),
            Self::Dir(d) => d.password.as_ref(),
            Self::Gallery(_) | Self::Image(_) | Self::Upload(_) => None,
        }
    }

    /// The password slot of the kinds that may have one; `None` for the
    /// others (galleries, images, uploads in progress).
    pub fn protection_mut(&mut self) -> Option<&mut Option<crate::password::Protection>> {
        match self {
            Self::File(f) => Some(&mut f.password),
            Self::Bundle(b) => Some(&mut b.password),
            Self::Dir(d) => Some(&mut d.password),
            Self::Gallery(_) | Self::Image(_) | Self::Upload(_) => None,
        }
    }

    /// Tags, which the tag index follows. Bundles have none.
    pub fn tags(&self) -> &[String] {
        match self {
            Self::File(f) => &f.tags,
            Self::Bundle(_) | Self::Gallery(_) | Self::Image(_) | Self::Upload(_) => &[],
            Self::Dir(d) => &d.tags,
        }
    }

    /// The listing this object appears in, whether or not it is live: a
    /// listing filters by lifetime when it reads.
    pub fn listing(&self) -> Option<Listing> {
        match self {
            Self::File(f) if f.is_browsable() => Some(Listing::Browse),
            Self::Dir(d) if d.is_listed() => Some(Listing::Dirs),
            Self::Gallery(g) if g.listed => Some(Listing::Galleries),
            _ => None,
        }
    }

    /// Bytes this object counts against the store pool (gallery images
    /// count against the pics pool instead). An upload in progress counts
    /// its whole length, reserved at its creation.
    pub fn pool_bytes(&self) -> u64 {
        match self {
            Self::File(f) => f.size,
            Self::Bundle(b) => b.size(),
            Self::Dir(d) => d.size(),
            Self::Upload(u) => u.length,
            Self::Gallery(_) | Self::Image(_) => 0,
        }
    }

    /// Bytes this object counts against the pics pool.
    pub fn pics_bytes(&self) -> u64 {
        match self {
            Self::Image(i) => i.size,
            _ => 0,
        }
    }

    /// The blobs this object owns, for deletion and orphan collection.
    pub fn blobs(&self) -> Vec<&BlobId> {
        match self {
            Self::File(f) => std::iter::once(&f.blob).chain(f.thumbs.values()).collect(),
            Self::Bundle(b) => b.files.iter().map(|f| &f.blob).collect(),
            Self::Dir(d) => d.files.iter().map(|f| &f.blob).collect(),
            Self::Gallery(_) => vec![],
            Self::Upload(u) => vec![&u.staging.blob],
            Self::Image(i) => std::iter::once(&i.blob).chain(i.thumbs.values()).collect(),
        }
    }

    /// Whether store pool eviction may remove it: a file, bundle or dir
    /// that is not retained (a show-dir is retained). The pics pool never
    /// evicts, so galleries and their images never are; nor is an upload
    /// in progress, whose client is still sending.
    pub fn is_evictable(&self) -> bool {
        !matches!(self, Self::Gallery(_) | Self::Image(_) | Self::Upload(_))
            && !self.lifetime().is_retained()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(once: bool) -> FileRecord {
        FileRecord {
            id: "abc".into(),
            name: "a.txt".into(),
            content_type: "text/plain".into(),
            size: 3,
            blob: BlobId("b".into()),
            created_at: Timestamp::EPOCH,
            updated_at: Timestamp::EPOCH,
            lifetime: Lifetime::fixed(Timestamp::EPOCH, 100),
            once,
            tags: vec![],
            text: true,
            link: false,
            thumbs: Default::default(),
            owner: None,
            downloads_left: None,
            encrypted: None,
            password: None,
            sha256: None,
        }
    }

    #[test]
    fn only_tagged_files_that_survive_a_read_are_browsed() {
        let mut f = file(false);
        assert_eq!(Object::File(f.clone()).listing(), None, "untagged");
        f.tags = vec!["t".into()];
        assert_eq!(Object::File(f.clone()).listing(), Some(Listing::Browse));
        f.once = true;
        assert_eq!(Object::File(f).listing(), None, "burn after reading");
    }

    #[test]
    fn listing_codes_are_distinct() {
        let codes: std::collections::BTreeSet<u8> = Listing::ALL.iter().map(|l| l.code()).collect();
        assert_eq!(codes.len(), Listing::ALL.len());
    }

    #[test]
    fn reads() {
        let f = file(false);
        assert_eq!(
            f.decide_read(Timestamp::EPOCH, ReadIntent::Get),
            Ok(ReadDecision::Serve)
        );
        assert!(f
            .decide_read(Timestamp::from_secs(100), ReadIntent::Get)
            .is_err());
        let o = file(true);
        assert_eq!(
            o.decide_read(Timestamp::EPOCH, ReadIntent::Get),
            Ok(ReadDecision::ServeAndBurn)
        );
        assert_eq!(
            o.decide_read(Timestamp::EPOCH, ReadIntent::Head),
            Ok(ReadDecision::Serve)
        );
    }

    #[test]
    fn limited_files_count_each_get_and_burn_on_the_last() {
        let mut f = FileRecord {
            downloads_left: Some(3),
            ..file(false)
        };
        let get = |f: &FileRecord| f.decide_read(Timestamp::EPOCH, ReadIntent::Get).unwrap();
        let mut served = 0;
        loop {
            assert_eq!(
                f.decide_read(Timestamp::EPOCH, ReadIntent::Head),
                Ok(ReadDecision::Serve),
                "HEAD never counts"
            );
            served += 1;
            match get(&f) {
                ReadDecision::ServeAndCount => f.count_download(),
                ReadDecision::ServeAndBurn => break,
                ReadDecision::Serve => panic!("a limited file is never served uncounted"),
            }
        }
        assert_eq!(served, 3, "the third whole download is the last");
        assert!(f.is_counted() && file(true).is_counted() && !file(false).is_counted());
        assert_eq!(file(true).downloads_remaining(), Some(1));
        let tagged = FileRecord {
            downloads_left: Some(2),
            tags: vec!["t".into()],
            ..file(false)
        };
        assert_eq!(Object::File(tagged).listing(), None, "never browsed");
    }

    #[test]
    fn serde_round_trip_keeps_the_kind() {
        let o = Object::File(file(true));
        let json = serde_json::to_string(&o).unwrap();
        assert!(json.contains("\"kind\":\"file\""));
        assert_eq!(serde_json::from_str::<Object>(&json).unwrap(), o);
    }
}
