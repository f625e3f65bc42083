//! What a tool call's HTTP answer becomes for the MCP client: the same
//! JSON record as `structuredContent` and as text, the bytes of a read as
//! text or base64, and a refusal as a tool error (`isError: true`) whose
//! text starts with the HTTP status and the error code, never as a
//! protocol error: the agent reads it and can act on it.

use base64::Engine as _;
use serde_json::{json, Value};

/// The parts of an HTTP answer a tool result is made from.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    /// Its status.
    pub status: u16,
    /// Its `Content-Type`.
    pub content_type: Option<&'a str>,
    /// Its `Location`, on a redirect.
    pub location: Option<&'a str>,
    /// Its body.
    pub body: &'a [u8],
}

/// The `tools/call` result for an answer: `reads_bytes` when the route
/// answers stored bytes rather than a record.
pub fn tool_result(reply: &Reply<'_>, reads_bytes: bool) -> Value {
    if reply.status >= 400 {
        return refusal(reply);
    }
    if (300..400).contains(&reply.status) {
        let to = reply.location.unwrap_or("");
        return json!({
            "content": [{ "type": "text", "text": format!("a link: it redirects to {to}") }],
            "structuredContent": { "status": reply.status, "location": to },
            "isError": false,
        });
    }
    if reads_bytes {
        return bytes(reply);
    }
    match serde_json::from_slice::<Value>(reply.body) {
        Ok(record @ Value::Object(_)) => json!({
            "content": [{ "type": "text", "text": record.to_string() }],
            "structuredContent": record,
            "isError": false,
        }),
        // A listing: MCP's structured content is an object.
        Ok(list @ Value::Array(_)) => json!({
            "content": [{ "type": "text", "text": list.to_string() }],
            "structuredContent": { "items": list },
            "isError": false,
        }),
        _ => json!({
            "content": [{ "type": "text", "text": String::from_utf8_lossy(reply.body) }],
            "isError": false,
        }),
    }
}

/// A refusal: `HTTP <status> <code>: <message>`, and the error body as
/// the HTTP API answers it.
fn refusal(reply: &Reply<'_>) -> Value {
    let body: Value = serde_json::from_slice(reply.body).unwrap_or(Value::Null);
    let code = body["code"].as_str().unwrap_or("error").to_string();
    let message = body["error"].as_str().map_or_else(
        || String::from_utf8_lossy(reply.body).into_owned(),
        str::to_string,
    );
    let mut structured = match body {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    structured.insert("status".into(), json!(reply.status));
    json!({
        "content": [{ "type": "text", "text": format!("HTTP {} {code}: {message}", reply.status) }],
        "structuredContent": structured,
        "isError": true,
    })
}

/// Stored bytes: text (by the service's text rule: UTF-8 without NUL, of
/// a text type) as text, anything else as base64 (an image as an image
/// block, which a model can look at).
fn bytes(reply: &Reply<'_>) -> Value {
    let content_type = reply.content_type.unwrap_or("application/octet-stream");
    let mime = content_type.split(';').next().unwrap_or("").trim();
    let size = reply.body.len();
    let text = store_core::content::is_text_file(store_core::content::is_text(reply.body), mime)
        .then(|| std::str::from_utf8(reply.body).ok())
        .flatten();
    if let Some(text) = text {
        return json!({
            "content": [{ "type": "text", "text": text }],
            "structuredContent": { "content_type": content_type, "size": size, "text": text },
            "isError": false,
        });
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(reply.body);
    let block = if mime.starts_with("image/") {
        json!({ "type": "image", "data": b64, "mimeType": mime })
    } else {
        json!({ "type": "text", "text": format!("{size} bytes of {mime}, in base64 in structuredContent.content_base64") })
    };
    json!({
        "content": [block],
        "structuredContent": { "content_type": content_type, "size": size, "content_base64": b64 },
        "isError": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, content_type: &'static str, body: &'static [u8]) -> Reply<'static> {
        Reply {
            status,
            content_type: Some(content_type),
            location: None,
            body,
        }
    }

    #[test]
    fn a_refusal_is_a_tool_error_with_status_and_code() {
        let body = br#"{"error":"not found: gone","code":"not_found"}"#;
        let r = tool_result(&reply(404, "application/json", body), false);
        assert_eq!(r["isError"], true);
        assert_eq!(
            r["content"][0]["text"],
            "HTTP 404 not_found: not found: gone"
        );
        assert_eq!(r["structuredContent"]["code"], "not_found");
        assert_eq!(r["structuredContent"]["status"], 404);
    }

    #[test]
    fn a_record_is_structured_and_text() {
        let r = tool_result(&reply(201, "application/json", br#"{"id":"abc"}"#), false);
        assert_eq!(r["isError"], false);
        assert_eq!(r["structuredContent"]["id"], "abc");
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["id"], "abc");
    }

    #[test]
    fn bytes_are_text_or_base64() {
        let r = tool_result(&reply(200, "text/plain; charset=utf-8", b"hello"), true);
        assert_eq!(r["content"][0]["text"], "hello");
        assert_eq!(r["structuredContent"]["text"], "hello");
        let r = tool_result(&reply(200, "application/octet-stream", &[0xff, 0, 1]), true);
        assert_eq!(r["structuredContent"]["content_base64"], "/wAB");
        // UTF-8, but not text: not of a text type.
        let r = tool_result(&reply(200, "application/octet-stream", b"\x01\x02"), true);
        assert_eq!(r["structuredContent"]["content_base64"], "AQI=");
        let r = tool_result(&reply(200, "application/json", b"[]"), false);
        assert_eq!(r["structuredContent"]["items"], json!([]));
        assert_eq!(r["content"][0]["type"], "text");
        let r = tool_result(&reply(200, "image/png", &[0x89, 0x50, 0xff]), true);
        assert_eq!(r["content"][0]["type"], "image");
        assert_eq!(r["content"][0]["mimeType"], "image/png");
    }
}
