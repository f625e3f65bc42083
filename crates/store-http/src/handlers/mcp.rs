//! `POST /mcp`: one JSON-RPC message read and answered (store-wire's `mcp`
//! says what each means), and a tool call run as the HTTP request of its
//! route, through the same dispatch a request from the network takes. So
//! a tool meets the same parameter rules, gates, limits and use cases, and
//! answers the same record; the MCP request itself has already passed the
//! door (its rate limit, its share of requests in flight), once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::Value;
use store_app::AppResult;
use store_core::StoreError;
use store_wire::mcp::{self, answer, tools, Incoming};

use super::admit::{check_rate, upload_gate};
use super::Ctx;
use crate::body::{self, RequestBody};
use crate::respond::{self, Res};

/// The tool a `tools/call` ran and the status its route answered: what
/// the request log and the metrics count it by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolCall {
    pub metric: &'static str,
    pub status: u16,
}

/// A tool result, written, and the status of the route's answer.
type Outcome = (Vec<u8>, u16);

/// `POST /mcp`.
pub(super) async fn post(ctx: &Ctx, body: RequestBody) -> AppResult<Res> {
    // Counted here rather than at the door (admit.rs), so that a tool call
    // over the limit is a tool error the agent reads, as every refusal of
    // a call is; any other message over it is refused as at the door, and
    // so is a large one, unread.
    let key = store_wire::client::rate_key(ctx.client);
    let over_rate = check_rate(&ctx.shared, key, ctx.app.now()).await?.err();
    let declared = crate::body::declared_length(&ctx.headers, u64::MAX).unwrap_or(0);
    if let Some(retry_after_secs) = over_rate.filter(|_| declared > SMALL_MESSAGE_BYTES) {
        return Err(StoreError::RateLimited { retry_after_secs }.into());
    }
    mcp::check_headers(&ctx.headers, &ctx.app.config().base_url)?;
    let limit = mcp::body_bytes_max(&ctx.app.config().limits);
    // Held until the answer is made: the message stays in memory, parsed.
    let intake = ctx.intake(limit)?;
    let bytes = body::read_bounded(&intake, body, limit).await?;
    let message = mcp::read(&bytes);
    drop(bytes);
    if let Some(retry_after_secs) = over_rate {
        return Ok(over_the_rate(message, retry_after_secs));
    }
    match message {
        Ok(Incoming::Request { id, method, params }) => {
            let large = declared > SMALL_MESSAGE_BYTES;
            Ok(answer(ctx, id, &method, params, large).await)
        }
        Ok(Incoming::Notice) => {
            // Nothing to say, so no type for the nothing.
            let mut res = Res::new(respond::empty());
            *res.status_mut() = StatusCode::ACCEPTED;
            Ok(res)
        }
        Err(mcp::Malformed(e)) => Ok(compact(StatusCode::BAD_REQUEST, &e)),
    }
}

/// A message up to this size is read and planned on the executor; a
/// larger one (a file in base64) is planned on the work lane, and over the
/// rate it is refused unread.
const SMALL_MESSAGE_BYTES: u64 = 64 * 1024;

/// A message over the client's rate: a tool call's is a tool error, any
/// other's the door's 429. Counted as the door counts its refusals.
fn over_the_rate(message: Result<Incoming, mcp::Malformed>, retry_after_secs: u64) -> Res {
    let e = StoreError::RateLimited { retry_after_secs };
    let mut res = match message {
        Ok(Incoming::Request { id, method, .. }) if method == "tools/call" => json_answer(
            StatusCode::OK,
            mcp::result_json(&id, &answer::refused(&e).0),
        ),
        _ => respond::store_error(&e),
    };
    res.extensions_mut().insert(ToolCall {
        metric: store_wire::metrics::ROUTE_RATE_LIMITED,
        status: e.code().http_status(),
    });
    res
}

/// The answer to a request, by its method (store-wire answers all but a
/// tool call).
async fn answer(ctx: &Ctx, id: Value, method: &str, params: Value, large: bool) -> Res {
    let limits = &ctx.app.config().limits;
    if let Some(message) = mcp::answer_method(id.clone(), method, &params, limits) {
        return compact(StatusCode::OK, &message);
    }
    match call(ctx, params, large).await {
        Ok(((result, status), tool)) => {
            let mut res = json_answer(StatusCode::OK, mcp::result_json(&id, &result));
            let metric = tool.metric;
            res.extensions_mut().insert(ToolCall { metric, status });
            res
        }
        Err(message) => compact(
            StatusCode::OK,
            &mcp::error(id, mcp::INVALID_PARAMS, &message),
        ),
    }
}

/// A JSON-RPC message, without the pretty printing of the API's records:
/// it is read by a client library, and a file read in base64 is large.
fn compact(status: StatusCode, message: &Value) -> Res {
    json_answer(
        status,
        serde_json::to_vec(message).expect("a JSON value serialises"),
    )
}

/// An answer of JSON already written.
fn json_answer(status: StatusCode, json: Vec<u8>) -> Res {
    respond::with_type(status, "application/json", respond::full(json))
}

/// `GET` and `DELETE /mcp`: 405, with the one method the endpoint takes.
pub(super) fn refuse(ctx: &Ctx) -> Res {
    let mut res = respond::store_error(&mcp::method_refused(&ctx.method));
    res.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    res
}

