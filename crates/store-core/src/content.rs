//! Content types: what a file is (magic bytes first, then its name), whether
//! it is text (and so editable), and how a browser may be shown it.

/// Bytes of a file's head that [`sniff`] looks at.
pub const SNIFF_BYTES: usize = 512;

/// The type announced by a file's first bytes. Text formats have no
/// signature and give `None`. Some signatures are short enough to occur at
/// the start of ordinary text (`BM`, `ID3`, `....ftyp`); [`decide`] does not
/// trust them for bytes that are valid UTF-8 text.
pub fn sniff(head: &[u8]) -> Option<&'static str> {
    let starts = |sig: &[u8]| head.starts_with(sig);
    if starts(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if starts(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else if head.len() >= 12 && &head[4..8] == b"ftyp" {
        match &head[8..12] {
            b"heic" | b"heix" | b"heim" | b"heis" | b"mif1" | b"msf1" | b"hevc" => {
                Some("image/heic")
            }
            b"avif" | b"avis" => Some("image/avif"),
            b"qt  " => Some("video/quicktime"),
            _ => Some("video/mp4"),
        }
    } else if starts(b"%PDF-") {
        Some("application/pdf")
    } else if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") {
        Some("application/zip")
    } else if starts(b"\x1f\x8b") {
        Some("application/gzip")
    } else if starts(b"BM") && head.len() >= 14 {
        Some("image/bmp")
    } else if starts(b"\x00\x00\x01\x00") {
        Some("image/x-icon")
    } else if starts(b"\x00asm") {
        Some("application/wasm")
    } else if starts(b"OggS") {
        Some("audio/ogg")
    } else if starts(b"ID3") || starts(b"\xff\xfb") {
        Some("audio/mpeg")
    } else if starts(b"\x1aE\xdf\xa3") {
        Some("video/webm")
    } else if starts(b"7z\xbc\xaf\x27\x1c") {
        Some("application/x-7z-compressed")
    } else {
        None
    }
}

/// (extension, type) pairs, lowercase. Types of the text family are listed
/// so that a `.json` or `.md` upload is editable.
const EXTENSIONS: &[(&str, &str)] = &[
    ("txt", "text/plain"),
    ("text", "text/plain"),
    ("log", "text/plain"),
    ("md", "text/markdown"),
    ("markdown", "text/markdown"),
    ("csv", "text/csv"),
    ("tsv", "text/tab-separated-values"),
    ("html", "text/html"),
    ("htm", "text/html"),
    ("css", "text/css"),
    ("js", "text/javascript"),
    ("mjs", "text/javascript"),
    ("json", "application/json"),
    ("xml", "application/xml"),
    ("svg", "image/svg+xml"),
    ("yaml", "application/yaml"),
    ("yml", "application/yaml"),
    ("toml", "text/plain"),
    ("ini", "text/plain"),
    ("rs", "text/plain"),
    ("py", "text/plain"),
    ("sh", "text/plain"),
    ("c", "text/plain"),
    ("h", "text/plain"),
    ("go", "text/plain"),
    ("java", "text/plain"),
    ("ts", "text/plain"),
    ("sql", "text/plain"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("heic", "image/heic"),
    ("avif", "image/avif"),
    ("bmp", "image/bmp"),
    ("ico", "image/x-icon"),
    ("pdf", "application/pdf"),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("tar", "application/x-tar"),
    ("wasm", "application/wasm"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("mp4", "video/mp4"),
    ("webm", "video/webm"),
    ("bin", "application/octet-stream"),
];

/// The type a file name's extension suggests.
pub fn from_name(name: &str) -> Option<&'static str> {
    let (_, ext) = name.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    EXTENSIONS.iter().find(|(e, _)| *e == ext).map(|(_, t)| *t)
}

/// The usual extension of a type, for default file names.
pub fn extension_for(content_type: &str) -> Option<&'static str> {
    let essence = essence(content_type);
    EXTENSIONS
        .iter()
        .find(|(_, t)| *t == essence)
        .map(|(e, _)| *e)
}

/// A type without its parameters, lowercase.
pub fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether a type belongs to the text family of CONTRACT.md: `text/*`, or a
/// JSON, XML, JavaScript or YAML type.
pub fn is_text_type(content_type: &str) -> bool {
    let t = essence(content_type);
    t.starts_with("text/")
        || t.ends_with("+json")
        || t.ends_with("+xml")
        || matches!(
            t.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/ndjson"
                | "application/x-ndjson"
        )
}

