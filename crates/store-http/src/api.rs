//! GET /api: the machine-readable contract (SPEC.md "What the service
//! does"), built from the same constants and error table the code uses.

use serde_json::{json, Map, Value};
use store_app::AppConfig;
use store_core::{limits, ErrorCode};

/// The SPEC.md revision this service implements.
pub const SPEC_VERSION: &str = "1.54.1";
pub const SERVICE_NAME: &str = "storesrv";

/// What each endpoint does, as `"METHOD path": description`. Only what
/// this build answers is listed.
pub const ENDPOINTS: &[(&str, &str)] = &[
    ("POST /?name=<filename>[&ttl=<N>h|<N>d][&once=1][&tag=<t>][&share=<name>]", "upload raw bytes, or multipart/form-data with one file part; answers the single file record"),
    ("POST /?url=<url>[&name=<name>][&link=1][&tag=<t>]", "import a public http(s) document (5 MB at most), or with link=1 store the URL as a redirect document"),
    ("GET /<id>", "file bytes; ?download=1 forces download; images and text render inline"),
    ("HEAD /<id>", "file headers; never burns a once=1 file"),
    ("PUT /<id>", "replace a text file's content"),
    ("PATCH /<id>", "append text to a text file"),
    ("DELETE /<id>", "delete a file"),
    ("POST /<id>?tag=<t>[&untag=<t>]", "add or remove tags; content and expiry untouched"),
    ("POST /<id>?retain=1", "retain indefinitely; needs the retain token"),
    ("GET /browse?tag=<t>[&q=<substr>][&sort=created|name|size|expires][&order=asc|desc]", "list live tagged files"),
    ("POST / (multipart, 2+ file parts)", "create an immutable bundle; answers the bundle record"),
    ("GET /<id>/<filename>", "one file of a bundle"),
    ("POST /?dir=1[&name=<name>][&listed=1][&tag=<t>][&ttl=<N>h|<N>d][&write=1|<token>][&show=1]", "create (or get, when named) a dir; optional multipart parts become its first files"),
    ("POST /?name=<filename>&share=<name>", "upload into the named dir (create-or-get)"),
    ("POST /d/<key>", "add files (multipart parts, or a raw body with name=)"),
    ("POST /d/<key>?show=1", "make a show-dir; needs the retain token"),
    ("POST /d/<key>?retain=1", "retain a dir; needs the retain token"),
    ("GET /d/<key>[?zip=1]", "the dir listing, or a zip of every file"),
    ("GET /d/<key>/history", "the dir's history, newest first"),
    ("GET /d/<key>/<file>", "one file of a dir"),
    ("PUT /d/<key>/<file>", "replace (or create) a text file"),
    ("PATCH /d/<key>/<file>", "append text to a text file"),
    ("DELETE /d/<key>/<file>", "delete one file"),
    ("DELETE /d/<key>", "delete the whole dir"),
    ("GET /d[?q=<sub>][&created_after=<ts>][&created_before=<ts>][&updated_after=<ts>][&updated_before=<ts>][&sort=created|updated|name][&order=asc|desc]", "listed dirs"),
    ("POST /pics?create=1[&name=<name>][&listed=1]", "create a gallery; a dir-style name is its key (create-or-get); the token comes back once, in admin_url"),
    ("GET /pics", "listed galleries"),
    ("GET /pics/g/<gid>[?p=N][&embed=1][&stars=<pid1>,<pid2>]", "the gallery: a grid for browsers, JSON (images, selected, pool, limits, upload how-to) for agents"),
    ("GET /pics/g/<gid>?likes=1", "like and comment counters"),
    ("POST /pics/g/<gid>?name=<filename>", "upload an image (raw bytes, or multipart for several): JPEG, PNG, WebP, GIF or HEIC, 30 MB at most"),
    ("POST /pics/g/<gid>?url=<image URL>", "import an image from a public host"),
    ("POST /pics/g/<gid>?comment=1", "post a comment: form or JSON with name (optional, 40 chars) and text (500 chars)"),
    ("POST /pics/g/<gid>?clike=<cid>", "toggle your like of a comment"),
    ("GET /pics/i/<id>[?thumb=1|160|320|640]", "an image, or a WebP preview fitting that box"),
    ("POST /pics/i/<id>?like=1", "toggle your like of an image"),
    ("GET /pics/g/<gid>/<secret>[/json]", "the admin page (or JSON, hidden images included)"),
    ("POST /pics/g/<gid>/<secret>", "admin action: form fields id and action (hide, unhide, delete, up, down, cdel)"),
    ("GET /api", "this contract"),
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
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
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
        assert_eq!(c["errors"].as_object().unwrap().len(), 9);
        assert_eq!(c["limits"]["history_limit"], 200);
        for field in ["service", "version", "base_url", "endpoints"] {
            assert!(c.get(field).is_some(), "{field}");
        }
    }
}
