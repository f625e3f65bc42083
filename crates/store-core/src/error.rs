//! The one error type of the domain, one variant per code of SPEC.md "Errors".
//!
//! The HTTP layer never invents a code: it asks the error for its status,
//! code string and retry hint, so the table in SPEC.md, `/api`'s `errors`
//! map and every JSON error body come from the same place ([`ErrorCode`]).

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
    RateLimited { retry_after_secs: u64 },
    /// Method or encoding not supported.
    #[error("{0}")]
    Unsupported(String),
    /// The pool is exhausted; retry after the given seconds.
    #[error("{message}")]
    PoolFull {
        message: String,
        retry_after_secs: u64,
    },
    /// The server is saturated for everyone (its image queue, or the room
    /// for bodies in flight, is full); retry after the given seconds. It is
    /// answered as 429 `rate_limited`, the code SPEC.md's clients already
    /// wait and retry on, with a message that says what is full
    /// (docs/DECISIONS.md).
    #[error("{message}")]
    Busy {
        message: String,
        retry_after_secs: u64,
    },
}

impl StoreError {
    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self::BadRequest(msg.into())
    }

    pub fn not_found() -> Self {
        Self::NotFound("not found: the id or name is unknown, expired or deleted".into())
    }

    pub fn write_denied() -> Self {
        Self::WriteDenied("write or retain token missing or wrong".into())
    }

    pub fn forbidden(msg: impl Into<String>) -> Self {
        Self::Forbidden(msg.into())
    }

    pub fn too_large(limit_bytes: u64) -> Self {
        Self::TooLarge(format!(
            "body is larger than the limit of {limit_bytes} bytes"
        ))
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::BadRequest(_) => ErrorCode::BadRequest,
            Self::WriteDenied(_) => ErrorCode::WriteDenied,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::MissingLength => ErrorCode::MissingLength,
            Self::TooLarge(_) => ErrorCode::TooLarge,
            Self::RateLimited { .. } | Self::Busy { .. } => ErrorCode::RateLimited,
            Self::Unsupported(_) => ErrorCode::Unsupported,
            Self::PoolFull { .. } => ErrorCode::PoolFull,
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
            _ => None,
        }
    }
}

/// The stable codes of SPEC.md "Errors", in the order of its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    BadRequest,
    WriteDenied,
    Forbidden,
    NotFound,
    MissingLength,
    TooLarge,
    RateLimited,
    Unsupported,
    PoolFull,
}

/// One row of `/api`'s `errors` map.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ErrorInfo {
    pub http: u16,
    pub meaning: &'static str,
    pub retry: &'static str,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 9] = [
        Self::BadRequest,
        Self::WriteDenied,
        Self::Forbidden,
        Self::NotFound,
        Self::MissingLength,
        Self::TooLarge,
        Self::RateLimited,
        Self::Unsupported,
        Self::PoolFull,
    ];

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
            Self::PoolFull => "pool_full",
        }
    }

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
            Self::PoolFull => 507,
        }
    }

    /// Only 429 and 507 are worth retrying later (SPEC.md "Errors", rule 1).
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::RateLimited | Self::PoolFull)
    }

    pub fn info(self) -> ErrorInfo {
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
            Self::TooLarge => (
                "file over 5 MB (pics: 30 MB)",
                "do not retry unchanged",
            ),
            Self::RateLimited => (
                "more than the allowed requests per minute per IP, more than a client's share of connections or requests in flight, or a full queue (image jobs, uploads in flight)",
                "wait for the Retry-After header (seconds) and the retry_after body field, then retry unchanged",
            ),
            Self::Unsupported => ("method or encoding not supported", "do not retry"),
            Self::PoolFull => (
                "pool exhausted",
                "wait; Retry-After is 300 s; an admin must delete or wait for expiry",
            ),
        };
        ErrorInfo {
            http: self.http_status(),
            meaning,
            retry,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for (code, (http, name)) in ErrorCode::ALL.iter().zip(table) {
            assert_eq!(code.http_status(), http);
            assert_eq!(code.as_str(), name);
            assert_eq!(code.is_retryable(), http == 429 || http == 507);
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
