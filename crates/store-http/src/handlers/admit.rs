//! The checks every request passes before its route runs: the head's
//! sizes, the client's rate and share, the query, the auth headers and
//! the upload token at the door.

use std::sync::Arc;

use crate::body::RequestBody;
use http::{header, HeaderMap, HeaderValue, Request};
use store_app::{App, AppResult};
use store_core::StoreError;

use crate::respond::{self, Res};
use crate::shared::Shared;
use store_wire::negotiate::wants_html;
use store_wire::query::Query;
use store_wire::router::{is_probe, route, Endpoint, RouteId};

use super::ctx::Ctx;
use super::dispatch;

/// Handles one request; returns the response and the route's name (for the
/// request log, which never sees ids, names or secrets). Every response,
/// errors included, carries `X-Content-Type-Options: nosniff`: error
/// bodies echo input, and no answer of this service is meant to be sniffed.
pub(crate) async fn handle(
    app: Arc<App>,
    shared: Arc<Shared>,
    req: Request<RequestBody>,
    peer: std::net::IpAddr,
    prefix: &str,
) -> (Res, &'static str) {
    let sends_body = !http_body::Body::is_end_stream(req.body());
    // Every answer about a resumable upload carries the protocol's
    // version, a refusal made before its route runs (the upload token,
    // the rate limit, a bad query) too.
    let tus = store_wire::router::routed_path(req.uri().path(), prefix)
        .is_some_and(|p| p == "/uploads" || p.starts_with("/uploads/"));
    let (mut res, name) = admit(app, shared, req, peer, prefix).await;
    if tus {
        res.headers_mut().insert(
            http::HeaderName::from_static(store_wire::tus::RESUMABLE),
            HeaderValue::from_static(store_wire::tus::VERSION),
        );
    }
    store_wire::headers::nosniff(res.headers_mut());
    // A refusal often comes before the body was read (a bad name, a length
    // over the limit). Hyper then closes the connection unless the rest of
    // the body happens to be there already, so a client that reused the
    // connection would find it gone: say it will close.
    if sends_body && (res.status().is_client_error() || res.status().is_server_error()) {
        res.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    (res, name)
}

/// Counts one request of `client`: in memory at once, awaited on this
/// executor when the count lives in a shared database that offers it,
/// on a blocking thread otherwise.
pub(super) async fn check_rate(
    shared: &Arc<Shared>,
    client: std::net::IpAddr,
    now: store_core::Timestamp,
) -> AppResult<Result<(), u64>> {
    if let Some(check) = shared.limiter.check_async(client, now) {
        return Ok(check.await?);
    }
    if !shared.limiter.blocks() {
        return Ok(shared.limiter.check(client, now)?);
    }
    let limiter = Arc::clone(&shared.limiter);
    Ok(shared
        .lanes
        .work
        .run(move || limiter.check(client, now))
        .await??)
}

/// The checks every request passes before its route runs: sizes of the
/// head, the client's rate and share, the query and the auth headers.
async fn admit(
    app: Arc<App>,
    shared: Arc<Shared>,
    req: Request<RequestBody>,
    peer: std::net::IpAddr,
    prefix: &str,
) -> (Res, &'static str) {
    if let Some(refused) = check_head(&req, &shared) {
        return refused;
    }
    let (parts, body) = req.into_parts();
    let Some(path) = store_wire::router::routed_path(parts.uri.path(), prefix) else {
        let res = respond::store_error(&StoreError::not_found());
        return (res, Endpoint::NotFound.name());
    };
    let client = store_wire::client::client_ip(peer, &parts.headers, &shared.trusted);
    let key = store_wire::client::rate_key(client);
    // A load balancer probes every few seconds from one address, and must
    // keep hearing the truth while the shared rate state is unreachable.
    // An MCP message is counted by its handler, which answers a tool call
    // over the limit as a tool error (handlers/mcp.rs).
    let mcp = parts.method == http::Method::POST && path == RouteId::Mcp.route().path;
    match if is_probe(path) || mcp {
        Ok(Ok(()))
    } else {
        check_rate(&shared, key, app.now()).await
    } {
        Ok(Ok(())) => {}
        Ok(Err(retry_after_secs)) => {
            let res = respond::store_error(&StoreError::RateLimited { retry_after_secs });
            return (res, store_wire::metrics::ROUTE_RATE_LIMITED);
        }
        Err(e) => return (respond::app_error(&e), "storage_error"),
    }
    // Held until the response has been sent, a download's body included.
    let Some(in_flight) = shared.requests.take(key) else {
        let res = respond::store_error(&crate::shared::over_share());
        return (res, store_wire::metrics::ROUTE_RATE_LIMITED);
    };
    let query = match Query::parse(parts.uri.query().unwrap_or(""))
        .and_then(|q| store_wire::strict::check(&q).map(|()| q))
        .and_then(|q| store_wire::credentials::check_auth_headers(&parts.headers).map(|()| q))
    {
        Ok(q) => q,
        Err(e) => return (respond::store_error(&e), "bad_request"),
    };
    let endpoint = route(&parts.method, path, &query, &app.config().limits);
    let name = endpoint.name();
    let token_in_form = match upload_gate(&app, endpoint.id(), &parts.headers, &query) {
        Ok(in_form) => in_form,
        Err(e) => return (respond::holding(respond::store_error(&e), in_flight), name),
    };
    let html = wants_html(&parts.headers, &query);
    let locked = html
        .then(|| super::gates::Locked::of(&endpoint, &app.config().base_url, &parts.uri))
        .flatten();
    let ctx = Ctx {
        html,
        app,
        method: parts.method,
        headers: parts.headers,
        query,
        client,
        shared,
        started: tokio::time::Instant::now(),
        token_in_form,
    };
    let res = dispatch(ctx, endpoint, body)
        .await
        .unwrap_or_else(|e| super::gates::refused(&e, locked.as_ref()));
    // An MCP tool call is logged and counted by its tool (and the status
    // its route answered, which the service reads).
    let name = res
        .extensions()
        .get::<super::mcp::ToolCall>()
        .map_or(name, |tool| tool.metric);
    (respond::holding(res, in_flight), name)
}

/// 414 or 431 for a request head over its bounds.
fn check_head(req: &Request<RequestBody>, shared: &Shared) -> Option<(Res, &'static str)> {
    // Measured without formatting the URI: this runs on every request.
    let target_len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if target_len > shared.uri_bytes_max {
        return Some((respond::uri_too_long(shared.uri_bytes_max), "uri_too_long"));
    }
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len())
        .sum();
    (header_bytes > shared.header_bytes_max).then(|| {
        (
            respond::headers_too_large(shared.header_bytes_max, shared.header_fields_max),
            "headers_too_large",
        )
    })
}

