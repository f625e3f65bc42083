//! storesrv: reads the configuration, wires the adapters to the use cases
//! and the HTTP shell, prints the ready line, and shuts down on signal.

mod config;
mod logs;
mod migrate;
mod stores;

use std::process::ExitCode;
use std::sync::Arc;

use store_app::system::OsRandom;
use store_app::{App, AppConfig, Ports};
use store_core::RetainTokens;
use store_sled::SledRepository;

use config::{Command, Config};
use stores::Records;

/// jemalloc instead of glibc's malloc: image jobs allocate and free
/// hundreds of megabytes on whichever blocking-pool thread runs them, and
/// glibc kept that memory in per-thread arenas long after (248 MiB held
/// 10 s after an image flood, against 8 MiB before it; a peak of 507 MiB).
/// jemalloc, with one arena and background threads that give dirty pages
/// back within a second (`.cargo/config.toml`), peaks at 272 MiB and
/// returns to 15 MiB (docs/PERFORMANCE.md, scenario 13). The `jemalloc`
/// feature, on by default, brings it.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match config::parse(&args, &|k| std::env::var(k).ok()) {
        Ok(Command::Run(c)) => *c,
        Ok(Command::Migrate { config, from_data }) => {
            return match migrate::run(&config, &from_data) {
                Ok(report) => {
                    println!("{report}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("storesrv migrate: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Ok(Command::Help) => {
            print!("{}", config::usage());
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!(
                "storesrv {} (SPEC {})",
                env!("CARGO_PKG_VERSION"),
                store_http::SPEC_VERSION
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("storesrv: {e}");
            return ExitCode::from(2);
        }
    };
    // Logs go to stderr, one line each; stdout carries only the ready line.
    // Request lines are batched (see logs.rs); warnings go out at once.
    let logs = logs::Logs::start();
    tracing_subscriber::fmt()
        .with_ansi(false)
        .event_format(logs::Lines::new(logs::Timestamps))
        .with_writer(logs.clone())
        .init();
    // The blocking pool is shared out in lanes that together leave threads
    // to spare (store_http::lanes), so no class of work can take it all.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(store_http::lanes::BLOCKING_THREADS_MAX)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("storesrv: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(config, &logs));
    logs.flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("storesrv: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The small-file read cache: 32 MiB of files up to 64 KiB each.
const BLOB_CACHE_BYTES: u64 = 32 * 1024 * 1024;
pub(crate) const BLOB_CACHE_ITEM_BYTES: u64 = 64 * 1024;

/// How long shutdown waits for the database's file lock to be released
/// before folding its log (see `SledRepository::fold_log`).
const LOG_FOLD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

async fn run(config: Config, logs: &logs::Logs) -> Result<(), String> {
    if config.import_allow_private {
        tracing::warn!("STORE_IMPORT_ALLOW_PRIVATE=1 lets import reach private and loopback hosts; use it for tests only");
    }
    let trusted_proxies = config
        .trusted_proxies
        .iter()
        .map(|p| store_http::client::Cidr::parse(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("STORE_TRUSTED_PROXIES: {e}"))?;
    std::fs::create_dir_all(&config.data)
        .map_err(|e| format!("cannot create the data dir {}: {e}", config.data.display()))?;
    let records = Records::open(&config)?;
    // Small files are read far more often than written: serve them from
    // memory (docs/PERFORMANCE.md, scenario 1).
    let blobs = Arc::new(store_app::CachedBlobs::new(
        records.blob_store(&config)?,
        BLOB_CACHE_BYTES,
        BLOB_CACHE_ITEM_BYTES,
    ));
    let listener = bind(config.listen, "").await?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let metrics = match config.metrics_listen {
        Some(addr) => {
            let listener = bind(addr, "metrics ").await?;
            let at = listener.local_addr().map_err(|e| e.to_string())?;
            tracing::info!("metrics served at http://{at}/metrics");
            Some((listener, metrics(&records, &blobs)))
        }
        None => None,
    };
    let app = Arc::new(open_app(&config, &records, blobs, bound)?);

    // Signal handlers go in before the ready line: a SIGTERM sent the moment
    // the line is read must still shut down cleanly, not kill the process.
    let shutdown = shutdown_signal().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    // Whatever start-up logged is on stderr before anyone is told to go.
    logs.flush();
    // The one line on stdout (CONTRACT.md): tests and scripts wait for it.
    println!("storesrv listening on http://{bound}");
    use std::io::Write;
    let _ = std::io::stdout().flush();

    let mut options = serve_options(trusted_proxies);
    options.rate_limits = records.rate_limits(config.limits.rate_limit_per_min);
    let scrapes = metrics.map(|(listener, metrics)| {
        options.metrics = Some(Arc::clone(&metrics));
        let app = Arc::clone(&app);
        tokio::spawn(store_http::serve_metrics(
            listener,
            app,
            metrics,
            std::future::pending(),
        ))
    });
    let served = serve_with_upkeep(listener, app, options, shutdown).await?;
    if let Some(scrapes) = scrapes {
        // Awaited, so that its handle on the store is gone before the
        // database is closed below.
        scrapes.abort();
        let _ = scrapes.await;
    }
    close(records, &config)?;
    served.map_err(|e| e.to_string())?;
    tracing::info!("stopped");
    Ok(())
}

async fn bind(addr: std::net::SocketAddr, what: &str) -> Result<tokio::net::TcpListener, String> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot {what}listen on {addr}: {e}"))
}

/// What `/metrics` reads besides the requests and the store's telemetry:
/// the blob cache, and the embedded store's group commit.
fn metrics(records: &Records, blobs: &Arc<store_app::CachedBlobs>) -> Arc<store_http::Metrics> {
    let cache = Arc::clone(blobs);
    let metrics = store_http::Metrics::default().with_cache(move || cache.stats());
    Arc::new(match records {
        Records::Sled(repo) => {
            let repo = Arc::clone(repo);
            metrics.with_commits(move || store_http::CommitStats {
                commits: repo.commits(),
                flushes: repo.flushes(),
            })
        }
        Records::Pg(_) => metrics,
    })
}

/// The use cases over the configured adapters.
fn open_app(
    config: &Config,
    records: &Records,
    blobs: Arc<store_app::CachedBlobs>,
    bound: std::net::SocketAddr,
) -> Result<App, String> {
    let base_url = config
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{bound}"));
    let limits = config.limits.clone();
    let guard = store_fetch::Guard {
        policy: if config.import_allow_private {
            store_fetch::Policy::AllowPrivate
        } else {
            store_fetch::Policy::PublicOnly
        },
        // Import never fetches from the service itself, by any of the
        // addresses it answers on (a wildcard bind: all of loopback).
        own: vec![bound],
    };
    let ports = Ports {
        repo: records.repository(),
        blobs,
        clock: records.clock()?,
        random: Arc::new(OsRandom),
        fetcher: Arc::new(store_fetch::UreqFetcher::new(guard, &base_url)),
        coordination: records.coordination(&limits),
    };
    let app_config = AppConfig {
        base_url,
        limits,
        retain_tokens: RetainTokens::from_csv(&config.retain_tokens),
        superadmin_token: config.superadmin_token.clone(),
        upload_token: config.upload_token.clone(),
        gallery_uploads: config.gallery_uploads,
        admin_token: config.admin_token.clone(),
    };
    let (app, recovery) = App::open(ports, app_config).map_err(|e| e.to_string())?;
    webhooks(&app, config, bound)?;
    if let Some(clamd) = &config.clamd {
        app.scan_uploads(Arc::new(clamd.clone()));
        tracing::info!(?clamd, "uploads are scanned by clamd");
    }
    tracing::info!(
        data = %config.data.display(),
        records = %records.describe(),
        bytes = %stores::describe_bytes(config),
        objects = recovery.objects,
        pool_bytes = recovery.pool_used_bytes,
        "store opened: {} objects",
        recovery.objects
    );
    Ok(app)
}

/// Turns webhooks on when configured, their URL behind import's address
/// guard (private addresses only with STORE_WEBHOOK_ALLOW_PRIVATE=1), or
/// off for the whole store (a PostgreSQL store's outbox switch is
/// shared: every server sets it alike).
fn webhooks(app: &App, config: &Config, bound: std::net::SocketAddr) -> Result<(), String> {
    let Some(w) = &config.webhook else {
        app.keep_no_webhook_events();
        return Ok(());
    };
    let guard = store_fetch::Guard {
        policy: if w.allow_private {
            store_fetch::Policy::AllowPrivate
        } else {
            store_fetch::Policy::PublicOnly
        },
        own: vec![bound],
    };
    let timeout = std::time::Duration::from_millis(w.pace.timeout_ms);
    let sender = store_fetch::UreqWebhook::new(&w.url, guard, timeout, store_app::DELIVERERS)?;
    app.deliver_webhooks(store_app::Webhook {
        sender: Arc::new(sender),
        secret: w.secret.clone(),
        pace: w.pace,
        deliverer_setup: yield_to_requests,
    });
    tracing::info!("webhooks on: events are delivered to the configured URL");
    Ok(())
}

/// The nice value of a webhook deliverer's thread: its share of a busy
/// core is a tenth of a request thread's (weights 110 and 1024), so under
/// a sustained full load events are delivered late, never lost
/// (docs/PERFORMANCE.md, "The webhook within its 10%").
const DELIVERER_NICE: i32 = 10;

/// Lowers the calling thread's scheduling priority to [`DELIVERER_NICE`]
/// (on Linux a thread has a nice value of its own). A refusal leaves it
/// as it was: deliveries then merely compete with requests.
fn yield_to_requests() {
    if let Err(e) = rustix::process::setpriority_process(None, DELIVERER_NICE) {
        tracing::warn!(error = %e, "could not lower a webhook deliverer's priority");
    }
}

/// Closes the records once everything else that held them is gone: the
/// embedded store is flushed and its log folded for a fast next start.
fn close(records: Records, config: &Config) -> Result<(), String> {
    let Records::Sled(repo) = records else {
        return Ok(());
    };
    repo.flush().map_err(|e| e.to_string())?;
    // The app and its tasks are gone with `serve`; this was the last handle.
    drop(repo);
    let started = std::time::Instant::now();
    match SledRepository::fold_log(&config.data, LOG_FOLD_PATIENCE) {
        Ok(()) => tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "database log folded for a fast next start"
        ),
        Err(e) => tracing::warn!(error = %e, "database log not folded; the next start replays it"),
    }
    Ok(())
}

/// Serves, with the store's upkeep (sweeper, orphan collection) running
/// beside, until `shutdown`; then stops the upkeep. A damaged store (a
/// record the orphan collection cannot read) stops the server with an
/// error, since running on it would hide the damage.
async fn serve_with_upkeep(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    options: store_http::ServeOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<std::io::Result<()>, String> {
    let (damage_tx, damage_rx) = tokio::sync::oneshot::channel::<String>();
    let upkeep = app
        .start_upkeep(move |why| {
            let _ = damage_tx.send(why);
        })
        .map_err(|e| format!("cannot start the store's upkeep: {e}"))?;
    let damage = Arc::new(std::sync::Mutex::new(None));
    let shutdown = {
        let damage = Arc::clone(&damage);
        async move {
            tokio::select! {
                () = shutdown => {}
                // A collection that ends well drops its sender: this branch
                // is then disabled, and only the signal is waited for.
                Ok(why) = damage_rx => {
                    *damage.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                }
            }
        }
    };
    let served = store_http::serve(listener, Arc::clone(&app), options, shutdown).await;
    let _ = tokio::task::spawn_blocking(move || upkeep.stop()).await;
    let why = damage.lock().unwrap_or_else(|e| e.into_inner()).take();
    why.map_or(Ok(served), Err)
}

/// The server's options: whom to believe. Its guards are the app's
/// `limits.server`, which the configuration filled.
fn serve_options(trusted_proxies: Vec<store_http::client::Cidr>) -> store_http::ServeOptions {
    store_http::ServeOptions {
        trusted_proxies,
        ..store_http::ServeOptions::default()
    }
}

/// Installs the SIGINT and SIGTERM handlers now, and returns a future that
/// resolves when either signal arrives.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        tracing::info!("shutting down");
    })
}
