//! `/uploads`: resumable uploads over tus 1.0.0 (CONTRACT.md). Each
//! handler reads the protocol's headers (store-wire's `tus`), runs the use
//! case, and answers with the protocol's headers; every answer, errors
//! included, carries `Tus-Resumable`.

use http::StatusCode;
use store_app::{AppError, AppResult, PatchTicket, Patched, UploadState};
use store_core::resumable::renew_every_ms;
use store_core::StoreError;
use store_wire::router::{url_for, RouteId};
use store_wire::tus;
use store_wire::views::FileView;

use super::{blocking, Ctx, OWNER_HEADER};
use crate::body::RequestBody;
use crate::respond::{self, Res};

/// The answer, or the error's, with what every tus answer carries.
pub(super) fn answer(result: AppResult<Res>) -> Res {
    let mut res = result.unwrap_or_else(|e| respond::app_error(&e));
    let status = res.status();
    tus::answered(res.headers_mut(), status);
    res
}

fn empty(status: StatusCode) -> Res {
    let mut res = Res::new(respond::empty());
    *res.status_mut() = status;
    res
}

/// `OPTIONS /uploads`: what the server supports. No `Tus-Resumable` is
/// needed to ask.
pub(super) fn options(ctx: &Ctx) -> Res {
    let mut res = empty(StatusCode::NO_CONTENT);
    tus::capabilities(res.headers_mut(), ctx.app.config().limits.file_bytes_max);
    res
}

/// `POST /uploads`: creation, and with a body, its first bytes.
pub(super) async fn create(ctx: &Ctx, body: RequestBody) -> AppResult<Res> {
    tus::check_version(&ctx.headers)?;
    let limits = ctx.app.config().limits.clone();
    let length = tus::upload_length(&ctx.headers)?;
    let req = tus::new_file(&ctx.headers, &limits)?;
    let with_bytes = crate::body::declares_body(&ctx.headers);
    if with_bytes {
        tus::check_offset_body(&ctx.headers)?;
    }
    let metadata = tus::metadata_kept(&ctx.headers);
    let made = blocking(ctx, move |app| app.create_upload(&req, length, metadata)).await?;
    let id = made.record.id.clone();
    let location = url_for(ctx.base(), RouteId::TusUpload, &[&id]);
    let mut res = if with_bytes {
        match receive(ctx, id.clone(), 0, body).await {
            Ok(res) => res,
            // The client never learnt where the upload is: nothing stays.
            Err(e) => {
                let _ = blocking(ctx, move |app| app.end_upload(&id)).await;
                return Err(e);
            }
        }
    } else if length == 0 {
        // Nothing will follow: a client does not PATCH an empty file
        // (tus-js-client calls it done once created), so it is one now.
        let done = blocking(ctx, move |app| {
            let patch = app.begin_patch(&id, 0, 0, None)?;
            app.finish_patch(patch)
        })
        .await?;
        let mut res = empty(StatusCode::CREATED);
        if let Patched::Complete(file) = done {
            tus::completed(res.headers_mut(), &file, ctx.base());
        }
        res
    } else {
        let mut res = empty(StatusCode::CREATED);
        tus::progress(res.headers_mut(), &made.record);
        res
    };
    *res.status_mut() = StatusCode::CREATED;
    tus::set(res.headers_mut(), "location", &location);
    tus::set(res.headers_mut(), OWNER_HEADER, &made.owner_token);
    Ok(res)
}

