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
//! `linger_bytes_max` and `linger_secs` in all, and at most
//! `linger_idle_secs` between two pieces (the server's limits,
//! `store_core::ServerLimits`). A client that asked before sending
//! (`Expect: 100-continue`) is not lingered for: reading its body would
//! invite it to send what was refused.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;

/// How much of a refused body's rest is read, and for how long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Linger {
    time: Duration,
    idle: Duration,
    bytes_max: usize,
}

impl Linger {
    /// The server's bounds (`linger_secs`, `linger_idle_secs`,
    /// `linger_bytes_max`).
    pub(crate) fn new(limits: &store_core::ServerLimits) -> Self {
        Self {
            time: Duration::from_secs(limits.linger_secs),
            idle: Duration::from_secs(limits.linger_idle_secs),
            bytes_max: usize::try_from(limits.linger_bytes_max).unwrap_or(usize::MAX),
        }
    }
}

/// A request body that, dropped before its end, has its rest read and
/// thrown away in the background (see the module's docs).
pub(crate) struct Lingering<B: Body<Data = Bytes> + Send + 'static> {
    inner: Option<Pin<Box<B>>>,
    /// `None` once the body has ended, or when there is no lingering.
    linger: Option<Linger>,
}

impl<B: Body<Data = Bytes> + Send + 'static> Lingering<B> {
    /// Wraps `body`; `linger` `None` turns the lingering off (a client
    /// that waits for `100 Continue`).
    pub(crate) fn new(body: B, linger: Option<Linger>) -> Self {
        Self {
            inner: Some(Box::pin(body)),
            linger,
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
            self.linger = None;
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
        let Some(linger) = self.linger.filter(|_| !body.is_end_stream()) else {
            return;
        };
        // Outside a runtime (a host that drops requests elsewhere) there
        // is nothing to read with: the connection closes as before.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(linger.time, throw_away(body, linger)).await;
            });
        }
    }
}

/// Reads `body` to its end, `linger`'s bytes or a pause of its idle time,
/// whichever comes first, keeping nothing.
async fn throw_away<B: Body<Data = Bytes> + Send + 'static>(mut body: Pin<Box<B>>, linger: Linger) {
    let mut left = linger.bytes_max;
    loop {
        match tokio::time::timeout(linger.idle, body.frame()).await {
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
