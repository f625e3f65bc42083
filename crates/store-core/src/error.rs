//! The one error type of the service: a variant per code of SPEC.md
//! "Errors", and the codes a server adds beyond it (a request line or
//! headers too long, a store that is full, out of reach or failing).
//!
//! The HTTP layer never invents a code: it asks the error for its status,
//! code string and retry hint, so the table in SPEC.md, `/api`'s `errors`
//! map, `/help/errors` and every JSON error body come from the same place
//! ([`ErrorCode`]).

use crate::limits::{exact_size, Limits};
use schemars::JsonSchema;
use serde::Serialize;

/// A failure a client caused or must wait out. Storage faults are not here:
/// they are the adapters' errors, and the use-case layer wraps both.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Invalid input: a name, a flag, a combination.
    #[error("{0}")]
    BadRequest(String),
    /// A write or retain token is missing or wrong.
    #[error("{0}")]
    WriteDenied(String),
    /// The object is protected by a password, and the request showed
    /// neither it nor the owner token: 401 `write_denied`, and HTTP asks
    /// for the password (`WWW-Authenticate: Basic`, or a form).
    #[error("{0}")]
    PasswordNeeded(String),
    /// The action is not allowed on this object.
    #[error("{0}")]
    Forbidden(String),
    /// Unknown, expired or deleted.
    #[error("{0}")]
    NotFound(String),
    /// A bodied request came without Content-Length.
    #[error("a request with a body must carry Content-Length (chunked bodies are not accepted)")]
    MissingLength,
    /// The body is over the limit that applies to it.
    #[error("{0}")]
    TooLarge(String),
    /// Too many requests from one client; retry after the given seconds.
    #[error("too many requests; retry after {retry_after_secs} s")]
    RateLimited {
        /// Seconds the client should wait before retrying (`Retry-After`).
        retry_after_secs: u64,
    },
    /// Method or encoding not supported.
    #[error("{0}")]
    Unsupported(String),
    /// A method the path answers with a known refusal (`GET /mcp`: the MCP
    /// endpoint opens no event stream); 405 with `Allow`.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// The pool is exhausted; retry after the given seconds.
    #[error("{message}")]
    PoolFull {
        /// What is full, for the error body.
        message: String,
        /// Seconds the client should wait before retrying (`Retry-After`).
        retry_after_secs: u64,
    },
    /// A byte range that starts at or past the end of `len` bytes.
    #[error("the range starts at or past the end of the {len} bytes")]
    RangeNotSatisfiable {
        /// Length of the whole content, in bytes.
        len: u64,
    },
    /// The request target is longer than the server reads.
    #[error("the request target is longer than {max_bytes} bytes")]
    UriTooLong {
        /// The longest request target the server reads, in bytes.
        max_bytes: usize,
    },
    /// The request headers are larger, or more, than the server reads.
    #[error(
        "the request headers are too large: at most {max_bytes} bytes in all, in at most {max_fields} fields"
    )]
    HeadersTooLarge {
        /// The most request header bytes the server reads, in all.
        max_bytes: usize,
        /// The most request header fields the server reads.
        max_fields: usize,
    },
    /// The store's disk is full: nothing was stored.
    #[error("the server's disk is full; nothing was stored. Try again later")]
    StorageFull,
    /// The records or the bytes cannot be reached now (a database or a
    /// bucket that is out).
    #[error("the store cannot be reached now; try again shortly (the server log has the details)")]
    Unavailable,
    /// A fault of the server's own; the details are in its log only.
    #[error("internal storage error; the server log has the details")]
    Internal,
    /// A resumable upload is not where the request expects it: another
    /// offset, or another PATCH of it in progress (409 `conflict`).
    #[error("{0}")]
    Conflict(String),
    /// A resumable upload's request without the protocol version the
    /// server speaks (412 `precondition_failed`).
    #[error("{0}")]
    PreconditionFailed(String),
    /// A body of a type the endpoint does not take (415
    /// `unsupported_media_type`).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// A PATCH whose bytes do not match the checksum it came with (460
    /// `checksum_mismatch`, the tus checksum extension's status); nothing
    /// of it was kept.
    #[error("{0}")]
    ChecksumMismatch(String),
    /// Bytes whose digest the admin blocked (451 `blocked`, issue 36):
    /// nothing of the upload was stored.
    #[error("{0}")]
    Blocked(String),
    /// Bytes the virus scanner found a signature in (422 `infected`,
    /// issue 36): nothing of the upload was stored.
    #[error("{0}")]
    Infected(String),
    /// The server is saturated for everyone (its image queue, or the room
    /// for bodies in flight, is full); retry after the given seconds. It is
    /// answered as 429 `rate_limited`, the code SPEC.md's clients already
    /// wait and retry on, with a message that says what is full
    /// (docs/DECISIONS.md).
    #[error("{message}")]
    Busy {
        /// What is full, for the error body.
        message: String,
        /// Seconds the client should wait before retrying (`Retry-After`).
        retry_after_secs: u64,
    },
}

