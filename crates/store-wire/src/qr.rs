//! QR codes of shared links, drawn on the server by the `qrcode` crate: as
//! SVG for pages and image viewers, and as text blocks for a terminal. The
//! pages embed the SVG in their markup, so no script draws it and the
//! Content-Security-Policy stays as it is (an inline `<svg>` element loads
//! nothing and its `fill` attributes are not styles).

use maud::{html, Markup, PreEscaped};
use qrcode::render::{svg, unicode};
use qrcode::{EcLevel, QrCode};
use store_core::StoreError;

/// The side of one module in the SVG's own units. The pages scale the
/// drawing with CSS; this only sets its size when opened on its own.
const MODULE_PX: u32 = 6;

/// The QR code of `url`, at level M: it survives a smudged phone screen,
/// and every URL this service makes fits in a small version.
fn code(url: &str) -> Result<QrCode, StoreError> {
    QrCode::with_error_correction_level(url.as_bytes(), EcLevel::M).map_err(|e| {
        // Only a base URL thousands of bytes long could get here.
        tracing::warn!("no QR code for a {}-byte URL: {e}", url.len());
        StoreError::Internal
    })
}

/// A standalone SVG document (`image/svg+xml`), black on white with the
/// quiet zone scanners need.
pub fn svg(url: &str) -> Result<String, StoreError> {
    Ok(code(url)?
        .render::<svg::Color<'_>>()
        .module_dimensions(MODULE_PX, MODULE_PX)
        .build())
}

/// The code as text for a terminal, two modules per character. Light
/// modules are drawn as blocks: terminals are mostly light text on a dark
/// background, and scanners need the light quiet zone around the code.
pub fn text(url: &str) -> Result<String, StoreError> {
    let mut out = code(url)?
        .render::<unicode::Dense1x2>()
        .dark_color(unicode::Dense1x2::Light)
        .light_color(unicode::Dense1x2::Dark)
        .build();
    out.push('\n');
    Ok(out)
}

/// The code inside a page: the SVG element without its XML declaration,
/// labelled for screen readers. Nothing user-chosen is in it: the drawing
/// is numbers and colours only.
pub fn inline(url: &str) -> Markup {
    match svg(url) {
        Ok(doc) => {
            let element = doc.find("<svg").map_or("", |i| &doc[i..]);
            html! {
                figure class="qr" {
                    span role="img" aria-label={ "QR code of " (url) } { (PreEscaped(element)) }
                    figcaption { "Scan to open on a phone" }
                }
            }
        }
        // A URL too long for a QR code leaves the page without one.
        Err(_) => html! {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_svg_is_one_document_with_a_quiet_zone_and_no_text() {
        let doc = svg("http://127.0.0.1:8080/abc123").unwrap();
        assert!(doc.starts_with("<?xml"), "{doc}");
        assert_eq!(doc.matches("<svg").count(), 1);
        assert!(doc.contains(r##"fill="#fff""##) && doc.contains(r##"fill="#000""##));
        // Four modules of quiet zone on each side, six units a module.
        let side = (code("http://127.0.0.1:8080/abc123").unwrap().width() + 8) * 6;
        assert!(doc.contains(&format!(r#"width="{side}""#)), "{doc}");
        assert!(!doc.contains("127.0.0.1"), "the URL is drawn, not written");
    }

    #[test]
    fn the_inline_code_has_no_xml_declaration() {
        let page = inline("http://x.test/abc").into_string();
        assert!(page.contains("<svg") && !page.contains("<?xml"), "{page}");
        assert!(page.contains(r#"aria-label="QR code of http://x.test/abc""#));
    }

    #[test]
    fn the_text_code_is_square_blocks() {
        let t = text("http://x.test/abc").unwrap();
        let lines: Vec<&str> = t.lines().collect();
        let width = lines[0].chars().count();
        // Two modules a line: the height is half the width, rounded up.
        assert_eq!(lines.len(), width.div_ceil(2));
        assert!(lines.iter().all(|l| l.chars().count() == width));
    }

    #[test]
    fn a_url_too_long_for_any_version_is_an_error_not_a_panic() {
        let long = format!("http://x.test/{}", "a".repeat(5000));
        assert!(svg(&long).is_err());
        assert_eq!(inline(&long).into_string(), "");
    }
}