/// `tools/call`: the tool's result, as JSON (a refusal of the call is a
/// tool error), or why the call names no tool (a protocol error). A call
/// that creates something is held to the upload token before its content
/// is decoded; a large call is planned (its content decoded) on the work
/// lane, never on the executor.
async fn call(
    ctx: &Ctx,
    params: Value,
    large: bool,
) -> Result<(Outcome, &'static tools::Tool), String> {
    let (tool, args) = tools::read_call(params)?;
    let headers = call_headers(ctx, &args);
    if let Err(e) = creation_allowed(ctx, tool, &headers, &args) {
        return Ok((answer::refused(&e), tool));
    }
    let planned = if large {
        let app = Arc::clone(&ctx.app);
        let planning = move || plan(&app, tool, args);
        match ctx.shared.lanes.work.run(planning).await {
            Ok(planned) => planned,
            Err(e) => return Ok((answer::refused(&respond::client_error(&e)), tool)),
        }
    } else {
        plan(&ctx.app, tool, args)
    };
    let outcome = match planned {
        Ok(planned) => run(ctx, headers, planned).await,
        Err(e) => answer::refused(&e),
    };
    Ok((outcome, tool))
}

/// The plan of a call, with this server's base URL and limits, and a
/// fresh boundary for a bundle's body.
fn plan(
    app: &store_app::App,
    tool: &'static tools::Tool,
    args: serde_json::Map<String, Value>,
) -> Result<tools::Call, StoreError> {
    let config = app.config();
    let at = tools::Setting {
        base_url: &config.base_url,
        limits: &config.limits,
        nonce: nonce(),
    };
    tools::plan(tool, args, &at)
}

/// 128 bits no client can guess: the standard library's per-process
/// random hash keys, through SipHash, twice. Not a secret; a boundary a
/// file cannot hold on purpose.
fn nonce() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let half = || {
        u128::from(
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish(),
        )
    };
    (half() << 64) | half()
}

/// The headers a call's request carries: the MCP request's own
/// `Authorization` (the upload or retain token), unless the call names a
/// `token` itself, which the route would read second.
fn call_headers(ctx: &Ctx, args: &serde_json::Map<String, Value>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(auth) = ctx.headers.get(header::AUTHORIZATION) {
        if tools::token_arg(args).is_none() {
            headers.insert(header::AUTHORIZATION, auth.clone());
        }
    }
    headers
}

/// STORE_UPLOAD_TOKEN, checked as the door checks it, before a creating
/// call's content is decoded.
fn creation_allowed(
    ctx: &Ctx,
    tool: &tools::Tool,
    headers: &HeaderMap,
    args: &serde_json::Map<String, Value>,
) -> Result<(), StoreError> {
    let query = tools::token_query(args)?;
    upload_gate(&ctx.app, Some(tool.route), headers, &query).map(|_| ())
}

/// Runs a planned call as its route's request and reads the answer.
/// Boxed, and declared `Send`: a tool's route is never this one, but the
/// compiler cannot know that, and a future that may hold itself has
/// neither a size nor a provable `Send`.
fn run(
    ctx: &Ctx,
    headers: HeaderMap,
    call: tools::Call,
) -> Pin<Box<dyn Future<Output = Outcome> + Send + '_>> {
    Box::pin(run_call(ctx, headers, call))
}

async fn run_call(ctx: &Ctx, mut headers: HeaderMap, call: tools::Call) -> Outcome {
    if let Some(v) = call.password.and_then(|p| HeaderValue::from_str(&p).ok()) {
        headers.insert(super::PASSWORD_HEADER, v);
    }
    let (headers, body) = request_parts(headers, call.body);
    let token_in_form = match upload_gate(&ctx.app, call.endpoint.id(), &headers, &call.query) {
        Ok(in_form) => in_form,
        Err(e) => return answer::refused(&e),
    };
    let sub = Ctx {
        app: Arc::clone(&ctx.app),
        method: call.method,
        headers,
        query: call.query,
        html: false,
        client: ctx.client,
        shared: Arc::clone(&ctx.shared),
        started: tokio::time::Instant::now(),
        token_in_form,
    };
    let res = super::dispatch(sub, call.endpoint, body)
        .await
        .unwrap_or_else(|e| respond::app_error(&e));
    let (parts, res_body) = res.into_parts();
    let limit = mcp::answer_bytes_max(&ctx.app.config().limits);
    let Some(bytes) = read_answer(res_body, limit).await else {
        return answer::refused(&StoreError::TooLarge(format!(
            "the answer is larger than the {limit} bytes an MCP answer carries, or it broke off: read it over HTTP"
        )));
    };
    let text = |name| {
        parts
            .headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let reply = answer::Reply {
        status: parts.status.as_u16(),
        content_type: text(header::CONTENT_TYPE),
        location: text(header::LOCATION),
        body: &bytes,
    };
    (
        answer::to_json(&answer::tool_result(&reply, call.reads_bytes), bytes.len()),
        reply.status,
    )
}

/// A route's answer, whole, if it is at most `limit_bytes` and arrives
/// whole. Each chunk is copied and let go at once: a download lends its
/// buffers and reads on only when they come back (stream.rs), so keeping
/// the chunks would stall it.
async fn read_answer(mut body: respond::ResBody, limit_bytes: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.ok()?.into_data() {
            if (out.len() + data.len()) as u64 > limit_bytes {
                return None;
            }
            out.extend_from_slice(&data);
        }
    }
    Some(out)
}

/// The headers and body of a call's request: `headers`, with the
/// file's length and type, and its bytes.
fn request_parts(mut headers: HeaderMap, body: tools::Body) -> (HeaderMap, RequestBody) {
    let Some((bytes, content_type)) = body.into_parts() else {
        return (headers, empty_body());
    };
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    if let Some(v) = content_type.and_then(|t| HeaderValue::from_str(&t).ok()) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    let body = http_body_util::Full::new(Bytes::from(bytes))
        .map_err(|never| match never {})
        .boxed_unsync();
    (headers, body)
}

fn empty_body() -> RequestBody {
    http_body_util::Empty::new()
        .map_err(|never| match never {})
        .boxed_unsync()
}
