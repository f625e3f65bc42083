//! Dirs and show-dirs.

use crate::body::RequestBody;
use http::{header, StatusCode};
use store_app::{AppResult, NewDir, Part};
use store_core::StoreError;

use super::files::deleted;
use super::{blocking, created, serve_download, serve_zip, Ctx};
use crate::body::{self, multipart_boundary, Intake};
use crate::respond::{self, json, Res};
use store_wire::pages;
use store_wire::params::{self, AsDownload, AsZip, DirList, NewTtl, Parsed, RawName};
use store_wire::router::with_query;
use store_wire::views::{DirView, HistoryView, RetainView};

/// Reads the files a dir request carries: multipart parts (with their form
/// fields), or one raw body named by `name=`, or nothing at all.
pub(super) async fn read_parts<'a>(
    ctx: &'a Ctx,
    body: RequestBody,
    raw_name: Option<String>,
    gate: Option<body::Gate<'a>>,
) -> AppResult<(Vec<Part>, Vec<(String, String)>)> {
    let limits = ctx.app.config().limits.clone();
    if let Some(boundary) = multipart_boundary(&ctx.headers) {
        let mp = super::container_parts(ctx, body, boundary, gate).await?;
        return Ok((mp.files, mp.fields));
    }
    // No body at all is fine where files are optional; a body must say its
    // length like any other. With `name=` even an empty body is a file.
    let has_body = body::declares_body(&ctx.headers)
        || (raw_name.is_some() && ctx.headers.contains_key(header::CONTENT_LENGTH));
    if !has_body {
        return Ok((vec![], vec![]));
    }
    let intake = ctx.intake(limits.file_bytes_max)?;
    let Some(name) = raw_name else {
        return Err(StoreError::bad_request(
            "send files as multipart/form-data parts, or a raw body with name=<filename>",
        )
        .into());
    };
    let declared = ctx
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let staged = body::receive(&intake, body, limits.file_bytes_max).await?;
    Ok((
        vec![Part {
            name: Some(name),
            declared_type: declared,
            body: staged,
        }],
        vec![],
    ))
}

/// POST /?dir=1: create-or-get.
pub(super) async fn create(ctx: &Ctx, dir: Parsed<NewDir>, body: RequestBody) -> AppResult<Res> {
    // The URL's own parameters are checked before the body is read; a
    // form's fields then join them.
    let header_password = ctx.upload_password()?;
    dir?;
    let (parts, fields) = read_parts(ctx, body, None, None).await?;
    let mut req: NewDir = params::with_form(&ctx.query, fields, &ctx.app.config().limits)?;
    if req.password.is_none() {
        req.password = header_password;
    }
    req.validate(&ctx.app.config().limits)?;
    let access = ctx.access(false);
    let made = blocking(ctx, move |app| app.create_dir(&req, parts, &access)).await?;
    let view = DirView::made(&made, ctx.base());
    let res = if ctx.html {
        respond::html(
            StatusCode::OK,
            pages::dir(ctx.site(), &view, &[], &ctx.app.config().limits),
        )
    } else {
        json(StatusCode::OK, &view)
    };
    Ok(match &made.owner_token {
        Some(token) => super::files::with_owner_token(created(res, &view.url), token),
        None => res,
    })
}

/// POST /d/<key>: the gate is checked before any body is read.
pub(super) async fn add(
    ctx: &Ctx,
    key: String,
    name: Parsed<RawName>,
    body: RequestBody,
) -> AppResult<Res> {
    let mut access = ctx.access(true);
    let gate = check_write(ctx, &key, &access).await;
    // A browser form without JavaScript can only send the write token as a
    // form field. The page puts that field before the files, so the gate is
    // checked with it before the first file is written.
    let form_token = matches!(
        gate,
        Err(store_app::AppError::Domain(StoreError::WriteDenied(_)))
    ) && ctx.html
        && access.write_token.is_none()
        && multipart_boundary(&ctx.headers).is_some();
    if !form_token {
        gate?;
    }
    let early: Option<body::Gate<'_>> = form_token.then(|| {
        let (key, access) = (key.clone(), access.clone());
        Box::new(move |fields: Vec<(String, String)>| {
            Box::pin(async move {
                let with_token = store_app::Access {
                    write_token: params::form_write_token(fields),
                    ..access
                };
                check_write(ctx, &key, &with_token).await
            })
                as std::pin::Pin<Box<dyn std::future::Future<Output = AppResult<()>> + Send>>
        }) as body::Gate<'_>
    });
    let (parts, fields) = read_parts(ctx, body, name?.0, early).await?;
    if form_token {
        // Checked again: a form without files never reached the gate.
        access.write_token = params::form_write_token(fields);
        check_write(ctx, &key, &access).await?;
    }
    let dir = blocking(ctx, move |app| app.add_to_dir(&key, parts, &access)).await?;
    if ctx.html {
        return Ok(respond::redirect(&DirView::summary(&dir, ctx.base()).url));
    }
    Ok(dir_json(ctx, &dir))
}

