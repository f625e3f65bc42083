//! Accepting connections with fair shares per client, and graceful
//! shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use store_app::App;
use tokio::net::{TcpListener, TcpStream};

use crate::deadline::SendDeadline;
use crate::fair::Tally;
use crate::refusals::{JsonRefusals, RefusalLimits};
use crate::shared::{count, ServeOptions, SHARE_RETRY_AFTER_SECS};
use store_core::{ServerLimits, StoreError};
use store_wire::client::rate_key;

/// Refusals of over-share connections being written at once; past it, such
/// a connection is closed without an answer.
const REFUSALS_MAX: usize = 64;
/// How long a refusal may take to write.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(2);

/// In-flight requests get this long to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);
/// Serves until `shutdown` resolves, then lets in-flight requests finish
/// (for at most `SHUTDOWN_GRACE`, 20 s). The store's upkeep (the sweeper, the
/// orphan collection) is the caller's to start: `App::start_upkeep`.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let limits = app.config().limits.server;
    let service = crate::StoreService::new(app, &options);
    let graceful = GracefulShutdown::new();
    Acceptor::new(&limits, &options, service)
        .run(&listener, &graceful, shutdown)
        .await;
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within {SHUTDOWN_GRACE:?}");
    }
    Ok(())
}

/// The accept loop and what it hands each connection.
struct Acceptor {
    service: crate::StoreService,
    /// Connection slots of the whole server.
    slots: Arc<tokio::sync::Semaphore>,
    /// Connections per address.
    connections: Arc<Tally>,
    /// Refusals being written.
    refusals: Arc<tokio::sync::Semaphore>,
    header_read_timeout: Duration,
    send_timeout: Duration,
    header_fields_max: usize,
    head_bytes_max: usize,
    /// Named by the JSON form of hyper's refusals (`refusals.rs`).
    refusal_limits: RefusalLimits,
    metrics: Option<Arc<crate::Metrics>>,
}

impl Acceptor {
    fn new(limits: &ServerLimits, options: &ServeOptions, service: crate::StoreService) -> Self {
        let secs = |n: u64| Duration::from_secs(n.max(1));
        Self {
            service,
            slots: Arc::new(tokio::sync::Semaphore::new(
                count(limits.connections_max).max(1),
            )),
            connections: Tally::new(count(limits.connections_per_client_max)),
            refusals: Arc::new(tokio::sync::Semaphore::new(REFUSALS_MAX)),
            header_read_timeout: secs(limits.header_timeout_secs),
            send_timeout: secs(limits.send_timeout_secs),
            header_fields_max: count(limits.header_fields_max),
            head_bytes_max: count(limits.head_bytes_max),
            refusal_limits: RefusalLimits {
                uri_bytes_max: count(limits.uri_bytes_max),
                head_bytes_max: count(limits.head_bytes_max),
                header_fields_max: count(limits.header_fields_max),
            },
            metrics: options.metrics.clone(),
        }
    }

    /// Accepts until `shutdown` resolves.
    async fn run(
        &self,
        listener: &TcpListener,
        graceful: &GracefulShutdown,
        shutdown: impl Future<Output = ()>,
    ) {
        tokio::pin!(shutdown);
        loop {
            let slot = tokio::select! {
                slot = Arc::clone(&self.slots).acquire_owned() => slot,
                () = &mut shutdown => return,
            };
            let Ok(slot) = slot else { return };
            let accepted = tokio::select! {
                a = listener.accept() => a,
                () = &mut shutdown => return,
            };
            match accepted {
                Ok((stream, peer)) => self.admit(stream, peer, slot, graceful),
                Err(e) => {
                    // Out of file descriptors and the like: back off a
                    // little instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// Serves a new connection, or refuses it when its address already
    /// holds its share of connections.
    fn admit(
        &self,
        stream: TcpStream,
        peer: std::net::SocketAddr,
        slot: tokio::sync::OwnedSemaphorePermit,
        graceful: &GracefulShutdown,
    ) {
        let held = if self.service.shared().is_trusted(peer.ip()) {
            None
        } else {
            match self.connections.take(rate_key(peer.ip())) {
                Some(held) => Some(held),
                None => {
                    drop(slot);
                    return self.refuse(stream);
                }
            }
        };
        // A response is headers then body chunks; with Nagle's algorithm
        // on, the second write waits for the client's delayed ACK (up to
        // 40 ms). Every write here is a whole frame already, so send each
        // at once.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
        let service = self.service.for_peer(peer.ip());
        let service = service_fn(move |req| {
            let service = service.clone();
            async move { Ok::<_, std::convert::Infallible>(service.handle(req).await) }
        });
        let io = SendDeadline::new(stream, self.send_timeout);
        let io = TokioIo::new(JsonRefusals::new(io, self.refusal_limits));
        let conn = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout)
            .max_headers(self.header_fields_max)
            .max_buf_size(self.head_bytes_max)
            .serve_connection(io, service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop((slot, held));
        });
    }

    /// Answers 429 on a connection over its address's share, without
    /// reading its request, and closes it. Refusals are few at once and
    /// short, so a flood of them costs a bounded amount.
    fn refuse(&self, mut stream: TcpStream) {
        if let Some(m) = &self.metrics {
            m.connection_refused();
        }
        let Ok(permit) = Arc::clone(&self.refusals).try_acquire_owned() else {
            return; // Dropped: closed without an answer.
        };
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let answer = refusal();
            let _ = tokio::time::timeout(REFUSAL_TIMEOUT, async {
                stream.write_all(&answer).await?;
                stream.shutdown().await?;
                // Read what the client sent before closing, so that the
                // kernel does not reset the connection before the client
                // has read the answer.
                let mut sink = [0u8; 4096];
                while stream.read(&mut sink).await? > 0 {}
                Ok::<_, std::io::Error>(())
            })
            .await;
            drop(permit);
        });
    }
}

/// The whole answer to a connection over its share: a 429 with the error
/// JSON of every other refusal.
fn refusal() -> Vec<u8> {
    store_wire::raw::whole_answer(&StoreError::Busy {
        message: format!(
            "too many connections from one address; close some, then retry after {SHARE_RETRY_AFTER_SECS} s"
        ),
        retry_after_secs: SHARE_RETRY_AFTER_SECS,
    })
}
