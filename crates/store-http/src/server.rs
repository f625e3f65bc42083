//! Accepting connections, graceful shutdown, and the expiry sweeper.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use store_app::App;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::client::Cidr;
use crate::handlers;
use store_core::ratelimit::{RateLimiter, RATE_KEYS_MAX};
use store_core::Timestamp;

/// How the server guards itself; the binary fills it from CONTRACT.md's
/// configuration.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Proxies whose X-Forwarded-For is believed.
    pub trusted_proxies: Vec<Cidr>,
    /// Requests per minute per client (IPv6: per /64); 0 turns it off.
    pub rate_limit_per_min: u32,
    /// Connections served at once; further ones wait in the kernel's
    /// backlog until one closes.
    pub max_connections: usize,
    /// Time a client has to send a request's headers, and the longest a
    /// kept-alive connection may sit idle between requests.
    pub header_read_timeout: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            trusted_proxies: vec![],
            rate_limit_per_min: store_core::limits::RATE_LIMIT_PER_MIN_DEFAULT,
            max_connections: MAX_CONNECTIONS_DEFAULT,
            header_read_timeout: HEADER_READ_TIMEOUT,
        }
    }
}

/// Enough for thousands of honest clients and hundreds of slow ones, well
/// under the usual file descriptor limit.
pub const MAX_CONNECTIONS_DEFAULT: usize = 2048;
/// Request header fields accepted; more answers 431.
const HEADERS_MAX: usize = 64;
/// Bytes of request head buffered; a longer head answers 431.
const HEAD_BYTES_MAX: usize = 64 * 1024;
/// Shards of the rate limiter, so that clients rarely wait for each other.
const LIMITER_SHARDS: usize = 16;

/// The rate limiter, sharded by key.
pub(crate) struct Limiter {
    shards: Vec<std::sync::Mutex<RateLimiter<std::net::IpAddr>>>,
}

impl Limiter {
    fn new(per_min: u32) -> Self {
        Self {
            shards: (0..LIMITER_SHARDS)
                .map(|_| {
                    std::sync::Mutex::new(RateLimiter::with_capacity(
                        per_min,
                        RATE_KEYS_MAX / LIMITER_SHARDS,
                    ))
                })
                .collect(),
        }
    }

    pub(crate) fn check(&self, key: std::net::IpAddr, now: Timestamp) -> Result<(), u64> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        let shard = &self.shards[(h.finish() as usize) % LIMITER_SHARDS];
        shard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .check(&key, now)
    }
}

/// What every request shares besides the use cases.
pub(crate) struct Shared {
    pub trusted: Vec<Cidr>,
    pub limiter: Limiter,
}

/// A client has this long to send its request headers, so that idle or
/// slow-header connections cannot pile up.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// In-flight requests get this long to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);
/// Expired records the sweeper removes per round.
const SWEEP_BATCH: usize = 1000;
/// The sweeper sleeps at most this long, so objects created after it went
/// to sleep are collected without delay worth noticing. Reads answer 404
/// from the moment of expiry regardless: the sweep only reclaims space.
const SWEEP_IDLE_MAX: Duration = Duration::from_secs(60);

