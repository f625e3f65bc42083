//! Resumable uploads (tus 1.0.0) as the tests speak them where the
//! protocol is not what they check: a new upload, a PATCH, and the head of
//! a PATCH a test writes on a socket of its own (to cut it, hold it, or
//! kill the process that receives it).

use super::{header, Server};

/// `bytes` in base64, as `Upload-Metadata` carries each value.
pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `Tus-Resumable`, which every request carries.
pub const TUS: (&str, &str) = ("Tus-Resumable", "1.0.0");
/// The type of a PATCH's body.
pub const OFFSET_BODY: (&str, &str) = ("Content-Type", "application/offset+octet-stream");

/// A new upload of `length` bytes named `name` (ASCII), through `s`; its
/// path.
pub fn start(s: &Server, length: usize, name: &str) -> String {
    let meta = format!("filename {}", b64(name.as_bytes()));
    let length = length.to_string();
    let res = s.post_empty(
        "/uploads",
        &[TUS, ("Upload-Length", &length), ("Upload-Metadata", &meta)],
    );
    assert_eq!(res.status(), 201, "upload of {name} created");
    header(&res, "location")
        .strip_prefix(&s.base)
        .expect("Location is absolute")
        .to_string()
}

/// A PATCH of `bytes` at `offset` through `s`.
pub fn patch_at(
    s: &Server,
    path: &str,
    offset: usize,
    bytes: &[u8],
) -> ureq::http::Response<ureq::Body> {
    let offset = offset.to_string();
    s.patch(path, &[TUS, OFFSET_BODY, ("Upload-Offset", &offset)], bytes)
}

/// The head of a PATCH of `len` bytes at `offset`, its body to follow.
pub fn patch_head(path: &str, offset: usize, len: usize) -> String {
    format!(
        "PATCH {path} HTTP/1.1\r\nHost: x\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: {offset}\r\n\
         Content-Type: application/offset+octet-stream\r\nContent-Length: {len}\r\n\r\n"
    )
}
