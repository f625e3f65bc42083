//! Each endpoint's parameters, typed: read from a request's query (and,
//! for a form, its fields merged in) once, here, into values and enums.
//! This module is the one place outside the route table that names a
//! parameter. The router reads each route's parameters as the table says
//! ([`FromQuery`]) and the endpoint carries them to its handler, which
//! never sees a name (scripts/check-invariants.sh). A value that is not
//! allowed answers 400, with the words that are.

use store_app::{
    AdminAction, BrowseQuery, BrowseSort, DirQuery, DirSort, ImportRequest, SortOrder,
};
use store_core::digest::Sha256;
use store_core::drops::DropRequest;
use store_core::moderation::{AdminCursor, AdminSearch, ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX};
use store_core::password::Password;
use store_core::requests::{NewDir, NewFile, WriteRequest};
use store_core::{Encryption, Limits, StoreError, Timestamp};

use crate::query::Query;

/// A route's parameters, read from its query: the route table names the
/// type for each route that has some, and the router reads them for the
/// route it chose, with the server's limits at hand.
pub trait FromQuery: Sized {
    /// The parameters of `q`, or why they are refused.
    fn from_query(q: &Query, limits: &Limits) -> Result<Self, StoreError>;
}

/// What an endpoint carries: its parameters, or why they were refused.
/// The handler answers the refusal where it first needs a value, so a
/// request is refused for the same reason whatever the router read first.
pub type Parsed<T> = Result<T, StoreError>;

/// The parameters of a query with a form's fields merged in (the
/// query's values win): what a browser form sends with its files.
pub fn with_form<T: FromQuery>(
    q: &Query,
    fields: Vec<(String, String)>,
    limits: &Limits,
) -> Result<T, StoreError> {
    T::from_query(&q.with_fields(fields), limits)
}

impl FromQuery for NewFile {
    fn from_query(q: &Query, limits: &Limits) -> Result<Self, StoreError> {
        new_file(limits, q)
    }
}

impl FromQuery for NewDir {
    fn from_query(q: &Query, limits: &Limits) -> Result<Self, StoreError> {
        new_dir(limits, q)
    }
}

impl FromQuery for ImportRequest {
    fn from_query(q: &Query, limits: &Limits) -> Result<Self, StoreError> {
        import(limits, q)
    }
}

/// Implements [`FromQuery`] for a type whose parameters need no limits,
/// by its own `parse`.
macro_rules! from_query_by_parse {
    ($($ty:ty),+ $(,)?) => {$(
        impl FromQuery for $ty {
            fn from_query(q: &Query, _: &Limits) -> Result<Self, StoreError> {
                Self::parse(q)
            }
        }
    )+};
}

from_query_by_parse!(
    AdminQuery,
    CloseDrop,
    FileRead,
    TagEdit,
    Browse,
    DirList,
    NewGallery,
    GalleryShow,
    QrFormat
);

/// `ttl=` of `POST /<id>?ttl=` and `POST /d/<key>?ttl=`: the new lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTtl(pub Option<u64>);

impl NewTtl {
    /// `ttl=` of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        ttl(q).map(Self)
    }

    /// The new lifetime in seconds: an empty `ttl=` sets none, and is
    /// refused.
    pub fn secs(self) -> Result<u64, StoreError> {
        self.0
            .ok_or_else(|| StoreError::bad_request("ttl must not be empty: <N>h or <N>d"))
    }
}

/// `download=1` of a read that serves bytes: an attachment, even for a
/// browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsDownload(pub bool);

impl AsDownload {
    /// `download=` of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        download(q).map(Self)
    }
}

/// `zip=1` of `GET /d/<key>`: every file as one zip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsZip(pub bool);

impl AsZip {
    /// `zip=` of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        zip(q).map(Self)
    }
}

/// A password page's form (`POST …?unlock=1`): the password as typed,
/// and the path to go back to.
#[derive(Debug, Clone)]
pub struct UnlockForm {
    /// The password, to be checked as it is.
    pub password: Password,
    /// The path (and query) the browser asked for before the form.
    pub back: Option<String>,
}