impl StoreError {
    /// A 400 `bad_request` carrying `msg`, which says what is wrong.
    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self::BadRequest(msg.into())
    }

    /// A 404 `not_found` with the standard message: unknown, expired or deleted.
    pub fn not_found() -> Self {
        Self::NotFound("not found: the id or name is unknown, expired or deleted".into())
    }

    /// A 401 `write_denied` with the standard message: token missing or wrong.
    pub fn write_denied() -> Self {
        Self::WriteDenied("write or retain token missing or wrong".into())
    }

    /// A 401 asking for the object's password.
    pub fn password_needed() -> Self {
        Self::PasswordNeeded(
            "this is protected by a password: send it with HTTP Basic (curl -u :<password>), \
             or send the owner token"
                .into(),
        )
    }

    /// A 403 `forbidden` carrying `msg`, which says what is not allowed.
    pub fn forbidden(msg: impl Into<String>) -> Self {
        Self::Forbidden(msg.into())
    }

    /// A 413 `too_large` saying the body is over `limit_bytes` bytes.
    pub fn too_large(limit_bytes: u64) -> Self {
        Self::TooLarge(format!(
            "body is larger than the limit of {limit_bytes} bytes"
        ))
    }

    /// The stable code this error answers with; `Busy` answers as `RateLimited`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::BadRequest(_) => ErrorCode::BadRequest,
            Self::WriteDenied(_) | Self::PasswordNeeded(_) => ErrorCode::WriteDenied,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::MissingLength => ErrorCode::MissingLength,
            Self::TooLarge(_) => ErrorCode::TooLarge,
            Self::RateLimited { .. } | Self::Busy { .. } => ErrorCode::RateLimited,
            Self::Unsupported(_) => ErrorCode::Unsupported,
            Self::MethodNotAllowed(_) => ErrorCode::MethodNotAllowed,
            Self::PoolFull { .. } => ErrorCode::PoolFull,
            Self::RangeNotSatisfiable { .. } => ErrorCode::RangeNotSatisfiable,
            Self::UriTooLong { .. } => ErrorCode::UriTooLong,
            Self::HeadersTooLarge { .. } => ErrorCode::HeadersTooLarge,
            Self::StorageFull => ErrorCode::StorageFull,
            Self::Unavailable => ErrorCode::Unavailable,
            Self::Internal => ErrorCode::Internal,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::PreconditionFailed(_) => ErrorCode::PreconditionFailed,
            Self::UnsupportedMediaType(_) => ErrorCode::UnsupportedMediaType,
            Self::ChecksumMismatch(_) => ErrorCode::ChecksumMismatch,
            Self::Blocked(_) => ErrorCode::Blocked,
            Self::Infected(_) => ErrorCode::Infected,
        }
    }

    /// Seconds the client should wait, for the codes that are retried later.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Self::RateLimited { retry_after_secs }
            | Self::PoolFull {
                retry_after_secs, ..
            }
            | Self::Busy {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            Self::StorageFull => Some(STORAGE_FULL_RETRY_AFTER_SECS),
            Self::Unavailable => Some(UNAVAILABLE_RETRY_AFTER_SECS),
            _ => None,
        }
    }
}

