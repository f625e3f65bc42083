//! GET /api: the machine-readable contract (SPEC.md "What the service
//! does"), built from the same constants and error table the code uses.

use serde_json::{json, Map, Value};
use store_app::AppConfig;
use store_core::{limits, ErrorCode};

/// The SPEC.md revision this service implements.
pub const SPEC_VERSION: &str = "1.54.1";
pub const SERVICE_NAME: &str = "storesrv";

/// One line of the contract's `endpoints` map.
#[derive(Debug, Clone, Copy)]
pub struct EndpointDoc {
    /// `METHOD path`, with the query parameters it takes.
    pub route: &'static str,
    pub does: &'static str,
    /// The `/help/<topic>` that explains it; `self` for the
    /// self-description endpoints.
    pub topic: &'static str,
}

/// What each endpoint does. Only what this build answers is listed.
pub const ENDPOINTS: &[EndpointDoc] = &[
    EndpointDoc { route: "POST /?name=<filename>[&ttl=<N>h|<N>d][&once=1][&tag=<t>][&share=<name>]", does: "upload raw bytes, or multipart/form-data with one file part; answers the single file record", topic: "files" },
    EndpointDoc { route: "POST /?url=<url>[&name=<name>][&link=1][&tag=<t>]", does: "import a public http(s) document (5 MB at most), or with link=1 store the URL as a redirect document", topic: "import" },
    EndpointDoc { route: "GET /<id>", does: "file bytes; ?download=1 forces download; images and text render inline; ETag, Last-Modified, If-None-Match/If-Modified-Since (304) and one Range (206) on every download", topic: "files" },
    EndpointDoc { route: "HEAD /<id>", does: "file headers; never burns a once=1 file", topic: "files" },
    EndpointDoc { route: "PUT /<id>", does: "replace a text file's content", topic: "files" },
    EndpointDoc { route: "PATCH /<id>", does: "append text to a text file", topic: "files" },
    EndpointDoc { route: "DELETE /<id>", does: "delete a file", topic: "files" },
    EndpointDoc { route: "POST /<id>?tag=<t>[&untag=<t>]", does: "add or remove tags; content and expiry untouched", topic: "browse" },
    EndpointDoc { route: "POST /<id>?retain=1", does: "retain indefinitely; needs the retain token", topic: "retention" },
    EndpointDoc { route: "GET /browse?tag=<t>[&q=<substr>][&sort=created|name|size|expires][&order=asc|desc]", does: "list live tagged files", topic: "browse" },
    EndpointDoc { route: "POST / (multipart, 2+ file parts)", does: "create an immutable bundle; answers the bundle record", topic: "bundles" },
    EndpointDoc { route: "GET /<id>/<filename>", does: "one file of a bundle", topic: "bundles" },
    EndpointDoc { route: "POST /?dir=1[&name=<name>][&listed=1][&tag=<t>][&ttl=<N>h|<N>d][&write=1|<token>][&show=1]", does: "create (or get, when named) a dir; optional multipart parts become its first files", topic: "dirs" },
    EndpointDoc { route: "POST /?name=<filename>&share=<name>", does: "upload into the named dir (create-or-get)", topic: "dirs" },
    EndpointDoc { route: "POST /d/<key>", does: "add files (multipart parts, or a raw body with name=)", topic: "dirs" },
    EndpointDoc { route: "POST /d/<key>?show=1", does: "make a show-dir; needs the retain token", topic: "show-dirs" },
    EndpointDoc { route: "POST /d/<key>?retain=1", does: "retain a dir; needs the retain token", topic: "retention" },
    EndpointDoc { route: "GET /d/<key>[?zip=1]", does: "the dir listing, or a zip of every file", topic: "dirs" },
    EndpointDoc { route: "GET /d/<key>/history", does: "the dir's history, newest first", topic: "dirs" },
    EndpointDoc { route: "GET /d/<key>/<file>", does: "one file of a dir", topic: "dirs" },
    EndpointDoc { route: "PUT /d/<key>/<file>", does: "replace (or create) a text file", topic: "dirs" },
    EndpointDoc { route: "PATCH /d/<key>/<file>", does: "append text to a text file", topic: "dirs" },
    EndpointDoc { route: "DELETE /d/<key>/<file>", does: "delete one file", topic: "dirs" },
    EndpointDoc { route: "DELETE /d/<key>", does: "delete the whole dir", topic: "dirs" },
    EndpointDoc { route: "GET /d[?q=<sub>][&created_after=<ts>][&created_before=<ts>][&updated_after=<ts>][&updated_before=<ts>][&sort=created|updated|name][&order=asc|desc]", does: "listed dirs", topic: "browse" },
    EndpointDoc { route: "POST /pics?create=1[&name=<name>][&listed=1]", does: "create a gallery; a dir-style name is its key (create-or-get); the token comes back once, in admin_url", topic: "galleries" },
    EndpointDoc { route: "GET /pics", does: "listed galleries", topic: "galleries" },
    EndpointDoc { route: "GET /pics/g/<gid>[?p=N][&embed=1][&stars=<pid1>,<pid2>]", does: "the gallery: a grid for browsers, JSON (images, selected, pool, limits, upload how-to) for agents", topic: "galleries" },
    EndpointDoc { route: "GET /pics/g/<gid>?likes=1", does: "like and comment counters", topic: "galleries" },
    EndpointDoc { route: "POST /pics/g/<gid>?name=<filename>", does: "upload an image (raw bytes, or multipart for several): JPEG, PNG, WebP, GIF or HEIC, 30 MB at most", topic: "galleries" },
    EndpointDoc { route: "POST /pics/g/<gid>?url=<image URL>", does: "import an image from a public host", topic: "galleries" },
    EndpointDoc { route: "POST /pics/g/<gid>?comment=1", does: "post a comment: form or JSON with name (optional, 40 chars) and text (500 chars)", topic: "galleries" },
    EndpointDoc { route: "POST /pics/g/<gid>?clike=<cid>", does: "toggle your like of a comment", topic: "galleries" },
    EndpointDoc { route: "GET /pics/i/<id>[?thumb=1|160|320|640]", does: "an image, or a WebP preview fitting that box", topic: "galleries" },
    EndpointDoc { route: "POST /pics/i/<id>?like=1", does: "toggle your like of an image", topic: "galleries" },
    EndpointDoc { route: "GET /pics/g/<gid>/<secret>[/json]", does: "the admin page (or JSON, hidden images included)", topic: "galleries" },
    EndpointDoc { route: "POST /pics/g/<gid>/<secret>", does: "admin action: form fields id and action (hide, unhide, delete, up, down, cdel)", topic: "galleries" },
    EndpointDoc { route: "GET /api", does: "this contract", topic: "self" },
    EndpointDoc { route: "GET /healthz", does: "200 {\"status\": \"ok\"} while the process serves", topic: "operations" },
    EndpointDoc { route: "GET /readyz", does: "200 {\"status\": \"ok\"} when the records and the bytes can be reached, 503 (code unavailable) otherwise; for load balancers, never rate limited", topic: "operations" },
    EndpointDoc { route: "GET /help", does: "topics with a one-line summary and URL each (JSON for agents, HTML for browsers)", topic: "self" },
    EndpointDoc { route: "GET /help/<topic>", does: "one topic: its endpoints and a text with this server's values; /help/errors is plain text", topic: "self" },
    EndpointDoc { route: "GET /write_for_agents", does: "copy-pasteable instructions for uploading, sharing, editing and retaining", topic: "self" },
    EndpointDoc { route: "GET /copy_for_agents", does: "copy-pasteable instructions for copying files, bundles, dirs and galleries out", topic: "self" },
    EndpointDoc { route: "GET /releases", does: "the changelog: markdown for agents, HTML for browsers", topic: "self" },
];

