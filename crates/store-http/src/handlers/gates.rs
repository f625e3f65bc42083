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

use base64::Engine;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use store_app::{AppResult, Gated, ReadKey};
use store_core::password::{Password, PASS_LIFETIME_SECS};
use store_core::StoreError;
use store_wire::pages;
use store_wire::params::UnlockForm;
use store_wire::router::{local_path, url_for, with_query, Endpoint, RouteId};

use super::{blocking, Ctx, PASSWORD_HEADER};
use crate::body::RequestBody;
use crate::respond::{self, json, Res};
use store_wire::views::{DirView, FileView};

/// The cookie a browser keeps a pass in, one per object (its `Path`).
const PASS_COOKIE: &str = "storesrv_pass";

/// An object a password may protect, as its URL names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// `/<id>`: a single file or a bundle.
    Id(String),
    /// `/d/<key>`: a dir.
    Dir(String),
}

impl Target {
    fn gated(&self) -> Gated<'_> {
        match self {
            Self::Id(id) => Gated::Id(id),
            Self::Dir(key) => Gated::Dir(key),
        }
    }

    /// The object's own URL.
    fn url(&self, base: &str) -> String {
        match self {
            Self::Id(id) => url_for(base, RouteId::GetFile, &[id]),
            Self::Dir(key) => url_for(base, RouteId::GetDir, &[key]),
        }
    }

    /// The object a read endpoint reads, if a password may guard it.
    pub(crate) fn of(endpoint: &Endpoint) -> Option<Self> {
        use Endpoint as E;
        match endpoint {
            E::GetFile { id, .. } | E::GetBundleMember { id, .. } => Some(Self::Id(id.clone())),
            E::GetDir { key, .. } | E::GetDirFile { key, .. } | E::DirHistory { key } => {
                Some(Self::Dir(key.clone()))
            }
            _ => None,
        }
    }
}

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

/// The password of `Authorization: Basic`, whatever the user name; none
/// for another scheme or a header that does not decode.
fn basic_password(headers: &HeaderMap) -> Option<Password> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (_user, password) = text.split_once(':')?;
    Some(Password::presented(password))
}

/// The passes among the request's cookies.
fn cookie_passes(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| *name == PASS_COOKIE)
        .map(|(_, value)| value.to_string())
        .collect()
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
    let action = with_query(&target.url(base), "unlock", "1");
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
    let back = form
        .back
        .filter(|b| within(b, local_path(&home)))
        .unwrap_or_else(|| local_path(&home).to_string());
    match check(ctx, &target, password, &ReadKey::default()).await {
        Ok(pass) => Ok(with_pass(respond::redirect(&back), ctx, &home, pass)),
        Err(e) if !ctx.html => Err(e),
        Err(e) => {
            let error = respond::client_error(&e);
            let (problem, status) = match &error {
                StoreError::PasswordNeeded(_) => ("That password is not the right one.", StatusCode::UNAUTHORIZED),
                StoreError::RateLimited { .. } | StoreError::Busy { .. } => (
                    "Too many wrong passwords were tried for this link lately. Try again in a few minutes.",
                    StatusCode::TOO_MANY_REQUESTS,
                ),
                _ => return Err(e),
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

/// Whether `back` is a path within the object at `home` (so the form can
/// never send a browser elsewhere).
fn within(back: &str, home: &str) -> bool {
    back == home
        || back
            .strip_prefix(home)
            .is_some_and(|rest| rest.starts_with(['/', '?']))
}

/// `res` with the pass cookie for the object at `home`, when there is one.
fn with_pass(mut res: Res, ctx: &Ctx, home: &str, pass: Option<String>) -> Res {
    let Some(pass) = pass else {
        return res;
    };
    let secure = if ctx.base().starts_with("https:") {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{PASS_COOKIE}={pass}; Path={}; Max-Age={PASS_LIFETIME_SECS}; HttpOnly; SameSite=Lax{secure}",
        local_path(home)
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

/// `POST /<id>?password=1` and `POST /d/<key>?password=1`: the owner sets
/// the password reading needs (X-Store-Password), or removes it (the
/// header empty). Answers the record.
pub(super) async fn set_password(ctx: &Ctx, target: Target) -> AppResult<Res> {
    super::refuse_body(ctx, "POST ?password=1")?;
    let given = ctx
        .headers
        .get(PASSWORD_HEADER)
        .ok_or_else(|| {
            StoreError::bad_request(
                "send the new password in X-Store-Password (an empty header removes it)",
            )
        })?
        .to_str()
        .map_err(|_| StoreError::bad_request("X-Store-Password must be UTF-8 text"))?;
    let password = match given {
        "" => None,
        text => Some(Password::new(text)?),
    };
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

/// The password an upload asks for: X-Store-Password (an empty one is
/// refused: it would protect nothing). A password in the URL is refused
/// outright: URLs end up in logs and histories.
pub(crate) fn upload_password(ctx: &Ctx) -> AppResult<Option<Password>> {
    ctx.refuse_password_in_url()?;
    let Some(value) = ctx.headers.get(PASSWORD_HEADER) else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| StoreError::bad_request("X-Store-Password must be UTF-8 text"))?;
    Ok(Some(Password::new(text)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_takes_any_user_name_and_other_schemes_are_no_password() {
        let mut h = HeaderMap::new();
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        for (user_pw, want) in [
            (":pw:with:colons", "pw:with:colons"),
            ("anyone:secret", "secret"),
        ] {
            h.insert(
                header::AUTHORIZATION,
                format!("Basic {}", b64(user_pw)).parse().unwrap(),
            );
            assert_eq!(basic_password(&h).unwrap().expose(), want);
        }
        h.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert!(basic_password(&h).is_none());
        h.insert(header::AUTHORIZATION, "Basic !!!".parse().unwrap());
        assert!(basic_password(&h).is_none());
    }

    #[test]
    fn the_form_sends_a_browser_back_only_within_the_object() {
        assert!(within("/abc", "/abc"));
        assert!(within("/abc/index.html", "/abc"));
        assert!(within("/abc?download=1", "/abc"));
        assert!(!within("/abcd", "/abc"));
        assert!(!within("https://elsewhere/abc", "/abc"));
        assert!(!within("//elsewhere/abc", "/abc"));
    }

    #[test]
    fn passes_are_read_from_every_cookie_header() {
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, "a=1; storesrv_pass=one".parse().unwrap());
        h.append(header::COOKIE, "storesrv_pass=two".parse().unwrap());
        assert_eq!(
            cookie_passes(&h),
            vec!["one".to_string(), "two".to_string()]
        );
    }
}
