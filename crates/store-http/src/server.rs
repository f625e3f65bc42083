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

use crate::handlers;

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
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let sweeper = tokio::spawn(sweep_loop(Arc::clone(&app), stop_rx));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _peer) = match accepted {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors and the like: back off a
                        // little instead of spinning.
                        eprintln!("storesrv: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let app = Arc::clone(&app);
                let service = service_fn(move |req| {
                    let app = Arc::clone(&app);
                    async move {
                        let started = Instant::now();
                        let (method, path) = (req.method().clone(), req.uri().path().to_string());
                        let res = handlers::handle(app, req).await;
                        eprintln!("{method} {path} {} {}ms", res.status().as_u16(), started.elapsed().as_millis());
                        Ok::<_, std::convert::Infallible>(res)
                    }
                });
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_READ_TIMEOUT)
                    .serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        eprintln!("storesrv: connection error: {e}");
                    }
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
        eprintln!("storesrv: some connections did not finish within {SHUTDOWN_GRACE:?}");
    }
    let _ = stop_tx.send(true);
    let _ = sweeper.await;
    Ok(())
}

/// Sweeps expired objects, sleeping until the next expiry (or at most
/// [`SWEEP_IDLE_MAX`]) in between.
async fn sweep_loop(app: Arc<App>, mut stop: watch::Receiver<bool>) {
    loop {
        let app2 = Arc::clone(&app);
        let pause = match tokio::task::spawn_blocking(move || app2.sweep(SWEEP_BATCH)).await {
            Ok(Ok(report)) if report.removed == SWEEP_BATCH => Duration::ZERO,
            Ok(Ok(report)) => report.next_expiry.map_or(SWEEP_IDLE_MAX, |at| {
                let ms = at.as_millis().saturating_sub(app.now().as_millis()).max(0) as u64;
                Duration::from_millis(ms).min(SWEEP_IDLE_MAX)
            }),
            Ok(Err(e)) => {
                eprintln!("storesrv: sweep failed: {e}");
                SWEEP_IDLE_MAX
            }
            Err(e) => {
                eprintln!("storesrv: sweep worker failed: {e}");
                SWEEP_IDLE_MAX
            }
        };
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            _ = stop.changed() => return,
        }
    }
}
