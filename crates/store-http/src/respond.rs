//! Building responses: JSON, errors, HTML, and streamed blobs.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{header, HeaderValue, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use serde::Serialize;
use store_app::AppError;
use store_core::ports::BlobReader;
use store_core::{StorageErrorKind, StoreError};
use store_wire::headers;

/// The one response body type of the service: bytes in memory, or a blob
/// streamed from the store.
pub type ResBody = BoxBody<Bytes, std::io::Error>;
/// A response of the service.
pub type Res = Response<ResBody>;

pub fn full(bytes: impl Into<Bytes>) -> ResBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

pub fn empty() -> ResBody {
    Empty::new().map_err(|never| match never {}).boxed()
}

pub(crate) fn with_type(status: StatusCode, content_type: &'static str, body: ResBody) -> Res {
    let mut res = Response::new(body);
    *res.status_mut() = status;
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res
}

pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Res {
    let mut bytes = serde_json::to_vec_pretty(value).expect("views always serialise");
    bytes.push(b'\n');
    with_type(status, "application/json", full(bytes))
}

pub fn redirect(location: &str) -> Res {
    let mut res = Response::new(empty());
    *res.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}

/// A plain-text answer (markdown, `/help/errors`).
pub fn text(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Res {
    let mut res = with_type(status, content_type, full(body));
    headers::nosniff(res.headers_mut());
    res
}

pub fn html(status: StatusCode, markup: maud::Markup) -> Res {
    let mut res = with_type(
        status,
        "text/html; charset=utf-8",
        full(markup.into_string()),
    );
    headers::page(res.headers_mut());
    res
}

use store_wire::headers::error_body;

/// The JSON error of SPEC.md (store-wire's `headers` says its status and
/// headers).
pub fn store_error(e: &StoreError) -> Res {
    let (status, headers) = headers::error(e);
    let mut res = Response::new(full(error_body(e)));
    *res.status_mut() = status;
    *res.headers_mut() = headers;
    res
}

/// 414 for a request target longer than `max_bytes`.
pub fn uri_too_long(max_bytes: usize) -> Res {
    store_error(&StoreError::UriTooLong { max_bytes })
}

/// 431 for request headers over `max_bytes` in all, or over `max_fields`.
pub fn headers_too_large(max_bytes: usize, max_fields: usize) -> Res {
    store_error(&StoreError::HeadersTooLarge {
        max_bytes,
        max_fields,
    })
}

/// 503 `unavailable` with Retry-After: the records or the bytes cannot be
/// reached now. The cause is for the log only: it names hosts.
pub fn unavailable() -> Res {
    store_error(&StoreError::Unavailable)
}

/// A use-case failure: the client's errors with their code; storage faults
/// as their codes (507 `storage_full` when the disk is full, 503
/// `unavailable` when the database or the bucket cannot be reached, 404 for
/// bytes that are gone, else 500 `internal`), whose details go to the log
/// only.
pub fn app_error(e: &AppError) -> Res {
    store_error(&client_error(e))
}

/// What a use-case failure says to the client (see [`app_error`]); a
/// storage fault is logged here, with its details.
pub fn client_error(e: &AppError) -> StoreError {
    let AppError::Storage(e) = e else {
        let AppError::Domain(d) = e else {
            unreachable!()
        };
        return d.clone();
    };
    tracing::error!(error = %e, "storage fault");
    match e.kind {
        StorageErrorKind::Full => StoreError::StorageFull,
        StorageErrorKind::Missing => StoreError::not_found(),
        StorageErrorKind::Unavailable | StorageErrorKind::Conflict => StoreError::Unavailable,
        StorageErrorKind::Other | StorageErrorKind::Corrupt => StoreError::Internal,
    }
}

/// A response whose body holds `guard` until it has been sent or dropped:
/// what a request holds (its place among the client's requests in flight)
/// is held as long as its response is being sent.
pub fn holding<G: Send + Sync + Unpin + 'static>(res: Res, guard: G) -> Res {
    res.map(|body| {
        Holding {
            body,
            _guard: guard,
        }
        .boxed()
    })
}

struct Holding<G> {
    body: ResBody,
    _guard: G,
}

impl<G: Unpin> Body for Holding<G> {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Bytes already in memory, readable as a blob.
pub struct BytesReader(std::io::Cursor<Vec<u8>>);

impl BytesReader {
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(std::io::Cursor::new(bytes))
    }
}

impl Read for BytesReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl BlobReader for BytesReader {
    fn len(&self) -> u64 {
        self.0.get_ref().len() as u64
    }
}

pub use store_wire::disposition::content_disposition;
