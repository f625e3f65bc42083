//! The tus 1.0.0 protocol's headers (CONTRACT.md, "Resumable uploads:
//! tus 1.0.0"): what a request to `/uploads` says, read and checked, and
//! what the answers say of the server. The upload's rules are store-core's
//! (`resumable`); this is only how they travel.

use base64::Engine as _;
use http::HeaderMap;
use store_app::Checksum;
use store_core::requests::NewFile;
use store_core::{Limits, StoreError};

use crate::params::FromQuery;
use crate::query::Query;

/// The size from which the home page's script sends a file as a
/// resumable upload, in bytes (the page and `/help` say so): below it,
/// one request is quicker and a broken one costs little to send again.
pub const PAGE_FROM_BYTES: u64 = 4 * 1024 * 1024;

/// The protocol version spoken, in `Tus-Resumable` and `Tus-Version`.
pub const VERSION: &str = "1.0.0";
/// The extensions of the protocol the server supports (`Tus-Extension`).
pub const EXTENSIONS: &str = "creation,creation-with-upload,termination,checksum,expiration";
/// The checksum algorithms a PATCH may name (`Tus-Checksum-Algorithm`).
pub const CHECKSUM_ALGORITHMS: &str = "sha1,sha256";
/// The type of a PATCH body (and of a creation's, with its first bytes).
pub const OFFSET_TYPE: &str = "application/offset+octet-stream";

/// `Tus-Resumable`.
pub const RESUMABLE: &str = "tus-resumable";
/// `Tus-Version`.
pub const TUS_VERSION: &str = "tus-version";
/// `Tus-Extension`.
pub const TUS_EXTENSION: &str = "tus-extension";
/// `Tus-Max-Size`.
pub const TUS_MAX_SIZE: &str = "tus-max-size";
/// `Tus-Checksum-Algorithm`.
pub const TUS_CHECKSUM_ALGORITHM: &str = "tus-checksum-algorithm";
/// `Upload-Length`.
pub const UPLOAD_LENGTH: &str = "upload-length";
/// `Upload-Offset`.
pub const UPLOAD_OFFSET: &str = "upload-offset";
/// `Upload-Metadata`.
pub const UPLOAD_METADATA: &str = "upload-metadata";
/// `Upload-Expires`.
pub const UPLOAD_EXPIRES: &str = "upload-expires";
/// `Upload-Checksum`.
pub const UPLOAD_CHECKSUM: &str = "upload-checksum";
/// `Upload-Defer-Length`, which this server does not support.
pub const UPLOAD_DEFER_LENGTH: &str = "upload-defer-length";

/// The metadata keys that carry a plain upload's options, and the query
/// parameter each is read as (so that both are read by the same rules).
const OPTION_KEYS: [(&str, &str); 7] = [
    ("filename", "name"),
    ("ttl", "ttl"),
    ("once", "once"),
    ("max_downloads", "max_downloads"),
    ("protect", "protect"),
    ("tags", "tag"),
    ("encrypted", "encrypted"),
];

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Result<Option<&'h str>, StoreError> {
    headers
        .get(name)
        .map(|v| {
            v.to_str()
                .map_err(|_| StoreError::bad_request(format!("{name} must be ASCII text")))
        })
        .transpose()
}

/// Refuses a request without `Tus-Resumable: 1.0.0` (412).
pub fn check_version(headers: &HeaderMap) -> Result<(), StoreError> {
    match header(headers, RESUMABLE)? {
        Some(VERSION) => Ok(()),
        Some(other) => Err(StoreError::PreconditionFailed(format!(
            "Tus-Resumable {other} is not spoken here: this server speaks tus {VERSION}"
        ))),
        None => Err(StoreError::PreconditionFailed(format!(
            "a resumable upload's request needs the header Tus-Resumable: {VERSION}"
        ))),
    }
}

