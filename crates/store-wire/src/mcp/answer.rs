//! What a tool call's HTTP answer becomes for the MCP client: the same
//! JSON record as `structuredContent` and as text, the bytes of a read as
//! text or base64, and a refusal as a tool error (`isError: true`) whose
//! text starts with the HTTP status and the error code, never as a
//! protocol error: the agent reads it and can act on it.
//!
//! A result is written straight from the answer's bytes: a record's JSON
//! goes in as it came (`RawValue`), never parsed into a map and written
//! again, since every tool call pays for this.

use std::borrow::Cow;

use base64::Engine as _;
use serde::Serialize;
use serde_json::value::RawValue;
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

/// A `tools/call` result.
#[derive(Debug, Serialize)]
pub struct ToolResult<'a> {
    content: [Block<'a>; 1],
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured: Option<Structured<'a>>,
    #[serde(rename = "isError")]
    is_error: bool,
}

/// One content block.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Block<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
    },
}

/// `structuredContent`: a record as it came, or a value made here.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Structured<'a> {
    Raw(&'a RawValue),
    Made(Value),
}

impl ToolResult<'_> {
    /// Whether the call was refused.
    pub fn is_error(&self) -> bool {
        self.is_error
    }
}

fn text<'a>(text: impl Into<Cow<'a, str>>) -> Block<'a> {
    Block::Text { text: text.into() }
}

/// The `tools/call` result for an answer: `reads_bytes` when the route
/// answers stored bytes rather than a record.
pub fn tool_result<'a>(reply: &Reply<'a>, reads_bytes: bool) -> ToolResult<'a> {
    if reply.status >= 400 {
        return refusal(reply);
    }
    let done = |block, structured| ToolResult {
        content: [block],
        structured,
        is_error: false,
    };
    if (300..400).contains(&reply.status) {
        let to = reply.location.unwrap_or("");
        let about = json!({ "status": reply.status, "location": to });
        return done(
            text(format!("a link: it redirects to {to}")),
            Some(Structured::Made(about)),
        );
    }
    if reads_bytes {
        return bytes(reply);
    }
    let body = String::from_utf8_lossy(reply.body);
    let raw: Option<&RawValue> = match &body {
        Cow::Borrowed(s) => serde_json::from_str(s).ok(),
        Cow::Owned(_) => None,
    };
    let structured = match raw {
        // MCP's structured content is an object; a listing is wrapped.
        Some(r) if r.get().trim_start().starts_with('{') => Some(Structured::Raw(r)),
        Some(r) => Some(Structured::Made(json!({ "items": r }))),
        None => None,
    };
    done(text(body), structured)
}

/// A refusal: `HTTP <status> <code>: <message>`, and the error body as
/// the HTTP API answers it.
fn refusal<'a>(reply: &Reply<'a>) -> ToolResult<'a> {
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
    ToolResult {
        content: [text(format!("HTTP {} {code}: {message}", reply.status))],
        structured: Some(Structured::Made(Value::Object(structured))),
        is_error: true,
    }
}

/// Stored bytes, carried once: text (by the service's text rule: UTF-8
/// without NUL, of a text type) as a text block, an image as an image
/// block a model can look at, anything else in base64 in
/// `structuredContent.content_base64`. `structuredContent` always says the
/// type and the size.
fn bytes<'a>(reply: &Reply<'a>) -> ToolResult<'a> {
    let content_type = reply.content_type.unwrap_or("application/octet-stream");
    let mime = content_type.split(';').next().unwrap_or("").trim();
    let size = reply.body.len();
    let mut about = json!({ "content_type": content_type, "size": size });
    let is_text = store_core::content::is_text_file(store_core::content::is_text(reply.body), mime);
    let block = match std::str::from_utf8(reply.body) {
        Ok(t) if is_text => text(t),
        _ => {
            let b64 = base64::engine::general_purpose::STANDARD.encode(reply.body);
            if mime.starts_with("image/") {
                Block::Image {
                    data: b64,
                    mime_type: mime,
                }
            } else {
                about["content_base64"] = json!(b64);
                text(format!(
                    "{size} bytes of {mime}, in base64 in structuredContent.content_base64"
                ))
            }
        }
    };
    ToolResult {
        content: [block],
        structured: Some(Structured::Made(about)),
        is_error: false,
    }
}

/// A tool result, written into room for `answer_bytes` of an answer's
/// body and what goes around it (base64 makes three bytes four), so that
/// a read is written without growing its buffer again and again.
pub fn to_json(result: &ToolResult<'_>, answer_bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(answer_bytes / 3 * 4 + RESULT_FRAME_BYTES);
    serde_json::to_writer(&mut out, result).expect("a tool result serialises");
    out
}

/// Room for what a tool result writes beside the answer's body.
const RESULT_FRAME_BYTES: usize = 256;

/// A refusal made before the route ran, as the route's would read: the
/// tool result, written, and the status the route would have answered.
pub fn refused(e: &store_core::StoreError) -> (Vec<u8>, u16) {
    let body = crate::headers::error_body(e);
    let status = e.code().http_status();
    let reply = Reply {
        status,
        content_type: Some("application/json"),
        location: None,
        body: &body,
    };
    (to_json(&tool_result(&reply, false), body.len()), status)
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

    fn result(r: &Reply<'_>, reads_bytes: bool) -> Value {
        serde_json::to_value(tool_result(r, reads_bytes)).unwrap()
    }

    #[test]
    fn a_refusal_is_a_tool_error_with_status_and_code() {
        let body = br#"{"error":"not found: gone","code":"not_found"}"#;
        let r = result(&reply(404, "application/json", body), false);
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
        let r = result(
            &reply(201, "application/json", b"{\n  \"id\": \"abc\"\n}"),
            false,
        );
        assert_eq!(r["isError"], false);
        assert_eq!(r["structuredContent"]["id"], "abc");
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["id"], "abc");
        let r = result(&reply(200, "application/json", b"[]"), false);
        assert_eq!(r["structuredContent"]["items"], json!([]));
    }

    #[test]
    fn bytes_are_text_or_base64() {
        let r = result(&reply(200, "text/plain; charset=utf-8", b"hello"), true);
        assert_eq!(r["content"][0]["text"], "hello");
        assert_eq!(r["structuredContent"]["size"], 5);
        assert!(r["structuredContent"].get("content_base64").is_none());
        let r = result(&reply(200, "application/octet-stream", &[0xff, 0, 1]), true);
        assert_eq!(r["structuredContent"]["content_base64"], "/wAB");
        assert_eq!(r["content"][0]["type"], "text");
        // UTF-8, but not text: not of a text type.
        let r = result(&reply(200, "application/octet-stream", b"\x01\x02"), true);
        assert_eq!(r["structuredContent"]["content_base64"], "AQI=");
        let r = result(&reply(200, "image/png", &[0x89, 0x50, 0xff]), true);
        assert_eq!(r["content"][0]["type"], "image");
        assert_eq!(r["content"][0]["mimeType"], "image/png");
    }
}
