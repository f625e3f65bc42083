//! One function per endpoint: parse what the request says, run the use case
//! on the blocking pool, render the answer. No domain rule is decided here.

mod dirs;
mod files;
mod meta;
mod pics;
mod share;

use std::sync::Arc;

use crate::body::RequestBody;
use http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use store_app::{Access, App, AppError, AppResult, Download};
use store_core::content::renders_inline;
use store_core::{ReadIntent, RetainAuth, StorageError, StoreError};

use crate::ranges;
use crate::respond::{self, content_disposition, Res};
use crate::server::Shared;
use store_wire::negotiate::wants_html;
use store_wire::query::Query;
use store_wire::router::{is_probe, route, Endpoint};

/// The sandbox of CONTRACT.md. Every response carrying user bytes gets it,
/// not only HTML, SVG and XML: it costs an image or a text file nothing,
/// and it stays a backstop should a type ever be misjudged.
const SANDBOX_CSP: &str = "sandbox allow-scripts allow-forms allow-popups";

pub(crate) use store_wire::api::{OWNER_HEADER, WRITE_HEADER};

/// What every handler gets besides the body.
pub(crate) struct Ctx {
    pub app: Arc<App>,
    pub method: Method,
    pub headers: HeaderMap,
    pub query: Query,
    pub html: bool,
    /// The client's address (behind trusted proxies, the forwarded one).
    pub client: std::net::IpAddr,
    pub shared: Arc<Shared>,
    /// When the request began: a body's deadline counts from here.
    pub started: tokio::time::Instant,
    /// A creating request without the upload token in its header or query,
    /// whose form must carry it in a `token` field (see [`upload_gate`]).
    pub token_in_form: bool,
}

impl Ctx {
    /// The prefix of every URL an answer carries (`url_for`'s first
    /// argument).
    pub fn base(&self) -> &str {
        &self.app.config().base_url
    }

    /// Where the pages' links lead: under the base URL's path.
    pub fn site(&self) -> store_wire::pages::Site<'_> {
        store_wire::pages::Site::new(self.base())
    }

    /// Checks the declared length of the body against `limit_bytes` (411,
    /// 413), takes its room among the bodies in flight (429 when there is
    /// none), and answers how to read it. Nothing is read before this.
    pub fn intake(&self, limit_bytes: u64) -> AppResult<crate::body::Intake> {
        let len = crate::body::declared_length(&self.headers, limit_bytes)?;
        let shared = &self.shared;
        let wanted = crate::server::kib(len.min(shared.bodies_in_flight_bytes_max));
        let room = Arc::clone(&shared.bodies_in_flight)
            .try_acquire_many_owned(wanted)
            .map_err(|_| StoreError::Busy {
                message: format!(
                    "the server is receiving {} bytes of uploads already; try again shortly",
                    shared.bodies_in_flight_bytes_max
                ),
                retry_after_secs: crate::lanes::BUSY_RETRY_AFTER_SECS,
            })?;
        let pace = shared.body_pace;
        let secs = len / pace.min_bytes_per_sec.max(1);
        let deadline = self.started + pace.grace + std::time::Duration::from_secs(secs);
        Ok(crate::body::Intake::new(
            Arc::clone(&self.app),
            shared.lanes.work.clone(),
            pace.idle,
            deadline,
            Some(room),
        ))
    }

    /// The retain or upload token, from `Authorization: Bearer` or `token=`.
    fn presented_token(&self) -> Option<String> {
        presented_token(&self.headers, &self.query)
    }

    /// The upload token a form carries in its `token` field, when the
    /// request needs one there (STORE_UPLOAD_TOKEN); nothing otherwise.
    pub fn check_form_token(&self, fields: &[(String, String)]) -> AppResult<()> {
        if !self.token_in_form {
            return Ok(());
        }
        Ok(self
            .app
            .authorize_create(store_wire::params::form_token(fields))?)
    }

    /// `gate`, preceded by the form's upload token check when the request
    /// needs one: a multipart body's fields before its first file part
    /// must carry the token, so that no file is written without it.
    pub fn with_form_token<'a>(
        &'a self,
        gate: Option<crate::body::Gate<'a>>,
    ) -> Option<crate::body::Gate<'a>> {
        if !self.token_in_form {
            return gate;
        }
        Some(Box::new(move |fields: Vec<(String, String)>| {
            Box::pin(async move {
                self.check_form_token(&fields)?;
                match gate {
                    Some(gate) => gate(fields).await,
                    None => Ok(()),
                }
            })
        }))
    }

    pub fn retain_auth(&self) -> RetainAuth {
        self.app.retain_auth(self.presented_token().as_deref())
    }

    /// What the request presents to a write's gates: the retain token's
    /// verdict, a dir write token (the X-Store-Write header, else `write=`,
    /// except on creation, where `write=` is the flag that asks for one),
    /// and an owner token (the X-Store-Owner header, else `owner=`).
    pub fn access(&self, write_query_is_token: bool) -> Access {
        let given = store_wire::params::QueryCredentials::parse(&self.query);
        let query = write_query_is_token.then_some(given.write).flatten();
        Access {
            retain: self.retain_auth(),
            write_token: self
                .header_token(WRITE_HEADER)
                .or(query.filter(|t| !t.is_empty())),
            owner: self
                .header_token(OWNER_HEADER)
                .or(given.owner)
                .filter(|t| !t.is_empty()),
        }
    }

    /// A token sent in header `name`, trimmed; none when absent or empty.
    fn header_token(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
            .filter(|t| !t.is_empty())
    }

    pub fn intent(&self) -> ReadIntent {
        if self.method == Method::HEAD {
            ReadIntent::Head
        } else {
            ReadIntent::Get
        }
    }
}