/// Seconds a client is asked to wait when the disk is full.
pub const STORAGE_FULL_RETRY_AFTER_SECS: u64 = 300;

/// Seconds a client (or a load balancer's probe) is asked to wait when
/// the database or the bucket cannot be reached.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 5;

/// The stable codes of SPEC.md "Errors", in the order of its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400 `bad_request`: invalid input (a name, a flag, a combination).
    BadRequest,
    /// 401 `write_denied`: a write or retain token is missing or wrong.
    WriteDenied,
    /// 403 `forbidden`: the action is not allowed on this object.
    Forbidden,
    /// 404 `not_found`: the id or name is unknown, expired or deleted.
    NotFound,
    /// 411 `missing_length`: a bodied request came without Content-Length.
    MissingLength,
    /// 413 `too_large`: the body is over the limit that applies to it.
    TooLarge,
    /// 429 `rate_limited`: too many requests from one client, or the server is busy.
    RateLimited,
    /// 501 `unsupported`: the method or encoding is not supported.
    Unsupported,
    /// Beyond SPEC.md: 405, a method the MCP endpoint refuses (it takes
    /// POST only: no event stream, no session to end).
    MethodNotAllowed,
    /// 507 `pool_full`: the pool is exhausted.
    PoolFull,
    /// Beyond SPEC.md: 409, a resumable upload's offset differs, or
    /// another PATCH of it is in progress.
    Conflict,
    /// Beyond SPEC.md: 412, a resumable upload's request without
    /// `Tus-Resumable: 1.0.0`.
    PreconditionFailed,
    /// Beyond SPEC.md: 414, a request target too long.
    UriTooLong,
    /// Beyond SPEC.md: 415, a PATCH body that is not
    /// `application/offset+octet-stream`.
    UnsupportedMediaType,
    /// Beyond SPEC.md: 416, a byte range past the end.
    RangeNotSatisfiable,
    /// Beyond SPEC.md: 431, request headers too large.
    HeadersTooLarge,
    /// Beyond SPEC.md: 460, a PATCH's bytes do not match its
    /// `Upload-Checksum`.
    ChecksumMismatch,
    /// Beyond SPEC.md: 451, an upload whose bytes the admin blocked.
    Blocked,
    /// Beyond SPEC.md: 422, an upload the virus scanner refused.
    Infected,
    /// Beyond SPEC.md: 500, a fault of the server's own.
    Internal,
    /// Beyond SPEC.md: 503, the records or the bytes out of reach.
    Unavailable,
    /// Beyond SPEC.md: 507, the disk is full.
    StorageFull,
}

/// One row of `/api`'s `errors` map.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The HTTP status the code is answered with.
    pub http: u16,
    /// What the code means, with the configured limits filled in.
    pub meaning: String,
    /// Whether and when to retry.
    pub retry: String,
}

impl ErrorCode {
    /// Every code the service answers, by HTTP status: what `/api` and
    /// `/help/errors` list.
    pub const ALL: [ErrorCode; 22] = [
        Self::BadRequest,
        Self::WriteDenied,
        Self::Forbidden,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::Conflict,
        Self::MissingLength,
        Self::PreconditionFailed,
        Self::TooLarge,
        Self::UriTooLong,
        Self::UnsupportedMediaType,
        Self::RangeNotSatisfiable,
        Self::Infected,
        Self::RateLimited,
        Self::HeadersTooLarge,
        Self::Blocked,
        Self::ChecksumMismatch,
        Self::Internal,
        Self::Unsupported,
        Self::Unavailable,
        Self::PoolFull,
        Self::StorageFull,
    ];

