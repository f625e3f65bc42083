//! The admin's routes (issue 36): the listing, deleting any object and
//! blocking bytes. With no STORE_ADMIN_TOKEN configured they do not
//! exist (404); without the token they answer 401. A browser carries the
//! token as `token=` in the page's links and forms.

use http::StatusCode;
use store_app::AppResult;
use store_core::moderation::REPORTS_PAGE_MAX;
use store_core::StoreError;
use store_wire::pages;
use store_wire::params::{
    query_token, AdminQuery, BlockForm, ClearForm, DeleteForm, Parsed, ReportForm,
};
use store_wire::query::Query;
use store_wire::router::{url_for, with_query, RouteId};
use store_wire::views::{AdminListView, BlockedView, Deleted, ReportedView, ReportsView};

use super::pics::{form, private};
use super::{blocking, Ctx};
use crate::body::RequestBody;
use crate::respond::{self, json, Res};

/// Refuses a request that is not the admin's: 404 when moderation is
/// off (as if the routes did not exist), 401 without the right token.
/// Answers the token, for the page's links.
fn admin_gate(ctx: &Ctx, form_token: Option<&str>) -> Result<String, StoreError> {
    if !ctx.app.moderates() {
        return Err(StoreError::not_found());
    }
    let token = ctx
        .presented_token()
        .or_else(|| form_token.map(str::to_string));
    if !ctx.app.is_store_admin(token.as_deref()) {
        return Err(StoreError::WriteDenied(
            "the admin's routes need the server's admin token (Authorization: Bearer, or token=)"
                .into(),
        ));
    }
    Ok(token.unwrap_or_default())
}

/// GET /admin: a page of live objects; the blocklist with the first.
pub(super) async fn list(ctx: &Ctx, list: Parsed<AdminQuery>) -> AppResult<Res> {
    let token = admin_gate(ctx, None)?;
    let list = list?;
    let q = list.search.text.clone();
    let (page, blocks) = blocking(ctx, move |app| {
        let page = app.admin_page(&list.search, list.after.as_ref(), list.limit)?;
        let blocks = match list.after {
            None => app.blocks()?,
            Some(_) => vec![],
        };
        Ok((page, blocks))
    })
    .await?;
    let view = AdminListView::new(&page, &blocks, &q, ctx.base());
    if ctx.html {
        let html = pages::admin_page(ctx.site(), &view, &q, &token);
        return Ok(private(respond::html(StatusCode::OK, html)));
    }
    Ok(private(json(StatusCode::OK, &view)))
}

/// The fields of a small form or JSON body, before the gate: the
/// admin's token may be one of them (a browser's form). Nothing is read
/// when moderation is off.
async fn fields(ctx: &Ctx, body: RequestBody) -> AppResult<(Query, String)> {
    if !ctx.app.moderates() {
        return Err(StoreError::not_found().into());
    }
    let fields = form(ctx, body).await?;
    let token = admin_gate(ctx, query_token(&fields))?;
    Ok((fields, token))
}

/// Where a browser goes back to after a form: the admin's page.
fn back_to_page(ctx: &Ctx, token: &str) -> Res {
    let page = url_for(ctx.base(), RouteId::AdminList, &[]);
    respond::redirect(&with_query(&page, "token", token))
}

/// POST /admin/block: blocks a digest and removes its live copies.
pub(super) async fn block(ctx: &Ctx, body: RequestBody) -> AppResult<Res> {
    let (fields, token) = self::fields(ctx, body).await?;
    let BlockForm { sha256, reason } = BlockForm::parse(&fields)?;
    let done = blocking(ctx, move |app| app.block(sha256, &reason)).await?;
    tracing::info!(%sha256, removed = done.removed.len(), "admin blocked bytes");
    if ctx.html {
        return Ok(back_to_page(ctx, &token));
    }
    Ok(private(json(StatusCode::OK, &BlockedView::from(&done))))
}

/// POST /admin/delete: removes any object by its key.
pub(super) async fn delete(ctx: &Ctx, body: RequestBody) -> AppResult<Res> {
    let (fields, token) = self::fields(ctx, body).await?;
    let DeleteForm { key } = DeleteForm::parse(&fields)?;
    let k = key.clone();
    blocking(ctx, move |app| app.admin_delete(&k)).await?;
    tracing::info!(key = %key, "admin deleted an object");
    if ctx.html {
        return Ok(back_to_page(ctx, &token));
    }
    Ok(private(json(
        StatusCode::OK,
        &Deleted {
            id: &key,
            deleted: true,
        },
    )))
}

/// GET /admin?reports=1: the report queue.
pub(super) async fn reports(ctx: &Ctx) -> AppResult<Res> {
    let token = admin_gate(ctx, None)?;
    let reports = blocking(ctx, |app| app.reports(REPORTS_PAGE_MAX)).await?;
    let view = ReportsView::new(&reports, ctx.base());
    if ctx.html {
        let html = pages::reports_page(ctx.site(), &view, &token);
        return Ok(private(respond::html(StatusCode::OK, html)));
    }
    Ok(private(json(StatusCode::OK, &view)))
}

/// POST /admin/clear: a report leaves the queue.
pub(super) async fn clear(ctx: &Ctx, body: RequestBody) -> AppResult<Res> {
    let (fields, token) = self::fields(ctx, body).await?;
    let ClearForm { id } = ClearForm::parse(&fields)?;
    let i = id.clone();
    blocking(ctx, move |app| app.clear_report(&i)).await?;
    if ctx.html {
        let page = url_for(ctx.base(), RouteId::AdminReports, &[]);
        return Ok(respond::redirect(&with_query(&page, "token", &token)));
    }
    Ok(private(json(
        StatusCode::OK,
        &Deleted {
            id: &id,
            deleted: true,
        },
    )))
}

/// POST `…?report=1`: a visitor's report of the object under `key`.
pub(super) async fn report(ctx: &Ctx, key: String, body: RequestBody) -> AppResult<Res> {
    if !ctx.app.moderates() {
        return Err(StoreError::not_found().into());
    }
    let ReportForm { reason } = ReportForm::parse(&form(ctx, body).await?);
    blocking(ctx, move |app| app.report(&key, &reason)).await?;
    if ctx.html {
        let html = pages::reported_page(ctx.site());
        return Ok(respond::html(StatusCode::ACCEPTED, html));
    }
    Ok(json(StatusCode::ACCEPTED, &ReportedView { reported: true }))
}
