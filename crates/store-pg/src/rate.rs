//! The rate limit across processes: GCRA's state per client in one table,
//! stepped by one call of `store_rate_check` (the same arithmetic as
//! [`store_core::ratelimit::gcra_step`]).

use std::sync::Arc;

use store_core::ports::{RateLimits, StorageResult};
use store_core::Timestamp;

use crate::Inner;

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
    fn check(&self, client: std::net::IpAddr, now: Timestamp) -> StorageResult<Result<(), u64>> {
        if self.per_min == 0 {
            return Ok(Ok(()));
        }
        let per_min = i32::try_from(self.per_min).unwrap_or(i32::MAX);
        let wait: i64 = self
            .inner
            .query_one(
                "SELECT store_rate_check($1, $2, $3)",
                vec![
                    Box::new(client.to_string()),
                    Box::new(now.as_millis()),
                    Box::new(per_min),
                ],
            )?
            .get(0);
        Ok(match u64::try_from(wait) {
            Ok(0) | Err(_) => Ok(()),
            Ok(secs) => Err(secs),
        })
    }

    fn blocks(&self) -> bool {
        self.per_min > 0
    }
}