impl UnlockForm {
    /// The form's fields of `q`.
    pub fn parse(q: &Query) -> Self {
        Self {
            password: Password::presented(q.get("password").unwrap_or("")),
            back: q.get("back").map(str::to_string),
        }
    }
}

/// Refuses a password in an upload's URL: URLs end up in logs and
/// histories, and a password quietly ignored would leave the object open
/// while its uploader believes it closed.
pub fn refuse_password_in_url(q: &Query) -> Result<(), StoreError> {
    if q.get("password").is_some() {
        return Err(StoreError::bad_request(
            "a password never goes in the URL: send it in the X-Store-Password header or a form field named password",
        ));
    }
    Ok(())
}

/// `drop=0` of `POST /d/<key>`: close the dir's drop link. Any other
/// value is refused, so that `drop=1` on an existing dir closes nothing
/// by surprise (a drop link is made with its dir).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseDrop;

impl CloseDrop {
    /// `drop=` of `q`, which must be `0`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        match q.get("drop") {
            Some("0") => Ok(Self),
            _ => Err(StoreError::bad_request(
                "drop=0 closes a dir's drop link; a drop link is made with its dir (POST /?dir=1&drop=1)",
            )),
        }
    }
}

/// `name=` of a raw body written into a dir: the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawName(pub Option<String>);

impl RawName {
    /// `name=` of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        raw_name(q).map(Self)
    }
}

/// An image upload's parameters: `name=` as given, for a raw body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageUpload {
    /// `name=`: the image's name, if given.
    pub name: Option<String>,
}

impl ImageUpload {
    /// The image parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        Ok(Self {
            name: image_name(q),
        })
    }
}

/// `POST /pics/g/<gid>?url=`: the address to fetch, and the image's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageImport {
    /// `url=`: the address to fetch, or why it is refused.
    pub url: Parsed<String>,
    /// `name=`: the image's name, if given.
    pub name: Option<String>,
}

impl ImageImport {
    /// The import parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        Ok(Self {
            url: url(q),
            name: image_name(q),
        })
    }
}

/// `GET /pics/i/<id>`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRead {
    /// `thumb=<size>`: a preview, if one can be made.
    pub thumb: Option<String>,
    /// `download=1`: an attachment, even for a browser, or why it is
    /// refused.
    pub download: Parsed<AsDownload>,
}

impl ImageRead {
    /// The image read parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        Ok(Self {
            thumb: thumb(q),
            download: AsDownload::parse(q),
        })
    }
}

/// `clike=` of `POST /pics/g/<gid>?clike=`: the comment a like is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentLike(pub String);

impl CommentLike {
    /// `clike=` of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        comment_like(q).map(Self)
    }
}

/// `p=` of a gallery's admin page: the page, from 1; anything else is 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdminPage(pub usize);

impl AdminPage {
    /// `p=` of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        Ok(Self(admin_page(q)))
    }
}

from_query_by_parse!(
    NewTtl,
    AsDownload,
    AsZip,
    RawName,
    ImageUpload,
    ImageImport,
    ImageRead,
    CommentLike,
    AdminPage,
);

/// `ttl=`, parsed (`4h`, `7d`, seconds).
fn ttl(q: &Query) -> Result<Option<u64>, StoreError> {
    q.text("ttl")?
        .as_deref()
        .map(store_core::ttl::parse_ttl)
        .transpose()
}

/// `order=`: `desc` (the default) or `asc`.
fn order(q: &Query) -> Result<SortOrder, StoreError> {
    match q.get("order") {
        None | Some("desc") => Ok(SortOrder::Desc),
        Some("asc") => Ok(SortOrder::Asc),
        Some(other) => Err(StoreError::bad_request(format!(
            "invalid order {other:?}: use asc or desc"
        ))),
    }
}

