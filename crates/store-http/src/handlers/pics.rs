//! Galleries (pics).

use std::sync::Arc;

use crate::body::RequestBody;
use http::{header, StatusCode};

use store_app::{AppResult, Visitor};
use store_core::StoreError;
use store_wire::router::{url_for, RouteId};

use super::{blocking, created, serve_download, Ctx};
use crate::body::{self, multipart_boundary};
use crate::respond::{self, json, Res};
use store_wire::pages;
use store_wire::params::{self as wire, Parsed};
use store_wire::query::Query;
use store_wire::views::{
    CommentView, Counters, GalleryCreated, GalleryEntry, GalleryView, ImageView, LikeView,
};

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
pub(super) fn private(mut res: Res) -> Res {
    store_wire::headers::private(res.headers_mut());
    res
}

pub(super) async fn index(ctx: &Ctx) -> AppResult<Res> {
    let records = blocking(ctx, |app| app.list_galleries()).await?;
    let list: Vec<GalleryEntry> = records
        .iter()
        .map(|g| GalleryEntry::new(g, ctx.base()))
        .collect();
    if ctx.html {
        return Ok(respond::html(
            StatusCode::OK,
            pages::pics_index(
                ctx.site(),
                &list,
                ctx.app.config().upload_token.is_required(),
            ),
        ));
    }
    Ok(json(StatusCode::OK, &list))
}

pub(super) async fn create(
    ctx: &Ctx,
    gallery: Parsed<wire::NewGallery>,
    body: RequestBody,
) -> AppResult<Res> {
    // A browser form sends its fields in the body; the URL's values win.
    let has_form = ctx
        .headers
        .get(header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() != b"0");
    let wire::NewGallery { name, listed } = if has_form {
        let fields = form(ctx, body).await?.pairs();
        ctx.check_form_token(&fields)?;
        wire::with_form(&ctx.query, fields, &ctx.app.config().limits)?
    } else {
        ctx.check_form_token(&[])?;
        gallery?
    };
    let made = blocking(ctx, move |app| app.create_gallery(name.as_deref(), listed)).await?;
    let view = GalleryCreated::new(&made, ctx.base());
    // A browser goes on to the admin page (whose address is the admin
    // key, kept by the page script under Your uploads): reloading it
    // posts nothing again, as reloading the answer to the form did.
    if let (true, Some(admin)) = (ctx.html, &view.admin_url) {
        return Ok(private(respond::redirect(admin)));
    }
    let res = if ctx.html {
        respond::html(StatusCode::OK, pages::gallery_created(ctx.site(), &view))
    } else {
        json(StatusCode::OK, &view)
    };
    let res = private(res);
    Ok(if made.created() {
        created(res, &view.url)
    } else {
        res
    })
}

pub(super) async fn gallery(
    ctx: &Ctx,
    gid: String,
    show: Parsed<wire::GalleryShow>,
) -> AppResult<Res> {
    let show = show?;
    if show.zip {
        let name = gid.clone();
        let members = blocking(ctx, move |app| app.gallery_members(&gid)).await?;
        return Ok(super::serve_zip(ctx, &name, members));
    }
    if show.likes {
        let tally = blocking(ctx, move |app| app.counters(&gid)).await?;
        return Ok(json(StatusCode::OK, &Counters::from(&tally)));
    }
    let wire::GalleryShow {
        page, stars, embed, ..
    } = show;
    let shown = blocking(ctx, move |app| app.gallery(&gid, page, &stars, None)).await?;
    let mut view = GalleryView::new(&shown, &ctx.app.config().limits, ctx.base());
    let form = uploads_form(ctx);
    if !form.open {
        view = view.for_admin_uploads();
    }
    if ctx.html {
        let mut res = respond::html(
            StatusCode::OK,
            pages::gallery(ctx.site(), &view, embed, &form),
        );
        if embed {
            store_wire::headers::embed(res.headers_mut());
        }
        return Ok(res);
    }
    Ok(json(StatusCode::OK, &view))
}

