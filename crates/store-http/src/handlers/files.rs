//! Single files and bundles.

use crate::body::RequestBody;
use http::{header, StatusCode};
use store_app::{
    AppResult, AsOf, Download, FetchedRead, ImportRequest, NewDir, NewFile, Opened, Part, ReadKey,
    Uploaded,
};
use store_core::{FileRecord, Object, ReadIntent, StoreError};

use super::{blocking, created, serve_download, serve_zip, Ctx};
use crate::body::{self, multipart_boundary};
use crate::respond::{self, json, Res};
use store_wire::pages;
use store_wire::params::{self, AsDownload, Browse, FileRead, NewTtl, Parsed, TagEdit};
use store_wire::views::{BrowseEntry, BundleView, FileView, RetainView};

pub(super) fn home(ctx: &Ctx) -> Res {
    let base = ctx.base();
    if ctx.html {
        return respond::html(
            StatusCode::OK,
            pages::home(
                ctx.site(),
                base,
                &ctx.app.config().limits,
                ctx.app.config().upload_token.is_required(),
            ),
        );
    }
    json(StatusCode::OK, &store_wire::views::Pointer::new(base))
}

/// POST /: one body or part makes a single file, two or more parts a
/// bundle; with `share=<name>` they go into that named dir instead.
pub(super) async fn upload(ctx: &Ctx, file: Parsed<NewFile>, body: RequestBody) -> AppResult<Res> {
    let limits = ctx.app.config().limits.clone();
    let header_password = ctx.upload_password()?;
    // Check the URL's own parameters before reading anything.
    let req = file?;
    let (req, parts) = match multipart_boundary(&ctx.headers) {
        Some(boundary) => {
            let mp = super::container_parts(ctx, body, boundary, None).await?;
            if mp.files.is_empty() {
                return Err(StoreError::bad_request("the multipart body has no file part").into());
            }
            // A form's fields (name, ttl...) join the URL's.
            let req = params::with_form(&ctx.query, mp.fields, &limits)?;
            (req, mp.files)
        }
        None => {
            let intake = ctx.intake(limits.file_bytes_max)?;
            let declared = ctx
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let staged = body::receive(&intake, body, limits.file_bytes_max).await?;
            let part = Part {
                name: req.name.clone(),
                declared_type: declared,
                body: staged,
            };
            (req, vec![part])
        }
    };
    let mut req = req;
    if req.password.is_none() {
        req.password = header_password;
    }
    req.validate(&limits)?;
    if let Some(share) = req.share.clone() {
        return share_into_dir(ctx, req, share, parts).await;
    }
    let auth = ctx.retain_auth();
    let (res, url, owner) =
        match blocking(ctx, move |app| app.upload_parts(&req, parts, auth)).await? {
            Uploaded::Bundle(made) => {
                let view = BundleView::created(&made, ctx.base());
                let res = if ctx.html {
                    respond::html(StatusCode::OK, pages::bundle(ctx.site(), &view))
                } else {
                    json(StatusCode::OK, &view)
                };
                (res, view.url, made.owner_token)
            }
            Uploaded::File(made) => {
                let view = FileView::created(&made, ctx.base());
                let res = if ctx.html {
                    respond::html(StatusCode::OK, pages::file(ctx.site(), &view, None))
                } else {
                    json(StatusCode::OK, &view)
                };
                (res, view.url, made.owner_token)
            }
        };
    Ok(with_owner_token(created(res, &url), &owner))
}

/// A creation's answer also carries the owner token as a header, so a
/// client that keeps headers (`curl -i`, a script) need not parse JSON.
/// Never cached: the token is shown once.
pub(super) fn with_owner_token(mut res: Res, token: &str) -> Res {
    store_wire::headers::owner_token(res.headers_mut(), token);
    res
}