/// A drop dir's page opened by its owner link (`?owner=`): its links
/// carry the token too, since only its owner may follow them.
fn owner_links(ctx: &Ctx, view: &mut DirView) {
    let Some(token) = ctx.owner_in_url() else {
        return;
    };
    let owned = |url: &str| with_query(url, store_wire::routes::OWNER.name, &token);
    view.url = owned(&view.url);
    for f in &mut view.files {
        f.url = owned(&f.url);
    }
}

/// What a read of the dir `key` shows its password gate.
async fn read_key(ctx: &Ctx, key: &str) -> AppResult<store_app::ReadKey> {
    super::gates::read_key(ctx, &super::gates::Target::Dir(key.to_string())).await
}

/// Whether `access` may add files to the dir `key`.
async fn check_write(ctx: &Ctx, key: &str, access: &store_app::Access) -> AppResult<()> {
    let (k, a) = (key.to_string(), access.clone());
    blocking(ctx, move |app| app.check_dir_write(&k, None, &a)).await
}

/// GET /d/<key>: the listing (JSON or HTML), or `?zip=1`.
pub(super) async fn get(ctx: &Ctx, key: String, zip: Parsed<AsZip>) -> AppResult<Res> {
    let AsZip(zip) = zip?;
    let read = read_key(ctx, &key).await?;
    let record = blocking(ctx, move |app| app.get_dir(&key, &read)).await?;
    if zip {
        return Ok(serve_zip(ctx, &record.key, record.files));
    }
    let mut view = DirView::new(&record, ctx.base());
    if ctx.html && record.drop.is_some() {
        owner_links(ctx, &mut view);
    }
    if ctx.html {
        let history: Vec<_> = record
            .history
            .iter()
            .take(20)
            .map(HistoryView::from)
            .collect();
        return Ok(respond::html(
            StatusCode::OK,
            pages::dir(ctx.site(), &view, &history, &ctx.app.config().limits),
        ));
    }
    Ok(json(StatusCode::OK, &view))
}

pub(super) async fn show(ctx: &Ctx, key: String) -> AppResult<Res> {
    let auth = ctx.retain_auth();
    let dir = blocking(ctx, move |app| app.show_dir(&key, auth)).await?;
    Ok(dir_json(ctx, &dir))
}

pub(super) async fn retain(ctx: &Ctx, key: String) -> AppResult<Res> {
    let auth = ctx.retain_auth();
    let dir = blocking(ctx, move |app| app.retain_dir(&key, auth)).await?;
    Ok(json(StatusCode::OK, &RetainView::of_dir(&dir, ctx.base())))
}

/// POST /d/<key>?ttl=: the owner's new sliding lifetime; answers the dir.
pub(super) async fn set_ttl(ctx: &Ctx, key: String, ttl: Parsed<NewTtl>) -> AppResult<Res> {
    super::refuse_body(ctx, "POST /d/<key>?ttl=")?;
    let secs = ttl?.secs()?;
    let access = ctx.access(false);
    let dir = blocking(ctx, move |app| app.set_dir_ttl(&key, secs, &access)).await?;
    Ok(dir_json(ctx, &dir))
}

pub(super) async fn delete(ctx: &Ctx, key: String) -> AppResult<Res> {
    let access = ctx.access(true);
    let k = key.clone();
    blocking(ctx, move |app| app.delete_dir(&k, &access)).await?;
    Ok(deleted(&key))
}

