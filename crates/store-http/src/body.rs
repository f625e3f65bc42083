//! Request bodies: the Content-Length rule, streaming into an upload in
//! batches written on the blocking pool (the limit enforced as they are
//! written), and multipart parts.

use bytes::Bytes;
use http::{header, HeaderMap};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::time::Duration;

use store_app::{App, AppError, AppResult, Part, Staged, Upload};
use store_core::StoreError;

/// The declared length of a bodied request. A chunked body (or any
/// Transfer-Encoding) or a missing Content-Length is refused with 411, and
/// a declared length over `limit_bytes` with 413, before a byte is read.
pub fn declared_length(headers: &HeaderMap, limit_bytes: u64) -> Result<u64, StoreError> {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return Err(StoreError::MissingLength);
    }
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

fn body_error(e: hyper::Error) -> AppError {
    StoreError::bad_request(format!("the request body could not be read: {e}")).into()
}

/// A client sending a body must keep sending: this long without a byte and
/// the request is dropped, so that a trickling client cannot hold a worker,
/// a temp file and the shutdown grace period.
const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

fn idle() -> AppError {
    StoreError::bad_request(format!(
        "the request body stalled: nothing arrived for {} s",
        BODY_IDLE_TIMEOUT.as_secs()
    ))
    .into()
}

/// Awaits one step of a body, bounded by [`BODY_IDLE_TIMEOUT`].
async fn step<T>(f: impl std::future::Future<Output = T>) -> AppResult<T> {
    tokio::time::timeout(BODY_IDLE_TIMEOUT, f)
        .await
        .map_err(|_| idle())
}

/// Bytes gathered from a body before they are written out in one go.
const SINK_BATCH_BYTES: usize = 256 * 1024;

/// Turns a blocking-pool job's panic into a storage fault.
fn worker_failed(e: tokio::task::JoinError) -> AppError {
    AppError::Storage(store_core::StorageError::new(format!(
        "a worker failed: {e}"
    )))
}

/// An upload fed from the executor. Chunks are gathered up to
/// [`SINK_BATCH_BYTES`] and written by one job on the blocking pool, so
/// disk writes never stall the executor and a thread is held only while
/// bytes are being written, not while a slow client is sending them.
///
/// (`block_in_place` per chunk, the earlier way, handed the executor over
/// to a fresh thread on every chunk: under steady uploads hundreds of
/// threads piled up in the pool, each with its own stack and allocator
/// arena, and memory grew with them; docs/PERFORMANCE.md, scenario 4.)
///
/// Dropped before [`Sink::finish`] (a failed or abandoned request), the
/// upload is dropped uncommitted and leaves nothing behind.
struct Sink {
    upload: Option<Upload>,
    pending: Vec<Bytes>,
    pending_bytes: usize,
}

impl Sink {
    fn new(upload: Upload) -> Self {
        Self {
            upload: Some(upload),
            pending: Vec::new(),
            pending_bytes: 0,
        }
    }

    async fn push(&mut self, chunk: Bytes) -> AppResult<()> {
        self.pending_bytes += chunk.len();
        self.pending.push(chunk);
        if self.pending_bytes >= SINK_BATCH_BYTES {
            self.write_pending().await?;
        }
        Ok(())
    }

    async fn write_pending(&mut self) -> AppResult<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let chunks = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        let Some(mut upload) = self.upload.take() else {
            return Err(AppError::Storage(store_core::StorageError::new(
                "an upload was written after a failed write",
            )));
        };
        let (upload, written) = tokio::task::spawn_blocking(move || {
            let written = chunks.iter().try_for_each(|c| upload.push(c));
            (upload, written)
        })
        .await
        .map_err(worker_failed)?;
        self.upload = Some(upload);
        written
    }

    /// Writes what is left, then commits (fsync, rename, directory fsync)
    /// on the blocking pool. Not `block_in_place`: an fsync can take
    /// milliseconds, and handing the executor over that long stalls every
    /// other connection on a one-core server (docs/PERFORMANCE.md,
    /// scenario 5).
    async fn finish(mut self) -> AppResult<Staged> {
        self.write_pending().await?;
        let Some(upload) = self.upload.take() else {
            return Err(AppError::Storage(store_core::StorageError::new(
                "an upload was finished after a failed write",
            )));
        };
        tokio::task::spawn_blocking(move || upload.finish())
            .await
            .map_err(worker_failed)?
    }
}

