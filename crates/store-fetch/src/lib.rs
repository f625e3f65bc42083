//! # store-fetch
//!
//! The import fetcher: [`UreqFetcher`] implements store-core's `Fetcher`
//! port with ureq, behind an address guard ([`guard`]).
//!
//! How the guard holds:
//! - URLs are parsed by the `url` crate (WHATWG rules), so numeric host
//!   tricks (`2130706433`, `0x7f000001`, `127.1`) become plain addresses.
//! - ureq resolves every connection through [`GuardedResolver`], which
//!   looks the host up once, refuses the whole request if any resolved
//!   address is not allowed, and hands ureq exactly the addresses it
//!   checked: there is no second lookup a DNS rebinding could answer.
//! - Redirects are followed here, by hand, at most [`MAX_REDIRECTS`], each
//!   hop going through the same checks; proxies from the environment are
//!   never used.
//! - Connect, header and total time-outs bound a slow or silent server.
//! - Every network failure is the same `FetchError::Refused`, so import
//!   cannot be used to tell a closed port from a blocked one.

pub mod guard;
pub mod lean_tcp;
pub mod webhook;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use store_core::ports::{FetchError, Fetched, Fetcher};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

pub use guard::{classify, AddrClass, Guard, Policy};
pub use webhook::UreqWebhook;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;
/// How long a fetch may take, step by step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Opening a connection.
    pub connect: Duration,
    /// From sending the request to the response headers.
    pub headers: Duration,
    /// The whole exchange, body included.
    pub total: Duration,
}

impl Default for Timeouts {
    /// About 10 s / 10 s / 30 s: long enough for a slow honest server,
    /// short enough that a silent one cannot hold a worker.
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            headers: Duration::from_secs(10),
            total: Duration::from_secs(30),
        }
    }
}

/// Looks a host up; the real one is DNS, tests inject their own.
pub type Lookup = Arc<dyn Fn(&http::Uri) -> Result<Vec<SocketAddr>, ()> + Send + Sync>;

pub use ureq::http;

/// The resolver ureq connects through: one lookup, every address checked,
/// only checked addresses returned.
pub struct GuardedResolver {
    guard: Arc<Guard>,
    lookup: Option<Lookup>,
    refusals: Arc<AtomicUsize>,
}

impl std::fmt::Debug for GuardedResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedResolver")
            .field("guard", &self.guard)
            .finish()
    }
}

impl Resolver for GuardedResolver {
    fn resolve(
        &self,
        uri: &http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs: Vec<SocketAddr> = match (&self.lookup, literal_addr(uri)) {
            (Some(lookup), _) => lookup(uri).map_err(|()| ureq::Error::HostNotFound)?,
            (None, Some(addr)) => vec![addr],
            (None, None) => DefaultResolver::default()
                .resolve(uri, config, timeout)?
                .iter()
                .copied()
                .collect(),
        };
        // One forbidden address spoils the lot: a name that resolves to a
        // public and a private address is exactly what rebinding looks like.
        if addrs.is_empty() || addrs.iter().any(|a| !self.guard.allows(*a)) {
            self.refusals.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                host = uri.host().unwrap_or("?"),
                "refused: the host resolves to an address the guard blocks"
            );
            return Err(ureq::Error::HostNotFound);
        }
        let mut out = self.empty();
        for a in addrs.into_iter().take(16) {
            out.push(a);
        }
        Ok(out)
    }
}

/// The address `uri` names when its host is an IP address literal.
/// ureq's own resolver starts a thread per lookup to bound its time,
/// even for a literal; a webhook to an address would pay that on every
/// delivery for nothing.
fn literal_addr(uri: &http::Uri) -> Option<SocketAddr> {
    let host = uri.host()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let ip: std::net::IpAddr = host.parse().ok()?;
    let port = uri.port_u16().or(match uri.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    })?;
    Some(SocketAddr::new(ip, port))
}

/// The import fetcher.
#[derive(Debug, Clone)]
pub struct UreqFetcher {
    agent: ureq::Agent,
    /// `host:port` of the service's own base URL: never fetched.
    own_hosts: Vec<String>,
    refusals: Arc<AtomicUsize>,
}

fn refused(why: impl std::fmt::Display) -> FetchError {
    tracing::info!(%why, "import refused");
    FetchError::Refused
}