/// Whether browsers are shown the file in place: images and text-like types.
pub fn renders_inline(content_type: &str) -> bool {
    essence(content_type).starts_with("image/") || is_text_type(content_type)
}

/// Whether the type can run script when rendered (HTML, SVG, XML), and so
/// must be served with the sandbox Content-Security-Policy.
pub fn needs_sandbox(content_type: &str) -> bool {
    let t = essence(content_type);
    t == "text/html" || t == "application/xhtml+xml" || t.ends_with("+xml") || t.ends_with("/xml")
}

/// Whether `t` is a single well-formed `type/subtype` (RFC 6838 restricted
/// names, lowercase). A declared type is used only then: a value such as
/// `text/plain,text/html` must never reach a Content-Type header, where a
/// browser would read its last member.
fn is_plain_media_type(t: &str) -> bool {
    let token = |s: &str| {
        !s.is_empty()
            && s.len() <= 63
            && s.as_bytes()[0].is_ascii_alphanumeric()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"!#$&^_.+-".contains(&b))
    };
    matches!(t.split_once('/'), Some((a, b)) if token(a) && token(b))
}

/// Decides a file's type. For binary bytes: magic bytes, then the file
/// name, then the declared type. For UTF-8 text: the name first (a text
/// file starting with `BM` is still `notes.txt`), then the declared type,
/// then `text/plain`. Generic declared types a client sends without meaning
/// them (octet-stream, curl's form default, multipart) are ignored, and so
/// is anything that is not a single well-formed media type.
pub fn decide(head: &[u8], name: &str, declared: Option<&str>, utf8_text: bool) -> String {
    if !utf8_text {
        if let Some(t) = sniff(head) {
            return t.to_string();
        }
    }
    if let Some(t) = from_name(name) {
        return t.to_string();
    }
    if let Some(d) = declared {
        let e = essence(d);
        let generic = e == "application/octet-stream"
            || e == "application/x-www-form-urlencoded"
            || e.starts_with("multipart/");
        if !generic && is_plain_media_type(&e) {
            return e;
        }
    }
    if utf8_text {
        "text/plain".to_string()
    } else {
        "application/octet-stream".to_string()
    }
}

/// The text rule: bytes are text when they are valid UTF-8 with no NUL
/// (a NUL marks a file as binary even when it is valid UTF-8).
/// [`Utf8Check`] applies the same rule to a body chunk by chunk.
pub fn is_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// Whether a stored file is text, and so editable in place and shown as
/// text: its bytes are text and its type is a text type.
pub fn is_text_file(bytes_are_text: bool, content_type: &str) -> bool {
    bytes_are_text && is_text_type(content_type)
}

/// Refuses bytes appended to a text file that are not text themselves
/// (400): the file would stop being text.
pub fn check_appended_text(bytes: &[u8]) -> Result<(), crate::StoreError> {
    if is_text(bytes) {
        Ok(())
    } else {
        Err(crate::StoreError::bad_request(
            "appended content must be UTF-8 text",
        ))
    }
}

/// Validates UTF-8 across chunk boundaries without holding the whole body,
/// and notes NUL bytes (which mark a file as binary even when valid UTF-8).
///
/// It is kept with a resumable upload's record between its requests, so it
/// has a stored form.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Utf8Check {
    /// An incomplete sequence carried over from the previous chunk (<= 3 bytes).
    #[serde(default)]
    pending: Vec<u8>,
    #[serde(default)]
    invalid: bool,
    #[serde(default)]
    has_nul: bool,
}

