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
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;
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

/// RFC 3339 UTC timestamps with microseconds, like tracing's default, but
/// the date and time of day are formatted once per second per thread: a
/// timestamp on every request line is otherwise a visible share of a small
/// GET.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timestamps;

thread_local! {
    static SECOND: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
}

/// `2026-11-22T07:35:54` for a Unix second (proleptic Gregorian, UTC).
fn civil(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

impl FormatTime for Timestamps {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let secs = now.as_secs();
        SECOND.with(|cell| {
            let mut c = cell.borrow_mut();
            if c.0 != secs {
                *c = (secs, civil(secs));
            }
            write!(w, "{}.{:06}Z", c.1, now.subsec_micros())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::civil;

    #[test]
    fn civil_times() {
        assert_eq!(civil(0), "1970-01-01T00:00:00");
        assert_eq!(civil(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(civil(1_795_333_554), "2026-11-22T07:45:54");
        assert_eq!(civil(4_102_444_799), "2099-12-31T23:59:59");
    }
}