/// POST /pics/g/<gid>: the cheap refusals come first (a full image queue,
/// an unknown gallery, a bad length or boundary), before a byte is stored;
/// then the images go through the pipeline one after another, each on a
/// media slot.
/// POST /pics/g/<gid>, or with the admin's token in the path
/// (`admin`), POST /pics/g/<gid>/<secret>?upload=1.
pub(super) async fn upload(
    ctx: &Ctx,
    gid: String,
    admin: Option<String>,
    image: Parsed<wire::ImageUpload>,
    body: RequestBody,
) -> AppResult<Res> {
    let wire::ImageUpload { name } = image?;
    // Who may upload is decided before an image slot is taken.
    let (g, a) = (gid.clone(), admin.clone());
    blocking(ctx, move |app| app.check_gallery_upload(&g, a.as_deref())).await?;
    let ticket = ctx.shared.lanes.media_ticket()?;
    let mut parts = receive_images(ctx, body, name).await?;
    let single = parts.len() == 1;
    let mut images = vec![];
    for (name, staged) in parts.drain(..) {
        let (app, gid) = (Arc::clone(&ctx.app), gid.clone());
        let image = ticket
            .run(move || app.upload_image(&gid, name.as_deref(), staged))
            .await??;
        images.push(image);
    }
    let gallery = url_for(ctx.base(), RouteId::Gallery, &[&gid]);
    if ctx.html {
        // A form posts here: back to the page it was on.
        return Ok(match &admin {
            // The admin page's address is a secret: never cached, never
            // sent on as a referrer.
            Some(secret) => private(respond::redirect(&url_for(
                ctx.base(),
                RouteId::GalleryAdmin,
                &[&gid, secret],
            ))),
            None => respond::redirect(&gallery),
        });
    }
    let mut images: Vec<ImageView> = images
        .iter()
        .map(|i| ImageView::new(i, ctx.base()))
        .collect();
    if single {
        let image = images.pop().expect("one image");
        let url = image.url.clone();
        return Ok(created(json(StatusCode::OK, &image), &url));
    }
    let res = json(StatusCode::OK, &store_wire::views::ImageBatch { images });
    Ok(created(res, &gallery))
}

/// An upload's images, staged: multipart parts, or one raw body.
async fn receive_images(
    ctx: &Ctx,
    body: RequestBody,
    raw_name: Option<String>,
) -> AppResult<Vec<(Option<String>, store_app::Staged)>> {
    let limit = ctx.app.config().limits.pics_upload_bytes_max;
    let Some(boundary) = multipart_boundary(&ctx.headers) else {
        let intake = ctx.intake(limit)?;
        let staged = body::receive(&intake, body, limit).await?;
        return Ok(vec![(raw_name, staged)]);
    };
    let boundary = boundary?;
    let server = &ctx.app.config().limits.server;
    let intake = ctx.intake(limit.saturating_mul(server.batch_images_max))?;
    let stream = http_body_util::BodyExt::into_data_stream(body);
    let files_max = usize::try_from(server.batch_images_max).unwrap_or(usize::MAX);
    let rules = body::PartRules {
        gate: ctx.with_form_token(None),
        ..body::PartRules::new(limit, files_max, server)
    };
    let mp = body::read_multipart(&intake, stream, boundary, rules).await?;
    if mp.files.is_empty() {
        // A form without files never reached the gate.
        ctx.check_form_token(&mp.fields)?;
        return Err(StoreError::bad_request("the multipart body has no file part").into());
    }
    Ok(mp.files.into_iter().map(|p| (p.name, p.body)).collect())
}

pub(super) async fn import(
    ctx: &Ctx,
    gid: String,
    admin: Option<String>,
    import: Parsed<wire::ImageImport>,
) -> AppResult<Res> {
    let wire::ImageImport { url, name } = import?;
    let url = url?;
    let g = gid.clone();
    blocking(ctx, move |app| {
        app.check_gallery_upload(&g, admin.as_deref())
    })
    .await?;
    let ticket = ctx.shared.lanes.media_ticket()?;
    let app = Arc::clone(&ctx.app);
    let record = ticket
        .run(move || app.import_image(&gid, &url, name.as_deref()))
        .await??;
    let image = ImageView::new(&record, ctx.base());
    let link = image.url.clone();
    Ok(created(json(StatusCode::OK, &image), &link))
}

pub(super) async fn image(ctx: &Ctx, id: String, read: Parsed<wire::ImageRead>) -> AppResult<Res> {
    let wire::ImageRead { thumb, download } = read?;
    let needs_job = match thumb.clone() {
        Some(t) => {
            let i = id.clone();
            !blocking(ctx, move |app| app.image_preview_made(&i, &t)).await?
        }
        None => false,
    };
    let app = Arc::clone(&ctx.app);
    let open = move || app.open_image(&id, thumb.as_deref());
    let d = if needs_job {
        ctx.shared.lanes.media_ticket()?.run(open).await??
    } else {
        ctx.shared.lanes.work.run(open).await??
    };
    // `no-cache` (serve_download's default): an image an admin hides must
    // stop being served at once, from caches too.
    serve_download(ctx, d, download.map(|wire::AsDownload(d)| d)).await
}

