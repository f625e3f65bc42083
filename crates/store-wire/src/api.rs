//! GET /api: the machine-readable contract (SPEC.md "What the service
//! does"), built from the route table and the same constants and error
//! table the code uses.

use serde_json::{json, Map, Value};
use store_app::AppConfig;
use store_core::ErrorCode;

use crate::router::{url_for, RouteId};
use crate::routes::ROUTES;

/// The SPEC.md revision this service implements.
pub const SPEC_VERSION: &str = "1.54.1";
/// The service's name, as `/api` and `/help` answer it.
pub const SERVICE_NAME: &str = "storesrv";
/// The header a dir's write token travels in.
pub const WRITE_HEADER: &str = "x-store-write";
/// The header an owner token travels in, both ways: the upload's answer
/// carries it, and a request presents it.
pub const OWNER_HEADER: &str = "x-store-owner";
/// The header a password travels in at upload, and to the owner's
/// change of it (reading uses HTTP Basic).
pub const PASSWORD_HEADER: &str = "x-store-password";

/// The JSON of `GET /api`: what this service is, its limits, error codes
/// and routes, as SPEC.md describes it, for the configuration `config`.
pub fn contract(config: &AppConfig) -> Value {
    let errors: Map<String, Value> = ErrorCode::ALL
        .iter()
        .map(|c| {
            (
                c.as_str().to_string(),
                serde_json::to_value(c.info(&config.limits)).expect("error info serialises"),
            )
        })
        .collect();
    let endpoints: Map<String, Value> = ROUTES
        .iter()
        .map(|r| (r.usage(), Value::from(r.describe(&config.limits))))
        .collect();
    json!({
        "service": SERVICE_NAME,
        "version": SPEC_VERSION,
        "base_url": config.base_url,
        "ttl_seconds": config.limits.file_ttl_default_secs,
        "dir_ttl_seconds": {
            "min": config.limits.dir_ttl_min_secs,
            "default": config.limits.dir_ttl_default_secs,
            "max": config.limits.dir_ttl_max_secs,
        },
        "max_file_bytes": config.limits.file_bytes_max,
        "pool_bytes": config.limits.pool_bytes,
        "rate_limit_per_min": config.limits.rate_limit_per_min,
        "retention_token": config.retain_tokens.is_enabled(),
        "upload_token": config.upload_token.is_required(),
        "gallery_uploads": config.gallery_uploads.as_str(),
        "errors": errors,
        "headers": headers(),
        "help": url_for(&config.base_url, RouteId::Help, &[]),
        "openapi": url_for(&config.base_url, RouteId::Openapi, &[]),
        "endpoints": endpoints,
        "limits": config.limits,
    })
}

/// The headers the service reads as credentials, and the one it answers
/// a creation's owner token in, by the names the handlers use.
fn headers() -> Value {
    json!({
        "Authorization": "Bearer <token>: a retain token (retain, write retained or protected objects, create show-dirs) or the upload token (create anything, when the operator set one)",
        WRITE_HEADER: "a dir's write token (or write=<token>)",
        OWNER_HEADER: "request: the owner token of the object written (or owner=<token>), which also reads a password-protected object; response to a creation: the new object's owner token, shown once",
        PASSWORD_HEADER: "at upload (POST /, POST /?dir=1): the password reading the new file, bundle or dir will need (4 to 256 characters; also the form field password, or tus metadata password); with POST /<id>?password=1 and the owner token: the new password, empty to remove it",
        "Authorization: Basic": "reading a password-protected object: any user name and its password (curl -u :<password> URL)",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_has_every_spec_field() {
        let config = AppConfig::new("http://h");
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
        // SPEC.md's nine, the six a server adds (414, 416, 431, 500, 503,
        // and 507 for a full disk), the four of resumable uploads (409,
        // 412, 415, 460), the MCP endpoint's 405 and moderation's 451 and
        // 422.
        assert_eq!(c["errors"].as_object().unwrap().len(), 22);
        assert_eq!(c["errors"]["infected"]["http"], 422);
        assert_eq!(c["errors"]["blocked"]["http"], 451);
        assert_eq!(c["errors"]["unavailable"]["http"], 503);
        assert_eq!(c["limits"]["history_limit"], 200);
        assert!(c["headers"]["x-store-owner"].is_string());
        assert!(c["headers"]["x-store-write"].is_string());
        for field in ["service", "version", "base_url", "endpoints"] {
            assert!(c.get(field).is_some(), "{field}");
        }
    }
}
