//! The request handler as a hyper [`Service`], apart from the listener:
//! what [`crate::serve`] runs on every connection, and what a host server
//! mounts under a path of its own.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::Request;
use http_body_util::BodyExt;
use hyper::service::Service;
use store_app::App;

use crate::body::{BoxError, RequestBody};
use crate::handlers;
use crate::linger::{Linger, Lingering};
use crate::respond::Res;
use crate::shared::Shared;
use crate::ServeOptions;

/// storesrv's whole HTTP interface as one hyper [`Service`]: routing,
/// negotiation, the per-client guards (rate, requests in flight, bodies in
/// flight), metrics and the request log. It binds nothing and spawns
/// nothing: the host accepts connections, and starts the store's upkeep
/// (`App::start_upkeep`) if it wants expired objects swept.
///
/// Cloning is cheap, and clones share their guards, so one service made at
/// start-up is cloned into each connection (see [`Self::for_peer`]).
///
/// # Mounting under a path
///
/// [`Self::mounted_at`] makes the service answer under a prefix such as
/// `/files`: a request for `/files/abc` is routed as `/abc`, and a request
/// outside the prefix answers 404. The URLs the service writes (in JSON,
/// `Location` headers and page links) come from the app's `base_url`, so
/// that must carry the prefix too: `http://host:port/files`.
///
/// A host whose router strips the prefix before the service sees the
/// request (axum's `nest_service`, a proxy's `location /files/ { proxy_pass
/// http://backend/; }`) mounts the service at the root instead, with the
/// same base URL: the links still carry `/files`, from the base URL.
/// Requests outside the mount answer 404 before any rate limit is
/// counted, so a host should forward only its prefix. `robots.txt` is the
/// host's: to keep crawlers off stored files, it says `Disallow: /files/`.
///
/// ```no_run
/// # async fn host(app: std::sync::Arc<store_app::App>) -> Result<(), store_http::MountError> {
/// use store_http::{ServeOptions, StoreService};
///
/// // The app was opened with `AppConfig::new("http://127.0.0.1:3000/files")`.
/// let files = StoreService::new(app, &ServeOptions::default()).mounted_at("/files")?;
/// // Per connection, in the host's accept loop:
/// // let service = files.for_peer(peer_addr.ip());
/// // ...and hand requests whose path starts with /files to it.
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct StoreService {
    app: Arc<App>,
    shared: Arc<Shared>,
    metrics: Option<Arc<crate::Metrics>>,
    /// Where the service is mounted: empty at the root, else a path such
    /// as `/files` with no trailing slash.
    prefix: Arc<str>,
    peer: Option<IpAddr>,
}

/// The client's address, as a request extension. A host that cannot give
/// each connection its own service ([`StoreService::for_peer`]) inserts
/// this into each request instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub IpAddr);

/// A mount path [`StoreService::mounted_at`] refuses.
#[derive(Debug, thiserror::Error)]
#[error("invalid mount path {0:?}: use a path such as /files (a leading slash, no trailing slash, no query)")]
pub struct MountError(pub String);

impl std::fmt::Debug for StoreService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreService")
            .field("prefix", &self.prefix)
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl StoreService {
    /// The service over `app`, guarded by the app's `limits.server` and
    /// as `options` say. Of those limits, the listener's own (connections,
    /// header and send timeouts, head sizes) are for [`crate::serve`] and
    /// are not used here.
    pub fn new(app: Arc<App>, options: &ServeOptions) -> Self {
        Self {
            shared: Arc::new(Shared::new(options, &app.config().limits)),
            app,
            metrics: options.metrics.clone(),
            prefix: Arc::from(""),
            peer: None,
        }
    }

    /// The same service answering under `path` (such as `/files`; `/` or
    /// an empty path is the root). See the type's docs for `base_url`.
    pub fn mounted_at(mut self, path: &str) -> Result<Self, MountError> {
        // Request paths arrive percent-encoded, so a mount path is kept to
        // characters that never are: anything else would match nothing.
        let plain = |c: char| c.is_ascii_alphanumeric() || "-._~/".contains(c);
        let bad = |p: &str| {
            !p.starts_with('/') || p.ends_with('/') || p.contains("//") || !p.chars().all(plain)
        };
        let path = if path == "/" { "" } else { path };
        if !path.is_empty() && bad(path) {
            return Err(MountError(path.to_string()));
        }
        let base = &self.app.config().base_url;
        if !base.trim_end_matches('/').ends_with(path) {
            tracing::warn!(
                base,
                path,
                "the base URL does not end with the mount path: URLs the service writes will not reach it"
            );
        }
        self.prefix = Arc::from(path);
        Ok(self)
    }

    /// A clone for one connection from `peer`: its address is what the
    /// rate limit and the per-client shares count (or, behind a trusted
    /// proxy, the address the proxy forwards). Without it, a request's
    /// [`PeerAddr`] extension is used, and failing that all requests
    /// count as one client, `0.0.0.0`.
    pub fn for_peer(&self, peer: IpAddr) -> Self {
        Self {
            peer: Some(peer),
            ..self.clone()
        }
    }

    /// What every request of this service shares.
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Answers one request. Never fails: every error is an answer.
    pub async fn handle<B>(&self, req: Request<B>) -> Res
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let peer = self
            .peer
            .or_else(|| req.extensions().get::<PeerAddr>().map(|p| p.0))
            .unwrap_or_else(unknown_peer);
        // A body a refusal leaves unread is read and dropped after the
        // answer, unless the client waits for leave to send it.
        let linger = (!expects_continue(req.headers()))
            .then(|| Linger::new(&self.app.config().limits.server));
        let req = req.map(|b| RequestBody::new(Lingering::new(b.map_err(Into::into), linger)));
        let started = Instant::now();
        let method = req.method().clone();
        let app = Arc::clone(&self.app);
        let shared = Arc::clone(&self.shared);
        let (res, route) = handlers::handle(app, shared, req, peer, &self.prefix).await;
        let took = started.elapsed();
        // An MCP tool call counts with the status its route answered.
        let status = res
            .extensions()
            .get::<crate::handlers::ToolCall>()
            .map_or(res.status().as_u16(), |tool| tool.status);
        if let Some(m) = &self.metrics {
            m.observe(route, status, took);
        }
        let bytes = http_body::Body::size_hint(res.body()).exact();
        tracing::info!(
            target: "request",
            method = %method,
            route,
            status,
            bytes,
            ms = took.as_millis() as u64,
        );
        res
    }
}

/// Whether the client waits for `100 Continue` before it sends its body.
fn expects_continue(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// The address of a request whose host named no client: all such requests
/// count as one client. Said once in the log, since it is easy to miss and
/// makes one client's burst everyone's 429.
fn unknown_peer() -> IpAddr {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        tracing::warn!(
            "a request came with no client address (StoreService::for_peer or a PeerAddr \
             extension): such requests share one client's rate limit and share"
        );
    });
    IpAddr::V4(Ipv4Addr::UNSPECIFIED)
}

impl<B> Service<Request<B>> for StoreService
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Res;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Res, Self::Error>> + Send>>;

    fn call(&self, req: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}
