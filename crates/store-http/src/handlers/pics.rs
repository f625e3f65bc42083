//! Galleries (pics).

use http::{header, HeaderValue, StatusCode};
use hyper::body::Incoming;
use serde::{Deserialize, Serialize};
use store_app::{AdminAction, AppResult, Visitor};
use store_core::StoreError;

use super::{blocking, created, serve_download, Ctx};
use crate::body::{self, declared_length, multipart_boundary};
use crate::pages;
use crate::query::Query;
use crate::respond::{self, json, Res};

/// Largest comment or admin form body: a comment is at most 540
/// characters, a form a few fields.
const FORM_BYTES_MAX: u64 = 16 * 1024;
/// Files in one multipart gallery upload.
const BATCH_FILES_MAX: usize = 50;

fn visitor(ctx: &Ctx) -> Visitor {
    Visitor {
        ip: ctx.client.to_string(),
        user_agent: ctx
            .headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
    }
}

/// Admin pages and answers: never cached, never leaking their URL (it
/// holds the secret) to another site.
fn private(mut res: Res) -> Res {
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    res
}

pub(super) async fn index(ctx: &Ctx) -> AppResult<Res> {
    let list = blocking(&ctx.app, |app| app.list_galleries()).await?;
    if ctx.html {
        return Ok(respond::html(StatusCode::OK, pages::pics_index(&list)));
    }
    Ok(json(StatusCode::OK, &list))
}

pub(super) async fn create(ctx: &Ctx, body: Incoming) -> AppResult<Res> {
    // A browser form sends its fields in the body; the URL's values win.
    let has_form = ctx
        .headers
        .get(header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() != b"0");
    let params = if has_form {
        super::merged(&ctx.query, form(ctx, body).await?.pairs())
    } else {
        ctx.query.clone()
    };
    let name = params
        .get("name")
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let listed = params.flag("listed")?;
    let (view, was_created) = blocking(&ctx.app, move |app| {
        app.create_gallery(name.as_deref(), listed)
    })
    .await?;
    let res = if ctx.html {
        respond::html(StatusCode::OK, pages::gallery_created(&view))
    } else {
        json(StatusCode::OK, &view)
    };
    let res = private(res);
    Ok(if was_created {
        created(res, &view.url)
    } else {
        res
    })
}

pub(super) async fn gallery(ctx: &Ctx, gid: String) -> AppResult<Res> {
    if ctx.query.flag("likes")? {
        let counters = blocking(&ctx.app, move |app| app.counters(&gid)).await?;
        return Ok(json(StatusCode::OK, &counters));
    }
    let page: usize = match ctx.query.get("p") {
        None => 1,
        Some(p) => p
            .parse()
            .map_err(|_| StoreError::bad_request("p must be a page number"))?,
    };
    let stars = ctx.query.all("stars");
    let embed = ctx.query.flag("embed")?;
    let view = blocking(&ctx.app, move |app| app.gallery(&gid, page, &stars, None)).await?;
    if ctx.html {
        let mut res = respond::html(StatusCode::OK, pages::gallery(&view, embed));
        if embed {
            // The embed view is meant to be framed by other sites.
            res.headers_mut().insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(respond::EMBED_CSP),
            );
        }
        return Ok(res);
    }
    Ok(json(StatusCode::OK, &view))
}

#[derive(Serialize)]
struct Batch {
    images: Vec<store_app::ImageView>,
}

pub(super) async fn upload(ctx: &Ctx, gid: String, body: Incoming) -> AppResult<Res> {
    let limit = ctx.app.config().limits.pics_upload_bytes_max;
    let mut parts = match multipart_boundary(&ctx.headers) {
        Some(boundary) => {
            declared_length(&ctx.headers, limit.saturating_mul(BATCH_FILES_MAX as u64))?;
            let mp = body::read_multipart(
                &ctx.app,
                http_body_util::BodyExt::into_data_stream(body),
                boundary?,
                limit,
                BATCH_FILES_MAX,
            )
            .await?;
            if mp.files.is_empty() {
                return Err(StoreError::bad_request("the multipart body has no file part").into());
            }
            mp.files
                .into_iter()
                .map(|p| (p.name, p.body))
                .collect::<Vec<_>>()
        }
        None => {
            declared_length(&ctx.headers, limit)?;
            let staged = body::receive(&ctx.app, body, limit).await?;
            vec![(ctx.query.get("name").map(str::to_string), staged)]
        }
    };
    let single = parts.len() == 1;
    let mut images = vec![];
    for (name, staged) in parts.drain(..) {
        let gid = gid.clone();
        images.push(
            blocking(&ctx.app, move |app| {
                app.upload_image(&gid, name.as_deref(), staged)
            })
            .await?,
        );
    }
    if ctx.html {
        return Ok(respond::redirect(&format!(
            "{}/pics/g/{gid}",
            ctx.app.config().base_url
        )));
    }
    if single {
        let image = images.pop().expect("one image");
        let url = image.url.clone();
        return Ok(created(json(StatusCode::OK, &image), &url));
    }
    let res = json(StatusCode::OK, &Batch { images });
    Ok(created(
        res,
        &format!("{}/pics/g/{gid}", ctx.app.config().base_url),
    ))
}

