//! storesrv mounted inside a host's own hyper server, under `/files`, next
//! to the host's own routes.
//!
//! The host binds the listener and accepts connections; store-http gives
//! it a [`StoreService`] to hand every request under `/files` to. The
//! store's URLs carry the prefix because the app's base URL does. The
//! store's upkeep (the sweeper and the orphan collection) is started here
//! too, since nothing else would remove expired files.
//!
//! The program then acts as a client: it uploads a file under the prefix,
//! downloads it from the URL it was given, asks the host for its own page,
//! and checks that the store's home page links within `/files`. It exits
//! with an error if any of that fails.
//!
//! ```sh
//! cargo run -p store-http --example mounted
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use store_app::system::{OsRandom, SystemClock};
use store_app::{App, AppConfig, Ports};
use store_core::ports::Random;
use store_http::{ResBody, ServeOptions, StoreService};
use store_sled::{FsBlobStore, SledRepository};
use tokio::net::TcpListener;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Where the store answers in the host's URL space.
const MOUNT: &str = "/files";

/// The store on disk under `data`, its URLs beginning with `base_url`.
/// Imports are refused here; a real host wires `store_fetch::UreqFetcher`
/// as the storesrv binary does.
fn open(data: &Path, base_url: String) -> Result<App, Error> {
    let random: Arc<dyn Random> = Arc::new(OsRandom);
    let ports = Ports {
        repo: Arc::new(SledRepository::open(data)?),
        blobs: Arc::new(FsBlobStore::open(data, Arc::clone(&random))?),
        clock: Arc::new(SystemClock),
        random,
        fetcher: Arc::new(store_testkit::FakeFetcher::new()),
        coordination: Default::default(),
    };
    let (app, _recovery) = App::open(ports, AppConfig::new(base_url))?;
    Ok(app)
}

/// Whether the host routes `path` to the store.
fn is_mounted(path: &str) -> bool {
    path.strip_prefix(MOUNT)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The host's own answer to everything outside the mount.
fn host_page(path: &str) -> Response<ResBody> {
    let text = format!("the host's own page at {path}\n");
    Response::new(
        Full::new(Bytes::from(text))
            .map_err(|never| match never {})
            .boxed(),
    )
}

/// The host's server: one store service, cloned into each connection with
/// the client's address (the store's rate limit counts per client).
async fn host(listener: TcpListener, files: StoreService) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let files = files.for_peer(peer.ip());
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let files = files.clone();
                async move {
                    let res = if is_mounted(req.uri().path()) {
                        files.handle(req).await
                    } else {
                        host_page(req.uri().path())
                    };
                    Ok::<_, Infallible>(res)
                }
            });
            let io = TokioIo::new(stream);
            if let Err(e) = http1::Builder::new().serve_connection(io, service).await {
                eprintln!("connection: {e}");
            }
        });
    }
}

/// What a client sees, checked: run on a plain thread, with ureq.
fn client(addr: SocketAddr) -> Result<(), Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    let base = format!("http://{addr}");

    let made = agent
        .post(format!("{base}{MOUNT}/?name=hello.txt"))
        .send("hello from a mounted store")?
        .body_mut()
        .read_to_string()?;
    let made: serde_json::Value = serde_json::from_str(&made)?;
    let url = made["url"].as_str().ok_or("no url in the answer")?;
    println!("uploaded: {url}");
    ensure(
        url.starts_with(&format!("{base}{MOUNT}/")),
        "the URL carries the mount",
    )?;

    let bytes = agent.get(url).call()?.body_mut().read_to_string()?;
    ensure(
        bytes == "hello from a mounted store",
        "the download is the upload",
    )?;

    let own = agent
        .get(format!("{base}/"))
        .call()?
        .body_mut()
        .read_to_string()?;
    print!("host: {own}");
    ensure(
        own.starts_with("the host's own page"),
        "the host keeps its routes",
    )?;

    let home = agent
        .get(format!("{base}{MOUNT}/"))
        .header("accept", "text/html")
        .call()?
        .body_mut()
        .read_to_string()?;
    let css = format!("href=\"{MOUNT}/static/app.css");
    ensure(
        home.contains(&css),
        "the home page loads its stylesheet under the mount",
    )?;
    ensure(
        !home.contains("href=\"/static/"),
        "no page link escapes the mount",
    )?;
    println!("the store's home page links within {MOUNT}");
    Ok(())
}

fn ensure(holds: bool, what: &str) -> Result<(), Error> {
    if holds {
        Ok(())
    } else {
        Err(format!("not so: {what}").into())
    }
}

fn main() -> Result<(), Error> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let data = tempfile::tempdir()?;
        let app = Arc::new(open(data.path(), format!("http://{addr}{MOUNT}"))?);
        let upkeep = app.start_upkeep(|why| eprintln!("the store is damaged: {why}"))?;
        let files =
            StoreService::new(Arc::clone(&app), &ServeOptions::default()).mounted_at(MOUNT)?;
        tokio::spawn(host(listener, files));
        tokio::task::spawn_blocking(move || client(addr)).await??;
        upkeep.stop();
        Ok(())
    })
}
