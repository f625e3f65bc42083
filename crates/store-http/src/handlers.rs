//! One function per endpoint: parse what the request says, run the use case
//! on the blocking pool, render the answer. No domain rule is decided here.

use std::sync::Arc;

use http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use hyper::body::Incoming;
use serde::Serialize;
use store_app::{
    App, AppError, AppResult, BrowseQuery, BrowseSort, FileDownload, NewFile, SortOrder,
};
use store_core::content::{needs_sandbox, renders_inline};
use store_core::{ttl, ReadIntent, RetainAuth, StorageError, StoreError};

use crate::body::{self, declared_length, multipart_boundary};
use crate::negotiate::wants_html;
use crate::query::Query;
use crate::respond::{self, content_disposition, json, Res};
use crate::router::{route, Endpoint};
use crate::{api, pages};

/// The sandbox of CONTRACT.md for user content that can run script.
const SANDBOX_CSP: &str = "sandbox allow-scripts allow-forms allow-popups";

/// What every handler gets besides the body.
struct Ctx {
    app: Arc<App>,
    method: Method,
    headers: HeaderMap,
    query: Query,
    html: bool,
}

impl Ctx {
    /// The retain token, from `Authorization: Bearer` or `token=`.
    fn presented_token(&self) -> Option<String> {
        let bearer = self
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| token.trim().to_string())
            });
        bearer.or_else(|| self.query.get("token").map(str::to_string))
    }

    fn retain_auth(&self) -> RetainAuth {
        self.app.retain_auth(self.presented_token().as_deref())
    }
}

/// Runs a use case on the blocking pool: use cases touch the disk and may
/// fsync, which must never stall the executor.
async fn blocking<T: Send + 'static>(
    app: &Arc<App>,
    f: impl FnOnce(&App) -> AppResult<T> + Send + 'static,
) -> AppResult<T> {
    let app = Arc::clone(app);
    tokio::task::spawn_blocking(move || f(&app))
        .await
        .map_err(|e| AppError::Storage(StorageError::new(format!("a worker failed: {e}"))))?
}

pub async fn handle(app: Arc<App>, req: Request<Incoming>) -> Res {
    let (parts, body) = req.into_parts();
    let query = Query::parse(parts.uri.query().unwrap_or(""));
    let endpoint = route(&parts.method, parts.uri.path(), &query);
    let ctx = Ctx {
        html: wants_html(&parts.headers, &query),
        app,
        method: parts.method,
        headers: parts.headers,
        query,
    };
    dispatch(ctx, endpoint, body)
        .await
        .unwrap_or_else(|e| respond::app_error(&e))
}

async fn dispatch(ctx: Ctx, endpoint: Endpoint, body: Incoming) -> AppResult<Res> {
    match endpoint {
        Endpoint::Home => Ok(home(&ctx)),
        Endpoint::Api => Ok(json(StatusCode::OK, &api::contract(ctx.app.config()))),
        Endpoint::Browse => browse(&ctx).await,
        Endpoint::Upload => upload(&ctx, body).await,
        Endpoint::GetFile { id } => get_file(&ctx, id).await,
        Endpoint::RetainFile { id } => {
            let auth = ctx.retain_auth();
            let view = blocking(&ctx.app, move |app| app.retain_file(&id, auth)).await?;
            Ok(json(StatusCode::OK, &view))
        }
        Endpoint::TagFile { id } => {
            let (add, remove) = (ctx.query.all("tag"), ctx.query.all("untag"));
            let auth = ctx.retain_auth();
            let view =
                blocking(&ctx.app, move |app| app.tag_file(&id, &add, &remove, auth)).await?;
            Ok(json(StatusCode::OK, &view))
        }
        Endpoint::ReplaceFile { id } => replace(&ctx, id, body).await,
        Endpoint::AppendFile { id } => append(&ctx, id, body).await,
        Endpoint::DeleteFile { id } => {
            let auth = ctx.retain_auth();
            let id2 = id.clone();
            blocking(&ctx.app, move |app| app.delete_file(&id2, auth)).await?;
            #[derive(Serialize)]
            struct Deleted {
                id: String,
                deleted: bool,
            }
            Ok(json(StatusCode::OK, &Deleted { id, deleted: true }))
        }
        Endpoint::GetBundleMember { .. } => Err(StoreError::not_found().into()),
        Endpoint::Import => Err(StoreError::Unsupported(
            "import (POST /?url=) is not available in this build yet".into(),
        )
        .into()),
        Endpoint::CreateDir => Err(StoreError::Unsupported(
            "dirs (POST /?dir=1) are not available in this build yet".into(),
        )
        .into()),
        Endpoint::MissingAction { .. } => Err(StoreError::bad_request(
            "POST /<id> needs an action: retain=1, or tag=<t> / untag=<t>",
        )
        .into()),
        Endpoint::MethodNotAllowed => Err(StoreError::Unsupported(format!(
            "method {} is not supported on this path",
            ctx.method
        ))
        .into()),
        Endpoint::NotFound => Err(StoreError::not_found().into()),
    }
}

