//! # store-clamd
//!
//! The `Scanner` port over ClamAV's clamd (issue 36, `STORE_CLAMD`): each
//! upload opens one connection and streams its bytes with the `INSTREAM`
//! command as they arrive, in chunks of a 4-byte big-endian length and
//! the bytes, ended by a zero length; clamd answers `stream: OK` or
//! `stream: <signature> FOUND` (the `z` form of the command, so replies
//! end with NUL). The protocol is this small, so it is written here
//! rather than taken from a crate that would own the socket and the
//! reading loop (the bytes arrive chunk by chunk from the request body,
//! not from one reader); a test runs it against a real clamd.
//!
//! Anything but a verdict (no clamd, a refused connection, a time-out,
//! `INSTREAM size limit exceeded`) is an `Unavailable` error: the upload
//! is refused with 503, never let through unscanned.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use store_core::ports::{Scan, Scanner, StorageResult};
use store_core::{StorageError, StorageErrorKind};

/// How long clamd may take to accept a connection, take a chunk, or give
/// its verdict after the last one.
pub const CLAMD_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest reply read from clamd, in bytes.
const REPLY_BYTES_MAX: usize = 1024;

/// Where clamd listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clamd {
    /// `unix:/path/to/clamd.sock`.
    Unix(PathBuf),
    /// `tcp:host:port`.
    Tcp(String),
}

impl Clamd {
    /// Reads `STORE_CLAMD`: `unix:/path` or `tcp:host:port`.
    pub fn parse(setting: &str) -> Result<Self, String> {
        let setting = setting.trim();
        if let Some(path) = setting.strip_prefix("unix:").filter(|p| !p.is_empty()) {
            return Ok(Self::Unix(PathBuf::from(path)));
        }
        if let Some(addr) = setting.strip_prefix("tcp:").filter(|a| a.contains(':')) {
            return Ok(Self::Tcp(addr.to_string()));
        }
        Err(format!(
            "STORE_CLAMD is unix:/path/to/clamd.sock or tcp:host:port, not {setting:?}"
        ))
    }

    fn connect(&self) -> std::io::Result<Box<dyn Stream>> {
        let stream: Box<dyn Stream> = match self {
            Self::Unix(path) => {
                let s = UnixStream::connect(path)?;
                s.set_read_timeout(Some(CLAMD_TIMEOUT))?;
                s.set_write_timeout(Some(CLAMD_TIMEOUT))?;
                Box::new(s)
            }
            Self::Tcp(addr) => {
                let addr = std::net::ToSocketAddrs::to_socket_addrs(addr)?
                    .next()
                    .ok_or_else(|| std::io::Error::other("no address"))?;
                let s = TcpStream::connect_timeout(&addr, CLAMD_TIMEOUT)?;
                s.set_read_timeout(Some(CLAMD_TIMEOUT))?;
                s.set_write_timeout(Some(CLAMD_TIMEOUT))?;
                Box::new(s)
            }
        };
        Ok(stream)
    }
}

/// A connection to clamd, of either kind.
trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

fn unavailable(what: impl std::fmt::Display) -> StorageError {
    StorageError::of(StorageErrorKind::Unavailable, format!("clamd: {what}"))
}

impl Scanner for Clamd {
    fn begin(&self) -> StorageResult<Box<dyn Scan>> {
        let mut stream = self.connect().map_err(unavailable)?;
        stream.write_all(b"zINSTREAM\0").map_err(unavailable)?;
        Ok(Box::new(ClamdScan { stream }))
    }
}

/// One upload's bytes on their way to clamd.
struct ClamdScan {
    stream: Box<dyn Stream>,
}

impl Scan for ClamdScan {
    fn write(&mut self, chunk: &[u8]) -> StorageResult<()> {
        // A zero length ends the stream: an empty chunk is not sent.
        for piece in chunk.chunks(u32::MAX as usize).filter(|p| !p.is_empty()) {
            let len = (piece.len() as u32).to_be_bytes();
            self.stream.write_all(&len).map_err(unavailable)?;
            self.stream.write_all(piece).map_err(unavailable)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> StorageResult<Option<String>> {
        self.stream.write_all(&[0, 0, 0, 0]).map_err(unavailable)?;
        let mut reply = Vec::new();
        let mut byte = [0u8; 1];
        while reply.len() < REPLY_BYTES_MAX {
            match self.stream.read(&mut byte).map_err(unavailable)? {
                0 => break,
                _ if byte[0] == 0 => break,
                _ => reply.push(byte[0]),
            }
        }
        verdict(&String::from_utf8_lossy(&reply))
    }
}

/// clamd's reply to a stream: clean, a signature, or an error.
fn verdict(reply: &str) -> StorageResult<Option<String>> {
    let reply = reply.trim();
    let body = reply.strip_prefix("stream:").map(str::trim);
    match body {
        Some("OK") => Ok(None),
        Some(found) if found.ends_with(" FOUND") => {
            Ok(Some(found.trim_end_matches(" FOUND").trim().to_string()))
        }
        _ => Err(unavailable(format!("no verdict: {reply:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_a_socket() {
        assert_eq!(
            Clamd::parse("unix:/run/clamav/clamd.ctl"),
            Ok(Clamd::Unix("/run/clamav/clamd.ctl".into()))
        );
        assert_eq!(
            Clamd::parse("tcp:127.0.0.1:3310"),
            Ok(Clamd::Tcp("127.0.0.1:3310".into()))
        );
        for bad in ["", "unix:", "tcp:host", "/run/clamd.sock", "http://x"] {
            assert!(Clamd::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn replies_are_verdicts_or_errors() {
        assert_eq!(verdict("stream: OK"), Ok(None));
        assert_eq!(
            verdict("stream: Eicar-Test-Signature FOUND"),
            Ok(Some("Eicar-Test-Signature".into()))
        );
        assert!(verdict("INSTREAM size limit exceeded. ERROR").is_err());
        assert!(verdict("").is_err());
    }

    #[test]
    fn an_absent_clamd_fails_closed() {
        let dir = std::env::temp_dir().join(format!("no-clamd-{}", std::process::id()));
        let clamd = Clamd::Unix(dir.join("clamd.sock"));
        let e = clamd.begin().err().expect("no clamd there");
        assert_eq!(e.kind, StorageErrorKind::Unavailable);
    }
}