/// `host:port` of a URL, lowercase, with the scheme's default port.
fn host_port(u: &url::Url) -> Option<String> {
    Some(format!(
        "{}:{}",
        u.host_str()?.to_ascii_lowercase(),
        u.port_or_known_default()?
    ))
}

impl UreqFetcher {
    /// A fetcher for the real network. `own_base_url` is the service's own
    /// base URL, which import never fetches.
    pub fn new(guard: Guard, own_base_url: &str) -> Self {
        Self::build(guard, own_base_url, None, Timeouts::default())
    }

    /// A fetcher whose host lookups are answered by `lookup` and whose
    /// time-outs are chosen (tests).
    pub fn with_lookup(
        guard: Guard,
        own_base_url: &str,
        lookup: Option<Lookup>,
        timeouts: Timeouts,
    ) -> Self {
        Self::build(guard, own_base_url, lookup, timeouts)
    }

    fn build(guard: Guard, own_base_url: &str, lookup: Option<Lookup>, timeouts: Timeouts) -> Self {
        let refusals = Arc::new(AtomicUsize::new(0));
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .timeout_connect(Some(timeouts.connect))
            .timeout_recv_response(Some(timeouts.headers))
            .timeout_global(Some(timeouts.total))
            .user_agent("storesrv-import")
            .build();
        let resolver = GuardedResolver {
            guard: Arc::new(guard),
            lookup,
            refusals: Arc::clone(&refusals),
        };
        let agent = ureq::Agent::with_parts(config, DefaultConnector::new(), resolver);
        let own_hosts = url::Url::parse(own_base_url)
            .ok()
            .as_ref()
            .and_then(host_port)
            .into_iter()
            .collect();
        Self {
            agent,
            own_hosts,
            refusals,
        }
    }

    /// How many connections the guard has refused (for tests and metrics).
    pub fn refusals(&self) -> usize {
        self.refusals.load(Ordering::Relaxed)
    }

    /// Checks what can be checked on the URL text: scheme, user info, and
    /// the service's own host.
    fn check(&self, u: &url::Url) -> Result<(), FetchError> {
        if !matches!(u.scheme(), "http" | "https") {
            return Err(FetchError::InvalidUrl(format!(
                "import takes http and https URLs only, not {}:",
                u.scheme()
            )));
        }
        if !u.username().is_empty() || u.password().is_some() {
            return Err(FetchError::InvalidUrl(
                "import does not take URLs with user info".into(),
            ));
        }
        if u.host_str().is_none_or(str::is_empty) {
            return Err(FetchError::InvalidUrl("the URL has no host".into()));
        }
        if host_port(u).is_some_and(|hp| self.own_hosts.contains(&hp)) {
            return Err(refused("the URL points at this service"));
        }
        Ok(())
    }
}

impl Fetcher for UreqFetcher {
    fn fetch(&self, url: &str, max_bytes: u64) -> Result<Fetched, FetchError> {
        let mut current = url::Url::parse(url)
            .map_err(|e| FetchError::InvalidUrl(format!("invalid URL: {e}")))?;
        self.check(&current)?;
        for _ in 0..=MAX_REDIRECTS {
            let res = self
                .agent
                .get(current.as_str())
                .header("accept-encoding", "gzip")
                .call()
                .map_err(refused)?;
            let status = res.status();
            if status.is_redirection() {
                let location = res
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| refused("a redirect without Location"))?;
                let next = current.join(location).map_err(refused)?;
                // A hop is checked like the first URL; its failure is a
                // refusal, not the client's syntax error.
                self.check(&next)
                    .map_err(|_| refused("a redirect to a URL import does not take"))?;
                current = next;
                continue;
            }
            if !status.is_success() {
                return Err(refused(format!("the server answered {status}")));
            }
            let declared = res
                .headers()
                .get("content-length")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            if declared.is_some_and(|len| len > max_bytes) {
                return Err(FetchError::TooLarge(max_bytes));
            }
            let header = |name: &str| {
                res.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let content_type = header("content-type");
            let disposition_name = header("content-disposition")
                .as_deref()
                .and_then(store_core::import::name_from_content_disposition);
            // The reader decodes gzip, so the caller's limit counts the
            // decoded bytes: a compression bomb stops at the limit.
            let body = res.into_body().into_reader();
            return Ok(Fetched {
                final_url: current.to_string(),
                content_type,
                disposition_name,
                body: Box::new(body),
            });
        }
        Err(refused(format!("more than {MAX_REDIRECTS} redirects")))
    }
}

#[cfg(test)]
mod tests;
