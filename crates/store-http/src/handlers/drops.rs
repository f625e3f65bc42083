//! Drop links (CONTRACT.md "Private sharing"): the link's page or
//! how-to, the files dropped through it, and its owner closing it. What
//! a dropper gets back is the names and sizes taken, never a URL of the
//! dir or anything of what others dropped.

use http::StatusCode;
use store_app::AppResult;
use store_wire::pages;
use store_wire::params::{CloseDrop, Parsed, RawName};
use store_wire::router::{url_for, RouteId};
use store_wire::views::{DirView, DropRoomView, DroppedView};

use super::{blocking, Ctx};
use crate::body::RequestBody;
use crate::respond::{self, json, Res};

/// GET /drop/<token>: an upload page for browsers, the how-to for agents.
pub(super) async fn page(ctx: &Ctx, token: String) -> AppResult<Res> {
    let t = token.clone();
    let room = blocking(ctx, move |app| app.drop_room(&t)).await?;
    let url = url_for(ctx.base(), RouteId::DropPage, &[&token]);
    if ctx.html {
        let page = pages::drop_page(ctx.site(), &url, &room, &[]);
        return Ok(super::files::unshared(respond::html(StatusCode::OK, page)));
    }
    Ok(json(StatusCode::OK, &DropRoomView::new(&room, &url)))
}

/// POST /drop/<token>: files dropped; 201 with the names and sizes taken.
/// A token that opens nothing is refused before the body is read.
pub(super) async fn post(
    ctx: &Ctx,
    token: String,
    name: Parsed<RawName>,
    body: RequestBody,
) -> AppResult<Res> {
    let t = token.clone();
    blocking(ctx, move |app| app.drop_room(&t)).await?;
    let (parts, _) = super::dirs::read_parts(ctx, body, name?.0, None).await?;
    let t = token.clone();
    let (dropped, room) = blocking(ctx, move |app| app.drop_into(&t, parts)).await?;
    if ctx.html {
        let url = url_for(ctx.base(), RouteId::DropPage, &[&token]);
        let page = pages::drop_page(ctx.site(), &url, &room, &dropped);
        return Ok(super::files::unshared(respond::html(
            StatusCode::CREATED,
            page,
        )));
    }
    Ok(json(StatusCode::CREATED, &DroppedView::new(&dropped)))
}

/// POST /d/<key>?drop=0: the owner closes the drop link; answers the dir.
pub(super) async fn close(ctx: &Ctx, key: String, close: Parsed<CloseDrop>) -> AppResult<Res> {
    close?;
    super::refuse_body(ctx, "POST /d/<key>?drop=0")?;
    let access = ctx.access(false);
    let dir = blocking(ctx, move |app| app.close_drop(&key, &access)).await?;
    Ok(json(StatusCode::OK, &DirView::new(&dir, ctx.base())))
}