pub(super) async fn import(ctx: &Ctx, gid: String) -> AppResult<Res> {
    let url = ctx
        .query
        .text("url")?
        .ok_or_else(|| StoreError::bad_request("url must not be empty"))?;
    let name = ctx.query.get("name").map(str::to_string);
    let image = blocking(&ctx.app, move |app| {
        app.import_image(&gid, &url, name.as_deref())
    })
    .await?;
    let link = image.url.clone();
    Ok(created(json(StatusCode::OK, &image), &link))
}

pub(super) async fn image(ctx: &Ctx, id: String) -> AppResult<Res> {
    let thumb = ctx.query.get("thumb").map(str::to_string);
    let d = blocking(&ctx.app, move |app| app.open_image(&id, thumb.as_deref())).await?;
    // `no-cache` (serve_download's default): an image an admin hides must
    // stop being served at once, from caches too.
    serve_download(ctx, d)
}

pub(super) async fn like(ctx: &Ctx, id: String) -> AppResult<Res> {
    let v = visitor(ctx);
    let view = blocking(&ctx.app, move |app| app.like_image(&id, &v)).await?;
    if ctx.html {
        let base = &ctx.app.config().base_url;
        return Ok(respond::redirect(&format!(
            "{base}/pics/g/{}#{}",
            view.gallery, view.id
        )));
    }
    Ok(json(StatusCode::OK, &view))
}

pub(super) async fn like_comment(ctx: &Ctx, gid: String) -> AppResult<Res> {
    let cid = ctx
        .query
        .text("clike")?
        .ok_or_else(|| StoreError::bad_request("clike names a comment id"))?;
    let v = visitor(ctx);
    let view = blocking(&ctx.app, move |app| app.like_comment(&gid, &cid, &v)).await?;
    if ctx.html {
        let base = &ctx.app.config().base_url;
        return Ok(respond::redirect(&format!(
            "{base}/pics/g/{}#comments",
            view.gallery
        )));
    }
    Ok(json(StatusCode::OK, &view))
}

#[derive(Deserialize)]
struct CommentForm {
    name: Option<String>,
    text: String,
}

/// A small form body: JSON or urlencoded, by Content-Type.
async fn form(ctx: &Ctx, body: Incoming) -> AppResult<Query> {
    declared_length(&ctx.headers, FORM_BYTES_MAX)?;
    let bytes = body::read_bounded(body, FORM_BYTES_MAX).await?;
    let is_json = ctx
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("json"));
    if is_json {
        let f: CommentForm = serde_json::from_slice(&bytes)
            .map_err(|e| StoreError::bad_request(format!("invalid JSON body: {e}")))?;
        let mut q = Query::default();
        q.extend(f.name.map(|n| ("name".to_string(), n)));
        q.extend([("text".to_string(), f.text)]);
        return Ok(q);
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| StoreError::bad_request("the form is not UTF-8"))?;
    Ok(Query::parse(text))
}

pub(super) async fn comment(ctx: &Ctx, gid: String, body: Incoming) -> AppResult<Res> {
    let f = form(ctx, body).await?;
    let name = f.get("name").map(str::to_string);
    let text = f.get("text").unwrap_or("").to_string();
    let v = visitor(ctx);
    let g = gid.clone();
    let comment = blocking(&ctx.app, move |app| {
        app.comment(&g, &v, name.as_deref(), &text)
    })
    .await?;
    if ctx.html {
        return Ok(respond::redirect(&format!(
            "{}/pics/g/{gid}#comments",
            ctx.app.config().base_url
        )));
    }
    Ok(created(
        json(StatusCode::OK, &comment),
        &format!("{}/pics/g/{gid}#comments", ctx.app.config().base_url),
    ))
}

pub(super) async fn admin(ctx: &Ctx, gid: String, secret: String, as_json: bool) -> AppResult<Res> {
    let page: usize = ctx.query.get("p").and_then(|p| p.parse().ok()).unwrap_or(1);
    let s = secret.clone();
    let view = blocking(&ctx.app, move |app| app.gallery(&gid, page, &[], Some(&s))).await?;
    if as_json || !ctx.html {
        return Ok(private(json(StatusCode::OK, &view)));
    }
    Ok(private(respond::html(
        StatusCode::OK,
        pages::gallery_admin(&view, &secret),
    )))
}

pub(super) async fn admin_action(
    ctx: &Ctx,
    gid: String,
    secret: String,
    body: Incoming,
) -> AppResult<Res> {
    let f = form(ctx, body).await?;
    let action = AdminAction::parse(f.get("action").unwrap_or(""))?;
    let target = f
        .text("id")?
        .ok_or_else(|| StoreError::bad_request("id names the image or comment"))?;
    let (g, s) = (gid.clone(), secret.clone());
    blocking(&ctx.app, move |app| app.administer(&g, &s, action, &target)).await?;
    if ctx.html {
        return Ok(private(respond::redirect(&format!(
            "{}/pics/g/{gid}/{secret}",
            ctx.app.config().base_url
        ))));
    }
    #[derive(Serialize)]
    struct Done {
        ok: bool,
    }
    Ok(private(json(StatusCode::OK, &Done { ok: true })))
}
