//! The webhook sender (issue 36): one POST per delivery to
//! `STORE_WEBHOOK_URL`, through the same address guard as imports, so
//! that a webhook cannot be pointed at the machine's own services unless
//! the operator says so (`STORE_WEBHOOK_ALLOW_PRIVATE=1`). Redirects are
//! not followed: a receiver that moved answers 3xx, which is a failure
//! the log shows, not a hop to an address no one checked.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use store_core::ports::WebhookSender;
use ureq::unversioned::transport::{Connector, RustlsConnector};

use crate::lean_tcp::LeanTcpConnector;
use crate::{Guard, GuardedResolver};

/// The most of a receiver's answer read so that its connection can be
/// used again; a longer answer closes the connection instead.
const ANSWER_READ_MAX_BYTES: u64 = 64 * 1024;

/// Posts deliveries to one URL.
#[derive(Debug, Clone)]
pub struct UreqWebhook {
    agent: ureq::Agent,
    url: String,
}

impl UreqWebhook {
    /// A sender to `url` (http or https, no user info), through `guard`;
    /// a delivery taking longer than `timeout` has failed (and is tried
    /// again later). `at_once` threads post at the same time, and the
    /// sender keeps a connection for each.
    pub fn new(url: &str, guard: Guard, timeout: Duration, at_once: usize) -> Result<Self, String> {
        let parsed =
            url::Url::parse(url).map_err(|e| format!("STORE_WEBHOOK_URL is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err("STORE_WEBHOOK_URL is an http or https URL".into());
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(
                "STORE_WEBHOOK_URL carries no user info (the signature authenticates)".into(),
            );
        }
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            // ureq keeps 3 idle connections per host by default: a fourth
            // deliverer's connection was closed as it came back, and the
            // next delivery opened one again.
            .max_idle_connections_per_host(at_once)
            .max_idle_connections(at_once)
            .proxy(None)
            .timeout_connect(Some(timeout.min(Duration::from_secs(5))))
            .timeout_global(Some(timeout))
            .user_agent("storesrv-webhook")
            .build();
        let resolver = GuardedResolver {
            guard: Arc::new(guard),
            lookup: None,
            refusals: Arc::new(AtomicUsize::new(0)),
        };
        Ok(Self {
            // No proxy: a plain connection, wrapped in TLS for https.
            agent: ureq::Agent::with_parts(
                config,
                ().chain(LeanTcpConnector).chain(RustlsConnector::default()),
                resolver,
            ),
            url: parsed.to_string(),
        })
    }
}

impl WebhookSender for UreqWebhook {
    fn post(&self, headers: &[(&'static str, String)], body: &[u8]) -> Result<(), String> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send(body).map_err(|e| e.to_string())?;
        let status = response.status();
        // The answer's body means nothing, but ureq returns a connection
        // to its pool only once the body is read to its end: reading a
        // short one keeps the next delivery from opening a connection.
        let mut answer = response.into_body().into_reader();
        let _ = std::io::copy(
            &mut std::io::Read::take(&mut answer, ANSWER_READ_MAX_BYTES),
            &mut std::io::sink(),
        );
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the receiver answered {status}"))
        }
    }
}