fn home(ctx: &Ctx) -> Res {
    let base = &ctx.app.config().base_url;
    if ctx.html {
        return respond::html(StatusCode::OK, pages::home(base));
    }
    #[derive(Serialize)]
    struct Pointer<'a> {
        service: &'a str,
        version: &'a str,
        api: String,
        upload: String,
    }
    json(
        StatusCode::OK,
        &Pointer {
            service: api::SERVICE_NAME,
            version: api::SPEC_VERSION,
            api: format!("{base}/api"),
            upload: format!("curl --data-binary @notes.txt '{base}/?name=notes.txt'"),
        },
    )
}

/// An upload's parameters from the query (and a form's fields).
fn new_file(params: &Query) -> Result<NewFile, StoreError> {
    let req = NewFile {
        name: params.text("name")?,
        declared_type: None,
        ttl_secs: params
            .text("ttl")?
            .as_deref()
            .map(ttl::parse_ttl)
            .transpose()?,
        once: params.flag("once")?,
        tags: params.all("tag"),
        share: params.text("share")?,
    };
    req.validate()?;
    Ok(req)
}

async fn upload(ctx: &Ctx, body: Incoming) -> AppResult<Res> {
    let limits = ctx.app.config().limits.clone();
    let auth = ctx.retain_auth();
    let (req, upload) = if let Some(boundary) = multipart_boundary(&ctx.headers) {
        let boundary = boundary?;
        // The whole body may carry many files; the pool bounds what can fit.
        let body_limit = limits.pool_bytes.max(limits.file_bytes_max) + 1024 * 1024;
        declared_length(&ctx.headers, body_limit)?;
        // Check the URL's own parameters before reading anything.
        new_file(&ctx.query)?;
        let mp = body::read_multipart(
            &ctx.app,
            body,
            boundary,
            limits.file_bytes_max,
            limits.files_per_container_max,
        )
        .await?;
        let mut params = ctx.query.clone();
        params.extend(mp.fields);
        let mut req = new_file(&params)?;
        let mut files = mp.files;
        match files.len() {
            0 => return Err(StoreError::bad_request("the multipart body has no file part").into()),
            1 => {}
            _ => {
                return Err(StoreError::Unsupported(
                    "bundles (2 or more file parts) are not available in this build yet".into(),
                )
                .into())
            }
        }
        let part = files.pop().expect("one part");
        req.name = req.name.or(part.file_name);
        req.declared_type = part.content_type;
        req.validate()?;
        (req, part.upload)
    } else {
        declared_length(&ctx.headers, limits.file_bytes_max)?;
        let mut req = new_file(&ctx.query)?;
        req.declared_type = ctx
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut upload = ctx.app.begin_upload(limits.file_bytes_max)?;
        body::stream_into(body, &mut upload).await?;
        (req, upload)
    };
    let view = blocking(&ctx.app, move |app| app.create_file(&req, upload, auth)).await?;
    if ctx.html {
        return Ok(respond::html(StatusCode::CREATED, pages::uploaded(&view)));
    }
    let mut res = json(StatusCode::CREATED, &view);
    if let Ok(v) = HeaderValue::from_str(&view.url) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    Ok(res)
}