/// `HEAD /uploads/<id>`: where it stands; `GET`: the file it made.
pub(super) async fn get(ctx: &Ctx, id: String) -> AppResult<Res> {
    if ctx.method == http::Method::HEAD {
        tus::check_version(&ctx.headers)?;
        let mut res = empty(StatusCode::OK);
        tus::set(res.headers_mut(), "cache-control", "no-store");
        match blocking(ctx, move |app| app.upload_state(&id)).await? {
            UploadState::InProgress(upload) => tus::state(res.headers_mut(), &upload),
            // Complete while its file lives: a client whose last answer
            // was lost learns it is done, instead of starting again.
            UploadState::Complete(file) => {
                tus::set(
                    res.headers_mut(),
                    tus::UPLOAD_LENGTH,
                    &file.size.to_string(),
                );
                tus::completed(res.headers_mut(), &file, ctx.base());
            }
        }
        return Ok(res);
    }
    let now = ctx.app.now();
    match blocking(ctx, move |app| app.upload_state(&id)).await? {
        UploadState::Complete(file) => Ok(respond::json(
            StatusCode::OK,
            &FileView::new(&file, ctx.base(), now),
        )),
        UploadState::InProgress(u) => Err(StoreError::NotFound(format!(
            "the upload is incomplete: {} of {} bytes have arrived",
            u.offset, u.length
        ))
        .into()),
    }
}

/// `PATCH /uploads/<id>`: the next bytes.
pub(super) async fn patch(ctx: &Ctx, id: String, body: RequestBody) -> AppResult<Res> {
    tus::check_version(&ctx.headers)?;
    tus::check_offset_body(&ctx.headers)?;
    let offset = tus::upload_offset(&ctx.headers)?;
    receive(ctx, id, offset, body).await
}

/// Streams a body into the upload from `offset`: 204 with the new offset,
/// or with the file the last byte made.
async fn receive(ctx: &Ctx, id: String, offset: u64, body: RequestBody) -> AppResult<Res> {
    let checksum = tus::checksum(&ctx.headers)?;
    let intake = ctx.intake(ctx.app.config().limits.file_bytes_max)?;
    let len = crate::body::declared_length(&ctx.headers, u64::MAX)?;
    let begun = blocking(ctx, move |app| app.begin_patch(&id, offset, len, checksum)).await?;
    let ticket = begun.ticket();
    // The lease is renewed while the body comes; a PATCH that lost it
    // (its process was frozen past it) stops at once, keeping nothing.
    let (patch, ended) = tokio::select! {
        streamed = crate::body::stream_patch(&intake, body, begun) => streamed,
        lost = renewals(ctx, ticket) => return Err(lost),
    };
    let Some(patch) = patch else {
        return Err(ended.err().unwrap_or_else(|| StoreError::Internal.into()));
    };
    if let Err(e @ store_app::AppError::Storage(_)) = ended {
        // A write failed: nothing of this PATCH is kept.
        blocking(ctx, move |app| {
            app.abandon_patch(patch);
            Ok(())
        })
        .await?;
        return Err(e);
    }
    // Whole, or cut short by the client (or its deadline): what came is
    // kept, and a cut body is still answered with why.
    let patched = blocking(ctx, move |app| app.finish_patch(patch)).await?;
    ended?;
    let mut res = empty(StatusCode::NO_CONTENT);
    match patched {
        Patched::Progress(upload) => tus::progress(res.headers_mut(), &upload),
        Patched::Complete(file) => tus::completed(res.headers_mut(), &file, ctx.base()),
    }
    Ok(res)
}

/// Renews a PATCH's lease four times per lease for as long as it is
/// polled; ends with the reason once the PATCH lost the upload (another
/// took it, or it went: `App::renew_patch` decides). Other faults (a
/// database away for a moment) are logged and tried again at the next
/// turn: the lease has room for a few.
async fn renewals(ctx: &Ctx, ticket: PatchTicket) -> AppError {
    let lease_secs = ctx.app.config().limits.upload_lease_secs;
    let every = std::time::Duration::from_millis(renew_every_ms(lease_secs));
    loop {
        tokio::time::sleep(every).await;
        let t = ticket.clone();
        match blocking(ctx, move |app| app.renew_patch(&t)).await {
            Ok(()) => {}
            Err(e) if ticket.is_lost() => return e,
            Err(e) => tracing::warn!(error = %e, "could not renew a PATCH's lease"),
        }
    }
}

/// `DELETE /uploads/<id>`: termination.
pub(super) async fn delete(ctx: &Ctx, id: String) -> AppResult<Res> {
    tus::check_version(&ctx.headers)?;
    blocking(ctx, move |app| app.end_upload(&id)).await?;
    Ok(empty(StatusCode::NO_CONTENT))
}