impl Utf8Check {
    /// A check that has seen no bytes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk of the body, in order. Once the bytes are invalid, later
    /// chunks are ignored.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.invalid {
            return;
        }
        if chunk.contains(&0) {
            self.has_nul = true;
        }
        let mut input = chunk;
        // Complete a sequence split across the previous chunk boundary.
        while !self.pending.is_empty() && !input.is_empty() {
            self.pending.push(input[0]);
            input = &input[1..];
            match std::str::from_utf8(&self.pending) {
                Ok(_) => self.pending.clear(),
                Err(e) if e.error_len().is_some() => {
                    self.invalid = true;
                    return;
                }
                Err(_) if self.pending.len() >= 4 => {
                    self.invalid = true;
                    return;
                }
                Err(_) => {}
            }
        }
        match std::str::from_utf8(input) {
            Ok(_) => {}
            Err(e) if e.error_len().is_some() => self.invalid = true,
            Err(e) => self.pending.extend_from_slice(&input[e.valid_up_to()..]),
        }
    }

    /// Valid UTF-8 with no NUL and nothing left incomplete at the end.
    pub fn is_text(&self) -> bool {
        !self.invalid && !self.has_nul && self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn magic_beats_name() {
        assert_eq!(
            decide(b"\x89PNG\r\n\x1a\n....", "x.txt", None, false),
            "image/png"
        );
        assert_eq!(decide(b"hello", "x.md", None, true), "text/markdown");
        assert_eq!(
            decide(
                b"hello",
                "x",
                Some("application/x-www-form-urlencoded"),
                true
            ),
            "text/plain"
        );
        assert_eq!(
            decide(b"{}", "x", Some("application/json"), true),
            "application/json"
        );
        assert_eq!(
            decide(b"\x00\x01", "x", None, false),
            "application/octet-stream"
        );
    }

    #[test]
    fn text_family() {
        for t in [
            "text/plain",
            "application/json",
            "application/ld+json",
            "image/svg+xml",
            "application/yaml",
            "text/html; charset=utf-8",
        ] {
            assert!(is_text_type(t), "{t}");
        }
        for t in ["image/png", "application/pdf", "application/octet-stream"] {
            assert!(!is_text_type(t), "{t}");
        }
        assert!(needs_sandbox("text/html"));
        assert!(needs_sandbox("image/svg+xml"));
        assert!(needs_sandbox("application/xml"));
        assert!(!needs_sandbox("text/plain"));
        assert!(renders_inline("image/png"));
        assert!(!renders_inline("application/zip"));
    }

    #[test]
    fn utf8_check_handles_split_sequences() {
        let text = "grüße 😀".as_bytes();
        for cut in 0..=text.len() {
            let mut c = Utf8Check::new();
            c.push(&text[..cut]);
            c.push(&text[cut..]);
            assert!(c.is_text(), "cut at {cut}");
        }
        let mut c = Utf8Check::new();
        c.push(&text[..text.len() - 1]);
        assert!(!c.is_text(), "a truncated sequence at the end is not text");
        let mut c = Utf8Check::new();
        c.push(b"ok\xffok");
        assert!(!c.is_text());
        let mut c = Utf8Check::new();
        c.push(b"a\0b");
        assert!(!c.is_text());
    }

    proptest! {
        #[test]
        fn utf8_check_agrees_with_std(bytes in prop::collection::vec(any::<u8>(), 0..64), cuts in prop::collection::vec(0usize..64, 0..4)) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort();
            let mut c = Utf8Check::new();
            let mut start = 0;
            for cut in cuts { c.push(&bytes[start..cut]); start = cut; }
            c.push(&bytes[start..]);
            let expect = std::str::from_utf8(&bytes).is_ok() && !bytes.contains(&0);
            prop_assert_eq!(c.is_text(), expect);
            prop_assert_eq!(is_text(&bytes), expect);
            prop_assert_eq!(check_appended_text(&bytes).is_ok(), expect);
        }

        #[test]
        fn a_text_file_is_text_bytes_of_a_text_type(bytes_are_text in any::<bool>(), ty in "(text/plain|text/markdown|application/json|image/png|application/octet-stream)") {
            prop_assert_eq!(is_text_file(bytes_are_text, &ty), bytes_are_text && is_text_type(&ty));
            prop_assert!(!is_text_file(false, &ty), "binary bytes are never a text file");
        }
    }
}

#[cfg(test)]
mod decide_tests {
    use super::*;

    #[test]
    fn text_that_starts_like_a_binary_signature_keeps_its_name() {
        assert_eq!(
            decide(b"BM is a nice start for notes", "notes.txt", None, true),
            "text/plain"
        );
        assert_eq!(decide(b"ID3 tags explained", "x", None, true), "text/plain");
        assert_eq!(
            decide(b"BM\x00\x00 binary bitmap header..", "x", None, false),
            "image/bmp"
        );
    }

    #[test]
    fn declared_types_must_be_single_and_well_formed() {
        let d = |t: &str| decide(b"<p>hi</p>", "x", Some(t), true);
        assert_eq!(d("text/plain,text/html"), "text/plain");
        assert_eq!(d("text/html"), "text/html");
        assert_eq!(d("TEXT/CSV; charset=utf-8"), "text/csv");
        assert_eq!(d("text/ html"), "text/plain");
        assert_eq!(d("nonsense"), "text/plain");
        assert_eq!(d("application/vnd.api+json"), "application/vnd.api+json");
    }
}
