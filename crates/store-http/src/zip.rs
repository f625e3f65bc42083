//! Zips of bundles and dirs, streamed: the archive is written in steps on
//! the blocking pool, each step producing about one chunk, and the chunks
//! are sent from the async side (`stream.rs`). A zip is never built in
//! memory, and a slow client holds a few chunks but no thread.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use store_app::App;
use store_core::content::is_text_type;
use store_core::ports::BlobReader;
use store_core::MemberFile;
use zip::write::{SimpleFileOptions, StreamWriter};
use zip::{CompressionMethod, ZipWriter};

use crate::stream::{stream, ChannelBody, ChunkSource, Sender};

/// Bytes read from a member per write into the archive.
const ZIP_READ_BYTES: usize = 64 * 1024;

/// Where the archive writes: bytes wait here until a chunk takes them.
#[derive(Clone, Default)]
struct Out(Arc<Mutex<Vec<u8>>>);

impl Out {
    fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Moves up to `buf.len()` waiting bytes into `buf`.
    fn take_into(&self, buf: &mut [u8]) -> usize {
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = out.len().min(buf.len());
        buf[..n].copy_from_slice(&out[..n]);
        out.drain(..n);
        n
    }
}

impl Write for Out {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        out.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A zip being written: the files still to add, the one being read, and
/// the archive's output waiting to be sent.
struct ZipSource {
    app: Arc<App>,
    files: VecDeque<MemberFile>,
    reading: Option<Box<dyn BlobReader>>,
    zip: Option<ZipWriter<StreamWriter<Out>>>,
    out: Out,
    scratch: Vec<u8>,
}

impl ZipSource {
    /// Writes a little more of the archive; false once it is finished.
    fn advance(&mut self) -> zip::result::ZipResult<bool> {
        let Some(zip) = self.zip.as_mut() else {
            return Ok(false);
        };
        if let Some(reader) = self.reading.as_mut() {
            let n = reader.read(&mut self.scratch)?;
            if n == 0 {
                self.reading = None;
            } else {
                zip.write_all(&self.scratch[..n])?;
            }
            return Ok(true);
        }
        let Some(f) = self.files.pop_front() else {
            if let Some(zip) = self.zip.take() {
                zip.finish()?;
            }
            return Ok(false);
        };
        let Ok(reader) = self.app.open_blob(&f.blob) else {
            // A file deleted while the zip is being sent is left out.
            tracing::warn!("a file was left out of a zip: its bytes are gone");
            return Ok(true);
        };
        let method = if is_text_type(&f.content_type) {
            CompressionMethod::Deflated
        } else {
            CompressionMethod::Stored
        };
        zip.start_file(
            f.name.as_str(),
            SimpleFileOptions::default().compression_method(method),
        )?;
        self.reading = Some(reader);
        Ok(true)
    }
}

impl ChunkSource for ZipSource {
    fn fill(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.out.len() < buf.len() {
            if !self.advance().map_err(std::io::Error::other)? {
                break;
            }
        }
        Ok(self.out.take_into(buf))
    }
}

/// Streams `files` as a zip. Text compresses well and is deflated; other
/// files (images, archives) are mostly compressed already and are stored.
/// Entry names are the files' names, which store-core has already checked
/// (no slashes, no `..`, no control characters), so unzipping cannot write
/// outside the target folder. A file deleted while the zip is being sent
/// is left out; a read that fails cuts the body, so the client never sees
/// a valid-looking but incomplete zip.
pub fn stream_zip(app: Arc<App>, files: Vec<MemberFile>, via: Sender) -> ChannelBody {
    let out = Out::default();
    let source = ZipSource {
        app,
        files: files.into(),
        reading: None,
        zip: Some(ZipWriter::new_stream(out.clone())),
        out,
        scratch: vec![0; ZIP_READ_BYTES],
    };
    stream(source, None, via)
}
