//! Copies of a bucket's large blobs on local disk (issue 37): made as the
//! bytes pass, read instead of the bucket, never of bytes read once, and
//! bounded by bytes.

use super::*;
use crate::DiskCachedBlobs;
use store_core::ports::BlobStore;
use store_core::BlobId;

const ITEM_MIN_BYTES: u64 = 1024;
const CAPACITY_BYTES: u64 = 64 * 1024;

struct Cache {
    bucket: Arc<Remote>,
    local: Arc<MemoryBlobStore>,
    cache: DiskCachedBlobs,
}

fn cache() -> Cache {
    let bucket = Arc::new(Remote::new(Arc::new(MemoryBlobStore::new())));
    let local = Arc::new(MemoryBlobStore::new());
    let cache = DiskCachedBlobs::new(
        bucket.clone(),
        local.clone(),
        CAPACITY_BYTES,
        ITEM_MIN_BYTES,
    );
    Cache {
        bucket,
        local,
        cache,
    }
}

impl Cache {
    fn put(&self, len: usize, seed: u8) -> (BlobId, Vec<u8>) {
        let bytes: Vec<u8> = (0..len).map(|i| (i as u8) ^ seed).collect();
        let mut w = self.bucket.create().unwrap();
        w.write(&bytes).unwrap();
        (w.commit().unwrap(), bytes)
    }

    fn read(&self, id: &BlobId) -> Vec<u8> {
        let mut out = vec![];
        self.cache.open(id).unwrap().read_to_end(&mut out).unwrap();
        out
    }
}

#[test]
fn a_blob_read_whole_is_read_again_from_its_copy() {
    let c = cache();
    let (id, bytes) = c.put(4096, 1);
    assert_eq!(c.read(&id), bytes);
    assert_eq!(c.bucket.opens(), 1);
    assert_eq!(c.read(&id), bytes);
    assert_eq!(c.bucket.opens(), 1, "the second read is the copy's");
    assert_eq!(c.cache.cached_bytes(), 4096);
    let at_hand = c.cache.open_at_hand(&id).expect("a copy is at hand");
    assert_eq!(at_hand.unwrap().len(), 4096);
    let mut part = vec![];
    let range = c.cache.open_range(&id, 10..20).unwrap();
    range.take(100).read_to_end(&mut part).unwrap();
    assert_eq!(part, bytes[10..20]);
    assert_eq!(c.bucket.opens(), 1, "a range of a copy is the copy's");
}

#[test]
fn a_reader_that_stops_early_leaves_no_copy() {
    let c = cache();
    let (id, bytes) = c.put(4096, 2);
    let mut half = vec![0; 2048];
    c.cache.open(&id).unwrap().read_exact(&mut half).unwrap();
    assert_eq!(c.local.count(), 0);
    assert!(
        c.cache.open_at_hand(&id).is_none(),
        "no copy, and the bucket waits"
    );
    assert_eq!(c.read(&id), bytes);
    assert_eq!(c.bucket.opens(), 2);
    assert_eq!(c.local.count(), 1);
}

#[test]
fn bytes_read_once_and_small_blobs_are_not_copied() {
    let c = cache();
    let (once, bytes) = c.put(4096, 3);
    let mut out = vec![];
    c.cache
        .open_once(&once)
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out, bytes);
    let (small, _) = c.put(ITEM_MIN_BYTES as usize, 4);
    c.read(&small);
    let (huge, _) = c.put((CAPACITY_BYTES / 8) as usize + 1, 5);
    c.read(&huge);
    assert_eq!(c.local.count(), 0);
    assert_eq!(c.cache.cached_bytes(), 0);
}

#[test]
fn removing_a_blob_removes_its_copy() {
    let c = cache();
    let (id, _) = c.put(4096, 6);
    c.read(&id);
    c.cache.remove(&id).unwrap();
    assert_eq!(c.local.count(), 0);
    assert_eq!(c.cache.cached_bytes(), 0);
    assert!(c.cache.open(&id).is_err(), "gone from the bucket too");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Whatever is read, in whatever order: every read answers the
    /// bucket's bytes, the copies never hold more than the capacity, and
    /// the index and the local store agree on what is held.
    #[test]
    fn copies_stay_within_their_capacity_and_match_the_bucket(
        sizes in proptest::collection::vec(ITEM_MIN_BYTES + 1..=CAPACITY_BYTES / 8, 1..12),
        reads in proptest::collection::vec(0usize..12, 1..60),
    ) {
        let c = cache();
        let blobs: Vec<_> = sizes
            .iter()
            .enumerate()
            .map(|(i, len)| c.put(*len as usize, i as u8))
            .collect();
        for r in reads {
            let (id, bytes) = &blobs[r % blobs.len()];
            prop_assert_eq!(&c.read(id), bytes);
            prop_assert!(c.cache.cached_bytes() <= CAPACITY_BYTES);
        }
        let held: u64 = blobs
            .iter()
            .filter(|(id, _)| c.local.open(id).is_ok())
            .map(|(_, b)| b.len() as u64)
            .sum();
        prop_assert_eq!(held, c.cache.cached_bytes());
    }
}