/// `share=<name>`: the upload goes into the named dir (create-or-get), with
/// the dir's sliding lifetime. The answer is the dir record.
async fn share_into_dir(
    ctx: &Ctx,
    req: NewFile,
    share: String,
    parts: Vec<Part>,
) -> AppResult<Res> {
    let new_dir = NewDir {
        name: Some(share),
        tags: req.tags.clone(),
        ttl_secs: req.ttl_secs,
        ..NewDir::default()
    };
    let access = ctx.access(false);
    let made = blocking(ctx, move |app| app.create_dir(&new_dir, parts, &access)).await?;
    let view = store_wire::views::DirView::made(&made, ctx.base());
    let res = json(StatusCode::OK, &view);
    Ok(match &made.owner_token {
        Some(token) => with_owner_token(created(res, &view.url), token),
        None => res,
    })
}

/// How much of a text file its info page shows.
const TEXT_PREVIEW_BYTES_MAX: u64 = 64 * 1024;

/// GET or HEAD /<id>: a single file's bytes, or a bundle: a zip for agents,
/// its index.html (or a listing) for browsers.
pub(super) async fn get(ctx: &Ctx, id: String, read: Parsed<FileRead>) -> AppResult<Res> {
    let read = read?;
    let key = read_key(ctx, &id).await?;
    // `?info=1`: the file's page (or record), which never burns a once=1
    // file and never serves its bytes.
    if read.info {
        let html = ctx.html;
        let (seen, preview) = blocking(ctx, move |app| {
            let seen = app.file_info(&id, &key)?;
            // The page shows the start of a text file, read from the bytes
            // this record names; bytes gone since leave it without one.
            let preview = html
                .then(|| app.text_preview(&seen.record, TEXT_PREVIEW_BYTES_MAX))
                .and_then(|read| read.ok().flatten());
            Ok((seen, preview))
        })
        .await?;
        let view = FileView::new(&seen.record, ctx.base(), seen.now);
        if html {
            let page = pages::file(ctx.site(), &view, preview.as_ref());
            return Ok(respond::html(StatusCode::OK, page));
        }
        return Ok(json(StatusCode::OK, &view));
    }
    let intent = ctx.intent();
    if let Some(thumb) = read.thumb.clone() {
        if let Some(d) = file_preview(ctx, &id, thumb).await? {
            return serve_download(ctx, d, Ok(read.download)).await;
        }
    }
    let Some(opened) = open(ctx, id.clone(), intent, read.download, &key).await? else {
        return page_before_bytes(ctx, id, key).await;
    };
    match opened {
        Opened::File(d) if d.link && ctx.html && !read.download => follow_link(ctx, d).await,
        Opened::File(d) if d.encrypted && ctx.html && !read.download => {
            drop(d);
            page_before_bytes(ctx, id, key).await
        }
        Opened::File(d) => serve_download(ctx, d, Ok(read.download)).await,
        Opened::Bundle(b) => {
            if ctx.html && !read.download {
                if let Some(page) = b.site_index() {
                    let (id, name) = (b.id.clone(), page.name.clone());
                    let d = blocking(ctx, move |app| app.open_member(&id, &name, &key)).await?;
                    return serve_download(ctx, d, Ok(read.download)).await;
                }
                let view = BundleView::new(&b, ctx.base());
                return Ok(respond::html(
                    StatusCode::OK,
                    pages::bundle(ctx.site(), &view),
                ));
            }
            if read.json {
                return Ok(json(StatusCode::OK, &BundleView::new(&b, ctx.base())));
            }
            Ok(serve_zip(ctx, &b.id, b.files))
        }
    }
}

