//! What every handler gets besides the body (`Ctx`), and how it runs a
//! use case on the blocking pool.

use std::sync::Arc;

use http::{header, HeaderMap, Method};
use store_app::{Access, App, AppResult};
use store_core::{ReadIntent, RetainAuth, StoreError};

use crate::shared::Shared;
use store_wire::query::Query;

use super::{OWNER_HEADER, WRITE_HEADER};

/// What every handler gets besides the body.
pub(crate) struct Ctx {
    pub app: Arc<App>,
    pub method: Method,
    pub headers: HeaderMap,
    pub query: Query,
    pub html: bool,
    /// The client's address (behind trusted proxies, the forwarded one).
    pub client: std::net::IpAddr,
    pub shared: Arc<Shared>,
    /// When the request began: a body's deadline counts from here.
    pub started: tokio::time::Instant,
    /// A creating request without the upload token in its header or query,
    /// whose form must carry it in a `token` field (see [`upload_gate`]).
    pub token_in_form: bool,
}

impl Ctx {
    /// The prefix of every URL an answer carries (`url_for`'s first
    /// argument).
    pub fn base(&self) -> &str {
        &self.app.config().base_url
    }

    /// Where the pages' links lead: under the base URL's path.
    pub fn site(&self) -> store_wire::pages::Site<'_> {
        store_wire::pages::Site::new(self.base()).reporting(self.app.moderates())
    }

    /// Checks the declared length of the body against `limit_bytes` (411,
    /// 413), takes its room among the bodies in flight (429 when there is
    /// none), and answers how to read it. Nothing is read before this.
    pub fn intake(&self, limit_bytes: u64) -> AppResult<crate::body::Intake> {
        let len = crate::body::declared_length(&self.headers, limit_bytes)?;
        let shared = &self.shared;
        let wanted = crate::shared::kib(len.min(shared.bodies_in_flight_bytes_max));
        let room = Arc::clone(&shared.bodies_in_flight)
            .try_acquire_many_owned(wanted)
            .map_err(|_| StoreError::Busy {
                message: format!(
                    "the server is receiving {} bytes of uploads already; try again shortly",
                    shared.bodies_in_flight_bytes_max
                ),
                retry_after_secs: crate::lanes::BUSY_RETRY_AFTER_SECS,
            })?;
        let pace = shared.body_pace;
        let secs = len / pace.min_bytes_per_sec.max(1);
        let deadline = self.started + pace.grace + std::time::Duration::from_secs(secs);
        Ok(crate::body::Intake::new(
            Arc::clone(&self.app),
            shared.lanes.work.clone(),
            pace.idle,
            deadline,
            Some(room),
        ))
    }

    /// The retain, upload or admin token, from `Authorization: Bearer`
    /// or `token=`.
    pub fn presented_token(&self) -> Option<String> {
        presented_token(&self.headers, &self.query)
    }

    /// The upload token a form carries in its `token` field, when the
    /// request needs one there (STORE_UPLOAD_TOKEN); nothing otherwise.
    pub fn check_form_token(&self, fields: &[(String, String)]) -> AppResult<()> {
        if !self.token_in_form {
            return Ok(());
        }
        Ok(self
            .app
            .authorize_create(store_wire::params::form_token(fields))?)
    }

    /// `gate`, preceded by the form's upload token check when the request
    /// needs one: a multipart body's fields before its first file part
    /// must carry the token, so that no file is written without it.
    pub fn with_form_token<'a>(
        &'a self,
        gate: Option<crate::body::Gate<'a>>,
    ) -> Option<crate::body::Gate<'a>> {
        if !self.token_in_form {
            return gate;
        }
        Some(Box::new(move |fields: Vec<(String, String)>| {
            Box::pin(async move {
                self.check_form_token(&fields)?;
                match gate {
                    Some(gate) => gate(fields).await,
                    None => Ok(()),
                }
            })
        }))
    }

    pub fn retain_auth(&self) -> RetainAuth {
        self.app.retain_auth(self.presented_token().as_deref())
    }

    /// What the request presents to a write's gates: the retain token's
    /// verdict, a dir write token (the X-Store-Write header, else `write=`,
    /// except on creation, where `write=` is the flag that asks for one),
    /// and an owner token (the X-Store-Owner header, else `owner=`).
    pub fn access(&self, write_query_is_token: bool) -> Access {
        let given = store_wire::params::QueryCredentials::parse(&self.query);
        let query = write_query_is_token.then_some(given.write).flatten();
        Access {
            retain: self.retain_auth(),
            write_token: self
                .header_token(WRITE_HEADER)
                .or(query.filter(|t| !t.is_empty())),
            owner: self
                .header_token(OWNER_HEADER)
                .or(given.owner)
                .filter(|t| !t.is_empty()),
        }
    }

    /// The owner token as the URL carries it (`owner=`): a browser
    /// following an owner's link, which can send no header.
    pub fn owner_in_url(&self) -> Option<String> {
        store_wire::params::QueryCredentials::parse(&self.query)
            .owner
            .filter(|t| !t.is_empty())
    }

    /// Refuses a password in the URL (400): a password is a credential
    /// that travels in a header or a form only.
    pub fn refuse_password_in_url(&self) -> Result<(), StoreError> {
        store_wire::params::refuse_password_in_url(&self.query)
    }

    /// A token sent in header `name`, trimmed; none when absent or empty.
    fn header_token(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
            .filter(|t| !t.is_empty())
    }

    pub fn intent(&self) -> ReadIntent {
        if self.method == Method::HEAD {
            ReadIntent::Head
        } else {
            ReadIntent::Get
        }
    }
}

/// Runs a use case on the blocking pool, in the lane of such work: use
/// cases touch the disk and may fsync, which must never stall the executor.
pub(crate) async fn blocking<T: Send + 'static>(
    ctx: &Ctx,
    f: impl FnOnce(&App) -> AppResult<T> + Send + 'static,
) -> AppResult<T> {
    let app = Arc::clone(&ctx.app);
    ctx.shared.lanes.work.run(move || f(&app)).await?
}

/// The token a request presents in `Authorization: Bearer` or `token=`.
pub(super) fn presented_token(headers: &HeaderMap, query: &Query) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    bearer.or_else(|| store_wire::params::QueryCredentials::parse(query).token)
}