async fn get_file(ctx: &Ctx, id: String) -> AppResult<Res> {
    let intent = if ctx.method == Method::HEAD {
        ReadIntent::Head
    } else {
        ReadIntent::Get
    };
    let download = ctx.query.flag("download")?;
    let FileDownload { record, reader } =
        blocking(&ctx.app, move |app| app.open_file(&id, intent)).await?;
    let len = reader.len();
    let body = if intent == ReadIntent::Head {
        drop(reader);
        respond::empty()
    } else {
        http_body_util::BodyExt::boxed(respond::BlobBody::new(reader))
    };
    let mut res = http::Response::new(body);
    let h = res.headers_mut();
    let content_type = if record.text {
        format!("{}; charset=utf-8", record.content_type)
    } else {
        record.content_type.clone()
    };
    let inline = !download && renders_inline(&record.content_type);
    let disposition =
        content_disposition(if inline { "inline" } else { "attachment" }, &record.name);
    let header = |v: &str| {
        HeaderValue::from_str(v)
            .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"))
    };
    h.insert(header::CONTENT_TYPE, header(&content_type));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    // User bytes share the service's origin: never let a browser guess a
    // more dangerous type, and never let them run with the origin's rights.
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if needs_sandbox(&record.content_type) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(SANDBOX_CSP),
        );
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if record.once { "no-store" } else { "no-cache" }),
    );
    Ok(res)
}

async fn replace(ctx: &Ctx, id: String, body: Incoming) -> AppResult<Res> {
    let limit = ctx.app.config().limits.file_bytes_max;
    declared_length(&ctx.headers, limit)?;
    let auth = ctx.retain_auth();
    // Refuse before the upload: a binary file, a bundle, a missing token.
    let id2 = id.clone();
    blocking(&ctx.app, move |app| app.check_edit(&id2, auth)).await?;
    let mut upload = ctx.app.begin_upload(limit)?;
    body::stream_into(body, &mut upload).await?;
    let view = blocking(&ctx.app, move |app| app.replace_file(&id, upload, auth)).await?;
    Ok(json(StatusCode::OK, &view))
}

async fn append(ctx: &Ctx, id: String, body: Incoming) -> AppResult<Res> {
    let limit = ctx.app.config().limits.file_bytes_max;
    declared_length(&ctx.headers, limit)?;
    let auth = ctx.retain_auth();
    let id2 = id.clone();
    blocking(&ctx.app, move |app| app.check_edit(&id2, auth)).await?;
    // Bounded by the file size limit, so holding it whole is fine.
    let text = body::read_bounded(body, limit).await?;
    let view = blocking(&ctx.app, move |app| app.append_file(&id, &text, auth)).await?;
    Ok(json(StatusCode::OK, &view))
}

async fn browse(ctx: &Ctx) -> AppResult<Res> {
    let sort = match ctx.query.get("sort") {
        None | Some("created") => BrowseSort::Created,
        Some("name") => BrowseSort::Name,
        Some("size") => BrowseSort::Size,
        Some("expires") => BrowseSort::Expires,
        Some(other) => {
            return Err(StoreError::bad_request(format!(
                "invalid sort {other:?}: use created, name, size or expires"
            ))
            .into())
        }
    };
    let order = match ctx.query.get("order") {
        None | Some("desc") => SortOrder::Desc,
        Some("asc") => SortOrder::Asc,
        Some(other) => {
            return Err(StoreError::bad_request(format!(
                "invalid order {other:?}: use asc or desc"
            ))
            .into())
        }
    };
    let q = BrowseQuery {
        tags: ctx.query.all("tag"),
        q: ctx
            .query
            .get("q")
            .filter(|q| !q.is_empty())
            .map(str::to_string),
        sort,
        order,
    };
    let entries = blocking(&ctx.app, move |app| app.browse(&q)).await?;
    if ctx.html {
        Ok(respond::html(StatusCode::OK, pages::browse(&entries)))
    } else {
        Ok(json(StatusCode::OK, &entries))
    }
}
