//! What a request's head says of its body (CONTRACT.md "Uploads"):
//! whether there is one, its declared length against a limit (411, 413),
//! its encoding (501 unless identity) and a multipart body's boundary
//! (RFC 2046). Pure rules over the headers, decided before a byte of the
//! body is read; store-http reads the body itself.

use http::{header, HeaderMap};
use store_core::StoreError;

/// Whether the request says it carries a body: chunked, or a
/// Content-Length other than 0.
pub fn declares_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// The declared length of a bodied request. A chunked body (or any
/// Transfer-Encoding) or a missing Content-Length is refused with 411, and
/// a declared length over `limit_bytes` with 413, before a byte is read.
pub fn declared_length(headers: &HeaderMap, limit_bytes: u64) -> Result<u64, StoreError> {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return Err(StoreError::MissingLength);
    }
    refuse_encodings(headers)?;
    let len = headers
        .get(header::CONTENT_LENGTH)
        .ok_or(StoreError::MissingLength)?
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .ok_or_else(|| StoreError::bad_request("invalid Content-Length"))?;
    if len > limit_bytes {
        return Err(StoreError::too_large(limit_bytes));
    }
    Ok(len)
}

/// A body sent with a `Content-Encoding` other than `identity` answers 501
/// (CONTRACT.md "Uploads: encodings"): storing the encoded bytes as if
/// they were the file would hand every reader something else.
fn refuse_encodings(headers: &HeaderMap) -> Result<(), StoreError> {
    for value in headers.get_all(header::CONTENT_ENCODING) {
        let value = value.to_str().unwrap_or("?");
        let plain = value
            .split(',')
            .map(str::trim)
            .all(|c| c.is_empty() || c.eq_ignore_ascii_case("identity"));
        if !plain {
            return Err(StoreError::Unsupported(format!(
                "Content-Encoding {value:?} is not supported: send the bytes as they are (identity); nothing was stored"
            )));
        }
    }
    Ok(())
}

/// Longest multipart boundary: RFC 2046 allows 70 characters, and a longer
/// one only makes every part costlier to scan.
const BOUNDARY_CHARS_MAX: usize = 70;

/// The boundary of a multipart/form-data body, or `None` for other types.
pub fn multipart_boundary(headers: &HeaderMap) -> Option<Result<String, StoreError>> {
    let ct = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    if !ct
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/")
    {
        return None;
    }
    let boundary = multer::parse_boundary(ct)
        .map_err(|e| StoreError::bad_request(format!("invalid multipart body: {e}")));
    Some(boundary.and_then(|b| {
        if b.is_empty() || b.len() > BOUNDARY_CHARS_MAX {
            return Err(StoreError::bad_request(format!(
                "invalid multipart boundary: it must have 1 to {BOUNDARY_CHARS_MAX} characters (RFC 2046)"
            )));
        }
        Ok(b)
    }))
}
/// Whether the body is an urlencoded form (`application/x-www-form-urlencoded`).
pub fn is_urlencoded(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        })
}

/// What a multipart body that multer could not read answers: 400, saying
/// whether the body broke off or was not multipart as it said.
pub fn multipart_refusal(e: &multer::Error) -> StoreError {
    match e {
        multer::Error::StreamReadFailed(_) => {
            StoreError::bad_request(format!("the request body could not be read: {e}"))
        }
        e => StoreError::bad_request(format!("invalid multipart body: {e}")),
    }
}

/// The file name a part gives, `filename*` (RFC 7578 and 5987) first, then
/// `filename` (`plain`, as multer read it); `None` for a plain form field.
/// A part that has only a `filename*` that does not decode to a valid name
/// is refused, not taken for a form field.
pub fn part_file_name(
    part_headers: &HeaderMap,
    plain: Option<&str>,
) -> Result<Option<String>, StoreError> {
    let extended = part_headers
        .get(header::CONTENT_DISPOSITION)
        .and_then(|v| v.to_str().ok())
        .filter(|d| d.to_ascii_lowercase().contains("filename*"));
    let Some(disposition) = extended else {
        return Ok(plain.map(str::to_string));
    };
    match (store_core::import::name_from_content_disposition(disposition), plain) {
        (Some(name), _) => Ok(Some(name)),
        (None, Some(plain)) => Ok(Some(plain.to_string())),
        (None, None) => Err(StoreError::bad_request(
            "a part's filename* is not a valid UTF-8 file name (RFC 5987: filename*=UTF-8''<percent-encoded name>)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn content_length_rules() {
        assert_eq!(
            declared_length(&headers(&[("content-length", "5")]), 10),
            Ok(5)
        );
        assert_eq!(
            declared_length(&headers(&[]), 10),
            Err(StoreError::MissingLength)
        );
        assert_eq!(
            declared_length(&headers(&[("transfer-encoding", "chunked")]), 10),
            Err(StoreError::MissingLength)
        );
        assert!(matches!(
            declared_length(&headers(&[("content-length", "11")]), 10),
            Err(StoreError::TooLarge(_))
        ));
        assert!(matches!(
            declared_length(&headers(&[("content-length", "x")]), 10),
            Err(StoreError::BadRequest(_))
        ));
    }

    #[test]
    fn boundaries() {
        assert!(multipart_boundary(&headers(&[("content-type", "text/plain")])).is_none());
        let b = multipart_boundary(&headers(&[(
            "content-type",
            "multipart/form-data; boundary=xyz",
        )]));
        assert_eq!(b, Some(Ok("xyz".to_string())));
    }

    #[test]
    fn a_parts_extended_file_name_comes_first_and_a_broken_one_alone_is_refused() {
        let mut h = HeaderMap::new();
        assert_eq!(
            part_file_name(&h, Some("a.txt")).unwrap().as_deref(),
            Some("a.txt")
        );
        assert_eq!(part_file_name(&h, None).unwrap(), None);
        h.insert(
            header::CONTENT_DISPOSITION,
            "form-data; name=\"f\"; filename=\"x\"; filename*=UTF-8''%C3%A9t%C3%A9.txt"
                .parse()
                .unwrap(),
        );
        assert_eq!(
            part_file_name(&h, Some("x")).unwrap().as_deref(),
            Some("été.txt")
        );
        h.insert(
            header::CONTENT_DISPOSITION,
            "form-data; name=\"f\"; filename*=bogus".parse().unwrap(),
        );
        assert_eq!(part_file_name(&h, Some("x")).unwrap().as_deref(), Some("x"));
        assert!(part_file_name(&h, None).is_err());
    }

    #[test]
    fn an_urlencoded_form_is_told_by_its_type() {
        let mut h = HeaderMap::new();
        assert!(!is_urlencoded(&h));
        h.insert(
            header::CONTENT_TYPE,
            " Application/X-WWW-Form-Urlencoded; charset=utf-8"
                .parse()
                .unwrap(),
        );
        assert!(is_urlencoded(&h));
    }
}
