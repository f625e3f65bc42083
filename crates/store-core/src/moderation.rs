//! What the operator of a public instance moderates with (issue 36): the
//! admin token, the terms the admin searches objects by, and the
//! blocklist of digests. The adapters keep the index and the list; the
//! rules of what is indexed, what a search means and what a block covers
//! are here.

use serde::{Deserialize, Serialize};

use crate::auth::UploadToken;
use crate::digest::Sha256;
use crate::error::StoreError;
use crate::record::Object;
use crate::time::Timestamp;

/// Objects one admin page lists, by default and at most.
pub const ADMIN_PAGE_DEFAULT: usize = 50;
/// See [`ADMIN_PAGE_DEFAULT`].
pub const ADMIN_PAGE_MAX: usize = 200;
/// The longest reason a block or a report keeps, in characters.
pub const REASON_CHARS_MAX: usize = 1000;
/// Words of names an object is found by, at most: a dir of a thousand
/// files is found by the first ones, and each write of it rewrites a
/// bounded number of index entries.
pub const NAME_WORDS_MAX: usize = 64;
/// The shortest word of a name the index keeps, in characters.
const WORD_CHARS_MIN: usize = 2;

/// `STORE_ADMIN_TOKEN`: unset, none of moderation exists.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AdminToken(UploadToken);

impl std::fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a secret, not even in a debug log.
        let state = if self.is_set() { "set" } else { "unset" };
        write!(f, "AdminToken({state})")
    }
}

impl AdminToken {
    /// The token, or none for a blank value.
    pub fn new(token: Option<&str>) -> Self {
        Self(UploadToken::new(token))
    }

    /// Whether moderation is on.
    pub fn is_set(&self) -> bool {
        self.0.is_required()
    }

    /// Whether `presented` is the admin token (digests, constant time).
    pub fn matches(&self, presented: Option<&str>) -> bool {
        self.0.matches(presented)
    }
}

/// The index term of every record: what an unfiltered admin page walks.
pub const ALL_TERM: &str = "*";

impl Object {
    /// The digests of the bytes this object holds: a file's, each file of
    /// a bundle or dir, an image's. Content stored before digests were
    /// kept has none.
    pub fn digests(&self) -> Vec<Sha256> {
        let mut out: Vec<Sha256> = match self {
            Self::File(f) => f.sha256.into_iter().collect(),
            Self::Bundle(b) => b.files.iter().filter_map(|f| f.sha256).collect(),
            Self::Dir(d) => d.files.iter().filter_map(|f| f.sha256).collect(),
            Self::Image(i) => i.sha256.into_iter().collect(),
            Self::Gallery(_) | Self::Upload(_) => vec![],
        };
        out.sort_unstable();
        out.dedup();
        out
    }

    /// When the object was made: what the admin's pages are ordered by.
    pub fn created_at(&self) -> Timestamp {
        match self {
            Self::File(f) => f.created_at,
            Self::Bundle(b) => b.created_at,
            Self::Dir(d) => d.created_at,
            Self::Gallery(g) => g.created_at,
            Self::Image(i) => i.created_at,
            Self::Upload(u) => u.created_at,
        }
    }

    /// The terms the admin finds this object by, sorted and distinct:
    /// [`ALL_TERM`], each digest (`sha256:<hex>`), each content type
    /// (`type:<type>`), and the words of its names (`word:<word>`,
    /// lowercase, at most [`NAME_WORDS_MAX`]).
    pub fn search_terms(&self) -> Vec<String> {
        let mut terms = vec![ALL_TERM.to_string()];
        terms.extend(self.digests().iter().map(|d| format!("sha256:{d}")));
        let (names, types) = self.names_and_types();
        terms.extend(types.iter().map(|t| format!("type:{}", t.to_lowercase())));
        let mut words: Vec<String> = names.iter().flat_map(|n| name_words(n)).collect();
        words.sort_unstable();
        words.dedup();
        words.truncate(NAME_WORDS_MAX);
        terms.extend(words.iter().map(|w| format!("word:{w}")));
        terms.sort_unstable();
        terms.dedup();
        terms
    }

