//! Whole answers written straight to a socket, where hyper answers no
//! request: a refusal hyper made itself, recognised going out and
//! rewritten as SPEC.md's JSON error, and the 429 to a connection over its
//! address's share, which is refused before hyper sees it.

use store_core::StoreError;

/// The limits hyper enforces, which its refusals name.
#[derive(Debug, Clone, Copy)]
pub struct RefusalLimits {
    /// The longest request target, in bytes (414).
    pub uri_bytes_max: usize,
    /// The request head hyper buffers, in bytes (431).
    pub head_bytes_max: usize,
    /// The request header fields hyper reads (431).
    pub header_fields_max: usize,
}

/// The status of `buf` if it is a refusal hyper made itself: a response
/// head of 400, 414 or 431 with an empty body and no type, and nothing
/// after the head. The service never answers so (every error it makes
/// carries its JSON), so only hyper's refusals match.
pub fn hyper_refusal(buf: &[u8]) -> Option<u16> {
    let rest = buf.strip_prefix(b"HTTP/1.1 4")?;
    let status = match rest.get(..2)? {
        b"00" => 400,
        b"14" => 414,
        b"31" => 431,
        _ => return None,
    };
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    if end + 4 != buf.len() {
        return None;
    }
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    (head.contains("\r\ncontent-length: 0") && !head.contains("\r\ncontent-type:"))
        .then_some(status)
}

/// The error hyper's refusal of `status` stands for, naming `limits`.
pub fn refusal_error(status: u16, limits: RefusalLimits) -> StoreError {
    match status {
        414 => StoreError::UriTooLong {
            max_bytes: limits.uri_bytes_max,
        },
        431 => StoreError::HeadersTooLarge {
            max_bytes: limits.head_bytes_max,
            max_fields: limits.header_fields_max,
        },
        _ => StoreError::bad_request(
            "the request could not be parsed: send `METHOD /path HTTP/1.1` with valid headers; \
             in a URL, percent-encode spaces and characters such as < and > \
             (and put a real id in place of a placeholder like <id>)",
        ),
    }
}

/// The whole HTTP/1.1 answer of `error`, head and JSON body, after which
/// the connection closes.
pub fn whole_answer(error: &StoreError) -> Vec<u8> {
    let status = http::StatusCode::from_u16(error.code().http_status())
        .expect("spec codes are valid statuses");
    let body = crate::headers::error_body(error);
    let retry = error
        .retry_after_secs()
        .map(|secs| format!("retry-after: {secs}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\n{retry}connection: close\r\ncontent-length: {}\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    );
    [head.into_bytes(), body].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYPER_400: &[u8] =
        b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: Fri, 27 Nov 2026 12:00:00 GMT\r\n\r\n";

    #[test]
    fn only_hypers_own_refusals_are_recognised() {
        assert_eq!(hyper_refusal(HYPER_400), Some(400));
        assert_eq!(
            hyper_refusal(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n"
            ),
            Some(431)
        );
        // The service's errors carry their JSON.
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(hyper_refusal(ours), None);
        let json = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 52\r\n\r\n";
        assert_eq!(hyper_refusal(json), None);
        assert_eq!(
            hyper_refusal(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"),
            None
        );
        assert_eq!(
            hyper_refusal(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0"),
            None,
            "not a whole head"
        );
        assert_eq!(hyper_refusal(b"HTTP/1.1 400 Bad"), None);
        let more = [HYPER_400, b"more"].concat();
        assert_eq!(hyper_refusal(&more), None, "more than a head");
    }

    #[test]
    fn a_whole_answer_is_a_head_and_its_json() {
        let limits = RefusalLimits {
            uri_bytes_max: 8192,
            head_bytes_max: 65536,
            header_fields_max: 64,
        };
        let answer = whole_answer(&refusal_error(414, limits));
        let text = String::from_utf8(answer).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"));
        assert!(head.ends_with(&format!("content-length: {}", body.len())));
        assert!(body.contains("uri_too_long") && body.contains("8192"));
        let busy = whole_answer(&StoreError::Busy {
            message: "m".into(),
            retry_after_secs: 3,
        });
        let busy = String::from_utf8(busy).unwrap();
        assert!(busy.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(busy.contains("\r\nretry-after: 3\r\nconnection: close\r\n"));
    }
}
