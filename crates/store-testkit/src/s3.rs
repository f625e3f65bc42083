//! A bucket for the tests, in the S3-compatible store (Garage) that the
//! `STORE_TEST_S3_*` variables name. `scripts/test` starts a throwaway
//! Garage with scripts/garage and sets them; a test that needs S3 without
//! them fails and says so. Each test takes a prefix of its own, so tests
//! share the bucket without seeing each other's blobs.

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the endpoint; the others share its prefix.
pub const ENDPOINT_VAR: &str = "STORE_TEST_S3_ENDPOINT";

/// Where the test bucket is and how to reach it.
#[derive(Clone)]
pub struct TestBucket {
    /// The S3 endpoint (`STORE_TEST_S3_ENDPOINT`).
    pub endpoint: String,
    /// The bucket's name (`STORE_TEST_S3_BUCKET`).
    pub bucket: String,
    /// The bucket's region (`STORE_TEST_S3_REGION`).
    pub region: String,
    /// The access key id (`STORE_TEST_S3_ACCESS_KEY_ID`).
    pub access_key_id: String,
    /// The secret access key (`STORE_TEST_S3_SECRET_ACCESS_KEY`); `Debug` never
    /// prints it.
    pub secret_access_key: String,
}

impl std::fmt::Debug for TestBucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestBucket")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .finish_non_exhaustive()
    }
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "no S3 store for the tests: {name} is not set. Run scripts/test, which starts a \
             throwaway Garage (or `eval \"$(scripts/garage start DIR)\"` and set \
             STORE_TEST_S3_ENDPOINT, _BUCKET, _REGION, _ACCESS_KEY_ID and _SECRET_ACCESS_KEY)"
        )
    })
}

/// The test bucket, or a panic that says how to get one.
pub fn bucket() -> TestBucket {
    TestBucket {
        endpoint: var(ENDPOINT_VAR),
        bucket: var("STORE_TEST_S3_BUCKET"),
        region: var("STORE_TEST_S3_REGION"),
        access_key_id: var("STORE_TEST_S3_ACCESS_KEY_ID"),
        secret_access_key: var("STORE_TEST_S3_SECRET_ACCESS_KEY"),
    }
}

/// A key prefix no other test (in this run or an earlier one) uses.
pub fn fresh_prefix() -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    format!(
        "t{}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )
}
