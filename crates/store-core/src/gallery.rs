//! Galleries (pics): records and rules. Images live 90 days; each upload
//! pushes the gallery's own expiry to 90 days from then. Likes toggle per
//! visitor, where a visitor is a pseudonymous fingerprint: an HMAC of the
//! client's IP and User-Agent keyed with the gallery's own secret key, so
//! raw addresses are never stored and fingerprints mean nothing across
//! galleries.

use std::collections::{BTreeMap, BTreeSet};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::blob::{BlobId, Thumbs};
use crate::error::StoreError;
use crate::lifetime::Lifetime;
use crate::limits::Limits;
use crate::time::Timestamp;

/// Display names of galleries (names that are not keys), in characters.
pub const GALLERY_DISPLAY_NAME_CHARS_MAX: usize = 100;

/// A new gallery's name as given: trimmed, none if empty, refused (400)
/// when longer than [`GALLERY_DISPLAY_NAME_CHARS_MAX`] or holding a
/// control character.
pub fn gallery_name(name: Option<&str>) -> Result<Option<&str>, StoreError> {
    let name = name.map(str::trim).filter(|n| !n.is_empty());
    if let Some(n) = name {
        if n.chars().count() > GALLERY_DISPLAY_NAME_CHARS_MAX || n.chars().any(char::is_control) {
            return Err(StoreError::bad_request(format!(
                "a gallery name is at most {GALLERY_DISPLAY_NAME_CHARS_MAX} characters"
            )));
        }
    }
    Ok(name)
}
/// The default comment author.
pub const DEFAULT_COMMENT_NAME: &str = "Gast";
/// Thumbnail boxes offered; `thumb=1` means 320.
pub const THUMB_SIZES: [u32; 3] = [160, 320, 640];

/// Who may add images to a gallery (STORE_PICS_UPLOADS). SPEC.md's
/// galleries take images from anyone with the link: that is `Open`, the
/// default. `Admin` closes them to everyone but the gallery's admin (and
/// the superadmin), who upload through the admin path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GalleryUploads {
    /// Anyone with the gallery's link may add images (`open`, the default).
    #[default]
    Open,
    /// Only the gallery's admin (or the superadmin) may add images, through the admin path
    /// (`admin`).
    Admin,
}

impl GalleryUploads {
    /// The setting's value: `open` or `admin`.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "open" => Some(Self::Open),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }

    /// The setting's value, as [`GalleryUploads::parse`] takes it: `open` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Admin => "admin",
        }
    }

    /// Whether an upload may go ahead. `admin` is `None` for a visitor,
    /// and for an upload through the admin path whether its token is the
    /// gallery's (or the superadmin's). A wrong admin token is 404, as on
    /// the admin page; a visitor on a closed server is 401.
    pub fn authorize(self, admin: Option<bool>) -> Result<(), StoreError> {
        match (self, admin) {
            (_, Some(false)) => Err(StoreError::not_found()),
            (_, Some(true)) | (Self::Open, None) => Ok(()),
            (Self::Admin, None) => Err(StoreError::WriteDenied(
                "this server takes gallery images from the gallery's admin only: upload on \
                 the admin page, or POST /pics/g/<gid>/<admin token>?upload=1"
                    .into(),
            )),
        }
    }
}

/// A visitor's fingerprint for one gallery.
pub fn fingerprint(gallery_key: &str, ip: &str, user_agent: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(gallery_key.as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(ip.as_bytes());
    mac.update(b"\n");
    mac.update(user_agent.as_bytes());
    // 128 bits tell visitors apart well enough, at half the storage.
    crate::auth::hex(&mac.finalize().into_bytes()[..16])
}

/// `thumb=` to a box size: 1 means 320; 160, 320 and 640 are themselves.
pub fn thumb_box(value: &str) -> Result<u32, StoreError> {
    match value {
        "1" | "true" => Ok(320),
        v => v
            .parse::<u32>()
            .ok()
            .filter(|n| THUMB_SIZES.contains(n))
            .ok_or_else(|| StoreError::bad_request("thumb takes 1, 160, 320 or 640")),
    }
}

/// A guestbook comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    /// The comment's id (`ids::object_id`).
    pub id: String,
    /// The author's name, trimmed; `Gast` when left blank.
    pub name: String,
    /// The comment, trimmed, with line breaks as `\n`; 1 to `comment_text_chars_max`
    /// characters.
    pub text: String,
    /// When it was posted.
    pub ts: Timestamp,
    /// Fingerprints of the visitors who like it.
    pub likes: BTreeSet<String>,
}