    /// The names and content types an admin search looks at.
    fn names_and_types(&self) -> (Vec<&str>, Vec<&str>) {
        match self {
            Self::File(f) => (vec![&f.name], vec![&f.content_type]),
            Self::Bundle(b) => (
                b.files.iter().map(|f| f.name.as_str()).collect(),
                b.files.iter().map(|f| f.content_type.as_str()).collect(),
            ),
            Self::Dir(d) => (
                std::iter::once(d.key.as_str())
                    .chain(d.files.iter().map(|f| f.name.as_str()))
                    .collect(),
                d.files.iter().map(|f| f.content_type.as_str()).collect(),
            ),
            Self::Gallery(g) => (g.name.iter().map(String::as_str).collect(), vec![]),
            Self::Image(i) => (vec![&i.name], vec![&i.content_type]),
            Self::Upload(_) => (vec![], vec![]),
        }
    }
}

/// The words of a name, lowercase: runs of letters and digits of at
/// least two characters.
fn name_words(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= WORD_CHARS_MIN)
        .map(str::to_lowercase)
        .collect()
}

/// What an admin searched for (`q=`): the index term that finds the
/// candidates, and every term an object must carry to be listed. Empty:
/// every object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdminSearch {
    /// The text as given, which is also tried as an id.
    pub text: String,
    /// The terms an object must all carry.
    pub terms: Vec<String>,
}

impl AdminSearch {
    /// Reads `q`: 64 hex characters are a digest, a word with a `/` a
    /// content type, anything else the words of a name (an object must
    /// carry them all).
    pub fn parse(q: &str) -> Self {
        let q = q.trim();
        let mut terms: Vec<String> = q
            .split_whitespace()
            .flat_map(|part| {
                if let Some(d) = Sha256::parse(part) {
                    vec![format!("sha256:{d}")]
                } else if part.contains('/') {
                    vec![format!("type:{}", part.to_lowercase())]
                } else {
                    name_words(part)
                        .into_iter()
                        .map(|w| format!("word:{w}"))
                        .collect()
                }
            })
            .collect();
        terms.dedup();
        Self {
            text: q.to_string(),
            terms,
        }
    }

    /// The term the index is walked by: the first one, or [`ALL_TERM`].
    pub fn index_term(&self) -> &str {
        self.terms.first().map_or(ALL_TERM, String::as_str)
    }

    /// Whether `object` carries every term.
    pub fn matches(&self, object: &Object) -> bool {
        if self.terms.len() < 2 {
            // The index already found it by its one term.
            return true;
        }
        let have = object.search_terms();
        self.terms
            .iter()
            .all(|t| have.binary_search_by(|h| h.as_str().cmp(t)).is_ok())
    }
}

/// Where an admin page starts: just after the last object of the one
/// before, in the pages' order (newest first, then by key). Written in
/// a URL as `<millis>.<key>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminCursor {
    /// The last object's creation.
    pub created_at: Timestamp,
    /// The last object's key.
    pub key: String,
}

impl AdminCursor {
    /// Reads `<millis>.<key>`.
    pub fn parse(text: &str) -> Result<Self, StoreError> {
        let bad = || StoreError::bad_request("after= is the next value a page answered");
        let (millis, key) = text.split_once('.').ok_or_else(bad)?;
        let millis: i64 = millis.parse().map_err(|_| bad())?;
        if key.is_empty() {
            return Err(bad());
        }
        Ok(Self {
            created_at: Timestamp::from_millis(millis),
            key: key.to_string(),
        })
    }

    /// The cursor after `object` stored under `key`.
    pub fn after(key: &str, object: &Object) -> Self {
        Self {
            created_at: object.created_at(),
            key: key.to_string(),
        }
    }

    /// Whether (`created_at`, `key`) comes after this cursor in the
    /// pages' order.
    pub fn precedes(&self, created_at: Timestamp, key: &str) -> bool {
        created_at < self.created_at || (created_at == self.created_at && key > self.key.as_str())
    }
}

impl std::fmt::Display for AdminCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.created_at.as_millis(), self.key)
    }
}

/// A digest the admin blocked: no upload with these bytes is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// The blocked bytes' digest.
    pub sha256: Sha256,
    /// Why, as the admin wrote it.
    pub reason: String,
    /// When it was blocked.
    pub blocked_at: Timestamp,
}

/// A visitor's report of an object, in the admin's queue until cleared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The report's own id (`ids::object_id`), which clears it.
    pub id: String,
    /// The repository key of the object reported.
    pub key: String,
    /// What the visitor wrote.
    pub reason: String,
    /// When it came.
    pub reported_at: Timestamp,
}

