//! Sending stored bytes at the client's pace without holding a thread.
//!
//! A download (or a zip) is a [`ChunkSource`] read in steps: each step is a
//! short job on the blocking pool that fills the free chunk buffers, and
//! the chunks are then handed to the connection from an async task. While
//! the client is slow, that task waits for a buffer to come back, as a
//! future: no thread of the pool is held by a client's pace, so slow
//! readers cannot starve uploads or any other work (issue 19). A client
//! that accepts nothing at all is dropped by the connection's send
//! deadline (`deadline.rs`), which frees the buffers and ends the task.

use std::pin::Pin;
use std::task::{Context, Poll};

use std::sync::Arc;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use crate::lanes::Lane;

/// Bytes per chunk: large reads, each handed to the connection without a
/// copy.
pub const STREAM_CHUNK_BYTES: usize = 256 * 1024;
/// Chunk buffers per download: some being filled while the connection
/// writes the others.
const STREAM_BUFFERS: usize = 3;
/// The first chunk of a download is small, and the full-size buffers come
/// only once the connection has taken it: a client that asks and then
/// reads nothing (the slow-reader attack) holds 64 KiB, not 768 KiB, until
/// the send deadline drops it.
const FIRST_CHUNK_BYTES: usize = 64 * 1024;
/// Bytes of full-size chunk buffers all downloads together may hold. The
/// kernel takes a few megabytes of a download before a stalled client's
/// connection stops accepting, so "the connection took a chunk" does not
/// prove the client reads: without a shared bound, 500 slow readers held
/// 768 KiB each. A download that finds the budget spent goes on with its
/// one small buffer, slower but never stuck (docs/DECISIONS.md).
pub const STREAM_BUFFER_BUDGET_BYTES: usize = 32 * 1024 * 1024;

/// The shared budget of full-size chunk buffers, in buffers.
pub fn buffer_budget() -> Arc<Semaphore> {
    Arc::new(Semaphore::new(
        STREAM_BUFFER_BUDGET_BYTES / STREAM_CHUNK_BYTES,
    ))
}

/// Something read out in chunks on the blocking pool: a blob, a zip.
pub trait ChunkSource: Send + 'static {
    /// Fills `buf` from its start, as far as the source goes; answers the
    /// bytes written, less than `buf.len()` only at the end (0 once done).
    fn fill(&mut self, buf: &mut [u8]) -> std::io::Result<usize>;
}

/// Any reader is a source (a blob reader, bytes in memory).
impl<R: std::io::Read + Send + 'static + ?Sized> ChunkSource for Box<R> {
    fn fill(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

/// The response body of a stream: chunks arrive through a channel from
/// the task that reads them.
#[derive(Debug)]
pub struct ChannelBody {
    rx: mpsc::Receiver<std::io::Result<Bytes>>,
    len: Option<u64>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }

    fn size_hint(&self) -> SizeHint {
        self.len
            .map_or_else(SizeHint::default, SizeHint::with_exact)
    }
}

/// How a stream reads: the lane its jobs run in, and the shared budget of
/// full-size buffers (see [`buffer_budget`]).
#[derive(Debug, Clone)]
pub struct Sender {
    pub lane: Lane,
    pub budget: Arc<Semaphore>,
}

/// Streams `source` (of `len` bytes when known).
pub fn stream(source: impl ChunkSource, len: Option<u64>, via: Sender) -> ChannelBody {
    let (tx, rx) = mpsc::channel(STREAM_BUFFERS);
    tokio::spawn(pump(source, tx, via));
    ChannelBody { rx, len }
}

/// A chunk buffer lent to the connection. When hyper is done with the
/// chunk, the buffer goes back to the pump that read it, so a 5 MiB
/// download allocates (and the kernel zeroes) three buffers, not twenty.
struct Lent {
    buf: Vec<u8>,
    filled: usize,
    home: mpsc::UnboundedSender<Vec<u8>>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.buf[..self.filled]
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // The pump may have ended already; the buffer is then freed.
        let _ = self.home.send(std::mem::take(&mut self.buf));
    }
}

/// What one blocking step read: filled buffers in order, and whether the
/// source is done (at its end, or failed).
struct Step {
    chunks: Vec<(Vec<u8>, usize)>,
    failed: Option<std::io::Error>,
    done: bool,
}

/// Fills each of `bufs` in turn, stopping at the source's end.
fn read_step<S: ChunkSource>(source: &mut S, bufs: Vec<Vec<u8>>) -> Step {
    let mut step = Step {
        chunks: Vec::with_capacity(bufs.len()),
        failed: None,
        done: false,
    };
    for mut buf in bufs {
        match source.fill(&mut buf) {
            Ok(0) => step.done = true,
            Ok(n) => {
                step.done = n < buf.len();
                step.chunks.push((buf, n));
            }
            Err(e) => {
                step.failed = Some(e);
                step.done = true;
            }
        }
        if step.done {
            break;
        }
    }
    step
}

/// The buffers of one download beyond its first: full-size ones, each
/// holding a share of the budget for as long as the download runs.
struct Buffers {
    budget: Arc<Semaphore>,
    held: Vec<OwnedSemaphorePermit>,
}