/// Runs a use case on the blocking pool, in the lane of such work: use
/// cases touch the disk and may fsync, which must never stall the executor.
pub(crate) async fn blocking<T: Send + 'static>(
    ctx: &Ctx,
    f: impl FnOnce(&App) -> AppResult<T> + Send + 'static,
) -> AppResult<T> {
    let app = Arc::clone(&ctx.app);
    ctx.shared.lanes.work.run(move || f(&app)).await?
}

/// Files up to this size are read whole and answered in one piece.
const INLINE_BYTES_MAX: u64 = 64 * 1024;

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
    let (mut res, name) = admit(app, shared, req, peer, prefix).await;
    res.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
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

/// Counts one request of `client`: in memory at once, or on a blocking
/// thread when the count lives in a shared database.
async fn check_rate(
    shared: &Arc<Shared>,
    client: std::net::IpAddr,
    now: store_core::Timestamp,
) -> AppResult<Result<(), u64>> {
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

/// The path a request's route is chosen by: its own path without the
/// service's mount prefix, or `None` when it lies outside the prefix.
fn routed_path<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    match path.strip_prefix(prefix)? {
        "" => Some("/"),
        rest if rest.starts_with('/') => Some(rest),
        _ => None,
    }
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
    let Some(path) = routed_path(parts.uri.path(), prefix) else {
        let res = respond::store_error(&StoreError::not_found());
        return (res, Endpoint::NotFound.name());
    };
    let client = crate::client::client_ip(peer, &parts.headers, &shared.trusted);
    let key = crate::client::rate_key(client);
    // A load balancer probes every few seconds from one address, and must
    // keep hearing the truth while the shared rate state is unreachable.
    match if is_probe(path) {
        Ok(Ok(()))
    } else {
        check_rate(&shared, key, app.now()).await
    } {
        Ok(Ok(())) => {}
        Ok(Err(retry_after_secs)) => {
            let res = respond::store_error(&StoreError::RateLimited { retry_after_secs });
            return (res, crate::metrics::ROUTE_RATE_LIMITED);
        }
        Err(e) => return (respond::app_error(&e), "storage_error"),
    }
    // Held until the response has been sent, a download's body included.
    let Some(in_flight) = shared.requests.take(key) else {
        let res = respond::store_error(&crate::server::over_share());
        return (res, crate::metrics::ROUTE_RATE_LIMITED);
    };
    let query = match Query::parse(parts.uri.query().unwrap_or(""))
        .and_then(|q| q.check_strict().map(|()| q))
        .and_then(|q| check_auth_headers(&parts.headers).map(|()| q))
    {
        Ok(q) => q,
        Err(e) => return (respond::store_error(&e), "bad_request"),
    };
    let endpoint = route(&parts.method, path, &query);
    let name = endpoint.name();
    let token_in_form = match upload_gate(&app, &endpoint, &parts.headers, &query) {
        Ok(in_form) => in_form,
        Err(e) => return (respond::holding(respond::store_error(&e), in_flight), name),
    };
    let ctx = Ctx {
        html: wants_html(&parts.headers, &query),
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
        .unwrap_or_else(|e| respond::app_error(&e));
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
            respond::headers_too_large(shared.header_bytes_max),
            "headers_too_large",
        )
    })
}