/// A whole number of bytes from a header that must be there.
fn length_header(headers: &HeaderMap, name: &str, shown: &str) -> Result<u64, StoreError> {
    let text = header(headers, name)?
        .ok_or_else(|| StoreError::bad_request(format!("{shown} is missing")))?;
    // RFC 9110 digits only: no sign, no space, no second value.
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(StoreError::bad_request(format!(
            "{shown} must be a whole number of bytes, not {text:?}"
        )));
    }
    text.parse()
        .map_err(|_| StoreError::bad_request(format!("{shown} {text} is too large a number")))
}

/// `Upload-Length` of a creation. Deferring it is not supported.
pub fn upload_length(headers: &HeaderMap) -> Result<u64, StoreError> {
    if headers.contains_key(UPLOAD_LENGTH) || !headers.contains_key(UPLOAD_DEFER_LENGTH) {
        return length_header(headers, UPLOAD_LENGTH, "Upload-Length");
    }
    Err(StoreError::bad_request(
        "Upload-Defer-Length is not supported: give Upload-Length",
    ))
}

/// `Upload-Offset` of a PATCH.
pub fn upload_offset(headers: &HeaderMap) -> Result<u64, StoreError> {
    length_header(headers, UPLOAD_OFFSET, "Upload-Offset")
}

/// Whether the body is `application/offset+octet-stream` (parameters
/// aside).
pub fn is_offset_body(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(OFFSET_TYPE))
}

/// A PATCH's body type, which must be [`OFFSET_TYPE`] (415).
pub fn check_offset_body(headers: &HeaderMap) -> Result<(), StoreError> {
    if is_offset_body(headers) {
        return Ok(());
    }
    Err(StoreError::UnsupportedMediaType(format!(
        "a PATCH of a resumable upload carries Content-Type: {OFFSET_TYPE}"
    )))
}

/// `Upload-Checksum: <algorithm> <base64 digest>`, if given.
pub fn checksum(headers: &HeaderMap) -> Result<Option<Checksum>, StoreError> {
    let Some(text) = header(headers, UPLOAD_CHECKSUM)? else {
        return Ok(None);
    };
    let bad = || {
        StoreError::bad_request(format!(
            "Upload-Checksum must be one of {CHECKSUM_ALGORITHMS}, a space and the digest in base64"
        ))
    };
    let (algorithm, digest) = text.trim().split_once(' ').ok_or_else(bad)?;
    let digest = base64::engine::general_purpose::STANDARD
        .decode(digest.trim())
        .map_err(|_| bad())?;
    match (algorithm, digest.len()) {
        ("sha1", 20) => Ok(Some(Checksum::Sha1(digest))),
        ("sha256", 32) => Ok(Some(Checksum::Sha256(digest))),
        _ => Err(bad()),
    }
}

/// `Upload-Metadata` decoded: comma-separated `key base64value` pairs (a
/// key alone has an empty value). Keys are unique.
pub fn metadata(headers: &HeaderMap) -> Result<Vec<(String, String)>, StoreError> {
    let Some(text) = header(headers, UPLOAD_METADATA)? else {
        return Ok(Vec::new());
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, value) = item.split_once(' ').unwrap_or((item, ""));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(value.trim())
            .map_err(|_| {
                StoreError::bad_request(format!(
                    "Upload-Metadata: the value of {key} is not base64"
                ))
            })?;
        let value = String::from_utf8(bytes).map_err(|_| {
            StoreError::bad_request(format!("Upload-Metadata: the value of {key} is not UTF-8"))
        })?;
        if pairs.iter().any(|(k, _)| k == key) {
            return Err(StoreError::bad_request(format!(
                "Upload-Metadata: {key} is given more than once"
            )));
        }
        pairs.push((key.to_string(), value));
    }
    Ok(pairs)
}

