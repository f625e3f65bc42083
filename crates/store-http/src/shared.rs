//! What every connection and request of a server shares: the options it
//! was started with, the fair shares and lanes, and the pace and room of
//! request bodies. The accept loop (`server.rs`), the service and the
//! handlers all read it; it reads none of them.

use std::sync::Arc;
use std::time::Duration;

use crate::fair::Tally;
use crate::lanes::Lanes;
use store_core::ports::RateLimits;
use store_core::{Limits, ServerLimits, StoreError};
use store_wire::client::Cidr;

/// What the server needs besides the app and its limits: whom to believe,
/// where the rate is counted, where requests are counted. Every number it
/// guards with is in the app's `Limits` (`limits.server` and
/// `limits.rate_limit_per_min`), one value with one set of defaults that
/// `/api` shows.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Proxies whose X-Forwarded-For is believed.
    pub trusted_proxies: Vec<Cidr>,
    /// Where the rate is counted when processes share a store (e.g. in
    /// PostgreSQL); `None` counts in this process, at the app's
    /// `limits.rate_limit_per_min`.
    pub rate_limits: Option<Arc<dyn RateLimits>>,
    /// Where requests are counted for `/metrics`; `None` counts nothing
    /// (no metrics listener was asked for).
    pub metrics: Option<Arc<crate::Metrics>>,
}

/// A count limit as a `usize`, saturating on a 32-bit target.
pub(crate) fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Seconds a client over its share of connections or requests is asked to
/// wait: its own earlier requests are what it waits for.
pub(crate) const SHARE_RETRY_AFTER_SECS: u64 = 1;

/// How fast a request body must arrive: each chunk within `idle`, and the
/// whole body within `grace` plus its length at `min_bytes_per_sec`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyPace {
    /// The longest wait for the next chunk of a body.
    pub idle: Duration,
    /// Time every body has beyond what its length takes at the minimum
    /// rate.
    pub grace: Duration,
    /// The slowest rate a body may arrive at, in bytes per second.
    pub min_bytes_per_sec: u64,
}

impl From<&ServerLimits> for BodyPace {
    fn from(l: &ServerLimits) -> Self {
        Self {
            idle: Duration::from_secs(l.body_timeout_secs),
            grace: Duration::from_secs(l.body_timeout_secs),
            min_bytes_per_sec: l.body_min_bytes_per_sec.max(1),
        }
    }
}

/// What every request shares besides the use cases.
pub(crate) struct Shared {
    pub trusted: Vec<Cidr>,
    pub limiter: Arc<dyn RateLimits>,
    /// Requests in flight per client.
    pub requests: Arc<Tally>,
    pub lanes: Lanes,
    /// Full-size chunk buffers of all downloads and zips together.
    pub stream_buffers: Arc<tokio::sync::Semaphore>,
    pub body_pace: BodyPace,
    /// Bytes of bodies being received, in KiB permits.
    pub bodies_in_flight: Arc<tokio::sync::Semaphore>,
    pub bodies_in_flight_bytes_max: u64,
    /// The longest request target, in bytes (414 past it).
    pub uri_bytes_max: usize,
    /// Request header names and values together, in bytes (431 past it).
    pub header_bytes_max: usize,
    /// Request header fields (431 past it; hyper counts them).
    pub header_fields_max: usize,
}

impl Shared {
    pub(crate) fn new(options: &ServeOptions, limits: &Limits) -> Self {
        let server = &limits.server;
        Self {
            trusted: options.trusted_proxies.clone(),
            limiter: options.rate_limits.clone().unwrap_or_else(|| {
                Arc::new(store_core::local::LocalRateLimits::new(
                    limits.rate_limit_per_min,
                ))
            }),
            requests: Tally::new(count(server.requests_per_client_max)),
            lanes: Lanes::default(),
            stream_buffers: crate::stream::buffer_budget(),
            body_pace: BodyPace::from(server),
            bodies_in_flight: Arc::new(tokio::sync::Semaphore::new(kib(
                server.bodies_in_flight_bytes_max
            ) as usize)),
            bodies_in_flight_bytes_max: server.bodies_in_flight_bytes_max,
            uri_bytes_max: count(server.uri_bytes_max),
            header_bytes_max: count(server.header_bytes_max),
            header_fields_max: count(server.header_fields_max),
        }
    }

    /// How a download (in `lanes.reads`) or a zip (in `lanes.zips`) is
    /// sent: its lane and the shared buffer budget.
    pub(crate) fn sender(&self, lane: &crate::lanes::Lane) -> crate::stream::Sender {
        crate::stream::Sender {
            lane: lane.clone(),
            budget: Arc::clone(&self.stream_buffers),
        }
    }

    pub(crate) fn is_trusted(&self, ip: std::net::IpAddr) -> bool {
        self.trusted.iter().any(|c| c.contains(ip))
    }
}

/// Bytes as KiB permits, rounded up, at most `u32::MAX` (what one
/// acquisition can take; 4 TiB of bodies in flight is past any use).
pub(crate) fn kib(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX)
}

/// The error of a client over its share of requests in flight.
pub(crate) fn over_share() -> StoreError {
    StoreError::RateLimited {
        retry_after_secs: SHARE_RETRY_AFTER_SECS,
    }
}