/// Opens a file or bundle for GET or HEAD, or answers `None` for a
/// browser or a link previewer opening a file whose downloads are
/// counted: it gets a page first (see [`page_before_bytes`]).
///
/// Reads that write nothing (all but burning a once file) run here on the
/// executor when the records are local: a lookup in sled's cache and an
/// open(2), a few microseconds that a hop to the blocking pool would
/// multiply. Records across a socket are read on the pool. Either way
/// only a burn takes the key's lock: a plain read is one lookup of the
/// record, wherever it runs.
async fn open(
    ctx: &Ctx,
    id: String,
    intent: ReadIntent,
    download: bool,
    key: &ReadKey,
) -> AppResult<Option<Opened>> {
    if let Some(fetch) = ctx.app.fetch_object(&id) {
        let fetched = fetch.await?;
        return open_fetched(ctx, id, fetched, (intent, download), key).await;
    }
    if ctx.app.reads_wait() {
        let page_first = page_first(ctx, download);
        let key = key.clone();
        return blocking(ctx, move |app| {
            match app.read_without_writing(&id, intent, &key)? {
                Some(opened) => Ok(Some(opened)),
                None if page_first => Ok(None),
                None => app.read(&id, intent, &key).map(Some),
            }
        })
        .await;
    }
    // The plain read every other GET is asks nothing more of the request:
    // only a read that would count a download looks at who is asking.
    match ctx.app.read_without_writing(&id, intent, key)? {
        Some(opened) => Ok(Some(opened)),
        None if page_first(ctx, download) => Ok(None),
        None => {
            let key = key.clone();
            blocking(ctx, move |app| app.read(&id, intent, &key))
                .await
                .map(Some)
        }
    }
}

/// [`open`] with the record read on the executor, without a thread
/// ([`App::fetch_object`]): it is decided here too, and only what may
/// wait (bytes across a socket, a burn or a count) goes to the pool.
///
/// [`App::fetch_object`]: store_app::App::fetch_object
async fn open_fetched(
    ctx: &Ctx,
    id: String,
    fetched: Option<Object>,
    (intent, download): (ReadIntent, bool),
    key: &ReadKey,
) -> AppResult<Option<Opened>> {
    match ctx.app.read_fetched(&id, fetched, intent, key)? {
        FetchedRead::Opened(opened) => Ok(Some(opened)),
        FetchedRead::BytesWait(record) => blocking(ctx, move |app| app.open_fetched(record))
            .await
            .map(Some),
        FetchedRead::Writes if page_first(ctx, download) => Ok(None),
        FetchedRead::Writes => {
            let key = key.clone();
            blocking(ctx, move |app| app.read(&id, intent, &key))
                .await
                .map(Some)
        }
    }
}

/// What a read of the file or bundle `id` shows its password gate.
async fn read_key(ctx: &Ctx, id: &str) -> AppResult<ReadKey> {
    super::gates::read_key(ctx, &super::gates::Target::Id(id.to_string())).await
}

/// Whether a read that would count a download shows a page instead: to a
/// link previewer always, whatever the link asks for (it must never spend
/// a download), and to a browser unless it asked for the download.
fn page_first(ctx: &Ctx, download: bool) -> bool {
    store_wire::negotiate::is_link_previewer(&ctx.headers) || (ctx.html && !download)
}

/// The page a browser gets instead of a file's bytes. For ciphertext,
/// a page that fetches the bytes and decrypts them with the key in the
/// link's fragment. For a burn-after-reading (or download-limited) file,
/// what it is and a link that downloads (and so counts) it. A chat app's
/// link preview asks for HTML too, so it sees the page and never uses
/// the file up; only a person who follows the link does.
async fn page_before_bytes(ctx: &Ctx, id: String, key: ReadKey) -> AppResult<Res> {
    let seen = blocking(ctx, move |app| app.file_info(&id, &key)).await?;
    let view = FileView::new(&seen.record, ctx.base(), seen.now);
    let page = if seen.record.encrypted.is_some() {
        pages::encrypted_file(ctx.site(), &view)
    } else {
        pages::once_file(ctx.site(), &view)
    };
    Ok(unshared(respond::html(StatusCode::OK, page)))
}