    /// The code's string in JSON error bodies and `/api`, e.g. `not_found`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "bad_request",
            Self::WriteDenied => "write_denied",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::MissingLength => "missing_length",
            Self::TooLarge => "too_large",
            Self::RateLimited => "rate_limited",
            Self::Unsupported => "unsupported",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::PoolFull => "pool_full",
            Self::UriTooLong => "uri_too_long",
            Self::RangeNotSatisfiable => "range_not_satisfiable",
            Self::HeadersTooLarge => "headers_too_large",
            Self::Internal => "internal",
            Self::Unavailable => "unavailable",
            Self::StorageFull => "storage_full",
            Self::Conflict => "conflict",
            Self::PreconditionFailed => "precondition_failed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::ChecksumMismatch => "checksum_mismatch",
            Self::Blocked => "blocked",
            Self::Infected => "infected",
        }
    }

    /// The HTTP status the code is answered with.
    pub fn http_status(self) -> u16 {
        match self {
            Self::BadRequest => 400,
            Self::WriteDenied => 401,
            Self::Forbidden => 403,
            Self::NotFound => 404,
            Self::MissingLength => 411,
            Self::TooLarge => 413,
            Self::RateLimited => 429,
            Self::Unsupported => 501,
            Self::MethodNotAllowed => 405,
            Self::PoolFull => 507,
            Self::UriTooLong => 414,
            Self::RangeNotSatisfiable => 416,
            Self::HeadersTooLarge => 431,
            Self::Internal => 500,
            Self::Unavailable => 503,
            Self::StorageFull => 507,
            Self::Conflict => 409,
            Self::PreconditionFailed => 412,
            Self::UnsupportedMediaType => 415,
            Self::ChecksumMismatch => 460,
            Self::Blocked => 451,
            Self::Infected => 422,
        }
    }

    /// Only 429 and 507 are worth retrying later (SPEC.md "Errors", rule
    /// 1), and beyond SPEC.md 503: a store out of reach comes back.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            Self::RateLimited | Self::PoolFull | Self::StorageFull | Self::Unavailable
        )
    }

    /// What the code means and whether to retry, with the numbers of
    /// `limits` (the sizes in the binary units they are enforced in).
    /// Long because it is SPEC.md's error table, one arm per code.
    pub fn info(self, limits: &Limits) -> ErrorInfo {
        let too_large;
        let pool_full;
        let (meaning, retry) = match self {
            Self::BadRequest => (
                "invalid input (name, flags, combinations)",
                "fix the request; do not retry",
            ),
            Self::WriteDenied => (
                "write or retain token missing or wrong",
                "provide the token, then retry",
            ),
            Self::Forbidden => (
                "action not allowed on this object (for example PUT or PATCH on a bundle)",
                "do not retry",
            ),
            Self::NotFound => (
                "id or name unknown, expired or deleted",
                "do not retry with the same id",
            ),
            Self::MissingLength => (
                "no Content-Length on a bodied request",
                "send Content-Length, then retry",
            ),
            Self::TooLarge => {
                too_large = format!(
                    "file over {} (pics: {})",
                    exact_size(limits.file_bytes_max),
                    exact_size(limits.pics_upload_bytes_max)
                );
                (too_large.as_str(), "do not retry unchanged")
            }
            Self::RateLimited => (
                "more than the allowed requests per minute per IP, more than a client's share of connections or requests in flight, or a full queue (image jobs, uploads in flight)",
                "wait for the Retry-After header (seconds) and the retry_after body field, then retry unchanged",
            ),
            Self::Unsupported => ("method or encoding not supported", "do not retry"),
            Self::MethodNotAllowed => (
                "a method the MCP endpoint (/mcp) does not take: it answers POST only, with no event stream and no session",
                "send the JSON-RPC message with POST",
            ),
            Self::PoolFull => {
                pool_full = format!(
                    "wait; Retry-After is {} s; an admin must delete or wait for expiry",
                    limits.pool_full_retry_after_secs
                );
                ("pool exhausted", pool_full.as_str())
            }
            Self::UriTooLong => (
                "request target (path and query) longer than the server reads",
                "shorten it; do not retry unchanged",
            ),
            Self::RangeNotSatisfiable => (
                "a byte range that starts at or past the end (Content-Range: bytes */<length> says the length)",
                "ask for a range within the length",
            ),
            Self::HeadersTooLarge => (
                "request headers larger than the server reads",
                "send fewer or shorter headers; do not retry unchanged",
            ),
            Self::Internal => (
                "a fault of the server's own; its log has the details",
                "do not retry unchanged; report it to the operator",
            ),
            Self::Unavailable => (
                "the records or the bytes cannot be reached now (a database or a bucket out)",
                "wait for the Retry-After header (seconds), then retry unchanged",
            ),
            Self::StorageFull => (
                "the server's disk is full; nothing was stored",
                "wait for the Retry-After header (seconds), then retry unchanged",
            ),
            Self::Conflict => (
                "a resumable upload (/uploads) is at another offset than Upload-Offset says, or another PATCH of it is in progress",
                "ask for the offset with HEAD, then send from there",
            ),
            Self::PreconditionFailed => (
                "a resumable upload's request (/uploads) without Tus-Resumable: 1.0.0",
                "send the header, then retry",
            ),
            Self::UnsupportedMediaType => (
                "a resumable upload's PATCH whose Content-Type is not application/offset+octet-stream",
                "send that type, then retry",
            ),
            Self::ChecksumMismatch => (
                "a resumable upload's PATCH whose bytes do not match its Upload-Checksum; none of them were kept",
                "send the same bytes again from the same offset",
            ),
            Self::Blocked => (
                "an upload or import whose bytes the server's admin blocked; nothing was stored",
                "do not retry: these bytes are refused",
            ),
            Self::Infected => (
                "an upload the server's virus scanner found a signature in; nothing was stored",
                "do not retry the same bytes",
            ),
        };
        ErrorInfo {
            http: self.http_status(),
            meaning: meaning.to_string(),
            retry: retry.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes of SPEC.md's table, in its order.
    const SPEC: [ErrorCode; 9] = [
        ErrorCode::BadRequest,
        ErrorCode::WriteDenied,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::MissingLength,
        ErrorCode::TooLarge,
        ErrorCode::RateLimited,
        ErrorCode::Unsupported,
        ErrorCode::PoolFull,
    ];

    #[test]
    fn codes_match_the_spec_table() {
        let table = [
            (400, "bad_request"),
            (401, "write_denied"),
            (403, "forbidden"),
            (404, "not_found"),
            (411, "missing_length"),
            (413, "too_large"),
            (429, "rate_limited"),
            (501, "unsupported"),
            (507, "pool_full"),
        ];
        for (code, (http, name)) in SPEC.iter().zip(table) {
            assert_eq!(code.http_status(), http);
            assert_eq!(code.as_str(), name);
            assert_eq!(code.is_retryable(), http == 429 || http == 507);
        }
    }

    #[test]
    fn every_code_is_listed_once_by_status() {
        let mut seen = std::collections::HashSet::new();
        for pair in ErrorCode::ALL.windows(2) {
            assert!(pair[0].http_status() <= pair[1].http_status(), "{pair:?}");
        }
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "{code:?} twice");
        }
        for code in SPEC {
            assert!(ErrorCode::ALL.contains(&code));
        }
    }

    #[test]
    fn retry_after_only_on_retryable_errors() {
        assert_eq!(
            StoreError::RateLimited {
                retry_after_secs: 7
            }
            .retry_after_secs(),
            Some(7)
        );
        assert_eq!(StoreError::not_found().retry_after_secs(), None);
        let busy = StoreError::Busy {
            message: "the image queue is full".into(),
            retry_after_secs: 5,
        };
        assert_eq!(busy.code(), ErrorCode::RateLimited);
        assert_eq!(busy.retry_after_secs(), Some(5));
    }
}
