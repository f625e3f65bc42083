//! Passwords at the door (CONTRACT.md "Private sharing"): what a read of
//! a protected object shows its gate (the owner token, HTTP Basic, a
//! browser's pass cookie), the browser's password form, and the owner's
//! change of the password.
//!
//! A read without a password in it costs nothing here: its key is the
//! owner token and its cookies, which the read checks with a MAC. Only a
//! password is checked against the slow hash, on the password lane (one
//! check at a time, a short queue, 429 past it), so a flood of wrong
//! passwords takes one core and never the executor.

use std::sync::Arc;

use http::{header, HeaderValue, StatusCode};
use store_app::{AppResult, ReadKey};
use store_core::password::Password;
use store_core::StoreError;
use store_wire::gate::{back_within, basic_password, cookie_passes, pass_cookie, unlock_problem};
use store_wire::pages;
use store_wire::params::UnlockForm;
use store_wire::router::Endpoint;

pub(crate) use store_wire::gate::Target;

use super::{blocking, Ctx};
use crate::body::RequestBody;
use crate::respond::{self, json, Res};
use store_wire::views::{DirView, FileView};

/// What the request shows the password gate of `target`: its owner token,
/// its pass cookies, and a pass for its HTTP Basic password when that is
/// the right one. A wrong password is refused here (401, or 429 past ten
/// in ten minutes), before anything is read.
pub(crate) async fn read_key(ctx: &Ctx, target: &Target) -> AppResult<ReadKey> {
    let mut key = ReadKey {
        owner: ctx.access(false).owner,
        passes: cookie_passes(&ctx.headers),
    };
    if let Some(password) = basic_password(&ctx.headers) {
        if let Some(pass) = check(ctx, target, password, &key).await? {
            key.passes.push(pass);
        }
    }
    Ok(key)
}

/// Checks `password` on the password lane: a pass, or `None` when none
/// is needed.
async fn check(
    ctx: &Ctx,
    target: &Target,
    password: Password,
    key: &ReadKey,
) -> AppResult<Option<String>> {
    let ticket = ctx.shared.lanes.password_ticket()?;
    let (app, target, key) = (Arc::clone(&ctx.app), target.clone(), key.clone());
    ticket
        .run(move || app.unlock(target.gated(), &password, &key))
        .await?
}

/// A browser's read of an object a password may guard: what its form
/// needs if the read is refused.
#[derive(Debug)]
pub(crate) struct Locked {
    /// The base URL.
    pub base: String,
    /// The object read.
    pub target: Target,
    /// The path (and query) asked for, which the form comes back to.
    pub back: String,
}

impl Locked {
    /// What a browser's request for `endpoint` at `uri` needs for the
    /// password form, if a password may guard what it reads: the form
    /// posts to the object and comes back to the path asked for.
    pub(crate) fn of(endpoint: &Endpoint, base: &str, uri: &http::Uri) -> Option<Self> {
        Some(Self {
            base: base.to_string(),
            target: Target::of(endpoint)?,
            back: uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
        })
    }
}

/// What a failed request answers. A browser refused by a password gets
/// the password form (401, without `WWW-Authenticate`, which would make
/// it ask in a dialog of its own instead); everyone else gets the error,
/// which for a missing password carries `WWW-Authenticate: Basic`.
pub(crate) fn refused(e: &store_app::AppError, locked: Option<&Locked>) -> Res {
    let error = respond::client_error(e);
    match (locked, &error) {
        (Some(l), StoreError::PasswordNeeded(_)) => {
            password_page(&l.base, &l.target, &l.back, None, StatusCode::UNAUTHORIZED)
        }
        _ => respond::store_error(&error),
    }
}

fn password_page(
    base: &str,
    target: &Target,
    back: &str,
    problem: Option<&str>,
    status: StatusCode,
) -> Res {
    let action = target.unlock_url(base);
    let page = pages::password_page(pages::Site::new(base), &action, back, problem);
    super::files::unshared(respond::html(status, page))
}

/// `POST /<id>?unlock=1` and `POST /d/<key>?unlock=1`: the password
/// form. The right password answers 303 back to the page asked for, with
/// a cookie holding a pass for this object only, for an hour; a wrong one
/// shows the form again. Nothing is downloaded or counted here.
pub(super) async fn unlock(ctx: &Ctx, target: Target, body: RequestBody) -> AppResult<Res> {
    let form = UnlockForm::parse(&super::pics::form(ctx, body).await?);
    let password = form.password;
    let home = target.url(ctx.base());
    let back = back_within(form.back, &home);
    match check(ctx, &target, password, &ReadKey::default()).await {
        Ok(pass) => Ok(with_pass(respond::redirect(&back), ctx, &home, pass)),
        Err(e) if !ctx.html => Err(e),
        Err(e) => {
            let error = respond::client_error(&e);
            let Some((problem, status)) = unlock_problem(&error) else {
                return Err(e);
            };
            let mut res = password_page(ctx.base(), &target, &back, Some(problem), status);
            if let Some(secs) = error.retry_after_secs() {
                res.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            }
            Ok(res)
        }
    }
}

/// `res` with the pass cookie for the object at `home`, when there is one.
fn with_pass(mut res: Res, ctx: &Ctx, home: &str, pass: Option<String>) -> Res {
    let Some(pass) = pass else {
        return res;
    };
    if let Ok(v) = HeaderValue::from_str(&pass_cookie(ctx.base(), home, &pass)) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

/// `POST /<id>?password=1` and `POST /d/<key>?password=1`: the owner sets
/// the password reading needs (X-Store-Password), or removes it (the
/// header empty). Answers the record.
pub(super) async fn set_password(ctx: &Ctx, target: Target) -> AppResult<Res> {
    super::refuse_body(ctx, "POST ?password=1")?;
    let password = store_wire::credentials::new_password(&ctx.headers)?;
    let access = ctx.access(false);
    let (t, p) = (target.clone(), password);
    let obj = blocking(ctx, move |app| {
        app.set_password(t.gated(), p.as_ref(), &access)
    })
    .await?;
    let now = ctx.app.now();
    Ok(match obj {
        store_core::Object::File(f) => json(StatusCode::OK, &FileView::new(&f, ctx.base(), now)),
        store_core::Object::Bundle(b) => json(
            StatusCode::OK,
            &store_wire::views::BundleView::new(&b, ctx.base()),
        ),
        store_core::Object::Dir(d) => json(StatusCode::OK, &DirView::new(&d, ctx.base())),
        _ => return Err(StoreError::not_found().into()),
    })
}