/// A page that stands for a file whose link is all it takes to spend or
/// open it: never cached, never indexed, its URL never sent on to
/// another site.
pub(super) fn unshared(mut res: Res) -> Res {
    store_wire::headers::unshared(res.headers_mut());
    res
}

/// A file's preview, made on a media slot if it does not exist yet.
async fn file_preview(ctx: &Ctx, id: &str, thumb: String) -> AppResult<Option<Download>> {
    let (i, t) = (id.to_string(), thumb.clone());
    let made = blocking(ctx, move |app| app.file_preview_made(&i, &t)).await?;
    let app = std::sync::Arc::clone(&ctx.app);
    let id = id.to_string();
    let preview = move || app.file_thumb(&id, &thumb);
    if made {
        return ctx.shared.lanes.work.run(preview).await?;
    }
    ctx.shared.lanes.media_ticket()?.run(preview).await?
}

/// GET or HEAD /<id>/<filename>.
pub(super) async fn get_member(
    ctx: &Ctx,
    id: String,
    name: String,
    download: Parsed<AsDownload>,
) -> AppResult<Res> {
    let key = read_key(ctx, &id).await?;
    let d = blocking(ctx, move |app| app.open_member(&id, &name, &key)).await?;
    serve_download(ctx, d, download.map(|AsDownload(d)| d)).await
}

pub(super) async fn retain(ctx: &Ctx, id: String) -> AppResult<Res> {
    let auth = ctx.retain_auth();
    let kept = blocking(ctx, move |app| app.retain(&id, auth)).await?;
    Ok(json(
        StatusCode::OK,
        &RetainView::of_object(&kept, ctx.base()),
    ))
}

pub(super) async fn tag(ctx: &Ctx, id: String, tags: Parsed<TagEdit>) -> AppResult<Res> {
    let TagEdit { add, remove } = tags?;
    let access = ctx.access(false);
    let tagged = blocking(ctx, move |app| app.tag_file(&id, &add, &remove, &access)).await?;
    Ok(file_json(ctx, &tagged))
}

/// POST /<id>?ttl=: the owner's new expiry; answers the record.
pub(super) async fn set_ttl(ctx: &Ctx, id: String, ttl: Parsed<NewTtl>) -> AppResult<Res> {
    super::refuse_body(ctx, "POST /<id>?ttl=")?;
    let secs = ttl?.secs()?;
    let access = ctx.access(false);
    let seen = blocking(ctx, move |app| app.set_ttl(&id, secs, &access)).await?;
    Ok(match &seen.record {
        Object::Bundle(b) => json(StatusCode::OK, &BundleView::new(b, ctx.base())),
        Object::File(f) => json(StatusCode::OK, &FileView::new(f, ctx.base(), seen.now)),
        _ => unreachable!("set_ttl answers a file or a bundle"),
    })
}

pub(super) async fn delete(ctx: &Ctx, id: String) -> AppResult<Res> {
    let access = ctx.access(false);
    let id2 = id.clone();
    blocking(ctx, move |app| app.delete(&id2, &access)).await?;
    Ok(deleted(&id))
}

/// The answer to a successful delete.
pub(super) fn deleted(id: &str) -> Res {
    json(
        StatusCode::OK,
        &store_wire::views::Deleted { id, deleted: true },
    )
}

/// PUT /<id>: the gate is checked before the body is read, so a refused
/// edit costs the client no upload.
pub(super) async fn replace(ctx: &Ctx, id: String, body: RequestBody) -> AppResult<Res> {
    let limit = ctx.app.config().limits.file_bytes_max;
    let intake = ctx.intake(limit)?;
    let access = ctx.access(false);
    let (id2, a) = (id.clone(), access.clone());
    blocking(ctx, move |app| app.check_edit(&id2, &a)).await?;
    let staged = body::receive(&intake, body, limit).await?;
    let replaced = blocking(ctx, move |app| app.replace_file(&id, staged, &access)).await?;
    Ok(file_json(ctx, &replaced))
}