/// Reports one page of the admin's queue shows, at most.
pub const REPORTS_PAGE_MAX: usize = 200;

/// Checks a reason given for a block or a report: 1 to
/// [`REASON_CHARS_MAX`] characters, not only blanks, no control
/// characters but line breaks and tabs.
pub fn validate_reason(reason: &str) -> Result<(), StoreError> {
    let chars = reason.chars().count();
    if reason.trim().is_empty() || chars > REASON_CHARS_MAX {
        return Err(StoreError::bad_request(format!(
            "a reason is 1 to {REASON_CHARS_MAX} characters"
        )));
    }
    if reason
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(StoreError::bad_request(
            "a reason holds no control characters",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::FileRecord;
    use crate::{Lifetime, Timestamp};
    use proptest::prelude::*;

    fn file(name: &str, content_type: &str, bytes: &[u8]) -> Object {
        let now = Timestamp::from_secs(1_000);
        Object::File(FileRecord {
            id: "abc".into(),
            name: name.into(),
            content_type: content_type.into(),
            size: bytes.len() as u64,
            blob: crate::BlobId("b".into()),
            created_at: now,
            updated_at: now,
            lifetime: Lifetime::fixed(now, 60),
            once: false,
            downloads_left: None,
            tags: vec![],
            text: false,
            link: false,
            thumbs: Default::default(),
            owner: None,
            encrypted: None,
            password: None,
            sha256: Some(Sha256::of(bytes)),
        })
    }

    #[test]
    fn a_file_is_found_by_its_digest_type_and_words() {
        let f = file("Holiday-Photo 2026.JPG", "image/jpeg", b"x");
        let terms = f.search_terms();
        for want in [
            "*",
            "type:image/jpeg",
            "word:holiday",
            "word:photo",
            "word:2026",
            "word:jpg",
        ] {
            assert!(terms.contains(&want.to_string()), "{want} in {terms:?}");
        }
        assert!(terms.contains(&format!("sha256:{}", Sha256::of(b"x"))));
        let search = AdminSearch::parse("PHOTO holiday");
        assert_eq!(search.index_term(), "word:photo");
        assert!(search.matches(&f));
        assert!(!AdminSearch::parse("photo beach").matches(&f));
        let by_digest = AdminSearch::parse(&Sha256::of(b"x").hex().to_uppercase());
        assert_eq!(
            by_digest.index_term(),
            format!("sha256:{}", Sha256::of(b"x"))
        );
        assert_eq!(AdminSearch::parse(" ").index_term(), ALL_TERM);
        assert_eq!(
            AdminSearch::parse("Image/JPEG").index_term(),
            "type:image/jpeg"
        );
    }

    #[test]
    fn cursors_round_trip_and_order_pages() {
        let c = AdminCursor::parse("1500.d/some.key").unwrap();
        assert_eq!(c.key, "d/some.key");
        assert_eq!(AdminCursor::parse(&c.to_string()).unwrap(), c);
        assert!(c.precedes(Timestamp::from_millis(1499), "a"));
        assert!(c.precedes(Timestamp::from_millis(1500), "e"));
        assert!(!c.precedes(Timestamp::from_millis(1500), "d/some.key"));
        assert!(!c.precedes(Timestamp::from_millis(1501), "z"));
        for bad in ["", "x.y", "15", "15."] {
            assert!(AdminCursor::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reasons_are_bounded() {
        assert!(validate_reason("spam").is_ok());
        assert!(validate_reason("line\nbreak").is_ok());
        assert!(validate_reason("  ").is_err());
        assert!(validate_reason("bell\u{7}").is_err());
        assert!(validate_reason(&"é".repeat(REASON_CHARS_MAX)).is_ok());
        assert!(validate_reason(&"é".repeat(REASON_CHARS_MAX + 1)).is_err());
    }

    proptest! {
        /// Every word a search is made of finds an object whose name
        /// holds it, whatever its case: the index and the query agree on
        /// what a word is.
        #[test]
        fn a_name_is_found_by_each_of_its_words(name in "[A-Za-z0-9 ._-]{1,40}") {
            let f = file(&name, "text/plain", b"");
            let terms = f.search_terms();
            for word in name_words(&name) {
                let search = AdminSearch::parse(&word.to_uppercase());
                prop_assert!(terms.iter().any(|t| t == search.index_term()));
                prop_assert!(search.matches(&f));
            }
            prop_assert!(terms.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
