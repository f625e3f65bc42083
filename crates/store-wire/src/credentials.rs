//! Where a request presents its credentials: the retain, upload or admin
//! token (`Authorization: Bearer`, else `token=`), a dir's write token
//! (X-Store-Write, else `write=`), an owner token (X-Store-Owner, else
//! `owner=`) and a new object's password (X-Store-Password, never the
//! URL); and the refusal of an auth header that is there but empty.

use http::{header, HeaderMap, HeaderName};
use store_core::password::Password;
use store_core::StoreError;

use crate::api::{OWNER_HEADER, PASSWORD_HEADER, WRITE_HEADER};
use crate::params::QueryCredentials;
use crate::query::Query;

/// The token a request presents in `Authorization: Bearer` or `token=`.
pub fn presented_token(headers: &HeaderMap, query: &Query) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    bearer.or_else(|| QueryCredentials::parse(query).token)
}

/// A token sent in header `name`, trimmed; none when absent or empty.
fn header_token(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// The tokens a write presents, besides the retain token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteTokens {
    /// A dir's write token: X-Store-Write, else `write=` (except on
    /// creation, where `write=` is the flag that asks for one).
    pub write: Option<String>,
    /// An owner token: X-Store-Owner, else `owner=`.
    pub owner: Option<String>,
}

impl WriteTokens {
    /// The tokens of a request; `write=` is a token only when
    /// `write_query_is_token`.
    pub fn of(headers: &HeaderMap, query: &Query, write_query_is_token: bool) -> Self {
        let given = QueryCredentials::parse(query);
        let query_write = write_query_is_token.then_some(given.write).flatten();
        Self {
            write: header_token(headers, WRITE_HEADER).or(query_write.filter(|t| !t.is_empty())),
            owner: header_token(headers, OWNER_HEADER)
                .or(given.owner)
                .filter(|t| !t.is_empty()),
        }
    }
}

/// The owner token as the URL carries it (`owner=`): a browser following
/// an owner's link, which can send no header.
pub fn owner_in_url(query: &Query) -> Option<String> {
    QueryCredentials::parse(query)
        .owner
        .filter(|t| !t.is_empty())
}

/// An auth header that is present but empty is refused, not read as
/// absent: an empty `X-Store-Write` once hid a valid `?write=` token. So
/// is one given twice.
pub fn check_auth_headers(headers: &HeaderMap) -> Result<(), StoreError> {
    // Names made once, at compile time: looked up by `&str`, each would be
    // parsed again on every request.
    const NAMES: [HeaderName; 3] = [
        HeaderName::from_static(WRITE_HEADER),
        HeaderName::from_static(OWNER_HEADER),
        header::AUTHORIZATION,
    ];
    for name in &NAMES {
        let values = headers.get_all(name);
        for value in values.iter() {
            let value = value.to_str().unwrap_or("").trim();
            // `Authorization: Bearer` with nothing after the scheme.
            let bare_scheme = value.eq_ignore_ascii_case("bearer");
            if value.is_empty() || bare_scheme {
                return Err(StoreError::bad_request(format!(
                    "the {name} header is empty: send the token, or leave the header out"
                )));
            }
        }
        if values.iter().nth(1).is_some() {
            return Err(StoreError::bad_request(format!(
                "the {name} header is given more than once"
            )));
        }
    }
    Ok(())
}

/// The password X-Store-Password gives, as text; an error when it is not
/// UTF-8.
fn password_header(headers: &HeaderMap) -> Result<Option<&str>, StoreError> {
    headers
        .get(PASSWORD_HEADER)
        .map(|v| {
            v.to_str()
                .map_err(|_| StoreError::bad_request("X-Store-Password must be UTF-8 text"))
        })
        .transpose()
}

/// The password an upload asks for: X-Store-Password (an empty one is
/// refused: it would protect nothing). A password in the URL is refused
/// outright: URLs end up in logs and histories.
pub fn upload_password(headers: &HeaderMap, query: &Query) -> Result<Option<Password>, StoreError> {
    crate::params::refuse_password_in_url(query)?;
    password_header(headers)?.map(Password::new).transpose()
}

/// The password `POST ?password=1` sets: X-Store-Password, which must be
/// there; empty, it removes the password (`None`).
pub fn new_password(headers: &HeaderMap) -> Result<Option<Password>, StoreError> {
    let given = password_header(headers)?.ok_or_else(|| {
        StoreError::bad_request(
            "send the new password in X-Store-Password (an empty header removes it)",
        )
    })?;
    match given {
        "" => Ok(None),
        text => Password::new(text).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, value.parse().unwrap());
        }
        h
    }

    fn query(text: &str) -> Query {
        Query::parse(text).unwrap()
    }

    #[test]
    fn a_bearer_token_comes_before_the_query() {
        let q = query("token=inquery");
        let h = headers(&[("authorization", "Bearer  abc ")]);
        assert_eq!(presented_token(&h, &q).as_deref(), Some("abc"));
        let basic = headers(&[("authorization", "Basic eDp5")]);
        assert_eq!(presented_token(&basic, &q).as_deref(), Some("inquery"));
        assert_eq!(presented_token(&HeaderMap::new(), &query("")), None);
    }

    #[test]
    fn write_tokens_prefer_headers_and_write_is_a_token_only_when_asked() {
        let q = query("write=w1&owner=o1");
        let none = HeaderMap::new();
        let read = WriteTokens::of(&none, &q, true);
        assert_eq!(
            (read.write.as_deref(), read.owner.as_deref()),
            (Some("w1"), Some("o1"))
        );
        assert_eq!(WriteTokens::of(&none, &q, false).write, None);
        let h = headers(&[("x-store-write", "w2"), ("x-store-owner", "o2")]);
        let read = WriteTokens::of(&h, &q, true);
        assert_eq!(
            (read.write.as_deref(), read.owner.as_deref()),
            (Some("w2"), Some("o2"))
        );
        assert_eq!(owner_in_url(&query("owner=")), None);
    }

    #[test]
    fn an_empty_or_repeated_auth_header_is_refused() {
        assert!(check_auth_headers(&headers(&[("x-store-owner", "o")])).is_ok());
        for bad in [
            headers(&[("x-store-write", " ")]),
            headers(&[("authorization", "Bearer")]),
            headers(&[("x-store-owner", "a"), ("x-store-owner", "b")]),
        ] {
            assert_eq!(
                check_auth_headers(&bad).unwrap_err().code().http_status(),
                400
            );
        }
    }

    #[test]
    fn passwords_travel_in_their_header_only() {
        let h = headers(&[("x-store-password", "secret")]);
        assert!(upload_password(&h, &query("")).unwrap().is_some());
        assert!(upload_password(&HeaderMap::new(), &query(""))
            .unwrap()
            .is_none());
        assert!(upload_password(&h, &query("password=secret")).is_err());
        assert!(upload_password(&headers(&[("x-store-password", "")]), &query("")).is_err());
        assert!(new_password(&headers(&[("x-store-password", "")]))
            .unwrap()
            .is_none());
        assert!(new_password(&HeaderMap::new()).is_err());
    }
}
