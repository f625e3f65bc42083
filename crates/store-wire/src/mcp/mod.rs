//! `POST /mcp`: the Model Context Protocol's side of the wire, pure. The
//! JSON-RPC messages read and written (this module), the tools derived
//! from the route table and the calls they become (`tools.rs`), and what a
//! call's HTTP answer becomes for the client (`answer.rs`).
//!
//! The transport is MCP's Streamable HTTP, stateless: every message is one
//! POST, answered with one JSON body (or 202 for a notification), no
//! session id is issued and none is needed, so any process of a cluster
//! answers any request. The server offers tools only, and never calls the
//! client, so it needs no event stream: `GET /mcp` answers 405.

pub mod answer;
pub mod guide;
pub mod tools;

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};
use store_core::{Limits, StoreError};

/// The protocol revisions this server speaks, newest first. Their
/// differences are in features it does not use (sampling, elicitation,
/// tasks); the tool calls are the same in each. Not 2025-03-26, whose
/// servers must take batches of messages, which this one refuses.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18"];

/// The header a client names the negotiated revision in, on every request
/// after `initialize`. A name made once, not parsed from text at each
/// lookup.
pub const VERSION_HEADER: http::HeaderName = http::HeaderName::from_static("mcp-protocol-version");

/// JSON-RPC's code for a body that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a method the server does not have.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's code for parameters the method cannot take (an unknown tool).
pub const INVALID_PARAMS: i64 = -32602;

/// What one POST carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: it gets an answer with its id.
    Request {
        /// The id to answer with.
        id: Value,
        /// `initialize`, `tools/list`, `tools/call`, `ping`...
        method: String,
        /// Its parameters (an empty object when it sent none).
        params: Value,
    },
    /// A notification, or a client's answer to a request of the server:
    /// accepted (202) with nothing to say.
    Notice,
}

/// A message that is no JSON-RPC request: the error to answer (with HTTP
/// 400), its id null.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed(pub Value);

/// Reads one POST's body. An object is read into a typed envelope, its
/// keys never copied (every tool call pays for this read); anything else,
/// or an object that does not fit it (a repeated key), is read again as
/// a [`Value`] to say what is wrong with it.
pub fn read(body: &[u8]) -> Result<Incoming, Malformed> {
    let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    match serde_json::from_slice::<Envelope<'_>>(body) {
        Ok(envelope) if object => envelope.incoming(),
        _ => read_value(body),
    }
}

/// The members of a JSON-RPC message this server reads. A member that is
/// present but null is `Some(Value::Null)`: only an absent one is `None`.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    error: Option<IgnoredAny>,
}

/// A member that is there, whatever its value (null included).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

impl Envelope<'_> {
    fn incoming(self) -> Result<Incoming, Malformed> {
        let invalid = |why: &str| Malformed(error(Value::Null, INVALID_REQUEST, why));
        if self.jsonrpc.as_deref() != Some("2.0") {
            return Err(invalid("a message carries \"jsonrpc\": \"2.0\""));
        }
        let Some(method) = self.method else {
            // A client's result or error, answering nothing this server asked.
            return if self.result.is_some() || self.error.is_some() {
                Ok(Incoming::Notice)
            } else {
                Err(invalid("a message has a method, or a result or an error"))
            };
        };
        let Value::String(method) = method else {
            return Err(invalid("method is a string"));
        };
        let Some(id) = self.id else {
            return Ok(Incoming::Notice);
        };
        request(id, method, self.params)
    }
}

/// A request, once its id and parameters are checked.
fn request(id: Value, method: String, params: Option<Value>) -> Result<Incoming, Malformed> {
    let invalid = |why: &str| Malformed(error(Value::Null, INVALID_REQUEST, why));
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        return Err(invalid("id is a string or an integer"));
    }
    let params = params.unwrap_or_else(|| json!({}));
    if !params.is_object() {
        return Err(invalid("params is an object"));
    }
    Ok(Incoming::Request { id, method, params })
}

