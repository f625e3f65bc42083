//! The rate limit across processes: GCRA's state per client in one table,
//! stepped by one call of `store_rate_check` (the same arithmetic as
//! [`store_core::ratelimit::gcra_step`]).

use std::sync::Arc;

use store_core::ports::{AsyncCheck, RateLimits, StorageResult};
use store_core::{StorageError, Timestamp};

use crate::{Inner, Params};

/// Counts each client's requests over every process.
#[derive(Debug, Clone)]
pub struct PgRateLimits {
    inner: Arc<Inner>,
    per_min: u32,
}

impl PgRateLimits {
    pub(crate) fn new(inner: Arc<Inner>, per_min: u32) -> Self {
        Self { inner, per_min }
    }
}

/// One step of the client's count.
const CHECK: &str = "SELECT store_rate_check($1, $2, $3)";

impl PgRateLimits {
    /// [`CHECK`]'s parameters for `client` at `now`.
    fn params(&self, client: std::net::IpAddr, now: Timestamp) -> Params {
        let per_min = i32::try_from(self.per_min).unwrap_or(i32::MAX);
        vec![
            Box::new(client.to_string()),
            Box::new(now.as_millis()),
            Box::new(per_min),
        ]
    }
}

/// [`CHECK`]'s answer (whole seconds to wait, 0 when admitted) as
/// [`RateLimits::check`] gives it.
fn verdict(rows: &[tokio_postgres::Row]) -> StorageResult<Result<(), u64>> {
    let wait: i64 = rows
        .first()
        .ok_or_else(|| StorageError::new("the rate check answered no row"))?
        .get(0);
    Ok(match u64::try_from(wait) {
        Ok(0) | Err(_) => Ok(()),
        Ok(secs) => Err(secs),
    })
}

impl RateLimits for PgRateLimits {
    fn check(&self, client: std::net::IpAddr, now: Timestamp) -> StorageResult<Result<(), u64>> {
        if self.per_min == 0 {
            return Ok(Ok(()));
        }
        verdict(&self.inner.query(CHECK, self.params(client, now))?)
    }

    fn blocks(&self) -> bool {
        self.per_min > 0
    }

    /// The check on the caller's runtime, through the connections a GET's
    /// read uses (`Inner::query_here`): with the limit on, every
    /// request made this check on a blocking thread, which waited on the
    /// bridge's runtime (issue 37).
    fn check_async(&self, client: std::net::IpAddr, now: Timestamp) -> Option<AsyncCheck> {
        if self.per_min == 0 {
            return None;
        }
        tokio::runtime::Handle::try_current().ok()?;
        let inner = Arc::clone(&self.inner);
        let params = self.params(client, now);
        Some(Box::pin(async move {
            verdict(&inner.query_here(CHECK, params).await?)
        }))
    }
}