/// The token a request presents in `Authorization: Bearer` or `token=`.
fn presented_token(headers: &HeaderMap, query: &Query) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    bearer.or_else(|| store_wire::params::QueryCredentials::parse(query).token)
}

/// STORE_UPLOAD_TOKEN at the door. A creating route with the upload token
/// (or a retain token) in its header or query passes. One that presents
/// none but whose browser form may carry it passes for now, answering
/// `true`: the form's `token` field is checked before any file is written
/// ([`Ctx::with_form_token`]). Any other is refused before its body is
/// read.
fn upload_gate(
    app: &App,
    endpoint: &Endpoint,
    headers: &HeaderMap,
    query: &Query,
) -> Result<bool, StoreError> {
    use store_wire::routes::{RouteId, CREATING, CREATING_BY_FORM};
    if !app.config().upload_token.is_required() {
        return Ok(false);
    }
    let Some(id) = endpoint.id().filter(|id| CREATING.contains(id)) else {
        return Ok(false);
    };
    let presented = presented_token(headers, query);
    let Err(refused) = app.authorize_create(presented.as_deref()) else {
        return Ok(false);
    };
    // A multipart body the way its readers tell one, or the urlencoded
    // form of "new gallery".
    let urlencoded = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        });
    let form = crate::body::multipart_boundary(headers).is_some()
        || (id == RouteId::CreateGallery && urlencoded);
    if presented.is_none() && form && CREATING_BY_FORM.contains(&id) {
        return Ok(true);
    }
    Err(refused)
}

/// An auth header that is present but empty is refused, not read as
/// absent: an empty `X-Store-Write` once hid a valid `?write=` token.
fn check_auth_headers(headers: &HeaderMap) -> Result<(), StoreError> {
    // Names made once, at compile time: looked up by `&str`, each would be
    // parsed again on every request.
    const NAMES: [header::HeaderName; 3] = [
        header::HeaderName::from_static(WRITE_HEADER),
        header::HeaderName::from_static(OWNER_HEADER),
        header::AUTHORIZATION,
    ];
    for name in &NAMES {
        let values = headers.get_all(name);
        for value in values.iter() {
            let value = value.to_str().unwrap_or("").trim();
            // `Authorization: Bearer` with nothing after the scheme.
            let bare_scheme = value.eq_ignore_ascii_case("bearer");
            if value.is_empty() || bare_scheme {
                return Err(StoreError::bad_request(format!(
                    "the {name} header is empty: send the token, or leave the header out"
                )));
            }
        }
        if values.iter().nth(1).is_some() {
            return Err(StoreError::bad_request(format!(
                "the {name} header is given more than once"
            )));
        }
    }
    Ok(())
}

/// Refuses a request body where a route reads none and a body means the
/// client meant another route (files posted with `?ttl=` would be
/// dropped, not added).
pub(crate) fn refuse_body(ctx: &Ctx, what: &str) -> Result<(), StoreError> {
    if crate::body::declares_body(&ctx.headers) {
        return Err(StoreError::bad_request(format!(
            "{what} takes no body: to upload, leave ttl out of the query"
        )));
    }
    Ok(())
}