/// STORE_UPLOAD_TOKEN at the door. A creating route with the upload token
/// (or a retain token) in its header or query passes. One that presents
/// none but whose browser form may carry it passes for now, answering
/// `true`: the form's `token` field is checked before any file is written
/// ([`Ctx::with_form_token`]). Any other is refused before its body is
/// read.
pub(super) fn upload_gate(
    app: &App,
    route: Option<RouteId>,
    headers: &HeaderMap,
    query: &Query,
) -> Result<bool, StoreError> {
    use store_wire::routes::{CREATING, CREATING_BY_FORM};
    if !app.config().upload_token.is_required() {
        return Ok(false);
    }
    let Some(id) = route.filter(|id| CREATING.contains(id)) else {
        return Ok(false);
    };
    let presented = store_wire::credentials::presented_token(headers, query);
    let Err(refused) = app.authorize_create(presented.as_deref()) else {
        return Ok(false);
    };
    // A multipart body the way its readers tell one, or the urlencoded
    // form of "new gallery".
    let urlencoded = store_wire::body_head::is_urlencoded(headers);
    let form = crate::body::multipart_boundary(headers).is_some()
        || (id == RouteId::CreateGallery && urlencoded);
    if presented.is_none() && form && CREATING_BY_FORM.contains(&id) {
        return Ok(true);
    }
    Err(refused)
}