pub(super) async fn like(ctx: &Ctx, id: String) -> AppResult<Res> {
    let v = visitor(ctx);
    let liked = blocking(ctx, move |app| app.like_image(&id, &v)).await?;
    if ctx.html {
        let gallery = url_for(ctx.base(), RouteId::Gallery, &[&liked.gallery]);
        return Ok(respond::redirect(&pages::image_anchor(&gallery, &liked.id)));
    }
    Ok(json(StatusCode::OK, &LikeView::from(&liked)))
}

pub(super) async fn like_comment(
    ctx: &Ctx,
    gid: String,
    comment: Parsed<wire::CommentLike>,
) -> AppResult<Res> {
    let wire::CommentLike(cid) = comment?;
    let v = visitor(ctx);
    let liked = blocking(ctx, move |app| app.like_comment(&gid, &cid, &v)).await?;
    if ctx.html {
        let gallery = url_for(ctx.base(), RouteId::Gallery, &[&liked.gallery]);
        return Ok(respond::redirect(&pages::comments_anchor(&gallery)));
    }
    Ok(json(StatusCode::OK, &LikeView::from(&liked)))
}

/// A small form body: JSON or urlencoded, by Content-Type.
pub(super) async fn form(ctx: &Ctx, body: RequestBody) -> AppResult<Query> {
    let form_bytes_max = ctx.app.config().limits.server.form_bytes_max;
    let intake = ctx.intake(form_bytes_max)?;
    let bytes = body::read_bounded(&intake, body, form_bytes_max).await?;
    let content_type = ctx
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    Ok(wire::form_body(content_type, &bytes)?)
}

pub(super) async fn comment(ctx: &Ctx, gid: String, body: RequestBody) -> AppResult<Res> {
    let wire::Comment { name, text } = wire::Comment::parse(&form(ctx, body).await?);
    let v = visitor(ctx);
    let g = gid.clone();
    let comment = blocking(ctx, move |app| app.comment(&g, &v, name.as_deref(), &text)).await?;
    let location = pages::comments_anchor(&url_for(ctx.base(), RouteId::Gallery, &[&gid]));
    if ctx.html {
        return Ok(respond::redirect(&location));
    }
    Ok(created(
        json(StatusCode::OK, &CommentView::from(&comment)),
        &location,
    ))
}

/// What a gallery's upload form needs to know of the server's settings.
fn uploads_form(ctx: &Ctx) -> pages::UploadForm {
    let config = ctx.app.config();
    pages::UploadForm {
        token_required: config.upload_token.is_required(),
        open: config.gallery_uploads == store_core::gallery::GalleryUploads::Open,
    }
}

pub(super) async fn admin(
    ctx: &Ctx,
    gid: String,
    secret: String,
    page: Parsed<wire::AdminPage>,
    as_json: bool,
) -> AppResult<Res> {
    let wire::AdminPage(page) = page?;
    let s = secret.clone();
    let shown = blocking(ctx, move |app| app.gallery(&gid, page, &[], Some(&s))).await?;
    let view = GalleryView::new(&shown, &ctx.app.config().limits, ctx.base());
    if as_json || !ctx.html {
        return Ok(private(json(StatusCode::OK, &view)));
    }
    Ok(private(respond::html(
        StatusCode::OK,
        pages::gallery_admin(ctx.site(), &view, &secret, &uploads_form(ctx)),
    )))
}

pub(super) async fn admin_action(
    ctx: &Ctx,
    gid: String,
    secret: String,
    body: RequestBody,
) -> AppResult<Res> {
    // A wrong secret is a 404 whatever the form says (SPEC.md).
    let (g, s) = (gid.clone(), secret.clone());
    blocking(ctx, move |app| app.check_gallery_admin(&g, &s)).await?;
    let wire::AdminForm { action, target } = wire::AdminForm::parse(&form(ctx, body).await?)?;
    let (g, s) = (gid.clone(), secret.clone());
    blocking(ctx, move |app| app.administer(&g, &s, action, &target)).await?;
    if ctx.html {
        let admin = url_for(ctx.base(), RouteId::GalleryAdmin, &[&gid, &secret]);
        return Ok(private(respond::redirect(&admin)));
    }
    Ok(private(json(
        StatusCode::OK,
        &store_wire::views::Done { ok: true },
    )))
}
