//! Lingering close: a request body that a refusal left unread is read and
//! thrown away for a while after the answer, as nginx does
//! (`lingering_close`).
//!
//! An upload refused before its body is read (413 over the size limit,
//! 401 without the upload token, 429) used to have its connection closed
//! with the client's bytes still arriving. The kernel then answers them
//! with a reset, which can destroy the answer before the client reads it:
//! Python's requests saw a reset instead of the 401, and nginx in front,
//! still sending the body, answered its own 502 page. Read to its end
//! (within bounds), the connection closes cleanly after the answer, and
//! every client and proxy reads the JSON error.
//!
//! The bounds keep it from being a way to hold a connection: at most
//! [`LINGER_BYTES_MAX`] and [`LINGER_TIME`] in all, and at most
//! [`LINGER_IDLE`] between two pieces. A client that asked before sending
//! (`Expect: 100-continue`) is not lingered for: reading its body would
//! invite it to send what was refused.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;

/// How long, in all, the rest of a refused body is read after the answer
/// (nginx's `lingering_time`).
const LINGER_TIME: Duration = Duration::from_secs(30);
/// How long a pause in the rest ends the lingering (nginx's
/// `lingering_timeout`).
const LINGER_IDLE: Duration = Duration::from_secs(5);
/// Bytes of a refused body read and thrown away at most.
const LINGER_BYTES_MAX: usize = 64 * 1024 * 1024;

/// A request body that, dropped before its end, has its rest read and
/// thrown away in the background (see the module's docs).
pub(crate) struct Lingering<B: Body<Data = Bytes> + Send + 'static> {
    inner: Option<Pin<Box<B>>>,
    ended: bool,
}

impl<B: Body<Data = Bytes> + Send + 'static> Lingering<B> {
    /// Wraps `body`; `linger` false turns the lingering off (a client that
    /// waits for `100 Continue`).
    pub(crate) fn new(body: B, linger: bool) -> Self {
        Self {
            inner: Some(Box::pin(body)),
            ended: !linger,
        }
    }
}

impl<B: Body<Data = Bytes> + Send + 'static> Body for Lingering<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = inner.as_mut().poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.ended = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), |b| b.size_hint())
    }
}

impl<B: Body<Data = Bytes> + Send + 'static> Drop for Lingering<B> {
    fn drop(&mut self) {
        let Some(body) = self.inner.take() else {
            return;
        };
        if self.ended || body.is_end_stream() {
            return;
        }
        // Outside a runtime (a host that drops requests elsewhere) there
        // is nothing to read with: the connection closes as before.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(LINGER_TIME, throw_away(body)).await;
            });
        }
    }
}

/// Reads `body` to its end, [`LINGER_BYTES_MAX`] or a pause of
/// [`LINGER_IDLE`], whichever comes first, keeping nothing.
async fn throw_away<B: Body<Data = Bytes> + Send + 'static>(mut body: Pin<Box<B>>) {
    let mut left = LINGER_BYTES_MAX;
    loop {
        match tokio::time::timeout(LINGER_IDLE, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                let n = frame.data_ref().map_or(0, Bytes::len);
                left = left.saturating_sub(n);
                if left == 0 {
                    return;
                }
            }
            _ => return,
        }
    }
}