/// PATCH /<id>.
pub(super) async fn append(ctx: &Ctx, id: String, body: RequestBody) -> AppResult<Res> {
    let limit = ctx.app.config().limits.file_bytes_max;
    let intake = ctx.intake(limit)?;
    let access = ctx.access(false);
    let (id2, a) = (id.clone(), access.clone());
    blocking(ctx, move |app| app.check_edit(&id2, &a)).await?;
    // Bounded by the file size limit, so holding it whole is fine.
    let text = body::read_bounded(&intake, body, limit).await?;
    let appended = blocking(ctx, move |app| app.append_file(&id, &text, &access)).await?;
    Ok(file_json(ctx, &appended))
}

/// A single file's record as JSON.
fn file_json(ctx: &Ctx, seen: &AsOf<FileRecord>) -> Res {
    json(
        StatusCode::OK,
        &FileView::new(&seen.record, ctx.base(), seen.now),
    )
}

pub(super) async fn browse(ctx: &Ctx, browse: Parsed<Browse>) -> AppResult<Res> {
    let Browse { query: q, filter } = browse?;
    let files = blocking(ctx, move |app| app.browse(&q)).await?;
    let entries: Vec<BrowseEntry> = files
        .iter()
        .map(|f| BrowseEntry::new(f, ctx.base()))
        .collect();
    if ctx.html {
        Ok(respond::html(
            StatusCode::OK,
            pages::browse(ctx.site(), &entries, &filter),
        ))
    } else {
        Ok(json(StatusCode::OK, &entries))
    }
}

/// Largest link document read back to find its target; a bigger one is
/// served as a plain document.
const LINK_DOCUMENT_BYTES_MAX: u64 = 64 * 1024;

/// Browsers opening a `link=1` document are redirected to its target (read
/// from the document, which an agent may have edited). A document without
/// a valid target is served as it is, inline: a browser that asked for the
/// download never comes here.
async fn follow_link(ctx: &Ctx, d: Download) -> AppResult<Res> {
    if d.reader.len() > LINK_DOCUMENT_BYTES_MAX {
        return serve_download(ctx, d, Ok(false)).await;
    }
    let Download {
        name,
        content_type,
        text,
        once,
        link,
        encrypted,
        blob,
        modified,
        mut reader,
    } = d;
    let bytes = ctx
        .shared
        .lanes
        .reads
        .run(move || {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut reader, &mut bytes).map(|_| bytes)
        })
        .await?
        .map_err(|e| store_app::AppError::Storage(store_core::StorageError::new(e)))?;
    let target = std::str::from_utf8(&bytes)
        .ok()
        .and_then(store_core::import::link_target);
    if let Some(url) = target {
        let mut res = respond::redirect(&url);
        *res.status_mut() = StatusCode::FOUND;
        return Ok(res);
    }
    // The blob was read to look for a target: serve those same bytes.
    let reader = Box::new(crate::respond::BytesReader::new(bytes));
    serve_download(
        ctx,
        Download {
            name,
            content_type,
            text,
            once,
            link,
            encrypted,
            blob,
            modified,
            reader,
        },
        Ok(false),
    )
    .await
}

/// POST /?url=: fetch (or link) a remote document.
pub(super) async fn import(ctx: &Ctx, import: Parsed<ImportRequest>) -> AppResult<Res> {
    let header_password = ctx.upload_password()?;
    let mut req = import?;
    req.file.password = header_password;
    req.file.validate(&ctx.app.config().limits)?;
    let auth = ctx.retain_auth();
    let fetched = blocking(ctx, move |app| app.import(&req, auth)).await?;
    let view = FileView::created(&fetched, ctx.base());
    let res = created(json(StatusCode::OK, &view), &view.url);
    Ok(with_owner_token(res, &fetched.owner_token))
}
