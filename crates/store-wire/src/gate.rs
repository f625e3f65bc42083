//! The wire side of passwords at the door (CONTRACT.md "Private
//! sharing"): which objects a read may find guarded, where a request shows
//! its password (HTTP Basic) and its passes (cookies), where the password
//! form may send a browser back to, and the pass cookie it sets.

use base64::Engine;
use http::{header, HeaderMap, StatusCode};
use store_app::Gated;
use store_core::password::{Password, PASS_LIFETIME_SECS};
use store_core::StoreError;

use crate::router::{local_path, url_for, with_query, Endpoint, RouteId};

/// The cookie a browser keeps a pass in, one per object (its `Path`).
pub const PASS_COOKIE: &str = "storesrv_pass";

/// An object a password may protect, as its URL names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/<id>`: a single file or a bundle.
    Id(String),
    /// `/d/<key>`: a dir.
    Dir(String),
}

impl Target {
    /// The object as the use cases name it.
    pub fn gated(&self) -> Gated<'_> {
        match self {
            Self::Id(id) => Gated::Id(id),
            Self::Dir(key) => Gated::Dir(key),
        }
    }

    /// The object's own URL.
    pub fn url(&self, base: &str) -> String {
        match self {
            Self::Id(id) => url_for(base, RouteId::GetFile, &[id]),
            Self::Dir(key) => url_for(base, RouteId::GetDir, &[key]),
        }
    }

    /// Where the password form posts: the object, `?unlock=1`.
    pub fn unlock_url(&self, base: &str) -> String {
        with_query(&self.url(base), "unlock", "1")
    }

    /// The object a read endpoint reads, if a password may guard it.
    pub fn of(endpoint: &Endpoint) -> Option<Self> {
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

/// The password of `Authorization: Basic`, whatever the user name; none
/// for another scheme or a header that does not decode.
pub fn basic_password(headers: &HeaderMap) -> Option<Password> {
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
pub fn cookie_passes(headers: &HeaderMap) -> Vec<String> {
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

/// Where the password form sends a browser back to: the `back` it posted
/// when that is a path within the object at `home` (so the form can never
/// send a browser elsewhere), else the object itself.
pub fn back_within(back: Option<String>, home: &str) -> String {
    let home = local_path(home);
    back.filter(|b| within(b, home))
        .unwrap_or_else(|| home.to_string())
}

/// Whether `back` is a path within the object at `home`.
fn within(back: &str, home: &str) -> bool {
    back == home
        || back
            .strip_prefix(home)
            .is_some_and(|rest| rest.starts_with(['/', '?']))
}

/// The `Set-Cookie` value of a pass for the object at `home` (a URL under
/// `base`): that object's path only, for the pass's lifetime, out of
/// scripts' reach, and only over HTTPS when the service is served so.
pub fn pass_cookie(base: &str, home: &str, pass: &str) -> String {
    let secure = if base.starts_with("https:") {
        "; Secure"
    } else {
        ""
    };
    format!(
        "{PASS_COOKIE}={pass}; Path={}; Max-Age={PASS_LIFETIME_SECS}; HttpOnly; SameSite=Lax{secure}",
        local_path(home)
    )
}

/// What the password form says, and answers, when a password it posted is
/// refused; `None` for an error the form does not explain.
pub fn unlock_problem(error: &StoreError) -> Option<(&'static str, StatusCode)> {
    match error {
        StoreError::PasswordNeeded(_) => Some((
            "That password is not the right one.",
            StatusCode::UNAUTHORIZED,
        )),
        StoreError::RateLimited { .. } | StoreError::Busy { .. } => Some((
            "Too many wrong passwords were tried for this link lately. Try again in a few minutes.",
            StatusCode::TOO_MANY_REQUESTS,
        )),
        _ => None,
    }
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
        let home = "http://h/abc";
        assert_eq!(back_within(Some("/abc/x".into()), home), "/abc/x");
        assert_eq!(back_within(Some("/elsewhere".into()), home), "/abc");
        assert_eq!(back_within(None, home), "/abc");
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

    #[test]
    fn a_pass_cookie_is_the_objects_own_and_secure_over_https() {
        let plain = pass_cookie("http://h", "http://h/abc", "P");
        assert!(plain.starts_with("storesrv_pass=P; Path=/abc; Max-Age="));
        assert!(!plain.contains("Secure"));
        assert!(pass_cookie("https://h", "https://h/d/k", "P").ends_with("; Secure"));
    }
}