/// An upload's parameters (`POST /`, and a form's fields), checked by
/// store-core's rules before a byte of the body is read.
fn new_file(limits: &Limits, q: &Query) -> Result<NewFile, StoreError> {
    let encrypted = q.text("encrypted")?;
    let req = NewFile {
        encrypted: encrypted.as_deref().map(Encryption::parse).transpose()?,
        name: q.text("name")?,
        declared_type: None,
        ttl_secs: ttl(q)?,
        once: q.flag("once")?,
        tags: q.all("tag"),
        share: q.text("share")?,
        protect: q.flag("protect")?,
        max_downloads: match q.text("max_downloads")? {
            None => None,
            Some(n) => Some(n.parse().map_err(|_| {
                StoreError::bad_request(format!(
                    "max_downloads must be a whole number from 1 to {}",
                    limits.downloads_max
                ))
            })?),
        },
        password: password_field(q)?,
        password_hash: None,
    };
    req.validate(limits)?;
    Ok(req)
}

/// `POST /?url=`: the URL, whether to store it as a link, and the file's
/// own parameters.
fn import(limits: &Limits, q: &Query) -> Result<ImportRequest, StoreError> {
    let url = url(q)?;
    Ok(ImportRequest {
        url,
        file: new_file(limits, q)?,
        link: q.flag("link")?,
    })
}

/// `POST /?dir=1`'s parameters, checked by store-core's rules.
fn new_dir(limits: &Limits, q: &Query) -> Result<NewDir, StoreError> {
    let write = match q.get("write") {
        None | Some("0") | Some("false") | Some("no") | Some("off") => None,
        Some("1") | Some("true") | Some("yes") | Some("on") => Some(WriteRequest::Generate),
        Some(token) => Some(WriteRequest::Custom(token.to_string())),
    };
    let req = NewDir {
        name: q.text("name")?,
        listed: q.flag("listed")?,
        tags: q.all("tag"),
        ttl_secs: ttl(q)?,
        write,
        show: q.flag("show")?,
        protect: q.flag("protect")?,
        password: password_field(q)?,
        drop: drop_request(q)?,
    };
    req.validate(limits)?;
    Ok(req)
}

/// `drop=1` with its `drop_files=` and `drop_bytes=`; those two alone
/// are refused, since they would bound nothing.
fn drop_request(q: &Query) -> Result<Option<DropRequest>, StoreError> {
    let number = |key: &str| -> Result<Option<u64>, StoreError> {
        q.text(key)?
            .map(|n| {
                n.parse::<u64>()
                    .map_err(|_| StoreError::bad_request(format!("{key} must be a whole number")))
            })
            .transpose()
    };
    let files = number("drop_files")?;
    let bytes = number("drop_bytes")?;
    if !q.flag("drop")? {
        if files.is_some() || bytes.is_some() {
            return Err(StoreError::bad_request(
                "drop_files and drop_bytes bound a drop link: add drop=1",
            ));
        }
        return Ok(None);
    }
    // Past u32 is past the rule's 1000 too: the rule says so.
    let files_max = files.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    Ok(Some(DropRequest {
        files_max,
        bytes_max: bytes,
    }))
}

/// A form's `password` field: none when it is empty, as a form's unused
/// field is. (A password in the URL itself is refused by the handler,
/// which still tells the URL from the form.)
fn password_field(q: &Query) -> Result<Option<Password>, StoreError> {
    q.get("password")
        .filter(|p| !p.is_empty())
        .map(Password::new)
        .transpose()
}

/// `name=` of a raw body written into a dir: the file's name.
fn raw_name(q: &Query) -> Result<Option<String>, StoreError> {
    q.text("name")
}

/// `url=` of an import: the address to fetch.
fn url(q: &Query) -> Result<String, StoreError> {
    q.text("url")?
        .ok_or_else(|| StoreError::bad_request("url must not be empty"))
}

/// `clike=`: the comment a like is for.
fn comment_like(q: &Query) -> Result<String, StoreError> {
    q.text("clike")?
        .ok_or_else(|| StoreError::bad_request("clike names a comment id"))
}

/// The upload token a form carries in its `token` field (the last one
/// given wins).
pub fn form_token(fields: &[(String, String)]) -> Option<&str> {
    fields
        .iter()
        .rev()
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.as_str())
}

