//! What helps a person pass a link on: the QR codes of files, bundles,
//! dirs and galleries (`?qr=1`). They are drawn from the link the record
//! answers, after checking that what they point to is live; reading a
//! record this way never counts a download.

use http::StatusCode;
use store_app::AppResult;

use super::{blocking, Ctx};
use crate::respond::{self, Res};
use store_wire::params::{Parsed, QrFormat};
use store_wire::qr;
use store_wire::router::{url_for, RouteId};

/// GET /<id>?qr=1: a single file's or a bundle's link.
pub(super) async fn file_qr(ctx: &Ctx, id: String, qr: Parsed<QrFormat>) -> AppResult<Res> {
    let checked = id.clone();
    blocking(ctx, move |app| app.object_info(&checked)).await?;
    code(&url_for(ctx.base(), RouteId::GetFile, &[&id]), qr?)
}

/// GET /d/<key>?qr=1: a dir's link.
pub(super) async fn dir_qr(ctx: &Ctx, key: String, qr: Parsed<QrFormat>) -> AppResult<Res> {
    let target = super::gates::Target::Dir(key.clone());
    let read = super::gates::read_key(ctx, &target).await?;
    let dir = blocking(ctx, move |app| app.get_dir(&key, &read)).await?;
    code(&url_for(ctx.base(), RouteId::GetDir, &[&dir.key]), qr?)
}

/// GET /pics/g/<gid>?qr=1: a gallery's link.
pub(super) async fn gallery_qr(ctx: &Ctx, gid: String, qr: Parsed<QrFormat>) -> AppResult<Res> {
    let checked = gid.clone();
    blocking(ctx, move |app| app.check_gallery(&checked)).await?;
    code(&url_for(ctx.base(), RouteId::Gallery, &[&gid]), qr?)
}

/// The code in the form `qr=` asks for. A link's code never changes, but
/// whether the link is live does: caches may keep it an hour.
fn code(url: &str, format: QrFormat) -> AppResult<Res> {
    let mut res = match format {
        QrFormat::Svg => respond::text(StatusCode::OK, "image/svg+xml", qr::svg(url)?),
        QrFormat::Text => {
            respond::text(StatusCode::OK, "text/plain; charset=utf-8", qr::text(url)?)
        }
    };
    store_wire::headers::link_code(res.headers_mut());
    Ok(res)
}