/// `Upload-Metadata` as a HEAD answers it later: as the client sent it,
/// less its `password`, which is never kept.
pub fn metadata_kept(headers: &HeaderMap) -> String {
    let raw = headers
        .get(UPLOAD_METADATA)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    raw.split(',')
        .filter(|item| item.trim().split(' ').next() != Some("password"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The new file's options from `Upload-Metadata`: `filename` (required),
/// `filetype`, and the options a plain upload takes in its query, read by
/// the same rules. Keys a client adds for itself (Uppy's `relativePath`)
/// are ignored. `password` protects the file it becomes, as
/// X-Store-Password does a plain upload.
pub fn new_file(headers: &HeaderMap, limits: &Limits) -> Result<NewFile, StoreError> {
    let pairs = metadata(headers)?;
    let get = |key: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    if get("filename").is_none_or(str::is_empty) {
        return Err(StoreError::bad_request(
            "Upload-Metadata needs filename (its value in base64)",
        ));
    }
    let mut query = Query::default();
    query.extend(
        OPTION_KEYS
            .iter()
            .filter_map(|(key, param)| get(key).map(|v| (param.to_string(), v.to_string()))),
    );
    let mut req = NewFile::from_query(&query, limits)?;
    req.password = get("password")
        .filter(|p| !p.is_empty())
        .map(store_core::password::Password::new)
        .transpose()?;
    req.declared_type = get("filetype")
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    Ok(req)
}

/// `X-Store-Id`: the id of the file the last PATCH made.
pub const STORE_ID: &str = "x-store-id";
/// `X-Store-Url`: its URL.
pub const STORE_URL: &str = "x-store-url";

/// `name: value` among an answer's headers, when `value` is a valid one.
pub fn set(h: &mut HeaderMap, name: &'static str, value: &str) {
    crate::headers::set(h, http::HeaderName::from_static(name), value);
}

/// What every answer about a resumable upload carries, errors included:
/// `Tus-Resumable`, and, for a request in another version (412), the
/// versions spoken.
pub fn answered(h: &mut HeaderMap, status: http::StatusCode) {
    set(h, RESUMABLE, VERSION);
    if status == http::StatusCode::PRECONDITION_FAILED {
        set(h, TUS_VERSION, VERSION);
    }
}

/// `OPTIONS /uploads`: what the server supports, a file at most
/// `file_bytes_max`.
pub fn capabilities(h: &mut HeaderMap, file_bytes_max: u64) {
    set(h, TUS_VERSION, VERSION);
    set(h, TUS_EXTENSION, EXTENSIONS);
    set(h, TUS_CHECKSUM_ALGORITHM, CHECKSUM_ALGORITHMS);
    set(h, TUS_MAX_SIZE, &file_bytes_max.to_string());
}

/// Where an upload stands, on every answer about one in progress.
pub fn progress(h: &mut HeaderMap, upload: &store_core::resumable::UploadRecord) {
    set(h, UPLOAD_OFFSET, &upload.offset.to_string());
    let expires = crate::ranges::http_date(upload.expires_at());
    set(h, UPLOAD_EXPIRES, &expires);
}

/// `HEAD /uploads/<id>` of an upload in progress: where it stands, its
/// length, and the metadata its creation gave.
pub fn state(h: &mut HeaderMap, upload: &store_core::resumable::UploadRecord) {
    progress(h, upload);
    set(h, UPLOAD_LENGTH, &upload.length.to_string());
    if !upload.metadata.is_empty() {
        set(h, UPLOAD_METADATA, &upload.metadata);
    }
}

/// What the answer that made the file (or a HEAD after it) says of it:
/// its whole length as the offset, and its id and URL under `base`.
pub fn completed(h: &mut HeaderMap, file: &store_core::FileRecord, base: &str) {
    set(h, UPLOAD_OFFSET, &file.size.to_string());
    set(h, STORE_ID, &file.id);
    let url = crate::router::url_for(base, crate::router::RouteId::GetFile, &[&file.id]);
    set(h, STORE_URL, &url);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn metadata_carries_a_plain_uploads_options() {
        let meta = format!(
            "filename {},filetype {},ttl {},once,tags {},relativePath {}",
            b64("notes.txt"),
            b64("text/plain"),
            b64("2d"),
            b64("a,b"),
            b64("x/notes.txt")
        );
        let h = headers(&[(UPLOAD_METADATA, &meta)]);
        let req = new_file(&h, &Limits::DEFAULT).unwrap();
        assert_eq!(req.name.as_deref(), Some("notes.txt"));
        assert_eq!(req.declared_type.as_deref(), Some("text/plain"));
        assert_eq!(req.ttl_secs, Some(2 * 86_400));
        assert!(req.once, "a key alone is an empty value: a flag that is on");
        assert_eq!(req.tags, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn a_password_protects_the_file_and_is_never_kept_in_the_metadata() {
        let meta = format!(
            "filename {},password {},once",
            b64("notes.txt"),
            b64("correct horse")
        );
        let h = headers(&[(UPLOAD_METADATA, &meta)]);
        let req = new_file(&h, &Limits::DEFAULT).unwrap();
        assert_eq!(req.password.unwrap().expose(), "correct horse");
        assert_eq!(
            metadata_kept(&h),
            format!("filename {},once", b64("notes.txt"))
        );
    }

    #[test]
    fn bad_metadata_is_refused_with_what_is_wrong() {
        for (meta, says) in [
            (String::new(), "needs filename"),
            (format!("filetype {}", b64("a/b")), "needs filename"),
            ("filename !!!".to_string(), "not base64"),
            (
                format!("filename {0},filename {0}", b64("a")),
                "more than once",
            ),
            (
                format!("filename {},password {}", b64("a"), b64("pw")),
                "password",
            ),
            (
                format!(
                    "filename {},once {},max_downloads {}",
                    b64("a"),
                    b64("1"),
                    b64("3")
                ),
                "once=1",
            ),
        ] {
            let h = headers(&[(UPLOAD_METADATA, &meta)]);
            let e = new_file(&h, &Limits::DEFAULT).unwrap_err();
            assert!(e.to_string().contains(says), "{meta}: {e}");
        }
    }

    #[test]
    fn lengths_offsets_versions_and_checksums() {
        assert!(check_version(&headers(&[(RESUMABLE, "1.0.0")])).is_ok());
        for h in [headers(&[]), headers(&[(RESUMABLE, "0.2.2")])] {
            let e = check_version(&h).unwrap_err();
            assert_eq!(e.code().http_status(), 412);
        }
        assert_eq!(upload_length(&headers(&[(UPLOAD_LENGTH, "42")])), Ok(42));
        for bad in ["", "-1", "+1", "1 2", "1e3", "99999999999999999999999"] {
            assert!(
                upload_length(&headers(&[(UPLOAD_LENGTH, bad)])).is_err(),
                "{bad:?}"
            );
        }
        assert!(upload_length(&headers(&[(UPLOAD_DEFER_LENGTH, "1")]))
            .unwrap_err()
            .to_string()
            .contains("not supported"));
        assert_eq!(upload_offset(&headers(&[(UPLOAD_OFFSET, "0")])), Ok(0));
        let sha1 = format!(
            "sha1 {}",
            base64::engine::general_purpose::STANDARD.encode([7u8; 20])
        );
        assert_eq!(
            checksum(&headers(&[(UPLOAD_CHECKSUM, &sha1)])),
            Ok(Some(Checksum::Sha1(vec![7; 20])))
        );
        for bad in ["md5 AAAA", "sha1", "sha256 AAAA", "sha1 !!"] {
            assert!(
                checksum(&headers(&[(UPLOAD_CHECKSUM, bad)])).is_err(),
                "{bad}"
            );
        }
        assert!(is_offset_body(&headers(&[(
            "content-type",
            "application/offset+octet-stream"
        )])));
        assert!(check_offset_body(&headers(&[("content-type", "text/plain")])).is_err());
    }

    #[test]
    fn answers_carry_the_version_and_a_412_the_versions_spoken() {
        let mut h = HeaderMap::new();
        answered(&mut h, http::StatusCode::NO_CONTENT);
        assert_eq!(h[RESUMABLE], VERSION);
        assert!(h.get(TUS_VERSION).is_none());
        answered(&mut h, http::StatusCode::PRECONDITION_FAILED);
        assert_eq!(h[TUS_VERSION], VERSION);
        let mut h = HeaderMap::new();
        capabilities(&mut h, 1234);
        assert_eq!(h[TUS_MAX_SIZE], "1234");
        assert_eq!(h[TUS_EXTENSION], EXTENSIONS);
    }
}
