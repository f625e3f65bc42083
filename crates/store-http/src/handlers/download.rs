//! Stored bytes sent to a client: a file with its type, disposition,
//! validators and ranges, or a zip of many.

use std::sync::Arc;

use http::{Method, StatusCode};
use store_app::{AppError, AppResult, Download};
use store_core::{StorageError, StoreError};

use crate::respond::{self, Res};
use store_wire::{headers, ranges};

use super::Ctx;
use store_wire::params::Parsed;

/// Files up to this size are read whole and answered in one piece.
const INLINE_BYTES_MAX: u64 = 64 * 1024;

/// Serves user bytes: their type (with `charset=utf-8` for text), inline
/// for images and text unless `download=1`, an RFC 6266 file name, the
/// headers that keep user content from acting with the service's origin,
/// and validators and ranges (CONTRACT.md "Downloads: ranges and
/// validators"; `ranges.rs` decides). A `once=1` file has none of the
/// latter: any GET that reaches it is a whole 200 that burns it.
// `download` comes refused or not, and is answered where the headers are
// written, after the validators and ranges have had their say: a 304 or a
// 416 wins over a bad `download=` as it always has.
pub(crate) async fn serve_download(
    ctx: &Ctx,
    mut d: Download,
    download: Parsed<bool>,
) -> AppResult<Res> {
    let reader = std::mem::replace(
        &mut d.reader,
        Box::new(respond::BytesReader::new(Vec::new())),
    );
    let len = reader.len();
    if d.once {
        let res = http::Response::new(download_body(ctx, reader, len)?);
        return download_headers(&d, res, len, download);
    }
    let etag = ranges::etag(&d.blob);
    let validators = ranges::Validators {
        etag: &etag,
        modified: d.modified,
    };
    let (reader, range) = match ranges::decide(&ctx.headers, validators, len) {
        ranges::Answer::NotModified => return Ok(not_modified(&d, &etag)),
        ranges::Answer::Unsatisfiable => {
            let mut res = respond::store_error(&StoreError::RangeNotSatisfiable { len });
            headers::unsatisfiable(res.headers_mut(), len);
            return Ok(with_validators(res, &d, &etag));
        }
        ranges::Answer::Whole => (reader, None),
        ranges::Answer::Partial { start, end } => (
            read_range(ctx, &d.blob, reader, start..end + 1).await?,
            Some((start, end)),
        ),
    };
    let sent = reader.len();
    let mut res = http::Response::new(download_body(ctx, reader, sent)?);
    if range.is_some() {
        *res.status_mut() = StatusCode::PARTIAL_CONTENT;
    }
    headers::ranged(res.headers_mut(), range, len);
    let res = download_headers(&d, res, sent, download)?;
    Ok(with_validators(res, &d, &etag))
}

/// `range` of the blob `reader` reads, on its own rather than skipped to
/// through the whole. Local files and cached bytes narrow the reader the
/// use case opened (a seek, a slice): no second open, no thread hop, which
/// had halved the rate of 64 KiB ranges (docs/PERFORMANCE.md, scenario
/// 15). A reader that cannot is a stream from a bucket: the range is then
/// opened afresh (a ranged GET) in the reads lane, since it waits on the
/// network.
async fn read_range(
    ctx: &Ctx,
    blob: &store_core::BlobId,
    mut reader: Box<dyn store_core::BlobReader>,
    range: std::ops::Range<u64>,
) -> AppResult<Box<dyn store_core::BlobReader>> {
    let narrowed = reader
        .narrow(range.clone())
        .map_err(|e| AppError::Storage(StorageError::new(format!("cannot seek in a blob: {e}"))))?;
    if narrowed {
        return Ok(reader);
    }
    drop(reader);
    let (app, blob) = (Arc::clone(&ctx.app), blob.clone());
    ctx.shared
        .lanes
        .reads
        .run(move || app.open_blob_range(&blob, range))
        .await?
}

/// `ETag` and `Last-Modified` of `d`.
fn with_validators(mut res: Res, d: &Download, etag: &str) -> Res {
    headers::validators(res.headers_mut(), etag, d.modified);
    res
}

/// 304: the validators and the caching rule, no body.
fn not_modified(d: &Download, etag: &str) -> Res {
    let mut res = http::Response::new(respond::empty());
    *res.status_mut() = StatusCode::NOT_MODIFIED;
    headers::revalidated(res.headers_mut());
    with_validators(res, d, etag)
}

/// The body of `len` bytes of `reader`: none for HEAD, read here when
/// small, streamed from the reads lane otherwise.
fn download_body(
    ctx: &Ctx,
    reader: Box<dyn store_core::BlobReader>,
    len: u64,
) -> AppResult<respond::ResBody> {
    if ctx.method == Method::HEAD {
        drop(reader);
        return Ok(respond::empty());
    }
    if len <= INLINE_BYTES_MAX {
        // A small file is one read(2) from the page cache (or bytes the
        // store already holds in memory): read it here and answer it
        // whole, without a streaming thread and channel per file.
        // `read_exact` into the exact length: one read(2) for a file,
        // where `read_to_end` probes again for the end.
        let mut reader = reader;
        let mut bytes = vec![0; len as usize];
        std::io::Read::read_exact(&mut reader, &mut bytes).map_err(|e| {
            AppError::Storage(StorageError::new(format!("cannot read a blob: {e}")))
        })?;
        return Ok(respond::full(bytes));
    }
    let via = ctx.shared.sender(&ctx.shared.lanes.reads);
    Ok(http_body_util::BodyExt::boxed(crate::stream::stream(
        reader,
        Some(len),
        via,
    )))
}

/// The headers of user bytes; a refused `download=` answers here.
fn download_headers(
    d: &Download,
    mut res: Res,
    len: u64,
    download: Parsed<bool>,
) -> AppResult<Res> {
    headers::user_bytes(res.headers_mut(), d, len, download?);
    Ok(res)
}

/// A zip download of `files`, named `<name>.zip`.
pub(crate) fn serve_zip(ctx: &Ctx, name: &str, files: Vec<store_core::MemberFile>) -> Res {
    let body = if ctx.method == Method::HEAD {
        respond::empty()
    } else {
        let via = ctx.shared.sender(&ctx.shared.lanes.zips);
        http_body_util::BodyExt::boxed(crate::zip::stream_zip(Arc::clone(&ctx.app), files, via))
    };
    let mut res = http::Response::new(body);
    headers::zip(res.headers_mut(), name);
    res
}