/// Reads one POST's body as any JSON, to refuse what is not one
/// JSON-RPC message, or to read one whose object repeats a key (the last
/// one counts) into the same envelope.
fn read_value(body: &[u8]) -> Result<Incoming, Malformed> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Malformed(error(Value::Null, PARSE_ERROR, &format!("not JSON: {e}"))))?;
    let Value::Object(mut msg) = value else {
        return Err(Malformed(error(
            Value::Null,
            INVALID_REQUEST,
            "a message is one JSON-RPC object (batches are not taken)",
        )));
    };
    // Taken, not copied: a tool call's arguments may carry a whole file.
    Envelope {
        jsonrpc: msg
            .get("jsonrpc")
            .and_then(Value::as_str)
            .map(|v| Cow::Owned(v.to_string())),
        method: msg.remove("method"),
        id: msg.remove("id"),
        params: msg.remove("params"),
        result: msg.contains_key("result").then_some(IgnoredAny),
        error: msg.contains_key("error").then_some(IgnoredAny),
    }
    .incoming()
}

/// Whether a request's `MCP-Protocol-Version` header names a revision this
/// server speaks. None given is the transport's oldest, which it does.
pub fn version_header_ok(value: Option<&str>) -> bool {
    value.is_none_or(|v| PROTOCOL_VERSIONS.contains(&v.trim()))
}

/// The largest body `POST /mcp` reads: the bytes a call may send (one
/// file at the file limit, or a bundle's files, [`FILES_BYTES_MIN`] at
/// least) in base64, and room for the JSON around them. Fixed, not the
/// pool's size: the whole message is held in memory, parsed.
pub fn body_bytes_max(limits: &Limits) -> u64 {
    let files = limits.file_bytes_max.max(FILES_BYTES_MIN);
    files.div_ceil(3) * 4 + MESSAGE_BYTES_MAX
}

/// What a call may send at least, whatever the file limit: a bundle of a
/// few files of the default limit.
pub const FILES_BYTES_MIN: u64 = 16 * 1024 * 1024;

/// Room in a message for what is not a file's bytes: the JSON-RPC
/// envelope and the other arguments.
const MESSAGE_BYTES_MAX: u64 = 1024 * 1024;

/// The largest answer of a route a tool carries back: every single file
/// fits, and so does any record or listing.
pub fn answer_bytes_max(limits: &Limits) -> u64 {
    limits.file_bytes_max.max(RECORD_BYTES_MAX)
}

/// Room for the largest JSON record or listing a route answers.
const RECORD_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// Whether a request's `Origin` may use the endpoint. A page of another
/// site must not drive it through a visitor's browser (MCP's rule against
/// DNS rebinding): an `Origin` is allowed only when it is the base URL's
/// own. A request without one (any agent that is no browser) is allowed.
pub fn origin_allowed(origin: Option<&str>, base_url: &str) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    let own = match base_url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split('/').next().unwrap_or("");
            format!("{scheme}://{host}")
        }
        None => return false,
    };
    origin.trim().eq_ignore_ascii_case(&own)
}

/// The transport's header rules: no other site's page (its `Origin`, see
/// [`origin_allowed`]), and a protocol revision this server speaks (400
/// otherwise, the service's error body naming them).
pub fn check_headers(headers: &http::HeaderMap, base_url: &str) -> Result<(), StoreError> {
    let origin = headers
        .get(http::header::ORIGIN)
        .and_then(|v| v.to_str().ok());
    if !origin_allowed(origin, base_url) {
        return Err(StoreError::forbidden(
            "the MCP endpoint takes no request from another site's page",
        ));
    }
    let version = headers
        .get(VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or("?"));
    if !version_header_ok(version) {
        return Err(StoreError::bad_request(format!(
            "MCP-Protocol-Version {} is not spoken here; this server speaks {}",
            version.unwrap_or_default(),
            PROTOCOL_VERSIONS.join(", ")
        )));
    }
    Ok(())
}