/// Serves until `shutdown` resolves, then lets in-flight requests finish.
/// It also stops, and answers an error, if the background orphan collection
/// finds a record it cannot read: the store is damaged, and running on it
/// would hide that.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        trusted: options.trusted_proxies.clone(),
        limiter: Limiter::new(options.rate_limit_per_min),
    });
    let slots = Arc::new(tokio::sync::Semaphore::new(options.max_connections.max(1)));
    let (stop_tx, stop_rx) = watch::channel(false);
    let sweeper = tokio::spawn(sweep_loop(Arc::clone(&app), stop_rx));
    let (fatal_tx, fatal_rx) = tokio::sync::oneshot::channel();
    let collector = spawn_orphan_collection(Arc::clone(&app), fatal_tx);
    let fatal = Arc::new(std::sync::Mutex::new(None));
    let shutdown = {
        let fatal = Arc::clone(&fatal);
        async move {
            tokio::select! {
                () = shutdown => {}
                // A collection that ends well drops its sender: this branch
                // is then disabled, and only the signal is waited for.
                Ok(message) = fatal_rx => {
                    *fatal.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
                }
            }
        }
    };
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => {
                let Ok(slot) = slot else { break };
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    () = &mut shutdown => break,
                };
                let (stream, peer) = match accepted {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors and the like: back off a
                        // little instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                // A response is headers then body chunks; with Nagle's
                // algorithm on, the second write waits for the client's
                // delayed ACK (up to 40 ms). Every write here is a whole
                // frame already, so send each at once.
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(error = %e, "TCP_NODELAY not set");
                }
                let app = Arc::clone(&app);
                let shared = Arc::clone(&shared);
                let service = service_fn(move |req| {
                    let app = Arc::clone(&app);
                    let shared = Arc::clone(&shared);
                    async move {
                        let started = Instant::now();
                        let method = req.method().clone();
                        let (res, route) = handlers::handle(app, &shared, req, peer.ip()).await;
                        let bytes = http_body::Body::size_hint(res.body()).exact();
                        tracing::info!(
                            target: "request",
                            method = %method,
                            route,
                            status = res.status().as_u16(),
                            bytes,
                            ms = started.elapsed().as_millis() as u64,
                        );
                        Ok::<_, std::convert::Infallible>(res)
                    }
                });
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(options.header_read_timeout)
                    .max_headers(HEADERS_MAX)
                    .max_buf_size(HEAD_BYTES_MAX)
                    .serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                    drop(slot);
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within {SHUTDOWN_GRACE:?}");
    }
    let _ = stop_tx.send(true);
    let _ = sweeper.await;
    collector
        .stop
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = collector.task.await;
    let message = fatal.lock().unwrap_or_else(|e| e.into_inner()).take();
    message.map_or(Ok(()), |m| Err(std::io::Error::other(m)))
}

/// The background orphan collection and its stop flag.
struct Collector {
    stop: Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

/// Removes orphan blobs (left by a crash mid-write) while the server
/// already answers: reading every record of a large store takes seconds,
/// which a restart should not wait for (docs/PERFORMANCE.md, scenario 9).
/// A record it cannot read is sent to `fatal`; it removes nothing then.
fn spawn_orphan_collection(
    app: Arc<App>,
    fatal: tokio::sync::oneshot::Sender<String>,
) -> Collector {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let task = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        match app.collect_orphans(&flag) {
            Ok(r) if r.gave_up => {
                tracing::info!(removed = r.removed, "orphan collection stopped early")
            }
            Ok(r) => tracing::info!(
                removed = r.removed,
                ms = started.elapsed().as_millis() as u64,
                "orphan collection done"
            ),
            Err(store_app::AppError::Storage(e))
                if e.kind == store_core::StorageErrorKind::Corrupt =>
            {
                tracing::error!(error = %e, "the store is damaged; stopping");
                let _ = fatal.send(format!(
                    "the database holds a record that cannot be read ({e}); restore the data dir from a backup or remove that record"
                ));
            }
            Err(e) => tracing::error!(error = %e, "orphan collection failed"),
        }
    });
    Collector { stop, task }
}

/// Sweeps expired objects, sleeping until the next expiry (or at most
/// [`SWEEP_IDLE_MAX`]) in between.
async fn sweep_loop(app: Arc<App>, mut stop: watch::Receiver<bool>) {
    loop {
        let app2 = Arc::clone(&app);
        let pause = match tokio::task::spawn_blocking(move || app2.sweep(SWEEP_BATCH)).await {
            Ok(Ok(report)) if report.removed == SWEEP_BATCH => Duration::ZERO,
            Ok(Ok(report)) if report.removed > 0 => {
                tracing::info!(removed = report.removed, "expired objects swept");
                next_pause(&app, report.next_expiry)
            }
            Ok(Ok(report)) => next_pause(&app, report.next_expiry),
            Ok(Err(e)) => {
                tracing::error!(error = %e, "sweep failed");
                SWEEP_IDLE_MAX
            }
            Err(e) => {
                tracing::error!(error = %e, "sweep worker failed");
                SWEEP_IDLE_MAX
            }
        };
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            _ = stop.changed() => return,
        }
    }
}

/// How long the sweeper may sleep: until the next expiry, at most
/// [`SWEEP_IDLE_MAX`].
fn next_pause(app: &App, next_expiry: Option<Timestamp>) -> Duration {
    next_expiry.map_or(SWEEP_IDLE_MAX, |at| {
        let ms = at.as_millis().saturating_sub(app.now().as_millis()).max(0) as u64;
        Duration::from_millis(ms).min(SWEEP_IDLE_MAX)
    })
}