/// Streams a raw body into a new blob of at most `limit_bytes`.
pub async fn receive(app: &App, mut body: Incoming, limit_bytes: u64) -> AppResult<Staged> {
    let mut sink = Sink::new(app.begin_upload(limit_bytes)?);
    while let Some(frame) = step(body.frame()).await? {
        let frame = frame.map_err(body_error)?;
        if let Ok(data) = frame.into_data() {
            sink.push(data).await?;
        }
    }
    sink.finish().await
}

/// Reads a whole body of at most `limit_bytes` (already checked against
/// Content-Length) into memory. For small bounded bodies only (PATCH text).
pub async fn read_bounded(mut body: Incoming, limit_bytes: u64) -> AppResult<Bytes> {
    let mut buf = Vec::new();
    while let Some(frame) = step(body.frame()).await? {
        let frame = frame.map_err(body_error)?;
        if let Ok(data) = frame.into_data() {
            if buf.len() as u64 + data.len() as u64 > limit_bytes {
                return Err(StoreError::too_large(limit_bytes).into());
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.into())
}

/// What a multipart body held: file parts, and the plain form fields that
/// came with them (a browser form sends `ttl`, `once`... this way).
#[derive(Debug, Default)]
pub struct Multipart {
    pub files: Vec<Part>,
    pub fields: Vec<(String, String)>,
}

/// Longest plain form field kept, and how many are kept.
const FORM_FIELD_BYTES_MAX: usize = 1024;
const FORM_FIELDS_MAX: usize = 32;

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
    Some(
        multer::parse_boundary(ct)
            .map_err(|e| StoreError::bad_request(format!("invalid multipart body: {e}"))),
    )
}

/// Reads a multipart body. Each file part streams into its own blob of at
/// most `file_limit_bytes` and is committed before the next part starts, so
/// one request holds one open file however many parts it has. At most
/// `files_max` file parts.
pub async fn read_multipart<S, E>(
    app: &App,
    body: S,
    boundary: String,
    file_limit_bytes: u64,
    files_max: usize,
) -> AppResult<Multipart>
where
    S: futures_core::Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    let bad = |e: multer::Error| -> AppError {
        match e {
            multer::Error::StreamReadFailed(_) => {
                StoreError::bad_request(format!("the request body could not be read: {e}")).into()
            }
            e => StoreError::bad_request(format!("invalid multipart body: {e}")).into(),
        }
    };
    let guarded = crate::partguard::Guarded::new(body, &boundary);
    let mut mp = multer::Multipart::new(guarded, boundary);
    let mut out = Multipart::default();
    while let Some(mut field) = step(mp.next_field()).await?.map_err(bad)? {
        let file_name = field.file_name().map(str::to_string);
        if file_name.is_none() {
            // A plain form field: keep it small and few.
            let name = field.name().unwrap_or("").to_string();
            let mut value = Vec::new();
            while let Some(chunk) = step(field.chunk()).await?.map_err(bad)? {
                value.extend_from_slice(&chunk);
                if value.len() > FORM_FIELD_BYTES_MAX {
                    return Err(StoreError::bad_request(format!(
                        "form field {name:?} is too long"
                    ))
                    .into());
                }
            }
            if out.fields.len() >= FORM_FIELDS_MAX {
                return Err(StoreError::bad_request("too many form fields").into());
            }
            let value = String::from_utf8(value).map_err(|_| {
                StoreError::bad_request(format!("form field {name:?} is not UTF-8"))
            })?;
            out.fields.push((name, value));
            continue;
        }
        if out.files.len() >= files_max {
            return Err(StoreError::bad_request(format!(
                "too many files: at most {files_max} per request"
            ))
            .into());
        }
        let content_type = field.content_type().map(|m| m.essence_str().to_string());
        let mut sink = Sink::new(app.begin_upload(file_limit_bytes)?);
        while let Some(chunk) = step(field.chunk()).await?.map_err(bad)? {
            sink.push(chunk).await?;
        }
        let staged = sink.finish().await?;
        out.files.push(Part {
            name: file_name.filter(|n| !n.is_empty()),
            declared_type: content_type,
            body: staged,
        });
    }
    Ok(out)
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
}
