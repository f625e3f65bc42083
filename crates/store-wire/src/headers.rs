//! The headers each kind of answer carries: the service's own pages
//! (a strict content security policy), user bytes (their type and
//! disposition, and the sandbox that keeps them from acting with the
//! service's origin), zips, validators and ranges, and errors.

use http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use store_app::Download;
use store_core::content::renders_inline;
use store_core::{StoreError, Timestamp};

use crate::disposition::content_disposition;

/// App pages load nothing from anywhere else: script and style only from
/// the service's own `/static/` files, no inline script or style, images
/// from the service itself, no frames, and no framing by others.
pub const APP_CSP: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; frame-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The gallery embed view: the same, except that any site may frame it.
pub const EMBED_CSP: &str =
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'";

/// The sandbox of CONTRACT.md. Every response carrying user bytes gets it,
/// not only HTML, SVG and XML: it costs an image or a text file nothing,
/// and it stays a backstop should a type ever be misjudged.
pub const SANDBOX_CSP: &str = "sandbox allow-scripts allow-forms allow-popups";

/// `name: value`, when `value` is a valid header value (a name from a
/// user that is not is left out rather than answered broken).
pub fn set(h: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(name, v);
    }
}

/// `X-Content-Type-Options: nosniff`: a browser takes the type given.
pub fn nosniff(h: &mut HeaderMap) {
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// `Referrer-Policy: no-referrer`: a page's URL, which may hold a key or
/// a token, is never sent on to another site.
pub fn no_referrer(h: &mut HeaderMap) {
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

/// The headers of one of the service's own HTML pages.
pub fn page(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(APP_CSP),
    );
    nosniff(h);
    no_referrer(h);
}

/// The gallery embed page, which other sites may frame.
pub fn embed(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(EMBED_CSP),
    );
}

/// Admin pages and answers: never cached, never leaking their URL (it
/// holds the secret) to another site.
pub fn private(h: &mut HeaderMap) {
    no_store(h);
    no_referrer(h);
}

/// A page that stands for a file whose link is all it takes to spend or
/// open it: never cached, never indexed, its URL never sent on to
/// another site.
pub fn unshared(h: &mut HeaderMap) {
    private(h);
    h.insert(
        HeaderName::from_static("x-robots-tag"),
        HeaderValue::from_static("noindex, nofollow"),
    );
}

/// A creation's `Location`: the new object's URL.
pub fn created(h: &mut HeaderMap, url: &str) {
    set(h, header::LOCATION, url);
}

/// A creation's answer also carries the owner token as a header, so a
/// client that keeps headers (`curl -i`, a script) need not parse JSON.
/// Never cached: the token is shown once.
pub fn owner_token(h: &mut HeaderMap, token: &str) {
    if let Ok(v) = HeaderValue::from_str(token) {
        h.insert(crate::api::OWNER_HEADER, v);
        no_store(h);
    }
}

/// A static asset: the pages ask for a content-hashed URL, so a year is
/// safe.
pub fn immutable(h: &mut HeaderMap) {
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
}

/// The headers of `len` user bytes of `d` (type, length, disposition, the
/// sandbox) and their caching: never stored for a counted (`once=1`)
/// file; revalidated for the rest, so nothing is served stale after PUT
/// or PATCH. Inline for what a browser renders, unless `download`.
pub fn user_bytes(h: &mut HeaderMap, d: &Download, len: u64, download: bool) {
    let content_type = if d.text {
        format!("{}; charset=utf-8", d.content_type)
    } else {
        d.content_type.clone()
    };
    let inline = !download && renders_inline(&d.content_type);
    let kind = if inline { "inline" } else { "attachment" };
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&content_type)
            .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream")),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    set(
        h,
        header::CONTENT_DISPOSITION,
        &content_disposition(kind, &d.name),
    );
    nosniff(h);
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(SANDBOX_CSP),
    );
    no_referrer(h);
    if d.once {
        no_store(h);
    } else {
        revalidated(h);
    }
}

/// The headers of a zip named `<name>.zip`, made as it is sent.
pub fn zip(h: &mut HeaderMap, name: &str) {
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    let disposition = content_disposition("attachment", &format!("{name}.zip"));
    set(h, header::CONTENT_DISPOSITION, &disposition);
    nosniff(h);
    revalidated(h);
}

/// Never stored by any cache: an answer that is true only now (a probe,
/// an admin's page).
pub fn no_store(h: &mut HeaderMap) {
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// Kept, but asked again before each use: bytes that an edit may change.
pub fn revalidated(h: &mut HeaderMap) {
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
}

/// A shared link's QR code: the code never changes, but whether the link
/// is live does, so caches may keep it an hour.
pub fn link_code(h: &mut HeaderMap) {
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
}

/// `ETag` and `Last-Modified` of bytes last written at `modified`.
pub fn validators(h: &mut HeaderMap, etag: &str, modified: Timestamp) {
    set(h, header::ETAG, etag);
    set(
        h,
        header::LAST_MODIFIED,
        &crate::ranges::http_date(modified),
    );
}

/// That ranges are served, and a 206's `Content-Range` when `part` is
/// the bytes `start..=end` of `len`.
pub fn ranged(h: &mut HeaderMap, part: Option<(u64, u64)>, len: u64) {
    if let Some((start, end)) = part {
        set(
            h,
            header::CONTENT_RANGE,
            &format!("bytes {start}-{end}/{len}"),
        );
    }
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
}

/// A 416's `Content-Range`: the length there is.
pub fn unsatisfiable(h: &mut HeaderMap, len: u64) {
    set(h, header::CONTENT_RANGE, &format!("bytes */{len}"));
}

/// The JSON body of an error: `error`, `code`, and `retry_after` on the
/// codes that are retried later.
pub fn error_body(e: &StoreError) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(&crate::views::ErrorBody {
        error: e.to_string(),
        code: e.code().as_str(),
        retry_after: e.retry_after_secs(),
    })
    .expect("errors always serialise");
    bytes.push(b'\n');
    bytes
}

/// The status and headers of SPEC.md's JSON error: `Retry-After` on the
/// codes retried later (429, 503, 507), and `WWW-Authenticate: Basic`
/// when a password is what is missing.
pub fn error(e: &StoreError) -> (StatusCode, HeaderMap) {
    let status =
        StatusCode::from_u16(e.code().http_status()).expect("spec codes are valid statuses");
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(secs) = e.retry_after_secs() {
        h.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if matches!(e, StoreError::PasswordNeeded(_)) {
        h.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"storesrv\""),
        );
    }
    (status, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_code_and_retry() {
        let (status, h) = error(&StoreError::RateLimited {
            retry_after_secs: 9,
        });
        assert_eq!(status, 429);
        assert_eq!(h[header::RETRY_AFTER], "9");
        let (status, h) = error(&StoreError::not_found());
        assert_eq!(status, 404);
        assert!(h.get(header::RETRY_AFTER).is_none());
        let body: serde_json::Value =
            serde_json::from_slice(&error_body(&StoreError::not_found())).unwrap();
        assert_eq!(body["code"], "not_found");
    }

    #[test]
    fn a_password_refusal_asks_for_basic() {
        let (status, h) = error(&StoreError::PasswordNeeded("x".into()));
        assert_eq!(status, 401);
        assert!(h[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .starts_with("Basic"));
    }
}
