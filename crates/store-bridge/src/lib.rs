//! From storesrv's synchronous ports to an asynchronous client: a small
//! runtime of the adapter's own, and a blocking wait for each job on it.
//! The PostgreSQL records (store-pg) and the S3 bytes (store-s3) each
//! keep one, so that neither depends on the server's runtime, and an
//! embedder without tokio can use them from plain threads.

use std::future::Future;

use store_core::StorageError;

/// Worker threads of the adapter's runtime: they only drive sockets, and
/// one does it with fewer hand-offs than two (a GET cost 20 context
/// switches instead of 28; docs/PERFORMANCE.md, "Records in PostgreSQL").
const WORKER_THREADS: usize = 1;

/// The adapter's runtime. Jobs are spawned on it and waited for through a
/// channel, which works from any thread that may block: a blocking-pool
/// thread of another runtime, a test, a plain thread.
#[derive(Debug)]
pub struct Bridge {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Bridge {
    /// Starts the runtime; its threads are named `name` (in `top -H` and
    /// in panics).
    pub fn new(name: &str) -> Result<Self, StorageError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKER_THREADS)
            .thread_name(name)
            .enable_all()
            .build()
            .map_err(|e| StorageError::new(format!("cannot start the {name} runtime: {e}")))?;
        Ok(Self {
            runtime: Some(runtime),
        })
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the bridge")
    }

    /// Makes the runtime current on this thread while the guard lives
    /// (building a pool needs it).
    pub fn enter(&self) -> tokio::runtime::EnterGuard<'_> {
        self.runtime().enter()
    }

    /// Runs `job` on the runtime and waits for its answer.
    pub fn run<T: Send + 'static>(&self, job: impl Future<Output = T> + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.runtime().spawn(async move {
            let _ = tx.send(job.await);
        });
        rx.recv().expect("an adapter job never panics")
    }

    /// Starts `job` on the runtime without waiting for it.
    pub fn spawn(&self, job: impl Future<Output = ()> + Send + 'static) {
        self.runtime().spawn(job);
    }
}

impl Drop for Bridge {
    /// Dropping a runtime waits for its threads, which is refused inside
    /// another runtime (the server may drop the last handle there): let
    /// them go in the background instead.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