/// Hands each route to its handler. Long because it is a table, one arm
/// per route of `routes.rs`, which reads best whole.
async fn dispatch(ctx: Ctx, endpoint: Endpoint, body: RequestBody) -> AppResult<Res> {
    use Endpoint as E;
    match endpoint {
        E::Home => Ok(files::home(&ctx)),
        E::Api => Ok(respond::json(
            http::StatusCode::OK,
            &store_wire::api::contract(ctx.app.config()),
        )),
        E::Openapi => Ok(respond::json(
            http::StatusCode::OK,
            &store_wire::openapi::document(ctx.app.config()),
        )),
        E::Browse => files::browse(&ctx).await,
        E::Help => Ok(meta::help_index(&ctx)),
        E::HelpTopic { topic } => Ok(meta::help_topic(&ctx, &topic)?),
        E::WriteForAgents => Ok(meta::write_for_agents(&ctx)),
        E::CopyForAgents => Ok(meta::copy_for_agents(&ctx)),
        E::Releases => Ok(meta::releases(&ctx)),
        E::Robots => Ok(meta::robots()),
        E::Healthz => Ok(meta::healthz()),
        E::Readyz => Ok(meta::readyz(&ctx).await),
        E::Static { file } => Ok(meta::static_file(&file)?),
        E::Upload => files::upload(&ctx, body).await,
        E::GetFile { id } => files::get(&ctx, id).await,
        E::FileQr { id } => share::file_qr(&ctx, id).await,
        E::DirQr { key } => share::dir_qr(&ctx, key).await,
        E::GalleryQr { gid } => share::gallery_qr(&ctx, gid).await,
        E::GetBundleMember { id, filename } => files::get_member(&ctx, id, filename).await,
        E::RetainFile { id } => files::retain(&ctx, id).await,
        E::TagFile { id } => files::tag(&ctx, id).await,
        E::SetFileTtl { id } => files::set_ttl(&ctx, id).await,
        E::ReplaceFile { id } => files::replace(&ctx, id, body).await,
        E::AppendFile { id } => files::append(&ctx, id, body).await,
        E::DeleteFile { id } => files::delete(&ctx, id).await,
        E::CreateDir => dirs::create(&ctx, body).await,
        E::ListDirs => dirs::list(&ctx).await,
        E::GetDir { key } => dirs::get(&ctx, key).await,
        E::AddToDir { key } => dirs::add(&ctx, key, body).await,
        E::ShowDir { key } => dirs::show(&ctx, key).await,
        E::RetainDir { key } => dirs::retain(&ctx, key).await,
        E::SetDirTtl { key } => dirs::set_ttl(&ctx, key).await,
        E::DeleteDir { key } => dirs::delete(&ctx, key).await,
        E::DirHistory { key } => dirs::history(&ctx, key).await,
        E::GetDirFile { key, file } => dirs::get_file(&ctx, key, file).await,
        E::PutDirFile { key, file } => dirs::put_file(&ctx, key, file, body).await,
        E::AppendDirFile { key, file } => dirs::append_file(&ctx, key, file, body).await,
        E::DeleteDirFile { key, file } => dirs::delete_file(&ctx, key, file).await,
        E::Import => files::import(&ctx).await,
        E::PicsIndex => pics::index(&ctx).await,
        E::CreateGallery => pics::create(&ctx, body).await,
        E::Gallery { gid } => pics::gallery(&ctx, gid).await,
        E::UploadImage { gid } => pics::upload(&ctx, gid, None, body).await,
        E::ImportImage { gid } => pics::import(&ctx, gid, None).await,
        E::AdminUploadImage { gid, secret } => pics::upload(&ctx, gid, Some(secret), body).await,
        E::AdminImportImage { gid, secret } => pics::import(&ctx, gid, Some(secret)).await,
        E::Comment { gid } => pics::comment(&ctx, gid, body).await,
        E::LikeComment { gid } => pics::like_comment(&ctx, gid).await,
        E::GalleryAdmin { gid, secret } => pics::admin(&ctx, gid, secret, false).await,
        E::GalleryAdminJson { gid, secret } => pics::admin(&ctx, gid, secret, true).await,
        E::GalleryAdminAction { gid, secret } => pics::admin_action(&ctx, gid, secret, body).await,
        E::Image { id } => pics::image(&ctx, id).await,
        E::LikeImage { id } => pics::like(&ctx, id).await,
        E::MissingKeyword { keys } => Err(StoreError::bad_request(format!(
            "{} on this path needs an action, one of the parameters: {}",
            ctx.method,
            keys.join(", ")
        ))
        .into()),
        E::ConflictingKeywords { keys } => Err(StoreError::bad_request(format!(
            "the parameters {} ask for different actions: give one",
            keys.join(" and ")
        ))
        .into()),
        E::MethodNotAllowed => Err(StoreError::Unsupported(format!(
            "method {} is not supported on this path",
            ctx.method
        ))
        .into()),
        E::NotFound => Err(StoreError::not_found().into()),
    }
}

