//! One function per endpoint: parse what the request says, run the use case
//! on the blocking pool, render the answer. No domain rule is decided here.

mod admin;
mod dirs;
mod drops;
mod files;
mod gates;
mod mcp;
mod meta;
mod pics;
mod share;
mod tus;

mod admit;
mod ctx;
mod download;

pub(crate) use admit::handle;
pub(crate) use ctx::{blocking, Ctx};
pub(crate) use download::{serve_download, serve_zip};
pub(crate) use mcp::ToolCall;

use crate::body::RequestBody;
use store_app::AppResult;
use store_core::record::{dir_storage_key, gallery_storage_key, image_storage_key};
use store_core::StoreError;

use crate::respond::{self, Res};
use store_wire::router::Endpoint;

pub(crate) use store_wire::api::{OWNER_HEADER, PASSWORD_HEADER};

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
pub(super) async fn dispatch(ctx: Ctx, endpoint: Endpoint, body: RequestBody) -> AppResult<Res> {
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
        E::Browse { browse } => files::browse(&ctx, browse).await,
        E::Help => Ok(meta::help_index(&ctx)),
        E::HelpTopic { topic } => Ok(meta::help_topic(&ctx, &topic)?),
        E::WriteForAgents => Ok(meta::write_for_agents(&ctx)),
        E::CopyForAgents => Ok(meta::copy_for_agents(&ctx)),
        E::Releases => Ok(meta::releases(&ctx)),
        E::Robots => Ok(meta::robots()),
        E::LlmsTxt => Ok(meta::llms_txt(&ctx)),
        E::Healthz => Ok(meta::healthz()),
        E::Readyz => Ok(meta::readyz(&ctx).await),
        E::Static { file } => Ok(meta::static_file(&file)?),
        E::Upload { file } => files::upload(&ctx, file, body).await,
        E::GetFile { id, read } => files::get(&ctx, id, read).await,
        E::FileQr { id, qr } => share::file_qr(&ctx, id, qr).await,
        E::DirQr { key, qr } => share::dir_qr(&ctx, key, qr).await,
        E::GalleryQr { gid, qr } => share::gallery_qr(&ctx, gid, qr).await,
        E::GetBundleMember {
            id,
            filename,
            download,
        } => files::get_member(&ctx, id, filename, download).await,
        E::RetainFile { id } => files::retain(&ctx, id).await,
        E::TagFile { id, tags } => files::tag(&ctx, id, tags).await,
        E::SetFileTtl { id, ttl } => files::set_ttl(&ctx, id, ttl).await,
        E::SetFilePassword { id } => gates::set_password(&ctx, gates::Target::Id(id)).await,
        E::UnlockFile { id } => gates::unlock(&ctx, gates::Target::Id(id), body).await,
        E::ReplaceFile { id } => files::replace(&ctx, id, body).await,
        E::AppendFile { id } => files::append(&ctx, id, body).await,
        E::DeleteFile { id } => files::delete(&ctx, id).await,
        E::CreateDir { dir } => dirs::create(&ctx, dir, body).await,
        E::ListDirs { list } => dirs::list(&ctx, list).await,
        E::GetDir { key, zip } => dirs::get(&ctx, key, zip).await,
        E::AddToDir { key, name } => dirs::add(&ctx, key, name, body).await,
        E::ShowDir { key } => dirs::show(&ctx, key).await,
        E::RetainDir { key } => dirs::retain(&ctx, key).await,
        E::SetDirTtl { key, ttl } => dirs::set_ttl(&ctx, key, ttl).await,
        E::SetDirPassword { key } => gates::set_password(&ctx, gates::Target::Dir(key)).await,
        E::UnlockDir { key } => gates::unlock(&ctx, gates::Target::Dir(key), body).await,
        E::DeleteDir { key } => dirs::delete(&ctx, key).await,
        E::CloseDrop { key, close } => drops::close(&ctx, key, close).await,
        E::DropPage { token } => drops::page(&ctx, token).await,
        E::DropFiles { token, name } => drops::post(&ctx, token, name, body).await,
        E::DirHistory { key } => dirs::history(&ctx, key).await,
        E::GetDirFile {
            key,
            file,
            download,
        } => dirs::get_file(&ctx, key, file, download).await,
        E::PutDirFile { key, file } => dirs::put_file(&ctx, key, file, body).await,
        E::AppendDirFile { key, file } => dirs::append_file(&ctx, key, file, body).await,
        E::DeleteDirFile { key, file } => dirs::delete_file(&ctx, key, file).await,
        E::Import { import } => files::import(&ctx, import).await,
        E::PicsIndex => pics::index(&ctx).await,
        E::CreateGallery { gallery } => pics::create(&ctx, gallery, body).await,
        E::Gallery { gid, show } => pics::gallery(&ctx, gid, show).await,
        E::UploadImage { gid, image } => pics::upload(&ctx, gid, None, image, body).await,
        E::ImportImage { gid, import } => pics::import(&ctx, gid, None, import).await,
        E::AdminUploadImage { gid, secret, image } => {
            pics::upload(&ctx, gid, Some(secret), image, body).await
        }
        E::AdminImportImage {
            gid,
            secret,
            import,
        } => pics::import(&ctx, gid, Some(secret), import).await,
        E::Comment { gid } => pics::comment(&ctx, gid, body).await,
        E::LikeComment { gid, comment } => pics::like_comment(&ctx, gid, comment).await,
        E::GalleryAdmin { gid, secret, page } => pics::admin(&ctx, gid, secret, page, false).await,
        E::GalleryAdminJson { gid, secret, page } => {
            pics::admin(&ctx, gid, secret, page, true).await
        }
        E::GalleryAdminAction { gid, secret } => pics::admin_action(&ctx, gid, secret, body).await,
        E::Image { id, read } => pics::image(&ctx, id, read).await,
        E::LikeImage { id } => pics::like(&ctx, id).await,
        E::TusOptions => Ok(tus::answer(Ok(tus::options(&ctx)))),
        E::TusCreate => Ok(tus::answer(tus::create(&ctx, body).await)),
        E::TusUpload { uid } => Ok(tus::answer(tus::get(&ctx, uid).await)),
        E::TusPatch { uid } => Ok(tus::answer(tus::patch(&ctx, uid, body).await)),
        E::TusDelete { uid } => Ok(tus::answer(tus::delete(&ctx, uid).await)),
        E::Mcp => mcp::post(&ctx, body).await,
        E::McpStream | E::McpEnd => Ok(mcp::refuse(&ctx)),
        E::AdminList { list } => admin::list(&ctx, list).await,
        E::AdminBlock => admin::block(&ctx, body).await,
        E::AdminDelete => admin::delete(&ctx, body).await,
        E::AdminReports => admin::reports(&ctx).await,
        E::AdminClear => admin::clear(&ctx, body).await,
        E::ReportFile { id } => admin::report(&ctx, id, body).await,
        E::ReportDir { key } => admin::report(&ctx, dir_storage_key(&key), body).await,
        E::ReportGallery { gid } => admin::report(&ctx, gallery_storage_key(&gid), body).await,
        E::ReportImage { id } => admin::report(&ctx, image_storage_key(&id), body).await,
        e @ (E::MissingKeyword { .. } | E::ConflictingKeywords { .. } | E::MethodNotAllowed) => {
            Err(e
                .unrouted(&ctx.method)
                .unwrap_or(StoreError::Internal)
                .into())
        }
        E::NotFound => Err(StoreError::not_found().into()),
    }
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
        ..crate::body::PartRules::new(
            limits.file_bytes_max,
            limits.files_per_container_max,
            &limits.server,
        )
    };
    let stream = http_body_util::BodyExt::into_data_stream(body);
    let mp = crate::body::read_multipart(&intake, stream, boundary, rules).await?;
    // A form without files never reached the gate.
    if mp.files.is_empty() {
        ctx.check_form_token(&mp.fields)?;
    }
    Ok(mp)
}

/// A created object answers 201 with its URL in `Location`.
pub(crate) fn created(mut res: Res, url: &str) -> Res {
    *res.status_mut() = http::StatusCode::CREATED;
    store_wire::headers::created(res.headers_mut(), url);
    res
}
