//! `Content-Disposition` values: a download's (RFC 6266) and a multipart
//! part's (RFC 7578), with an RFC 5987 `filename*` for any name and a
//! plain `filename` beside it for readers that know only that one.

/// `Content-Disposition` per RFC 6266 with an RFC 5987 `filename*` for
/// names that are not plain ASCII.
pub fn content_disposition(kind: &str, name: &str) -> String {
    let fallback: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    const ATTR: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'!')
        .remove(b'#')
        .remove(b'$')
        .remove(b'&')
        .remove(b'+')
        .remove(b'-')
        .remove(b'.')
        .remove(b'^')
        .remove(b'_')
        .remove(b'`')
        .remove(b'|')
        .remove(b'~');
    let encoded = percent_encoding::utf8_percent_encode(name, ATTR);
    format!("{kind}; filename=\"{fallback}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispositions() {
        assert_eq!(
            content_disposition("attachment", "a b.txt"),
            "attachment; filename=\"a b.txt\"; filename*=UTF-8''a%20b.txt"
        );
        assert_eq!(
            content_disposition("inline", "ré\"sumé.pdf"),
            "inline; filename=\"r__sum_.pdf\"; filename*=UTF-8''r%C3%A9%22sum%C3%A9.pdf"
        );
    }
}