/// Checks and normalises a comment: name at most `comment_name_chars_max`
/// characters (blank means "Gast"), text 1 to `comment_text_chars_max`
/// characters (SPEC.md: 40 and 500); both trimmed, no control characters
/// but newlines in the text.
pub fn validate_comment(
    limits: &Limits,
    name: Option<&str>,
    text: &str,
) -> Result<(String, String), StoreError> {
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(DEFAULT_COMMENT_NAME);
    // Browsers send a textarea's line breaks as CRLF: one break is one
    // character, whatever the client.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.trim();
    if name.chars().count() > limits.comment_name_chars_max || name.chars().any(char::is_control) {
        return Err(StoreError::bad_request(format!(
            "the name must be at most {} characters, without control characters",
            limits.comment_name_chars_max
        )));
    }
    let len = text.chars().count();
    if len == 0
        || len > limits.comment_text_chars_max
        || text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(StoreError::bad_request(format!(
            "the text must be 1 to {} characters",
            limits.comment_text_chars_max
        )));
    }
    Ok((name.to_string(), text.to_string()))
}

/// A gallery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GalleryRecord {
    /// The key in URLs: a chosen dir-style name, or 32 hex characters.
    pub gid: String,
    /// The display name (the key itself for named galleries).
    pub name: Option<String>,
    /// When the gallery was created.
    pub created_at: Timestamp,
    /// When the gallery was created or last received an image.
    pub updated_at: Timestamp,
    /// When the gallery expires: `pics_lifetime_secs` after creation, pushed to that
    /// long after each image upload.
    pub lifetime: Lifetime,
    /// Whether the gallery appears in the listing `GET /pics` (created with `listed=1`).
    pub listed: bool,
    /// SHA-256 of the admin token.
    pub token_hash: String,
    /// The HMAC key of visitor fingerprints; never shown.
    pub fingerprint_key: String,
    /// Image ids, in display order.
    pub images: Vec<String>,
    /// Oldest first, at most the configured number.
    pub comments: Vec<Comment>,
    /// When each visitor last commented, for the cooldown.
    pub last_comment: BTreeMap<String, Timestamp>,
}

impl GalleryRecord {
    /// An upload keeps the gallery for at least the images' lifetime.
    pub fn extend_for_upload(&mut self, limits: &Limits, now: Timestamp) {
        let until = now.plus_secs(limits.pics_lifetime_secs);
        if let Lifetime::Fixed { expires_at } = &mut self.lifetime {
            *expires_at = (*expires_at).max(until);
        }
        self.updated_at = now;
    }

    /// Adds a comment after the cooldown (`comment_cooldown_secs`) and
    /// size checks; the oldest goes when the gallery already holds
    /// `comments_per_gallery_max` comments.
    pub fn add_comment(
        &mut self,
        limits: &Limits,
        now: Timestamp,
        visitor: &str,
        (id, name, text): (String, String, String),
    ) -> Result<&Comment, StoreError> {
        let cooldown = limits.comment_cooldown_secs;
        let max = limits.comments_per_gallery_max;
        if let Some(last) = self.last_comment.get(visitor) {
            let ready = last.plus_secs(cooldown);
            if now < ready {
                return Err(StoreError::RateLimited {
                    retry_after_secs: now.secs_until(ready).max(1),
                });
            }
        }
        // Old cooldown entries carry no information: keep the map small.
        self.last_comment.retain(|_, t| t.plus_secs(cooldown) > now);
        self.last_comment.insert(visitor.to_string(), now);
        if self.comments.len() >= max.max(1) {
            let drop = self.comments.len() + 1 - max.max(1);
            self.comments.drain(..drop);
        }
        self.comments.push(Comment {
            id,
            name,
            text,
            ts: now,
            likes: BTreeSet::new(),
        });
        Ok(self.comments.last().expect("just pushed"))
    }

    /// Moves an image one place up (towards the first) or down.
    pub fn move_image(&mut self, id: &str, up: bool) -> Result<(), StoreError> {
        let i = self
            .images
            .iter()
            .position(|x| x == id)
            .ok_or_else(StoreError::not_found)?;
        let j = if up {
            i.checked_sub(1)
        } else {
            Some(i + 1).filter(|j| *j < self.images.len())
        };
        if let Some(j) = j {
            self.images.swap(i, j);
        }
        Ok(())
    }
}

/// Toggles `visitor` in a like set; returns whether it now likes.
pub fn toggle_like(likes: &mut BTreeSet<String>, visitor: &str) -> bool {
    if likes.remove(visitor) {
        false
    } else {
        likes.insert(visitor.to_string());
        true
    }
}