/// The write token a page's form sent in its `write` field, if not empty.
pub fn form_write_token(fields: Vec<(String, String)>) -> Option<String> {
    fields
        .into_iter()
        .find(|(k, v)| k == "write" && !v.is_empty())
        .map(|(_, v)| v)
}

/// `name=` of an image upload or import, as given.
fn image_name(q: &Query) -> Option<String> {
    q.get("name").map(str::to_string)
}

/// `GET /<id>`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// `info=1`: the file's page or record, never its bytes.
    pub info: bool,
    /// `thumb=<size>`: a preview of an image, if one can be made.
    pub thumb: Option<String>,
    /// `download=1`: the bytes even for a browser, never a page.
    pub download: bool,
    /// `json=1`: a bundle's record instead of its zip.
    pub json: bool,
}

impl FileRead {
    /// The parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        Ok(Self {
            info: q.flag("info")?,
            thumb: thumb(q),
            download: download(q)?,
            json: q.flag("json")?,
        })
    }
}

/// `download=1`: the bytes even for a browser.
fn download(q: &Query) -> Result<bool, StoreError> {
    q.flag("download")
}

/// `thumb=<size>` of a file or an image.
fn thumb(q: &Query) -> Option<String> {
    q.get("thumb").map(str::to_string)
}

/// `zip=1`: a dir's or a gallery's files as one zip.
fn zip(q: &Query) -> Result<bool, StoreError> {
    q.flag("zip")
}

/// `POST /<id>?tag=&untag=`: the tags to add and to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagEdit {
    /// `tag=`, each.
    pub add: Vec<String>,
    /// `untag=`, each.
    pub remove: Vec<String>,
}

impl TagEdit {
    /// The tag edits of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        Ok(Self {
            add: q.all("tag"),
            remove: q.all("untag"),
        })
    }
}

/// `GET /browse`: the use case's query, and the filter as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Browse {
    /// What store-app lists.
    pub query: BrowseQuery,
    /// The same, in the words the request used, for the page's form.
    pub filter: BrowseFilter,
}

impl Browse {
    /// The browse parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        let sort = match q.get("sort") {
            None | Some("created") => BrowseSort::Created,
            Some("name") => BrowseSort::Name,
            Some("size") => BrowseSort::Size,
            Some("expires") => BrowseSort::Expires,
            Some(other) => {
                return Err(StoreError::bad_request(format!(
                    "invalid sort {other:?}: use created, name, size or expires"
                )))
            }
        };
        let query = BrowseQuery {
            tags: q.all("tag"),
            q: search(q),
            sort,
            order: order(q)?,
        };
        let filter = BrowseFilter {
            q: query.q.clone().unwrap_or_default(),
            tags: query.tags.clone(),
            sort: q.get("sort").unwrap_or("created").to_string(),
            order: q.get("order").unwrap_or("desc").to_string(),
        };
        Ok(Self { query, filter })
    }
}

/// The browse page's filter, as the request asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowseFilter {
    /// The text searched for in names.
    pub q: String,
    /// The tags every entry carries.
    pub tags: Vec<String>,
    /// The sort key's wire word.
    pub sort: String,
    /// The order's wire word.
    pub order: String,
}

/// `q=`: text to find; empty finds everything.
fn search(q: &Query) -> Option<String> {
    q.get("q").filter(|s| !s.is_empty()).map(str::to_string)
}

/// `GET /d`: the use case's query, and the search text as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirList {
    /// What store-app lists.
    pub query: DirQuery,
    /// `q=` as given, for the page's search box.
    pub shown_q: String,
}

impl DirList {
    /// The dir list parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        let sort = match q.get("sort") {
            None | Some("created") => DirSort::Created,
            Some("updated") => DirSort::Updated,
            Some("name") => DirSort::Name,
            Some(other) => {
                return Err(StoreError::bad_request(format!(
                    "invalid sort {other:?}: use created, updated or name"
                )))
            }
        };
        let query = DirQuery {
            q: search(q),
            created_after: time(q, "created_after")?,
            created_before: time(q, "created_before")?,
            updated_after: time(q, "updated_after")?,
            updated_before: time(q, "updated_before")?,
            sort,
            order: order(q)?,
        };
        let shown_q = q.get("q").unwrap_or("").to_string();
        Ok(Self { query, shown_q })
    }
}

