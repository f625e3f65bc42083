//! The send deadline of a connection: a client that accepts no byte of a
//! response for a while is dropped, and everything it held (its connection
//! slot, its download's buffers and task) is freed.
//!
//! It sits under hyper, on the socket: a write that cannot go out (the
//! client's receive window is full because it reads nothing) arms a timer,
//! any byte accepted disarms it, and a timer that fires fails the write,
//! which makes hyper close the connection. It costs nothing while writes
//! go through.

use std::future::Future;
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// A stream whose writes fail after `timeout` without progress.
#[derive(Debug)]
pub struct SendDeadline<T> {
    inner: T,
    timeout: Duration,
    /// Armed while a write is waiting for the client.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> SendDeadline<T> {
    pub fn new(inner: T, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            stalled: None,
        }
    }

    /// Called when a write would wait: arms the timer on the first wait,
    /// and fails once it has run out.
    fn wait<R>(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<R>> {
        let timeout = self.timeout;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "the client accepted nothing for {} s",
                    timeout.as_secs_f32()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Passes a write's result on, disarming the timer on progress.
    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        match r {
            Poll::Pending => self.wait(cx),
            Poll::Ready(r) => {
                self.stalled = None;
                Poll::Ready(r)
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendDeadline<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(cx, r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => self.wait(cx),
            Poll::Ready(r) => {
                self.stalled = None;
                Poll::Ready(r)
            }
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending => self.wait(cx),
            ready => ready,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    // The clock is tokio's, paused: it moves on only when every task
    // waits, to the next timer, so the 5 ms reads below always come
    // before the 100 ms deadline, however busy the machine is.

    #[tokio::test(start_paused = true)]
    async fn a_peer_that_reads_nothing_is_cut_off() {
        // A duplex pipe with a tiny buffer stands for a full socket.
        let (ours, _theirs) = tokio::io::duplex(64);
        let mut conn = SendDeadline::new(ours, Duration::from_millis(100));
        let started = tokio::time::Instant::now();
        let mut sent = 0usize;
        let err = loop {
            match conn.write(&[0u8; 32]).await {
                Ok(n) => sent += n,
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(sent, 64, "it wrote what fitted first");
        assert!(started.elapsed() >= Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    async fn a_peer_that_keeps_reading_is_never_cut_off() {
        let (ours, mut theirs) = tokio::io::duplex(64);
        let mut conn = SendDeadline::new(ours, Duration::from_millis(100));
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 16];
            let mut got = 0;
            while got < 4096 {
                tokio::time::sleep(Duration::from_millis(5)).await;
                got += tokio::io::AsyncReadExt::read(&mut theirs, &mut buf)
                    .await
                    .unwrap();
            }
            got
        });
        // 4 KiB at 16 bytes per 5 ms takes over a second: far past the
        // deadline in all, but never without progress that long.
        conn.write_all(&[1u8; 4096]).await.expect("kept alive");
        assert_eq!(reader.await.unwrap(), 4096);
    }
}
