//! What every handler gets besides the body (`Ctx`), and how it runs a
//! use case on the blocking pool.

use std::sync::Arc;

use http::{HeaderMap, Method};
use store_app::{Access, App, AppResult};
use store_core::{ReadIntent, RetainAuth, StoreError};
use store_wire::credentials::{self, WriteTokens};

use crate::shared::Shared;
use store_wire::query::Query;

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
        credentials::presented_token(&self.headers, &self.query)
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
        let tokens = WriteTokens::of(&self.headers, &self.query, write_query_is_token);
        Access {
            retain: self.retain_auth(),
            write_token: tokens.write,
            owner: tokens.owner,
        }
    }

    /// The owner token as the URL carries it (`owner=`): a browser
    /// following an owner's link, which can send no header.
    pub fn owner_in_url(&self) -> Option<String> {
        credentials::owner_in_url(&self.query)
    }

    /// The password an upload asks for (X-Store-Password; never the URL).
    pub fn upload_password(&self) -> Result<Option<store_core::password::Password>, StoreError> {
        credentials::upload_password(&self.headers, &self.query)
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