/// A time filter of `GET /d`: RFC 3339 or Unix seconds.
fn time(q: &Query, key: &str) -> Result<Option<Timestamp>, StoreError> {
    match q.get(key) {
        None | Some("") => Ok(None),
        Some(v) => Timestamp::parse(v).map(Some).ok_or_else(|| {
            StoreError::bad_request(format!(
                "invalid {key} {v:?}: use RFC 3339 (2026-11-22T15:04:05Z) or Unix seconds"
            ))
        }),
    }
}

/// `POST /pics`: a new gallery's name and whether it is listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGallery {
    /// `name=`; none (or empty) makes an unnamed gallery.
    pub name: Option<String>,
    /// `listed=1`: shown in `GET /pics`.
    pub listed: bool,
}

impl NewGallery {
    /// The gallery parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        Ok(Self {
            name: q.get("name").filter(|n| !n.is_empty()).map(str::to_string),
            listed: q.flag("listed")?,
        })
    }
}

/// `GET /pics/g/<gid>`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GalleryShow {
    /// `zip=1`: every image as one zip.
    pub zip: bool,
    /// `likes=1`: the like and comment counts alone.
    pub likes: bool,
    /// `p=`: the page, from 1.
    pub page: usize,
    /// `stars=`: the images this visitor liked, each.
    pub stars: Vec<String>,
    /// `embed=1`: the page framed in another site.
    pub embed: bool,
}

impl GalleryShow {
    /// The gallery parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        let page = match q.get("p") {
            None => 1,
            Some(p) => p
                .parse()
                .map_err(|_| StoreError::bad_request("p must be a page number"))?,
        };
        Ok(Self {
            zip: zip(q)?,
            likes: q.flag("likes")?,
            page,
            stars: q.all("stars"),
            embed: q.flag("embed")?,
        })
    }
}

/// `p=` of a gallery's admin page: the page, from 1; anything else is 1.
fn admin_page(q: &Query) -> usize {
    q.get("p").and_then(|p| p.parse().ok()).unwrap_or(1)
}

/// What `?qr=` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrFormat {
    /// `qr=1` or `qr=svg`: an SVG image.
    Svg,
    /// `qr=text`: blocks of text, for a terminal.
    Text,
}

impl QrFormat {
    /// The format `q` asks for.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        match q.get("qr").unwrap_or_default() {
            "" | "1" | "svg" => Ok(Self::Svg),
            "text" => Ok(Self::Text),
            other => Err(StoreError::bad_request(format!(
                "qr must be 1, svg or text, not {other:?}"
            ))),
        }
    }
}

/// The credentials a query may carry instead of a header: a retain or
/// upload token (`token=`), a dir's write token (`write=`, except on
/// creation, where it asks for one) and an owner token (`owner=`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryCredentials {
    /// `token=`.
    pub token: Option<String>,
    /// `write=`.
    pub write: Option<String>,
    /// `owner=`.
    pub owner: Option<String>,
}

impl QueryCredentials {
    /// The credentials of `q`, as given (empty ones included).
    pub fn parse(q: &Query) -> Self {
        let get = |k: &str| q.get(k).map(str::to_string);
        Self {
            token: get("token"),
            write: get("write"),
            owner: get("owner"),
        }
    }
}

/// A comment on a gallery: `name=` and `text=`, from a form or JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// Who wrote it; none is anonymous.
    pub name: Option<String>,
    /// What it says.
    pub text: String,
}

impl Comment {
    /// The comment of a form's fields.
    pub fn parse(q: &Query) -> Self {
        Self {
            name: q.get("name").map(str::to_string),
            text: q.get("text").unwrap_or("").to_string(),
        }
    }
}

