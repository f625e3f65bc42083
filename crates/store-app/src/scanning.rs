//! Virus scanning (issue 36, `STORE_CLAMD`): every kind of upload's bytes
//! go to the scanner as they arrive (`Upload::push`), and its verdict
//! comes before anything is committed. Bytes already in memory (gallery
//! images) are scanned whole; an append's result as it is copied; a
//! resumable upload, whose PATCHes may reach any process, once its last
//! byte came, by reading its staged bytes back.

use std::sync::Arc;

use store_core::ports::{Scan, Scanner};
use store_core::StoreError;

use crate::{App, AppResult};

impl App {
    /// Turns scanning on: every upload from now on is scanned. Call it
    /// once, before serving; a second call changes nothing.
    pub fn scan_uploads(&self, scanner: Arc<dyn Scanner>) {
        let _ = self.scanner.set(scanner);
    }

    /// A scan of one upload's bytes, when scanning is on. A scanner that
    /// cannot be reached refuses the upload here (503), before its body
    /// is read.
    pub(crate) fn begin_scan(&self) -> AppResult<Option<Box<dyn Scan>>> {
        match self.scanner.get() {
            Some(scanner) => Ok(Some(scanner.begin()?)),
            None => Ok(None),
        }
    }

    /// Scans bytes held whole.
    pub(crate) fn scan_bytes(&self, bytes: &[u8]) -> AppResult<()> {
        let Some(mut scan) = self.begin_scan()? else {
            return Ok(());
        };
        scan.write(bytes)?;
        verdict(Some(scan))
    }

    /// Scans a stored blob by reading it (a resumable upload's, once it
    /// is whole).
    pub(crate) fn scan_blob(&self, blob: &store_core::BlobId) -> AppResult<()> {
        let Some(mut scan) = self.begin_scan()? else {
            return Ok(());
        };
        let mut reader = self.open_record_blob(blob)?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = std::io::Read::read(&mut reader, &mut buf)
                .map_err(store_core::StorageError::new)?;
            if n == 0 {
                break;
            }
            scan.write(&buf[..n])?;
        }
        verdict(Some(scan))
    }
}

/// The end of a scan: refused with 422 `infected` when the scanner found
/// a signature (logged with its name), nothing without a scan.
pub(crate) fn verdict(scan: Option<Box<dyn Scan>>) -> AppResult<()> {
    let Some(scan) = scan else {
        return Ok(());
    };
    match scan.finish()? {
        None => Ok(()),
        Some(signature) => {
            tracing::warn!(%signature, "upload refused: the virus scanner found a signature");
            Err(StoreError::Infected(
                "the server's virus scanner refused these bytes; nothing was stored".into(),
            )
            .into())
        }
    }
}
