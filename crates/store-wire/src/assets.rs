//! The pages' stylesheet and script, compiled into the binary and served
//! at `/static/<name>`. Their URLs carry a hash of their content, so they
//! can be cached for a year and still change the moment a build does.

use std::sync::LazyLock;

struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: &[Asset] = &[
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../assets/app.css"),
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../assets/app.js"),
    },
];

/// FNV-1a: a stable content hash for cache busting, not for security.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

static VERSION: LazyLock<String> = LazyLock::new(|| {
    let h = ASSETS
        .iter()
        .fold(0u64, |acc, a| acc ^ fnv1a(a.body.as_bytes()));
    format!("{:012x}", h & 0xffff_ffff_ffff)
});

/// The versioned path of an asset under `root` (the service's mount path,
/// empty at the root), for the pages.
pub fn url(root: &str, name: &str) -> String {
    let path = crate::router::url_for(root, crate::router::RouteId::Static, &[name]);
    format!("{path}?v={}", *VERSION)
}

/// An asset's content type and body.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    ASSETS
        .iter()
        .find(|a| a.name == name)
        .map(|a| (a.content_type, a.body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_resolve_and_urls_carry_a_version() {
        assert!(
            get("app.js").is_some_and(|(t, b)| t.starts_with("text/javascript") && !b.is_empty())
        );
        assert!(get("app.css").is_some_and(|(t, _)| t.starts_with("text/css")));
        assert!(get("../Cargo.toml").is_none());
        assert!(url("", "app.js").starts_with("/static/app.js?v="));
    }

    #[test]
    fn the_script_never_builds_html_from_strings() {
        // Every user-controlled value must go through textContent.
        let (_, js) = get("app.js").unwrap();
        for banned in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(!js.contains(banned), "app.js uses {banned}");
        }
    }
}