/// The refusal of `GET` and `DELETE /mcp` (405, with `Allow: POST`).
pub fn method_refused(method: &http::Method) -> StoreError {
    StoreError::MethodNotAllowed(format!(
        "{method} /mcp is not offered: send each message with POST (no event stream, no session)"
    ))
}

/// The answer to a request of any method but `tools/call`, which runs a
/// route and is answered by the server: `None` for that one.
pub fn answer_method(id: Value, method: &str, params: &Value, limits: &Limits) -> Option<Value> {
    Some(match method {
        "initialize" => result(id, initialize(params, crate::SPEC_VERSION, limits)),
        "ping" => result(id, json!({})),
        "tools/list" => result(id, tools::list(limits)),
        "tools/call" => return None,
        other => {
            let message = format!("no method {other:?}: this server offers tools only");
            error(id, METHOD_NOT_FOUND, &message)
        }
    })
}

/// The answer to a request: its result.
pub fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// The answer to a request whose result is already JSON (a tool call's,
/// written from its route's answer): the envelope around it, written
/// without parsing it again.
pub fn result_json(id: &Value, result: &[u8]) -> Vec<u8> {
    let id = serde_json::to_vec(id).expect("an id serialises");
    let mut out = Vec::with_capacity(result.len() + id.len() + 40);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(&id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

/// The answer to a request that failed as a protocol error.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// The `initialize` result: the revision the client asked for when this
/// server speaks it, else the newest it does (the client then decides);
/// the tools capability; the server's name and version; and a few lines an
/// agent reads first.
pub fn initialize(params: &Value, version: &str, limits: &Limits) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let chosen = asked
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": chosen,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": crate::api::SERVICE_NAME, "title": "storesrv file store", "version": version },
        "instructions": instructions(limits),
    })
}

