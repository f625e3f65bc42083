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

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Writer};
use tracing_subscriber::fmt::time::FormatTime;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

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

/// The format of every line: tracing's default ("full", no target, no
/// colours), with a shorter way for the request lines (target `request`,
/// no message).
///
/// A request line is written for every request, and tracing's general
/// formatter had made it a twentieth of a small GET's work: it visits each
/// field through `Debug`, and paints each part for a terminal even when
/// colours are off (docs/PERFORMANCE.md). The request lines' fields are
/// fixed by `store_http::StoreService`: the method (which hyper has
/// checked to be a token, so it holds no control character), a route's
/// name and numbers, so they need none of the general formatter's
/// escaping, and [`RequestFields`] writes them straight. The line is the
/// same, byte for byte (a test below holds it to that). A request event
/// with a message, which could carry any text, goes the general way.
#[derive(Debug, Clone)]
pub struct Lines<T> {
    full: Format<Full, T>,
    timer: T,
}

impl<T: FormatTime + Clone> Lines<T> {
    pub fn new(timer: T) -> Self {
        Self {
            full: tracing_subscriber::fmt::format()
                .with_timer(timer.clone())
                .with_ansi(false)
                .with_target(false),
            timer,
        }
    }
}

impl<S, N, T> FormatEvent<S, N> for Lines<T>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    T: FormatTime,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let plain = meta.target() == "request"
            && meta.fields().field("message").is_none()
            && ctx.event_scope().is_none();
        if !plain {
            return self.full.format_event(ctx, writer, event);
        }
        if self.timer.format_time(&mut writer).is_err() {
            writer.write_str("<unknown time>")?;
        }
        // The level as tracing pads it, after the timestamp's space.
        let level = match *meta.level() {
            Level::TRACE => "TRACE",
            Level::DEBUG => "DEBUG",
            Level::INFO => " INFO",
            Level::WARN => " WARN",
            Level::ERROR => "ERROR",
        };
        write!(writer, " {level} ")?;
        let mut fields = RequestFields {
            writer: &mut writer,
            first: true,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writeln!(writer)
    }
}

/// Writes a request line's fields as tracing's default visitor does:
/// `name=value`, separated by spaces, strings quoted.
struct RequestFields<'w, 'a> {
    writer: &'w mut Writer<'a>,
    first: bool,
    result: std::fmt::Result,
}

impl RequestFields<'_, '_> {
    fn field(&mut self, field: &Field, value: std::fmt::Arguments<'_>) {
        if self.result.is_err() {
            return;
        }
        let sep = if std::mem::take(&mut self.first) {
            ""
        } else {
            " "
        };
        // No message here: an event with one goes the general way.
        self.result = write!(self.writer, "{sep}{}={value}", field.name());
    }
}

impl Visit for RequestFields<'_, '_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.field(field, format_args!("{value}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.field(field, format_args!("{value}"));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, format_args!("{value}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.field(field, format_args!("{value:?}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.field(field, format_args!("{value:?}"));
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
    use super::*;

    /// One time for every line, so that two formatters' lines compare.
    #[derive(Debug, Clone, Copy)]
    struct Fixed;

    impl FormatTime for Fixed {
        fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
            w.write_str("2026-11-23T10:00:00.000001Z")
        }
    }

    /// What the events `emit` logs come out as, through `subscriber`.
    fn lines(subscriber: impl Subscriber + Send + Sync, logs: &Logs, emit: fn()) -> String {
        tracing::subscriber::with_default(subscriber, emit);
        let b = logs.buffer.lock().unwrap();
        String::from_utf8(b.clone()).unwrap()
    }

    fn tracing_default(emit: fn()) -> String {
        let logs = Logs::default();
        let subscriber = tracing_subscriber::fmt()
            .with_timer(Fixed)
            .with_ansi(false)
            .with_target(false)
            .with_writer(logs.clone())
            .finish();
        lines(subscriber, &logs, emit)
    }

    fn ours(emit: fn()) -> String {
        let logs = Logs::default();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .event_format(Lines::new(Fixed))
            .with_writer(logs.clone())
            .finish();
        lines(subscriber, &logs, emit)
    }

    #[test]
    fn request_lines_are_tracings_own_byte_for_byte() {
        // The fields store_http::StoreService logs, of every kind it
        // gives them (Display, str, integers, an Option that may be none).
        fn emit() {
            for (route, bytes) in [("get_file", Some(1024u64)), ("upload", None)] {
                tracing::info!(
                    target: "request",
                    method = %"GET",
                    route,
                    status = 206u16,
                    bytes,
                    ms = 3u64,
                );
            }
            tracing::info!(target: "request", n = -1i64, ok = true);
            // A message may hold any text: tracing's own formatter
            // escapes it.
            tracing::info!(target: "request", n = 2u64, "a \u{1b}[2J message");
        }
        let want = tracing_default(emit);
        assert!(
            want.contains(r#" INFO method=GET route="get_file" status=206 bytes=1024 ms=3"#),
            "{want}"
        );
        assert_eq!(ours(emit), want);
    }

    #[test]
    fn other_lines_are_tracings_own() {
        fn emit() {
            // Info, not a warning: warnings skip the buffer read here.
            tracing::info!(path = "/x\u{1b}[31m", "a \u{1b}[2J line");
            tracing::info!(target: "storesrv", count = 3, "started");
        }
        let want = tracing_default(emit);
        assert!(want.contains(" INFO a "), "{want}");
        assert_eq!(ours(emit), want);
    }

    #[test]
    fn civil_times() {
        assert_eq!(civil(0), "1970-01-01T00:00:00");
        assert_eq!(civil(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(civil(1_795_333_554), "2026-11-22T07:45:54");
        assert_eq!(civil(4_102_444_799), "2099-12-31T23:59:59");
    }
}