/// Serves user bytes: their type (with `charset=utf-8` for text), inline
/// for images and text unless `download=1`, an RFC 6266 file name, the
/// headers that keep user content from acting with the service's origin,
/// and validators and ranges (CONTRACT.md "Downloads: ranges and
/// validators"; `ranges.rs` decides). A `once=1` file has none of the
/// latter: any GET that reaches it is a whole 200 that burns it.
pub(crate) async fn serve_download(ctx: &Ctx, mut d: Download) -> AppResult<Res> {
    let reader = std::mem::replace(
        &mut d.reader,
        Box::new(respond::BytesReader::new(Vec::new())),
    );
    let len = reader.len();
    if d.once {
        let res = http::Response::new(download_body(ctx, reader, len)?);
        return download_headers(ctx, &d, res, len);
    }
    let etag = ranges::etag(&d.blob);
    let validators = ranges::Validators {
        etag: &etag,
        modified: d.modified,
    };
    let (reader, range) = match ranges::decide(&ctx.headers, validators, len) {
        ranges::Answer::NotModified => return Ok(not_modified(&d, &etag)),
        ranges::Answer::Unsatisfiable => {
            let mut res = respond::store_error(&StoreError::RangeNotSatisfiable { len });
            insert(&mut res, header::CONTENT_RANGE, &format!("bytes */{len}"));
            return Ok(with_validators(res, &d, &etag));
        }
        ranges::Answer::Whole => (reader, None),
        ranges::Answer::Partial { start, end } => (
            read_range(ctx, &d.blob, reader, start..end + 1).await?,
            Some((start, end)),
        ),
    };
    let sent = reader.len();
    let mut res = http::Response::new(download_body(ctx, reader, sent)?);
    if let Some((start, end)) = range {
        *res.status_mut() = StatusCode::PARTIAL_CONTENT;
        insert(
            &mut res,
            header::CONTENT_RANGE,
            &format!("bytes {start}-{end}/{len}"),
        );
    }
    insert(&mut res, header::ACCEPT_RANGES, "bytes");
    let res = download_headers(ctx, &d, res, sent)?;
    Ok(with_validators(res, &d, &etag))
}

/// `range` of the blob `reader` reads, on its own rather than skipped to
/// through the whole. Local files and cached bytes narrow the reader the
/// use case opened (a seek, a slice): no second open, no thread hop, which
/// had halved the rate of 64 KiB ranges (docs/PERFORMANCE.md, scenario
/// 15). A reader that cannot is a stream from a bucket: the range is then
/// opened afresh (a ranged GET) in the reads lane, since it waits on the
/// network.
async fn read_range(
    ctx: &Ctx,
    blob: &store_core::BlobId,
    mut reader: Box<dyn store_core::BlobReader>,
    range: std::ops::Range<u64>,
) -> AppResult<Box<dyn store_core::BlobReader>> {
    let narrowed = reader
        .narrow(range.clone())
        .map_err(|e| AppError::Storage(StorageError::new(format!("cannot seek in a blob: {e}"))))?;
    if narrowed {
        return Ok(reader);
    }
    drop(reader);
    let (app, blob) = (Arc::clone(&ctx.app), blob.clone());
    ctx.shared
        .lanes
        .reads
        .run(move || app.open_blob_range(&blob, range))
        .await?
}

fn insert(res: &mut Res, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        res.headers_mut().insert(name, v);
    }
}

/// `ETag` and `Last-Modified` of `d`.
fn with_validators(mut res: Res, d: &Download, etag: &str) -> Res {
    insert(&mut res, header::ETAG, etag);
    insert(
        &mut res,
        header::LAST_MODIFIED,
        &ranges::http_date(d.modified),
    );
    res
}

/// 304: the validators and the caching rule, no body.
fn not_modified(d: &Download, etag: &str) -> Res {
    let mut res = http::Response::new(respond::empty());
    *res.status_mut() = StatusCode::NOT_MODIFIED;
    insert(&mut res, header::CACHE_CONTROL, "no-cache");
    with_validators(res, d, etag)
}

