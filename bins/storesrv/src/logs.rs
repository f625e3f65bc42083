//! Where log lines go: stderr, with the per-request lines batched.
//!
//! A request log line written straight to stderr costs a write(2) per
//! request, which on a small-file GET is a tenth of the work. Info and
//! debug lines are therefore appended to a buffer that a thread writes out
//! every [`FLUSH_EVERY`] (or sooner when it fills); warnings and errors
//! skip the queue: first whatever is buffered, then the line itself, so
//! the order of lines is kept. At exit [`Logs::flush`] writes the rest.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tracing::{Level, Metadata};
use tracing_subscriber::fmt::MakeWriter;

/// How long an info line may wait in the buffer.
const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// A buffer this full is written at once.
const BUFFER_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Default)]
pub struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl Logs {
    /// Starts the thread that writes the buffer out.
    pub fn start() -> Self {
        let logs = Self::default();
        let weak = Arc::downgrade(&logs.buffer);
        std::thread::Builder::new()
            .name("log flusher".into())
            .spawn(move || loop {
                std::thread::sleep(FLUSH_EVERY);
                let Some(buffer) = weak.upgrade() else { break };
                Self::drain(&buffer);
            })
            .expect("the log thread starts");
        logs
    }

    fn drain(buffer: &Mutex<Vec<u8>>) {
        let mut b = buffer.lock().unwrap_or_else(PoisonError::into_inner);
        if !b.is_empty() {
            // A log that cannot be written has nowhere to report that.
            let _ = std::io::stderr().write_all(&b);
            b.clear();
        }
    }

    /// Writes out everything buffered.
    pub fn flush(&self) {
        Self::drain(&self.buffer);
    }
}

/// One line on its way out.
pub enum LineWriter<'a> {
    Buffered(&'a Mutex<Vec<u8>>),
    Direct(&'a Mutex<Vec<u8>>),
}

impl Write for LineWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Buffered(buffer) => {
                let mut b = buffer.lock().unwrap_or_else(PoisonError::into_inner);
                b.extend_from_slice(bytes);
                if b.len() >= BUFFER_BYTES {
                    let _ = std::io::stderr().write_all(&b);
                    b.clear();
                }
            }
            Self::Direct(buffer) => {
                let mut b = buffer.lock().unwrap_or_else(PoisonError::into_inner);
                b.extend_from_slice(bytes);
                std::io::stderr().write_all(&b)?;
                b.clear();
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Logs {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LineWriter::Direct(&self.buffer)
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Self::Writer {
        if *meta.level() <= Level::WARN {
            LineWriter::Direct(&self.buffer)
        } else {
            LineWriter::Buffered(&self.buffer)
        }
    }
}
