//! hyper's own refusals, in SPEC.md's JSON.
//!
//! A request hyper cannot parse (a malformed request line, such as a
//! literal `/<id>` pasted from the docs; a head over its buffer) never
//! reaches the service: hyper answers it itself, with a status and an
//! empty body, and closes the connection. SPEC.md makes every error JSON
//! with a `code`, and hyper has no hook for that answer, so this wrapper,
//! on the socket under hyper, recognises it going out and writes the JSON
//! answer in its place.
//!
//! What it recognises: the first write on a connection, when that write
//! is a whole response head and nothing else, of status 400, 414 or 431
//! with `content-length: 0` and no `content-type`. The service never
//! answers so (every error it makes carries its JSON), and a body is never
//! the first write, so only hyper's refusals match. A refusal on a
//! connection that has already been answered (a malformed second request
//! on a kept-alive connection) keeps hyper's empty answer: clients that
//! reuse connections (browsers, HTTP libraries) encode their targets. Only
//! the first write is looked at, so the check costs nothing after it.

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pub use store_wire::raw::RefusalLimits;
use store_wire::raw::{hyper_refusal, refusal_error, whole_answer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A stream whose hyper-made refusals go out as JSON errors.
#[derive(Debug)]
pub struct JsonRefusals<T> {
    inner: T,
    /// The limits the refusals name.
    limits: RefusalLimits,
    /// Whether the connection has written anything yet.
    wrote: bool,
    /// The answer written in place of hyper's refusal, once there is one.
    replacement: Option<Replacement>,
}

/// The JSON answer going out in place of hyper's refusal.
#[derive(Debug)]
struct Replacement {
    bytes: Vec<u8>,
    /// How much of it is out.
    sent: usize,
    /// Whether hyper's write of its refusal has been answered as done:
    /// any write after it is refused, so that hyper closes.
    taken: bool,
}

impl<T> JsonRefusals<T> {
    pub fn new(inner: T, limits: RefusalLimits) -> Self {
        Self {
            inner,
            limits,
            wrote: false,
            replacement: None,
        }
    }
}

impl<T: AsyncWrite + Unpin> JsonRefusals<T> {
    /// Writes what is left of the replacement, if there is one.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while let Some(r) = self.replacement.as_mut() {
            if r.sent == r.bytes.len() {
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &r.bytes[r.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            r.sent += n;
        }
        Poll::Ready(Ok(()))
    }

    /// Whether hyper's write of `whole` (all its bytes) is replaced: the
    /// connection's first write, when it is a refusal (whose answer is
    /// then set aside), or any write after a replacement.
    fn replaces(&mut self, whole: &[u8]) -> bool {
        if self.replacement.is_some() {
            return true;
        }
        let first = !std::mem::replace(&mut self.wrote, true);
        let Some(status) = hyper_refusal(whole).filter(|_| first) else {
            return false;
        };
        self.replacement = Some(Replacement {
            bytes: whole_answer(&refusal_error(status, self.limits)),
            sent: 0,
            taken: false,
        });
        true
    }

    /// Answers hyper's write of `len` bytes once replacing: the write that
    /// carried the refusal is taken whole once the replacement is out; a
    /// write after it is refused, so that hyper closes the connection.
    fn replaced(&mut self, cx: &mut Context<'_>, len: usize) -> Poll<std::io::Result<usize>> {
        ready!(self.drain(cx))?;
        let Some(r) = self.replacement.as_mut() else {
            return Poll::Ready(Ok(len));
        };
        if !std::mem::replace(&mut r.taken, true) {
            return Poll::Ready(Ok(len));
        }
        Poll::Ready(Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "the connection's refusal has been answered",
        )))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for JsonRefusals<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for JsonRefusals<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if !self.replaces(buf) {
            return Pin::new(&mut self.inner).poll_write(cx, buf);
        }
        self.replaced(cx, buf.len())
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        // hyper writes its refusal's head as the only non-empty slice.
        let mut full = bufs.iter().filter(|b| !b.is_empty());
        let whole = match (full.next(), full.next()) {
            (Some(one), None) => &one[..],
            _ => &[][..],
        };
        if !self.replaces(whole) {
            return Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        }
        self.replaced(cx, bufs.iter().map(|b| b.len()).sum())
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const LIMITS: RefusalLimits = RefusalLimits {
        uri_bytes_max: 8192,
        head_bytes_max: 65536,
        header_fields_max: 64,
    };

    const HYPER_400: &[u8] =
        b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: Fri, 27 Nov 2026 12:00:00 GMT\r\n\r\n";

    #[tokio::test]
    async fn a_refusal_goes_out_as_json_and_nothing_after_it() {
        let (ours, mut theirs) = tokio::io::duplex(16);
        let mut conn = JsonRefusals::new(ours, LIMITS);
        let writer = tokio::spawn(async move {
            conn.write_all(HYPER_400).await.unwrap();
            assert!(
                conn.write_all(b"anything after").await.is_err(),
                "the connection takes nothing after its refusal"
            );
            conn.shutdown().await.unwrap();
        });
        let mut out = String::new();
        theirs.read_to_string(&mut out).await.unwrap();
        writer.await.unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["code"], "bad_request");
        assert!(v["error"].as_str().unwrap().contains("percent-encode"));
    }

    #[tokio::test]
    async fn other_answers_pass_untouched() {
        let (ours, mut theirs) = tokio::io::duplex(1024);
        let mut conn = JsonRefusals::new(ours, LIMITS);
        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        conn.write_all(answer).await.unwrap();
        // A later write that reads like a refusal (a body that is a stored
        // HTTP transcript, say) is a body: only the first write counts.
        conn.write_all(HYPER_400).await.unwrap();
        conn.shutdown().await.unwrap();
        let mut out = Vec::new();
        theirs.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, [&answer[..], HYPER_400].concat());
    }
}
