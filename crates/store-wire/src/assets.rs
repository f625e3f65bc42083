//! The pages' stylesheet and script, compiled into the binary and served
//! at `/static/<name>`. Their URLs carry a hash of their content, so they
//! can be cached for a year and still change the moment a build does.
//!
//! The script is `assets/wire.js` followed by `assets/app.js`. `wire.js`
//! is generated from the route table ([`wire_js`]; a test fails when the
//! checked-in file differs, and `scripts/golden` writes it): it names every
//! route's path and every parameter, and app.js spells none of them itself.

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
        body: concat!(
            include_str!("../assets/wire.js"),
            include_str!("../assets/app.js")
        ),
    },
    // tus-js-client, vendored by scripts/vendor-tus (docs/DEPENDENCIES.md):
    // the home page's resumable uploads.
    Asset {
        name: "tus.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../assets/vendor/tus-js-client/tus.min.js"),
    },
    // typage and its libraries, bundled by scripts/vendor-age
    // (docs/DEPENDENCIES.md): encryption and decryption in the pages.
    Asset {
        name: "age.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../assets/vendor/age-encryption/age.min.js"),
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

/// `assets/wire.js`: the route table's paths by route name, and every
/// parameter name, as one frozen object `WIRE` for the page script.
pub fn wire_js() -> String {
    use crate::routes::{params, GLOBAL_PARAMS, ROUTES};
    let names: std::collections::BTreeSet<&str> = GLOBAL_PARAMS
        .iter()
        .chain(params())
        .map(|p| p.name)
        .chain(ROUTES.iter().flat_map(|r| r.keywords.iter().copied()))
        .collect();
    let params: serde_json::Map<String, serde_json::Value> = names
        .into_iter()
        .map(|n| (n.to_string(), n.into()))
        .collect();
    let routes: serde_json::Map<String, serde_json::Value> = ROUTES
        .iter()
        .map(|r| (r.name.to_string(), r.path.into()))
        .collect();
    let wire = serde_json::json!({ "params": params, "routes": routes });
    format!(
        "// Generated from store-wire's route table (assets.rs, wire_js) by\n\
         // scripts/golden; do not edit. The page script takes every route\n\
         // path and parameter name from here.\n\
         const WIRE = Object.freeze({});\n",
        serde_json::to_string_pretty(&wire).expect("the wire serialises")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_js_is_the_route_tables() {
        let manifest = std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
        let path = format!("{manifest}/assets/wire.js");
        let generated = wire_js();
        if std::env::var_os("STORE_UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &generated).expect("wire.js is written");
        }
        let checked_in = std::fs::read_to_string(&path).expect("wire.js is there");
        assert!(
            checked_in == generated,
            "assets/wire.js differs from the route table; run scripts/golden"
        );
    }

    #[test]
    fn the_script_names_only_what_the_wire_has() {
        // Every WIRE.params.x and WIRE.routes.x app.js reads exists, so a
        // renamed parameter or route cannot leave the script asking for
        // what the server no longer reads.
        let app = include_str!("../assets/app.js");
        let wire = wire_js();
        let mut used = 0;
        for kind in ["params", "routes"] {
            let prefix = format!("WIRE.{kind}.");
            for (at, _) in app.match_indices(&prefix) {
                let rest = &app[at + prefix.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                assert!(
                    wire.contains(&format!("\"{name}\": ")),
                    "app.js reads WIRE.{kind}.{name}"
                );
                used += 1;
            }
        }
        assert!(used > 0, "app.js reads the wire's names from WIRE");
    }

    #[test]
    fn the_script_spells_no_parameter_itself() {
        // A query is built from [name, value] pairs whose names come from
        // WIRE.params: no object of named keys, and no `name=` in a string.
        let app: String = include_str!("../assets/app.js")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        assert!(
            !app.contains("query({"),
            "app.js builds a query from named keys"
        );
        for param in crate::routes::GLOBAL_PARAMS
            .iter()
            .chain(crate::routes::params())
        {
            for spelled in ['?', '&', '"'].map(|c| format!("{c}{}=", param.name)) {
                assert!(!app.contains(&spelled), "app.js spells {spelled}");
            }
        }
    }

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
