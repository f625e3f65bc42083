//! The `/metrics` listener (CONTRACT.md, "Operations endpoints"): the
//! exposition store-wire's [`Metrics`] writes, served on a listener of its
//! own ([`serve_metrics`]), never on the public one.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use store_app::App;
use store_core::StoreError;
use store_wire::metrics::{
    prometheus_text, Metrics, METRICS_CONTENT_TYPE, PROMETHEUS_TEXT_CONTENT_TYPE,
};
use tokio::net::TcpListener;

use crate::lanes::{Lane, SCRAPE_JOBS_MAX};
use crate::respond::{self, Res};

/// Serves `GET /metrics` on `listener` until `shutdown`; anything else is
/// 404. Scrapes are rare and small, so connections are served one after
/// another's accept with no guards beyond hyper's own: this listener
/// belongs on a private address.
pub async fn serve_metrics(
    listener: TcpListener,
    app: Arc<App>,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let lane = Lane::new(SCRAPE_JOBS_MAX);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut shutdown => return,
        };
        let Ok((stream, _)) = accepted else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let (app, metrics, lane) = (Arc::clone(&app), Arc::clone(&metrics), lane.clone());
        let service = service_fn(move |req| {
            let (app, metrics, lane) = (Arc::clone(&app), Arc::clone(&metrics), lane.clone());
            async move { Ok::<_, std::convert::Infallible>(scrape(app, metrics, &lane, req).await) }
        });
        tokio::spawn(async move {
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "metrics connection ended with an error");
            }
        });
    }
}

async fn scrape(app: Arc<App>, metrics: Arc<Metrics>, lane: &Lane, req: Request<Incoming>) -> Res {
    if req.uri().path() != "/metrics" || !matches!(*req.method(), Method::GET | Method::HEAD) {
        return respond::store_error(&StoreError::not_found());
    }
    let wants_openmetrics = req
        .headers()
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("application/openmetrics-text"));
    // Reading the store may wait on a database: off the executor.
    let read = lane
        .run(move || app.telemetry().map(|t| metrics.render(&t)))
        .await;
    match read.and_then(|r| r) {
        Ok(text) if wants_openmetrics => {
            respond::with_type(StatusCode::OK, METRICS_CONTENT_TYPE, respond::full(text))
        }
        Ok(text) => respond::with_type(
            StatusCode::OK,
            PROMETHEUS_TEXT_CONTENT_TYPE,
            respond::full(prometheus_text(&text)),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "metrics: the store could not be read");
            respond::app_error(&e)
        }
    }
}
