//! A body stream cut off once a multipart part's header block passes its
//! cap; the scanner that counts, [`PartHeaderLimit`], is a wire rule and
//! lives in store-wire.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use store_wire::part_headers::PartHeaderLimit;

/// A body stream passed through a [`PartHeaderLimit`].
pub struct Guarded<S> {
    inner: S,
    limit: PartHeaderLimit,
    failed: bool,
}

impl<S> Guarded<S> {
    /// `inner`, each part's header block at most `header_bytes_max`.
    pub fn new(inner: S, boundary: &str, header_bytes_max: usize) -> Self {
        Self {
            inner,
            limit: PartHeaderLimit::new(boundary, header_bytes_max),
            failed: false,
        }
    }
}

impl<S, E> futures_core::Stream for Guarded<S>
where
    S: futures_core::Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Item = Result<Bytes, Box<dyn std::error::Error + Send + Sync>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => match self.limit.feed(&chunk) {
                Ok(()) => Poll::Ready(Some(Ok(chunk))),
                Err(msg) => {
                    self.failed = true;
                    Poll::Ready(Some(Err(msg.into())))
                }
            },
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}