impl Buffers {
    /// A full-size buffer, if the download has fewer than it may and the
    /// budget has room.
    fn grow(&mut self) -> Option<Vec<u8>> {
        if self.held.len() >= STREAM_BUFFERS {
            return None;
        }
        let permit = Arc::clone(&self.budget).try_acquire_owned().ok()?;
        self.held.push(permit);
        Some(vec![0; STREAM_CHUNK_BYTES])
    }
}

/// Reads `source` in steps and sends the chunks, waiting (as a future) for
/// buffers to come back from the connection. The first step reads one
/// small chunk; once a buffer has come back, the download grows to
/// [`STREAM_BUFFERS`] full-size buffers as far as the shared budget allows.
async fn pump<S: ChunkSource>(
    mut source: S,
    tx: mpsc::Sender<std::io::Result<Bytes>>,
    via: Sender,
) {
    let (home, mut free) = mpsc::unbounded_channel();
    let mut extra = Buffers {
        budget: via.budget,
        held: Vec::new(),
    };
    let mut bufs = vec![vec![0; FIRST_CHUNK_BYTES]];
    loop {
        let ran = via
            .lane
            .run(move || {
                let step = read_step(&mut source, bufs);
                (source, step)
            })
            .await;
        let Ok((back, step)) = ran else {
            let _ = tx
                .send(Err(std::io::Error::other("a read worker failed")))
                .await;
            return;
        };
        source = back;
        for (buf, filled) in step.chunks {
            let home = home.clone();
            let chunk = Bytes::from_owner(Lent { buf, filled, home });
            if tx.send(Ok(chunk)).await.is_err() {
                return;
            }
        }
        if let Some(e) = step.failed {
            // The client sees a cut-off body, never a short one that looks
            // whole.
            let _ = tx.send(Err(e)).await;
            return;
        }
        if step.done {
            return;
        }
        bufs = Vec::with_capacity(STREAM_BUFFERS);
        while let Ok(buf) = free.try_recv() {
            bufs.push(buf);
        }
        if bufs.is_empty() {
            tokio::select! {
                Some(buf) = free.recv() => bufs.push(buf),
                () = tx.closed() => return, // The client went away.
            }
        }
        // A buffer came back: trade the small one for a full-size one, and
        // add more, as far as the budget allows.
        for buf in &mut bufs {
            if buf.len() < STREAM_CHUNK_BYTES {
                if let Some(big) = extra.grow() {
                    *buf = big;
                }
            }
        }
        while bufs.len() < STREAM_BUFFERS {
            match extra.grow() {
                Some(big) => bufs.push(big),
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn via(permits: usize) -> Sender {
        Sender {
            lane: Lane::new(permits),
            budget: buffer_budget(),
        }
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    /// Reads a body as a connection does: each chunk copied out and
    /// dropped, which gives its buffer back.
    async fn collect(mut body: ChannelBody) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame?.into_data() {
                out.extend_from_slice(&data);
            }
        }
        Ok(out)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_length_arrives_whole() {
        for len in [
            0,
            1,
            STREAM_CHUNK_BYTES - 1,
            STREAM_CHUNK_BYTES,
            STREAM_CHUNK_BYTES + 1,
            STREAM_CHUNK_BYTES * STREAM_BUFFERS,
            5 * 1024 * 1024 + 17,
        ] {
            let bytes = pattern(len);
            let source = Box::new(std::io::Cursor::new(bytes.clone()));
            let body = stream(source, Some(len as u64), via(2));
            assert_eq!(collect(body).await.unwrap(), bytes, "length {len}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_a_small_first_chunk_is_read_before_the_client_reads() {
        let big = pattern(8 * STREAM_CHUNK_BYTES);
        let mut body = stream(Box::new(std::io::Cursor::new(big)), None, via(1));
        // Nothing has been taken yet: only the first, small chunk waits.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first.len(), FIRST_CHUNK_BYTES);
        drop(first);
        // Once it is taken, the rest comes in full-size chunks.
        let second = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(second.len(), STREAM_CHUNK_BYTES);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_download_with_the_budget_spent_still_arrives_in_small_chunks() {
        let len = 3 * STREAM_CHUNK_BYTES + 5;
        let spent = Sender {
            lane: Lane::new(1),
            budget: Arc::new(Semaphore::new(0)),
        };
        let mut body = stream(Box::new(std::io::Cursor::new(pattern(len))), None, spent);
        let mut got = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame.unwrap().into_data().unwrap();
            assert!(data.len() <= FIRST_CHUNK_BYTES, "only the small buffer");
            got.extend_from_slice(&data);
        }
        assert_eq!(got, pattern(len));
    }

    /// Fails after giving some bytes: the body must end in an error.
    struct Broken(usize);

    impl ChunkSource for Broken {
        fn fill(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("disk gone"));
            }
            self.0 -= 1;
            Ok(buf.len())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_read_cuts_the_body() {
        let body = stream(Broken(4), None, via(1));
        assert!(collect(body).await.is_err());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reader_that_stops_holds_no_thread() {
        // A lane of one permit: if an unread stream kept its job, the
        // second stream could never read.
        let lane = via(1);
        let big = pattern(8 * STREAM_CHUNK_BYTES);
        let stalled = stream(Box::new(std::io::Cursor::new(big)), None, lane.clone());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let other = stream(Box::new(std::io::Cursor::new(pattern(10))), None, lane);
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), collect(other)).await;
        assert_eq!(got.expect("not starved").unwrap(), pattern(10));
        drop(stalled);
    }
}
