//! A TCP transport for the webhook sender that makes fewer system calls
//! than ureq's own (docs/PERFORMANCE.md, "The webhook's cost, profiled").
//! A delivery is a small POST on a kept connection, so system calls are
//! most of its cost, and on this kind of machine each one is dear:
//! - ureq's probe of a pooled connection switches the socket to
//!   non-blocking, reads, and switches it back (3 calls, made twice per
//!   request); here it is one `recv` with `MSG_PEEK | MSG_DONTWAIT`;
//! - ureq sets the socket's time-outs to the request's remaining budget
//!   before each read and write, which shrinks by microseconds between
//!   them (a call each time); here they are set again only when they are
//!   off by more than [`TIMEOUT_SLACK`];
//! - ureq sends the head and the body in two writes; here the request is
//!   held until the first read (or until it is large) and sent in one.
//!
//! Connections go to the addresses the guarded resolver gave, as with
//! ureq's own connector; TLS, when the URL asks for it, wraps this
//! transport further down the chain.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rustix::net::RecvFlags;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, ShutdownHandle,
    Transport,
};
use ureq::{Error, Timeout};

/// How far a socket's time-out may stray from a request's remaining
/// budget before it is set again: a request may overrun its deadline by
/// this much, which saves a system call before nearly every read.
pub const TIMEOUT_SLACK: Duration = Duration::from_millis(50);

/// The most of a request held back to be sent in one write; a larger one
/// is sent as it comes.
const HOLD_MAX_BYTES: usize = 16 * 1024;

/// Opens [`LeanTcp`] connections (the first link of the webhook sender's
/// connector chain).
#[derive(Debug, Default)]
pub struct LeanTcpConnector;

impl<In: Transport> Connector<In> for LeanTcpConnector {
    type Out = Either<In, LeanTcp>;

    fn connect(
        &self,
        details: &ConnectionDetails<'_>,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
        if let Some(chained) = chained {
            return Ok(Some(Either::A(chained)));
        }
        let stream = Arc::new(connect(details)?);
        (details.register_shutdown)(Arc::downgrade(&stream) as Weak<dyn ShutdownHandle>)?;
        let config = details.config;
        Ok(Some(Either::B(LeanTcp {
            stream,
            buffers: LazyBuffers::new(config.input_buffer_size(), config.output_buffer_size()),
            held: Vec::new(),
            read_timeout: None,
            write_timeout: None,
        })))
    }
}

/// Tries the resolved addresses in turn within the connect budget.
fn connect(details: &ConnectionDetails<'_>) -> Result<TcpStream, Error> {
    let budget = details.timeout.not_zero().map(|t| *t);
    let started = Instant::now();
    let mut last = None;
    for addr in &details.addrs {
        let attempt = match budget {
            Some(budget) => match budget.checked_sub(started.elapsed()) {
                Some(left) if !left.is_zero() => TcpStream::connect_timeout(addr, left),
                _ => return Err(Error::Timeout(details.timeout.reason)),
            },
            None => TcpStream::connect(addr),
        };
        match attempt {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                return Ok(stream);
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                last = Some(Error::Timeout(Timeout::Connect));
            }
            Err(e) => last = Some(Error::Io(e)),
        }
    }
    Err(last.unwrap_or_else(|| {
        Error::Io(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "no address to connect to",
        ))
    }))
}

/// One kept connection: a TCP stream, ureq's buffers, the part of a
/// request not yet sent, and the time-outs the socket has now.
pub struct LeanTcp {
    stream: Arc<TcpStream>,
    buffers: LazyBuffers,
    held: Vec<u8>,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

impl std::fmt::Debug for LeanTcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeanTcp")
            .field("peer", &self.stream.peer_addr().ok())
            .finish()
    }
}

impl LeanTcp {
    /// Sends what is held, in one write when the socket takes it.
    fn send_held(&mut self, timeout: NextTimeout) -> Result<(), Error> {
        if self.held.is_empty() {
            return Ok(());
        }
        let timeout = usable(timeout.for_write())?;
        let wanted = timeout.not_zero().map(|t| *t);
        if strays(self.write_timeout, wanted) {
            self.stream.set_write_timeout(wanted)?;
            self.write_timeout = wanted;
        }
        let sent = (&*self.stream).write_all(&self.held);
        self.held.clear();
        sent.map_err(|e| timed_out_as(e, timeout.reason))
    }
}

impl Transport for LeanTcp {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        // Held, not sent: ureq always reads the answer next, and
        // `await_input` sends what is held before it reads.
        self.held
            .extend_from_slice(&self.buffers.output()[..amount]);
        if self.held.len() >= HOLD_MAX_BYTES {
            self.send_held(timeout)?;
        }
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        self.send_held(timeout)?;
        let timeout = usable(timeout.for_read())?;
        let wanted = timeout.not_zero().map(|t| *t);
        if strays(self.read_timeout, wanted) {
            self.stream.set_read_timeout(wanted)?;
            self.read_timeout = wanted;
        }
        let started = Instant::now();
        let amount = loop {
            match (&*self.stream).read(self.buffers.input_append_buf()) {
                // Linux does not restart a socket read with a time-out
                // after a signal, and the socket's time-out would start
                // again in full on the retry: the retry gets what is
                // left of the budget.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    if let Some(w) = wanted {
                        let left = w.saturating_sub(started.elapsed());
                        if left.is_zero() {
                            return Err(Error::Timeout(timeout.reason));
                        }
                        self.stream.set_read_timeout(Some(left))?;
                        self.read_timeout = Some(left);
                    }
                }
                other => break other.map_err(|e| timed_out_as(e, timeout.reason))?,
            }
        };
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        if !self.held.is_empty() {
            return false;
        }
        // Nothing to read yet is the one healthy answer: an end of stream
        // or bytes no request asked for both mean the connection is done.
        let mut probe = [0u8; 1];
        matches!(
            rustix::net::recv(
                &*self.stream,
                &mut probe,
                RecvFlags::PEEK | RecvFlags::DONTWAIT
            ),
            Err(e) if e == rustix::io::Errno::AGAIN
        )
    }
}

/// A budget already spent is a time-out before any I/O.
fn usable(timeout: NextTimeout) -> Result<NextTimeout, Error> {
    if timeout.after.is_zero() {
        Err(Error::Timeout(timeout.reason))
    } else {
        Ok(timeout)
    }
}

/// Whether a socket whose time-out is `now` must be set to `wanted`:
/// when one of them is none, or they differ by more than the slack.
fn strays(now: Option<Duration>, wanted: Option<Duration>) -> bool {
    match (now, wanted) {
        (Some(a), Some(b)) => a.max(b) - a.min(b) > TIMEOUT_SLACK,
        (a, b) => a != b,
    }
}

/// A socket's time-out (reported as `WouldBlock` or `TimedOut`) is the
/// request's time-out; other errors stay I/O errors.
fn timed_out_as(e: io::Error, reason: Timeout) -> Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::Timeout(reason),
        _ => Error::Io(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_outs_are_set_again_only_when_they_stray_past_the_slack() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert!(!strays(Some(s(10)), Some(s(10) - ms(3))));
        assert!(!strays(Some(s(10)), Some(s(10) - TIMEOUT_SLACK)));
        assert!(strays(Some(s(10)), Some(s(10) - TIMEOUT_SLACK - ms(1))));
        assert!(
            strays(Some(s(3)), Some(s(10))),
            "a later request's whole budget"
        );
        assert!(strays(None, Some(s(1))));
        assert!(strays(Some(s(1)), None));
        assert!(!strays(None, None));
    }
}