/// What an agent should know before its first call.
fn instructions(l: &Limits) -> String {
    format!(
        "An ephemeral file store: upload_file stores text or base64 bytes ({} at most) and answers a URL anyone can read; \
         files expire on their own ({} unless ttl says otherwise) unless retained. \
         Keep the owner_token an upload answers: delete_file and set_lifetime need it. \
         Dirs (create_dir, add_to_dir, list_dir) keep files together; create_bundle makes one immutable object of several files. \
         A refused call is a tool error whose text starts with the HTTP status and error code.",
        store_core::limits::binary_size(l.file_bytes_max),
        store_core::limits::duration(l.file_ttl_default_secs),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_requests_notifications_and_refuses_the_rest() {
        let req = read(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#).unwrap();
        assert_eq!(
            req,
            Incoming::Request {
                id: json!(7),
                method: "tools/list".into(),
                params: json!({})
            }
        );
        // A repeated member: the last one counts, as a map would have it.
        let twice = br#" {"jsonrpc":"2.0","id":1,"id":2,"method":"ping","params":{"a":"\u00e9"}}"#;
        let Incoming::Request { id, params, .. } = read(twice).unwrap() else {
            panic!("a request with a repeated id was not read");
        };
        assert_eq!((id, params), (json!(2), json!({ "a": "é" })));
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":1,"error":null}"#).unwrap(),
            Incoming::Notice
        );
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(read(note).unwrap(), Incoming::Notice);
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            Incoming::Notice
        );
        for (body, code) in [
            (&b"{"[..], PARSE_ERROR),
            (b"[]", INVALID_REQUEST),
            (br#"{"id":1,"method":"ping"}"#, INVALID_REQUEST),
            (br#"{"jsonrpc":"2.0","id":1}"#, INVALID_REQUEST),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":7}"#, INVALID_REQUEST),
            (
                br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping"}x"#, PARSE_ERROR),
        ] {
            let Err(Malformed(e)) = read(body) else {
                panic!("{} was read", String::from_utf8_lossy(body));
            };
            assert_eq!(
                e["error"]["code"],
                code,
                "{}",
                String::from_utf8_lossy(body)
            );
            assert_eq!(e["id"], Value::Null);
        }
    }

    #[test]
    fn initialize_answers_the_asked_revision_when_it_is_spoken() {
        let limits = Limits::default();
        let asked = json!({ "protocolVersion": "2025-06-18" });
        let old = json!({ "protocolVersion": "2025-03-26" });
        assert_eq!(
            initialize(&old, "9.9", &limits)["protocolVersion"],
            PROTOCOL_VERSIONS[0]
        );
        let r = initialize(&asked, "9.9", &limits);
        assert_eq!(r["protocolVersion"], "2025-06-18");
        assert_eq!(r["serverInfo"]["name"], "storesrv");
        assert_eq!(r["serverInfo"]["version"], "9.9");
        assert!(r["capabilities"]["tools"].is_object());
        let future = json!({ "protocolVersion": "2099-01-01" });
        assert_eq!(
            initialize(&future, "9.9", &limits)["protocolVersion"],
            PROTOCOL_VERSIONS[0]
        );
        assert!(origin_allowed(None, "http://h:1"));
        assert!(origin_allowed(Some("HTTP://h:1"), "http://h:1/files"));
        assert!(!origin_allowed(Some("http://evil:1"), "http://h:1"));
        assert!(!origin_allowed(Some("null"), "http://h:1"));
        let limits = Limits::default();
        assert!(body_bytes_max(&limits) > FILES_BYTES_MIN / 3 * 4);
        assert!(body_bytes_max(&limits) < limits.pool_bytes);
        let written = result_json(&json!("a"), br#"{"x":[1]}"#);
        let read: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(read, result(json!("a"), json!({ "x": [1] })));
        assert!(version_header_ok(None));
        assert!(version_header_ok(Some("2025-06-18")));
        assert!(!version_header_ok(Some("2024-11-05x")));
    }

    #[test]
    fn headers_are_held_to_the_sites_origin_and_spoken_revisions() {
        let base = "http://127.0.0.1:8080/store";
        let mut h = http::HeaderMap::new();
        assert!(check_headers(&h, base).is_ok());
        h.insert(
            http::header::ORIGIN,
            "http://127.0.0.1:8080".parse().unwrap(),
        );
        h.insert(VERSION_HEADER, PROTOCOL_VERSIONS[1].parse().unwrap());
        assert!(check_headers(&h, base).is_ok());
        h.insert(VERSION_HEADER, "1999-01-01".parse().unwrap());
        let e = check_headers(&h, base).unwrap_err();
        assert_eq!(e.code().http_status(), 400);
        assert!(e.to_string().contains(PROTOCOL_VERSIONS[0]));
        h.remove(VERSION_HEADER);
        h.insert(http::header::ORIGIN, "http://evil.example".parse().unwrap());
        assert_eq!(
            check_headers(&h, base).unwrap_err().code().http_status(),
            403
        );
    }

    #[test]
    fn every_method_but_a_tool_call_is_answered_here() {
        let limits = Limits::default();
        let ping = answer_method(json!(1), "ping", &json!({}), &limits).unwrap();
        assert_eq!(ping, json!({ "jsonrpc": "2.0", "id": 1, "result": {} }));
        let list = answer_method(json!(2), "tools/list", &json!({}), &limits).unwrap();
        assert!(list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()));
        assert!(answer_method(json!(3), "tools/call", &json!({}), &limits).is_none());
        let other = answer_method(json!(4), "resources/list", &json!({}), &limits).unwrap();
        assert_eq!(other["error"]["code"], METHOD_NOT_FOUND);
        assert_eq!(method_refused(&http::Method::GET).code().http_status(), 405);
    }
}