/// A JSON body as the fields a form would send, so that both take one
/// path: an object whose values are text (a null is a field not sent).
fn json_fields(bytes: &[u8]) -> Result<Query, StoreError> {
    let bad = |why: String| StoreError::bad_request(format!("invalid JSON body: {why}"));
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    let mut q = Query::default();
    for (name, value) in object {
        match value {
            serde_json::Value::String(text) => q.extend([(name, text)]),
            serde_json::Value::Null => {}
            _ => return Err(bad(format!("{name} must be a string"))),
        }
    }
    Ok(q)
}

/// A small form body as fields: a JSON object of text fields (a
/// comment's, a block's) when its Content-Type says so, else urlencoded.
pub fn form_body(content_type: Option<&str>, bytes: &[u8]) -> Result<Query, StoreError> {
    if content_type.is_some_and(|v| v.to_ascii_lowercase().contains("json")) {
        return json_fields(bytes);
    }
    let text =
        std::str::from_utf8(bytes).map_err(|_| StoreError::bad_request("the form is not UTF-8"))?;
    Query::parse(text)
}

/// A gallery admin form: what to do, and to which image or comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminForm {
    /// `action=`: the wire's word, as the domain's action.
    pub action: AdminAction,
    /// `id=`: the image or comment.
    pub target: String,
}

impl AdminForm {
    /// The admin form of a form's fields (SPEC.md galleries, rule 12).
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        let action = match q.get("action").unwrap_or("") {
            "hide" => AdminAction::Hide,
            "unhide" => AdminAction::Unhide,
            "delete" => AdminAction::Delete,
            "up" => AdminAction::Up,
            "down" => AdminAction::Down,
            "cdel" => AdminAction::DeleteComment,
            _ => {
                return Err(StoreError::bad_request(
                    "action must be hide, unhide, delete, up, down or cdel",
                ))
            }
        };
        let target = q
            .text("id")?
            .ok_or_else(|| StoreError::bad_request("id names the image or comment"))?;
        Ok(Self { action, target })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Query {
        Query::parse(s).expect("a query")
    }

    #[test]
    fn allowed_words_parse_and_others_are_refused() {
        assert_eq!(order(&q("order=asc")).unwrap(), SortOrder::Asc);
        assert_eq!(order(&q("")).unwrap(), SortOrder::Desc);
        assert!(order(&q("order=up")).is_err());
        assert_eq!(QrFormat::parse(&q("qr=text")).unwrap(), QrFormat::Text);
        assert_eq!(QrFormat::parse(&q("qr=1")).unwrap(), QrFormat::Svg);
        assert!(QrFormat::parse(&q("qr=png")).is_err());
        assert_eq!(
            Browse::parse(&q("sort=size")).unwrap().query.sort,
            BrowseSort::Size
        );
        assert!(Browse::parse(&q("sort=colour")).is_err());
        assert_eq!(
            DirList::parse(&q("sort=name")).unwrap().query.sort,
            DirSort::Name
        );
        assert!(DirList::parse(&q("created_after=yesterday")).is_err());
        assert_eq!(GalleryShow::parse(&q("p=3")).unwrap().page, 3);
        assert!(GalleryShow::parse(&q("p=last")).is_err());
    }

    #[test]
    fn write_words_ask_for_a_token_and_anything_else_is_one() {
        let limits = Limits::DEFAULT;
        for yes in ["1", "true", "yes", "on"] {
            let d = new_dir(&limits, &q(&format!("write={yes}"))).unwrap();
            assert_eq!(d.write, Some(WriteRequest::Generate), "{yes}");
        }
        for no in ["0", "false", "no", "off"] {
            assert_eq!(
                new_dir(&limits, &q(&format!("write={no}"))).unwrap().write,
                None
            );
        }
        let custom = new_dir(&limits, &q("write=a-long-enough-token_1234")).unwrap();
        assert_eq!(
            custom.write,
            Some(WriteRequest::Custom("a-long-enough-token_1234".into()))
        );
        assert!(
            new_dir(&limits, &q("protect=1")).is_err(),
            "a dir refuses protect=1"
        );
    }

