//! A cap on each multipart part's header block. multer reads a part's
//! headers until the blank line however long that takes; store-http runs
//! the raw stream through this scanner on its way to multer and cuts it off
//! once any part's headers pass the cap, so a hostile header cannot make
//! the server buffer a whole body's worth of them.

/// Scans a multipart stream chunk by chunk, with a small carry so that a
/// delimiter or a blank line split across chunks is still seen.
#[derive(Debug)]
pub struct PartHeaderLimit {
    delim: Vec<u8>,
    carry: Vec<u8>,
    in_headers: bool,
    header_bytes: usize,
    cap: usize,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let last_start = hay.len() - needle.len();
    let mut i = 0;
    while i <= last_start {
        match hay[i..=last_start].iter().position(|b| *b == first) {
            None => return None,
            Some(p) => {
                i += p;
                if &hay[i..i + needle.len()] == needle {
                    return Some(i);
                }
                i += 1;
            }
        }
    }
    None
}

impl PartHeaderLimit {
    /// A scanner of the multipart body with `boundary`, each part's header
    /// block at most `cap` bytes.
    pub fn new(boundary: &str, cap: usize) -> Self {
        Self {
            delim: format!("--{boundary}").into_bytes(),
            carry: Vec::new(),
            in_headers: false,
            header_bytes: 0,
            cap,
        }
    }

    /// Looks at the next chunk; an error once a header block passes the cap.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), String> {
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(chunk);
        let mut i = 0;
        loop {
            if self.in_headers {
                if let Some(p) = find(&buf[i..], b"\r\n\r\n") {
                    self.header_bytes += p;
                    self.check()?;
                    self.in_headers = false;
                    self.header_bytes = 0;
                    i += p + 4;
                    continue;
                }
                let rest = buf.len() - i;
                let keep = rest.min(3);
                self.header_bytes += rest - keep;
                self.check()?;
                self.carry = buf[buf.len() - keep..].to_vec();
                return Ok(());
            }
            if let Some(p) = find(&buf[i..], &self.delim) {
                self.in_headers = true;
                self.header_bytes = 0;
                i += p + self.delim.len();
                continue;
            }
            let rest = buf.len() - i;
            let keep = rest.min(self.delim.len() - 1);
            self.carry = buf[buf.len() - keep..].to_vec();
            return Ok(());
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.header_bytes > self.cap {
            Err(format!(
                "a multipart part's headers are longer than {} bytes",
                self.cap
            ))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(header_len: usize) -> Vec<u8> {
        let mut b =
            b"--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\nX-Pad: "
                .to_vec();
        b.extend(std::iter::repeat_n(b'a', header_len));
        b.extend_from_slice(
            b"\r\n\r\nfile bytes --XyZ is not a delimiter without CRLF but fine\r\n--XyZ--\r\n",
        );
        b
    }

    fn feed_in(chunks: usize, data: &[u8], cap: usize) -> Result<(), String> {
        let mut g = PartHeaderLimit::new("XyZ", cap);
        let size = data.len().div_ceil(chunks).max(1);
        for c in data.chunks(size) {
            g.feed(c)?;
        }
        Ok(())
    }

    #[test]
    fn small_headers_pass_in_any_chunking() {
        let data = body(100);
        for chunks in [1, 2, 3, 7, 50, data.len()] {
            assert!(feed_in(chunks, &data, 1024).is_ok(), "{chunks} chunks");
        }
    }

    #[test]
    fn long_headers_are_cut_off_in_any_chunking() {
        let data = body(5000);
        for chunks in [1, 2, 3, 7, 50, data.len()] {
            assert!(feed_in(chunks, &data, 1024).is_err(), "{chunks} chunks");
        }
    }

    #[test]
    fn long_file_data_is_not_a_header() {
        let mut data =
            b"--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 100_000));
        data.extend_from_slice(b"\r\n--XyZ--\r\n");
        assert!(feed_in(13, &data, 1024).is_ok());
    }
}