pub(super) async fn history(ctx: &Ctx, key: String) -> AppResult<Res> {
    let read = read_key(ctx, &key).await?;
    if ctx.html {
        let record = blocking(ctx, move |app| app.get_dir(&key, &read)).await?;
        let view = DirView::new(&record, ctx.base());
        let history: Vec<_> = record.history.iter().map(HistoryView::from).collect();
        let title = view.name.clone().unwrap_or_else(|| view.id.clone());
        return Ok(respond::html(
            StatusCode::OK,
            pages::dir_history(ctx.site(), &view.url, &title, &history),
        ));
    }
    let entries = blocking(ctx, move |app| app.dir_history(&key, &read)).await?;
    let views: Vec<HistoryView> = entries.iter().map(HistoryView::from).collect();
    Ok(json(StatusCode::OK, &views))
}

pub(super) async fn get_file(
    ctx: &Ctx,
    key: String,
    name: String,
    download: Parsed<AsDownload>,
) -> AppResult<Res> {
    let read = read_key(ctx, &key).await?;
    let d = blocking(ctx, move |app| app.open_dir_file(&key, &name, &read)).await?;
    serve_download(ctx, d, download.map(|AsDownload(d)| d)).await
}

/// The checks a PUT or PATCH of a dir file passes before its body is read
/// (length, write gate, text file), so a refused edit costs no upload.
/// Returns the body limit, its intake and the access to use.
async fn file_write_gate(
    ctx: &Ctx,
    key: &str,
    name: &str,
) -> AppResult<(u64, Intake, store_app::Access)> {
    let limit = ctx.app.config().limits.file_bytes_max;
    let intake = ctx.intake(limit)?;
    let access = ctx.access(true);
    let (k, n, a) = (key.to_string(), name.to_string(), access.clone());
    blocking(ctx, move |app| app.check_dir_write(&k, Some(&n), &a)).await?;
    Ok((limit, intake, access))
}

/// PUT /d/<key>/<file>: replaces a text file, or creates one.
pub(super) async fn put_file(
    ctx: &Ctx,
    key: String,
    name: String,
    body: RequestBody,
) -> AppResult<Res> {
    let (limit, intake, access) = file_write_gate(ctx, &key, &name).await?;
    let staged = body::receive(&intake, body, limit).await?;
    let dir = blocking(ctx, move |app| {
        app.put_dir_file(&key, &name, staged, &access)
    })
    .await?;
    Ok(dir_json(ctx, &dir))
}

/// PATCH /d/<key>/<file>.
pub(super) async fn append_file(
    ctx: &Ctx,
    key: String,
    name: String,
    body: RequestBody,
) -> AppResult<Res> {
    let (limit, intake, access) = file_write_gate(ctx, &key, &name).await?;
    let text = body::read_bounded(&intake, body, limit).await?;
    let dir = blocking(ctx, move |app| {
        app.append_dir_file(&key, &name, &text, &access)
    })
    .await?;
    Ok(dir_json(ctx, &dir))
}

pub(super) async fn delete_file(ctx: &Ctx, key: String, name: String) -> AppResult<Res> {
    let access = ctx.access(true);
    let dir = blocking(ctx, move |app| app.delete_dir_file(&key, &name, &access)).await?;
    Ok(dir_json(ctx, &dir))
}

/// A dir's record as JSON, the answer to a write. A password-protected
/// dir's files are listed to its owner only: a writer (with the write
/// token, or anyone where the dir has none) learns its size, not what is
/// in it.
fn dir_json(ctx: &Ctx, dir: &store_core::DirRecord) -> Res {
    let owner = ctx.access(false).owner;
    let proof = store_core::OwnerProof::of(dir.owner.as_ref(), owner.as_deref());
    let view = if dir.password.is_some() && proof != store_core::OwnerProof::Owner {
        DirView::summary(dir, ctx.base())
    } else {
        DirView::new(dir, ctx.base())
    };
    json(StatusCode::OK, &view)
}

/// GET /d: dirs created with listed=1.
pub(super) async fn list(ctx: &Ctx, list: Parsed<DirList>) -> AppResult<Res> {
    let DirList { query: q, shown_q } = list?;
    let records = blocking(ctx, move |app| app.list_dirs(&q)).await?;
    let dirs: Vec<DirView> = records
        .iter()
        .map(|d| DirView::summary(d, ctx.base()))
        .collect();
    if ctx.html {
        return Ok(respond::html(
            StatusCode::OK,
            pages::dir_index(ctx.site(), &dirs, &shown_q),
        ));
    }
    Ok(json(StatusCode::OK, &dirs))
}
