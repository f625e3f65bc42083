//! Import rules that need no network: where an imported file's name comes
//! from, and the tiny redirect document of `link=1`.

use crate::names::file_name_shape_problem;

/// The file name of a Content-Disposition header: `filename*` (RFC 5987,
/// UTF-8) wins over `filename`. Path components are dropped and the result
/// must have a file name's shape; its length is the storer's to check
/// against the limits.
pub fn name_from_content_disposition(header: &str) -> Option<String> {
    let mut plain = None;
    let mut extended = None;
    for param in header.split(';').skip(1) {
        let Some((key, value)) = param.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        if key == "filename*" {
            // charset'language'percent-encoded
            let mut it = value.splitn(3, '\'');
            let (charset, _lang, encoded) = (it.next()?, it.next()?, it.next()?);
            if charset.eq_ignore_ascii_case("utf-8") {
                extended = percent_decode(encoded);
            }
        } else if key == "filename" {
            plain = Some(value.trim_matches('"').to_string());
        }
    }
    extended.or(plain).and_then(|n| last_component(&n))
}

/// The last segment of a URL path, percent-decoded, if it has a file name's
/// shape (the length is the storer's to check).
pub fn name_from_url_path(path: &str) -> Option<String> {
    let seg = path.rsplit('/').next()?;
    last_component(&percent_decode(seg)?)
}

/// The name the last path segment of a full URL gives, ignoring its query
/// and fragment.
pub fn name_from_url(url: &str) -> Option<String> {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path_and_more = after_scheme.find('/').map(|i| &after_scheme[i..])?;
    let path = path_and_more.split(['?', '#']).next()?;
    name_from_url_path(path)
}

/// A URL `link=1` may store: http(s), no spaces or control characters, and
/// of a sane length. The document only redirects browsers, so no address
/// check applies: the server never connects to it.
pub fn validate_link_url(url: &str) -> Result<(), crate::StoreError> {
    let lower = url.to_ascii_lowercase();
    let ok = (lower.starts_with("http://") || lower.starts_with("https://"))
        && url.len() > "https://".len()
        && url.len() <= 4096
        && !url.chars().any(|c| c.is_control() || c.is_whitespace());
    if ok {
        Ok(())
    } else {
        Err(crate::StoreError::bad_request(
            "link=1 takes an http or https URL without spaces, at most 4096 characters",
        ))
    }
}

fn last_component(name: &str) -> Option<String> {
    let name = name.rsplit(['/', '\\']).next()?.trim();
    file_name_shape_problem(name)
        .is_none()
        .then(|| name.to_string())
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Escapes text for an HTML attribute or element.
fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn unescape_html(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Marks the line that carries a link document's target.
const LINK_MARKER: &str = "<a id=\"storesrv-link\" href=\"";

/// The document `link=1` stores: a page that sends browsers on to `url`.
/// The URL is escaped, so a quote in it cannot break out of the attribute.
pub fn link_document(url: &str) -> String {
    let u = escape_html(url);
    format!(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0; url={u}\">\n<title>Link</title>\n{LINK_MARKER}{u}\">{u}</a>\n"
    )
}

/// The http(s) URL a link document points at, read back from its text (an
/// agent may have edited it with PUT or PATCH). Anything else gives `None`
/// and the document is served as it is.
pub fn link_target(document: &str) -> Option<String> {
    let start = document.find(LINK_MARKER)? + LINK_MARKER.len();
    let end = document[start..].find('"')? + start;
    let url = unescape_html(&document[start..end]);
    let lower = url.to_ascii_lowercase();
    let ok = (lower.starts_with("http://") || lower.starts_with("https://"))
        && !url.chars().any(|c| c.is_control() || c == ' ');
    ok.then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_from_headers() {
        let cd = |h: &str| name_from_content_disposition(h);
        assert_eq!(
            cd("attachment; filename=\"report.pdf\""),
            Some("report.pdf".into())
        );
        assert_eq!(
            cd("attachment; filename=plain.txt"),
            Some("plain.txt".into())
        );
        assert_eq!(
            cd("attachment; filename=\"a.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt"),
            Some("résumé.txt".into())
        );
        assert_eq!(
            cd("attachment; filename=\"../../etc/passwd\""),
            Some("passwd".into())
        );
        assert_eq!(cd("attachment; filename=\"..\""), None);
        assert_eq!(cd("inline"), None);
    }

    #[test]
    fn names_from_paths() {
        assert_eq!(
            name_from_url_path("/files/data%20set.csv"),
            Some("data set.csv".into())
        );
        assert_eq!(name_from_url_path("/"), None);
        assert_eq!(name_from_url_path("/dir/"), None);
        assert_eq!(name_from_url_path("/%2e%2e"), None);
        assert_eq!(name_from_url_path("/bad%zz"), None);
    }

    #[test]
    fn names_from_urls() {
        assert_eq!(
            name_from_url("https://h.example/a/b.pdf?x=1#y"),
            Some("b.pdf".into())
        );
        assert_eq!(name_from_url("https://h.example"), None);
        assert_eq!(name_from_url("https://h.example/"), None);
        assert!(validate_link_url("https://example.com/x").is_ok());
        assert!(validate_link_url("javascript:alert(1)").is_err());
        assert!(validate_link_url("https://a b").is_err());
    }

    #[test]
    fn link_documents_escape_and_round_trip() {
        let url = "https://example.com/a?b=1&c=\"><script>alert(1)</script>";
        let doc = link_document(url);
        assert!(!doc.contains("<script>"));
        assert_eq!(link_target(&doc), Some(url.to_string()));
        assert_eq!(link_target(&link_document("javascript:alert(1)")), None);
        assert_eq!(link_target("no marker here"), None);
    }

    proptest! {
        #[test]
        fn any_http_url_round_trips(path in "[a-zA-Z0-9/?&=%._\"'<>-]{0,40}") {
            let url = format!("https://example.com/{path}");
            prop_assert_eq!(link_target(&link_document(&url)), Some(url));
        }
    }
}