/// The body of `len` bytes of `reader`: none for HEAD, read here when
/// small, streamed from the reads lane otherwise.
fn download_body(
    ctx: &Ctx,
    reader: Box<dyn store_core::BlobReader>,
    len: u64,
) -> AppResult<respond::ResBody> {
    if ctx.method == Method::HEAD {
        drop(reader);
        return Ok(respond::empty());
    }
    if len <= INLINE_BYTES_MAX {
        // A small file is one read(2) from the page cache (or bytes the
        // store already holds in memory): read it here and answer it
        // whole, without a streaming thread and channel per file.
        // `read_exact` into the exact length: one read(2) for a file,
        // where `read_to_end` probes again for the end.
        let mut reader = reader;
        let mut bytes = vec![0; len as usize];
        std::io::Read::read_exact(&mut reader, &mut bytes).map_err(|e| {
            AppError::Storage(StorageError::new(format!("cannot read a blob: {e}")))
        })?;
        return Ok(respond::full(bytes));
    }
    let via = ctx.shared.sender(&ctx.shared.lanes.reads);
    Ok(http_body_util::BodyExt::boxed(crate::stream::stream(
        reader,
        Some(len),
        via,
    )))
}

/// The headers of user bytes: type, length, disposition, the sandbox, and
/// caching (never stored for a `once=1` file; revalidated for the rest,
/// so nothing is served stale after PUT or PATCH).
fn download_headers(ctx: &Ctx, d: &Download, mut res: Res, len: u64) -> AppResult<Res> {
    let download = store_wire::params::download(&ctx.query)?;
    let h = res.headers_mut();
    let content_type = if d.text {
        format!("{}; charset=utf-8", d.content_type)
    } else {
        d.content_type.clone()
    };
    let inline = !download && renders_inline(&d.content_type);
    let disposition = content_disposition(if inline { "inline" } else { "attachment" }, &d.name);
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&content_type)
            .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream")),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(SANDBOX_CSP),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if d.once { "no-store" } else { "no-cache" }),
    );
    Ok(res)
}

/// A zip download of `files`, named `<name>.zip`.
pub(crate) fn serve_zip(ctx: &Ctx, name: &str, files: Vec<store_core::MemberFile>) -> Res {
    let body = if ctx.method == Method::HEAD {
        respond::empty()
    } else {
        let via = ctx.shared.sender(&ctx.shared.lanes.zips);
        http_body_util::BodyExt::boxed(crate::zip::stream_zip(Arc::clone(&ctx.app), files, via))
    };
    let mut res = http::Response::new(body);
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    if let Ok(v) = HeaderValue::from_str(&content_disposition("attachment", &format!("{name}.zip")))
    {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    res
}

/// Reads a multipart body of files for the store (uploads, bundles, dirs):
/// each file within the file limit, at most a container's worth of files,
/// each part's name checked as it arrives, `gate` passed before the first
/// file is written, and the whole body bounded by the pool, which is all
/// that could ever fit.
pub(crate) async fn container_parts<'a>(
    ctx: &'a Ctx,
    body: RequestBody,
    boundary: Result<String, StoreError>,
    gate: Option<crate::body::Gate<'a>>,
) -> AppResult<crate::body::Multipart> {
    let boundary = boundary?;
    let limits = &ctx.app.config().limits;
    let body_limit = limits.pool_bytes.max(limits.file_bytes_max) + 1024 * 1024;
    let intake = ctx.intake(body_limit)?;
    let rules = crate::body::PartRules {
        names_checked: Some(limits),
        gate: ctx.with_form_token(gate),
        ..crate::body::PartRules::new(limits.file_bytes_max, limits.files_per_container_max)
    };
    let stream = http_body_util::BodyExt::into_data_stream(body);
    let mp = crate::body::read_multipart(&intake, stream, boundary, rules).await?;
    // A form without files never reached the gate.
    if mp.files.is_empty() {
        ctx.check_form_token(&mp.fields)?;
    }
    Ok(mp)
}

/// Multipart fields and URL parameters as one set: the URL's values come
/// first and so win.
pub(crate) fn merged(query: &Query, fields: Vec<(String, String)>) -> Query {
    let mut q = query.clone();
    // An empty form field is a control left at "no value" (the upload
    // page's default lifetime, an unfilled name): it was not given. A
    // query parameter stays strict, so `?ttl=` is still a 400.
    q.extend(fields.into_iter().filter(|(_, v)| !v.is_empty()));
    q
}

/// A created object answers 201 with its URL in `Location`.
pub(crate) fn created(mut res: Res, url: &str) -> Res {
    *res.status_mut() = http::StatusCode::CREATED;
    if let Ok(v) = HeaderValue::from_str(url) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}
