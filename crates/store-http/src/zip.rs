//! Zips of bundles and dirs, streamed: a blocking thread writes the archive
//! into a bounded channel as it reads each blob, so a zip is never built in
//! memory and a slow client only holds a few chunks.

use std::io::Write;
use std::sync::Arc;

use bytes::Bytes;
use store_app::App;
use store_core::content::is_text_type;
use store_core::MemberFile;
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

use crate::respond::ChannelBody;

/// Bytes gathered before a chunk is handed to the connection.
const ZIP_CHUNK_BYTES: usize = 64 * 1024;

/// A `Write` that forwards full chunks over the channel.
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<std::io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buf,
            Vec::with_capacity(ZIP_CHUNK_BYTES),
        ));
        self.tx.blocking_send(Ok(chunk)).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away")
        })
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= ZIP_CHUNK_BYTES {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// Streams `files` as a zip. Text compresses well and is deflated; other
/// files (images, archives) are mostly compressed already and are stored.
/// Entry names are the files' names, which store-core has already checked
/// (no slashes, no `..`, no control characters), so unzipping cannot write
/// outside the target folder. A file deleted while the zip is being sent
/// is left out.
pub fn stream(app: Arc<App>, files: Vec<MemberFile>) -> ChannelBody {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let err_tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let result = (|| -> zip::result::ZipResult<()> {
            let mut zip = zip::ZipWriter::new_stream(ChannelWriter {
                tx,
                buf: Vec::with_capacity(ZIP_CHUNK_BYTES),
            });
            let mut buf = vec![0u8; 64 * 1024];
            for f in files {
                let Ok(mut reader) = app.open_blob(&f.blob) else {
                    tracing::warn!("a file was left out of a zip: its bytes are gone");
                    continue;
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
                loop {
                    let n = std::io::Read::read(&mut reader, &mut buf)?;
                    if n == 0 {
                        break;
                    }
                    zip.write_all(&buf[..n])?;
                }
            }
            let mut out = zip.finish()?.into_inner();
            out.flush()?;
            Ok(())
        })();
        if let Err(e) = result {
            // The client sees a cut-off body rather than a valid-looking zip.
            let _ = err_tx.blocking_send(Err(std::io::Error::other(e.to_string())));
        }
    });
    ChannelBody::new(rx, None)
}