pub fn contract(config: &AppConfig) -> Value {
    let errors: Map<String, Value> = ErrorCode::ALL
        .iter()
        .map(|c| {
            (
                c.as_str().to_string(),
                serde_json::to_value(c.info()).expect("error info serialises"),
            )
        })
        .collect();
    let endpoints: Map<String, Value> = ENDPOINTS
        .iter()
        .map(|e| (e.route.to_string(), Value::from(e.does)))
        .collect();
    json!({
        "service": SERVICE_NAME,
        "version": SPEC_VERSION,
        "base_url": config.base_url,
        "ttl_seconds": limits::FILE_TTL_DEFAULT_SECS,
        "dir_ttl_seconds": {
            "min": limits::DIR_TTL_MIN_SECS,
            "default": limits::DIR_TTL_DEFAULT_SECS,
            "max": limits::DIR_TTL_MAX_SECS,
        },
        "max_file_bytes": config.limits.file_bytes_max,
        "pool_bytes": config.limits.pool_bytes,
        "rate_limit_per_min": config.limits.rate_limit_per_min,
        "retention_token": config.retain_tokens.is_enabled(),
        "errors": errors,
        "help": format!("{}/help", config.base_url),
        "endpoints": endpoints,
        "limits": config.limits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use store_core::{Limits, RetainTokens};

    #[test]
    fn contract_has_every_spec_field() {
        let config = AppConfig {
            base_url: "http://h".into(),
            limits: Limits::default(),
            retain_tokens: RetainTokens::from_csv(""),
            superadmin_token: None,
        };
        let c = contract(&config);
        assert_eq!(c["ttl_seconds"], 14_400);
        assert_eq!(c["dir_ttl_seconds"]["min"], 14_400);
        assert_eq!(c["dir_ttl_seconds"]["default"], 604_800);
        assert_eq!(c["dir_ttl_seconds"]["max"], 1_209_600);
        assert_eq!(c["max_file_bytes"], 5_242_880);
        assert_eq!(c["pool_bytes"], 104_857_600);
        assert_eq!(c["rate_limit_per_min"], 100);
        assert_eq!(c["retention_token"], false);
        assert_eq!(c["errors"]["pool_full"]["http"], 507);
        // SPEC.md's nine, and the six a server adds (414, 416, 431, 500,
        // 503, and 507 for a full disk).
        assert_eq!(c["errors"].as_object().unwrap().len(), 15);
        assert_eq!(c["errors"]["unavailable"]["http"], 503);
        assert_eq!(c["limits"]["history_limit"], 200);
        for field in ["service", "version", "base_url", "endpoints"] {
            assert!(c.get(field).is_some(), "{field}");
        }
    }
}