/// An image in a gallery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRecord {
    /// The image's id (`ids::object_id`), as in `/pics/i/<id>`.
    pub id: String,
    /// The `gid` of the gallery that lists it.
    pub gallery: String,
    /// The file name the image is downloaded under, with the extension of its stored
    /// format.
    pub name: String,
    /// The media type of the stored image.
    pub content_type: String,
    /// Size of the stored image, in bytes; counted against the pics pool.
    pub size: u64,
    /// Width of the stored image, in pixels.
    pub width: u32,
    /// Height of the stored image, in pixels.
    pub height: u32,
    /// The blob that holds the stored image.
    pub blob: BlobId,
    /// When the image was uploaded.
    pub created_at: Timestamp,
    /// 90 days from upload.
    pub lifetime: Lifetime,
    /// Hidden by the gallery's admin: visitors neither see it nor can open it (404).
    pub hidden: bool,
    /// Fingerprints of the visitors who like it.
    pub likes: BTreeSet<String>,
    /// Cached previews by box size.
    pub thumbs: Thumbs,
    /// The SHA-256 of the stored image, as it was stored (issue 36); none
    /// for images stored before digests were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<crate::digest::Sha256>,
}

impl ImageRecord {
    /// Visible to visitors: live and not hidden.
    pub fn is_visible(&self, now: Timestamp) -> bool {
        !self.hidden && self.lifetime.is_live(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallery_names_are_trimmed_and_bounded() {
        assert_eq!(gallery_name(Some("  Holiday  ")), Ok(Some("Holiday")));
        assert_eq!(gallery_name(Some("   ")), Ok(None));
        assert_eq!(gallery_name(None), Ok(None));
        let longest = "é".repeat(GALLERY_DISPLAY_NAME_CHARS_MAX);
        assert!(gallery_name(Some(&longest)).is_ok());
        assert!(gallery_name(Some(&format!("{longest}x"))).is_err());
        assert!(gallery_name(Some("tab\there")).is_err());
    }

    #[test]
    fn gallery_uploads_decide_who_may_add_images() {
        use GalleryUploads::{Admin, Open};
        let code = |r: Result<(), StoreError>| r.map_err(|e| e.code());
        assert_eq!(code(Open.authorize(None)), Ok(()));
        assert_eq!(
            code(Admin.authorize(None)),
            Err(crate::ErrorCode::WriteDenied)
        );
        for mode in [Open, Admin] {
            assert_eq!(code(mode.authorize(Some(true))), Ok(()));
            assert_eq!(
                code(mode.authorize(Some(false))),
                Err(crate::ErrorCode::NotFound)
            );
            assert_eq!(GalleryUploads::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(GalleryUploads::parse("closed"), None);
    }

    fn gallery() -> GalleryRecord {
        GalleryRecord {
            gid: "g".into(),
            name: None,
            created_at: Timestamp::EPOCH,
            updated_at: Timestamp::EPOCH,
            lifetime: Lifetime::fixed(Timestamp::EPOCH, Limits::DEFAULT.pics_lifetime_secs),
            listed: false,
            token_hash: String::new(),
            fingerprint_key: "k".into(),
            images: vec!["a".into(), "b".into(), "c".into()],
            comments: vec![],
            last_comment: BTreeMap::new(),
        }
    }

    #[test]
    fn fingerprints_are_per_gallery_and_visitor() {
        let a = fingerprint("key1", "1.2.3.4", "curl");
        assert_eq!(a, fingerprint("key1", "1.2.3.4", "curl"));
        assert_ne!(
            a,
            fingerprint("key2", "1.2.3.4", "curl"),
            "keyed by the gallery"
        );
        assert_ne!(a, fingerprint("key1", "1.2.3.5", "curl"));
        assert_ne!(a, fingerprint("key1", "1.2.3.4", "firefox"));
        assert!(!a.contains("1.2.3.4"));
        assert_eq!(a.len(), 32);
    }

    #[test]
    fn likes_toggle() {
        let mut set = BTreeSet::new();
        assert!(toggle_like(&mut set, "v"));
        assert!(toggle_like(&mut set, "w"));
        assert_eq!(set.len(), 2);
        assert!(!toggle_like(&mut set, "v"));
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn comments_have_limits() {
        assert_eq!(
            validate_comment(&Limits::DEFAULT, None, " hi ").unwrap(),
            ("Gast".into(), "hi".into())
        );
        assert_eq!(
            validate_comment(&Limits::DEFAULT, Some("  "), "x")
                .unwrap()
                .0,
            "Gast"
        );
        assert!(validate_comment(&Limits::DEFAULT, Some(&"n".repeat(41)), "x").is_err());
        assert!(
            validate_comment(&Limits::DEFAULT, Some(&"ü".repeat(40)), "x").is_ok(),
            "characters, not bytes"
        );
        assert!(validate_comment(&Limits::DEFAULT, None, &"ä".repeat(500)).is_ok());
        assert!(validate_comment(&Limits::DEFAULT, None, &"ä".repeat(501)).is_err());
        assert!(validate_comment(&Limits::DEFAULT, None, "").is_err());
        assert!(validate_comment(&Limits::DEFAULT, None, "a\u{0}b").is_err());
        assert_eq!(
            validate_comment(&Limits::DEFAULT, None, "line one\r\nline two")
                .unwrap()
                .1,
            "line one\nline two"
        );
        assert!(
            validate_comment(&Limits::DEFAULT, None, &"a\r\n".repeat(166)).is_ok(),
            "CRLF counts as one character"
        );
    }

    /// A comment as `add_comment` takes it.
    fn comment(id: &str) -> (String, String, String) {
        (id.into(), "n".into(), "t".into())
    }

    #[test]
    fn comments_wait_for_the_cooldown_and_the_oldest_goes_past_the_cap() {
        let limits = Limits {
            comments_per_gallery_max: 3,
            ..Limits::DEFAULT
        };
        let mut g = gallery();
        let t0 = Timestamp::from_secs(100);
        g.add_comment(&limits, t0, "v", comment("c1")).unwrap();
        let err = g
            .add_comment(&limits, t0.plus_secs(5), "v", comment("c2"))
            .unwrap_err();
        assert_eq!(
            err,
            StoreError::RateLimited {
                retry_after_secs: limits.comment_cooldown_secs - 5
            }
        );
        g.add_comment(&limits, t0.plus_secs(5), "w", comment("c2"))
            .unwrap();
        let after_cooldown = t0.plus_secs(limits.comment_cooldown_secs);
        g.add_comment(&limits, after_cooldown, "v", comment("c3"))
            .unwrap();
        g.add_comment(&limits, t0.plus_secs(60), "v", comment("c4"))
            .unwrap();
        let ids: Vec<_> = g.comments.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c2", "c3", "c4"], "the oldest goes past the cap");
    }

    #[test]
    fn the_configured_cooldown_is_the_one_enforced() {
        let limits = Limits {
            comment_cooldown_secs: 77,
            ..Limits::DEFAULT
        };
        let mut g = gallery();
        let t0 = Timestamp::from_secs(100);
        g.add_comment(&limits, t0, "v", comment("c1")).unwrap();
        let err = g
            .add_comment(&limits, t0.plus_secs(76), "v", comment("c2"))
            .unwrap_err();
        assert_eq!(
            err,
            StoreError::RateLimited {
                retry_after_secs: 1
            }
        );
        g.add_comment(&limits, t0.plus_secs(77), "v", comment("c2"))
            .unwrap();
    }

    #[test]
    fn reorder_and_thumbs() {
        let mut g = gallery();
        g.move_image("b", true).unwrap();
        assert_eq!(g.images, ["b", "a", "c"]);
        g.move_image("b", true).unwrap();
        assert_eq!(g.images, ["b", "a", "c"], "the first stays first");
        g.move_image("a", false).unwrap();
        assert_eq!(g.images, ["b", "c", "a"]);
        assert!(g.move_image("zzz", false).is_err());
        assert_eq!(thumb_box("1"), Ok(320));
        assert_eq!(thumb_box("640"), Ok(640));
        assert!(thumb_box("500").is_err());
    }

    #[test]
    fn images_with_thumbs_round_trip_through_the_record_encoding() {
        let mut thumbs = Thumbs::default();
        thumbs.insert(320, BlobId("ab".into()));
        thumbs.insert(320, BlobId("cd".into()));
        thumbs.insert(160, BlobId("ef".into()));
        let img = crate::Object::Image(ImageRecord {
            id: "i".into(),
            gallery: "g".into(),
            name: "a.png".into(),
            content_type: "image/png".into(),
            size: 1,
            width: 1,
            height: 1,
            blob: BlobId("00".into()),
            created_at: Timestamp::EPOCH,
            lifetime: Lifetime::fixed(Timestamp::EPOCH, 1),
            hidden: false,
            likes: BTreeSet::new(),
            thumbs,
            sha256: None,
        });
        let json = serde_json::to_string(&img).unwrap();
        let back: crate::Object = serde_json::from_str(&json).unwrap();
        assert_eq!(back, img);
        let crate::Object::Image(i) = back else {
            unreachable!()
        };
        assert_eq!(i.thumbs.get(&320), Some(&BlobId("cd".into())));
    }

    #[test]
    fn uploads_extend_the_gallery() {
        let mut g = gallery();
        let later = Timestamp::from_secs(86_400 * 10);
        g.extend_for_upload(&Limits::DEFAULT, later);
        assert_eq!(
            g.lifetime.expires_at(),
            Some(later.plus_secs(Limits::DEFAULT.pics_lifetime_secs))
        );
    }
}
