//! The rate limit across processes: GCRA's state per client in one table,
//! stepped by one call of `store_rate_check` (the same arithmetic as
//! [`store_core::ratelimit::gcra_step`]).

use std::sync::Arc;

use store_core::ports::{RateLimits, StorageResult};
use store_core::{StorageError, Timestamp};

use crate::{db_error, pool_error, Inner};

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

impl RateLimits for PgRateLimits {
    fn check(&self, client: &str, now: Timestamp) -> StorageResult<Result<(), u64>> {
        if self.per_min == 0 {
            return Ok(Ok(()));
        }
        let queries = self.inner.queries.clone();
        let client = client.to_string();
        let per_min = i32::try_from(self.per_min).unwrap_or(i32::MAX);
        let wait: i64 = self.inner.bridge.run(async move {
            let db = queries.get().await.map_err(pool_error)?;
            let statement = db
                .prepare_cached("SELECT store_rate_check($1, $2, $3)")
                .await
                .map_err(db_error)?;
            let row = db
                .query_one(&statement, &[&client, &now.as_millis(), &per_min])
                .await
                .map_err(db_error)?;
            Ok::<_, StorageError>(row.get(0))
        })?;
        Ok(match u64::try_from(wait) {
            Ok(0) | Err(_) => Ok(()),
            Ok(secs) => Err(secs),
        })
    }

    fn blocks(&self) -> bool {
        self.per_min > 0
    }
}