    #[test]
    fn an_upload_refuses_what_does_not_combine() {
        let limits = Limits::DEFAULT;
        assert!(new_file(&limits, &q("once=1&max_downloads=1")).is_ok());
        assert!(new_file(&limits, &q("once=1&share=team-notes")).is_err());
        assert!(new_file(&limits, &q("max_downloads=many")).is_err());
        assert!(
            import(&limits, &q("link=1")).is_err(),
            "an import needs its url"
        );
    }
}

/// `GET /admin`: what the admin searched for, where the page starts, and
/// how many objects it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminQuery {
    /// `q=`: a name's words, a content type, a SHA-256 or an id.
    pub search: AdminSearch,
    /// `after=`: the cursor the previous page answered.
    pub after: Option<AdminCursor>,
    /// `limit=`: objects per page, 1 to [`ADMIN_PAGE_MAX`].
    pub limit: usize,
}

impl AdminQuery {
    /// The admin listing's parameters of `q`.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        let limit = match q.get("limit") {
            None | Some("") => ADMIN_PAGE_DEFAULT,
            Some(text) => text
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=ADMIN_PAGE_MAX).contains(n))
                .ok_or_else(|| {
                    StoreError::bad_request(format!("limit is 1 to {ADMIN_PAGE_MAX}"))
                })?,
        };
        Ok(Self {
            search: AdminSearch::parse(q.get("q").unwrap_or("")),
            after: q
                .get("after")
                .filter(|a| !a.is_empty())
                .map(AdminCursor::parse)
                .transpose()?,
            limit,
        })
    }
}

/// `POST /admin/block`: the digest to block, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockForm {
    /// `sha256`: the bytes' digest, 64 hex characters.
    pub sha256: Sha256,
    /// `reason`: why, 1 to 1000 characters.
    pub reason: String,
}

impl BlockForm {
    /// The block of a form's (or JSON body's) fields.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        let sha256 = q.get("sha256").and_then(Sha256::parse).ok_or_else(|| {
            StoreError::bad_request("sha256 is the 64 hex characters of a SHA-256")
        })?;
        Ok(Self {
            sha256,
            reason: q.get("reason").unwrap_or("").to_string(),
        })
    }
}

/// `POST /admin/delete`: the key of the object to remove, as the
/// admin's listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteForm {
    /// `key`: the object's key.
    pub key: String,
}

impl DeleteForm {
    /// The delete of a form's (or JSON body's) fields.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        match q.get("key").filter(|k| !k.is_empty()) {
            Some(key) => Ok(Self {
                key: key.to_string(),
            }),
            None => Err(StoreError::bad_request(
                "key is the key of the object to delete, as GET /admin shows it",
            )),
        }
    }
}

/// The `token` field of fields read as a query: the admin's token, which
/// a browser's form carries since a browser sends no bearer header.
pub fn query_token(q: &Query) -> Option<&str> {
    q.get("token").filter(|t| !t.is_empty())
}

/// A visitor's report (`POST …?report=1`): why, as the form or JSON body
/// gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportForm {
    /// `reason`: 1 to 1000 characters (checked by the use case).
    pub reason: String,
}

impl ReportForm {
    /// The report of a form's (or JSON body's) fields.
    pub fn parse(q: &Query) -> Self {
        Self {
            reason: q.get("reason").unwrap_or("").to_string(),
        }
    }
}

/// `POST /admin/clear`: the report to take out of the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearForm {
    /// `id`: the report's id, as `GET /admin?reports=1` shows it.
    pub id: String,
}

impl ClearForm {
    /// The clear of a form's (or JSON body's) fields.
    pub fn parse(q: &Query) -> Result<Self, StoreError> {
        match q.get("id").filter(|k| !k.is_empty()) {
            Some(id) => Ok(Self { id: id.to_string() }),
            None => Err(StoreError::bad_request(
                "id is the id of the report to clear, as GET /admin?reports=1 shows it",
            )),
        }
    }
}
