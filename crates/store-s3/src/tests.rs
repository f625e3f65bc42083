//! The adapter against a real S3-compatible store (see
//! store_testkit::s3): the blob store conformance suite, plus what only
//! object storage has to get right (parts, prefixes, a store that cannot
//! be reached, secrets kept out of errors).

use std::io::Read;

use store_core::ports::BlobStore;
use store_testkit::{s3, suite, SeededRandom};

use super::*;

fn config(prefix: &str, part_bytes: usize) -> S3Config {
    let b = s3::bucket();
    S3Config {
        endpoint: b.endpoint,
        bucket: b.bucket,
        region: b.region,
        access_key_id: b.access_key_id,
        secret_access_key: b.secret_access_key,
        prefix: prefix.to_string(),
        part_bytes,
    }
}

fn random() -> Arc<dyn Random> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    Arc::new(SeededRandom::new(seed))
}

fn fresh(part_bytes: usize) -> S3Blobs {
    S3Blobs::connect(&config(&s3::fresh_prefix(), part_bytes), random()).unwrap()
}

#[test]
fn s3_blobs_pass_the_suite() {
    suite::blob_store(&|| Box::new(fresh(PART_BYTES_DEFAULT)));
}

#[test]
fn s3_blobs_pass_the_suite_in_small_parts() {
    // Garage takes parts smaller than S3's 5 MiB minimum: the suite's
    // 5 MiB blob goes out as a multipart upload of 20 parts.
    suite::blob_store(&|| Box::new(fresh(256 * 1024)));
}

#[test]
fn a_writer_holds_one_part_at_most_and_sends_parts_as_they_fill() {
    const PART_BYTES: usize = 256 * 1024;
    let blobs = fresh(PART_BYTES);
    let mut w = writer::S3Writer::new(blobs.clone(), None);
    let chunk = vec![7u8; 100_000];
    let mut written = 0;
    while written < suite::LARGE_BLOB_BYTES {
        w.write(&chunk).unwrap();
        written += chunk.len();
        assert!(w.part_len() <= PART_BYTES, "held {} bytes", w.part_len());
    }
    assert_eq!(w.parts_sent(), written.div_ceil(PART_BYTES) - 1);
    let id = Box::new(w).commit().unwrap();
    assert_eq!(blobs.open(&id).unwrap().len(), written as u64);
}

#[test]
fn a_body_of_one_part_is_one_put() {
    let blobs = fresh(1024);
    let mut w = writer::S3Writer::new(blobs.clone(), None);
    w.write(&[1u8; 1024]).unwrap();
    assert_eq!(w.parts_sent(), 0, "a full part waits for the next byte");
    let id = Box::new(w).commit().unwrap();
    assert_eq!(blobs.open(&id).unwrap().len(), 1024);
}

#[test]
fn an_open_reader_of_a_large_blob_outlives_its_removal() {
    let blobs = fresh(PART_BYTES_DEFAULT);
    let mut w = blobs.create().unwrap();
    let body: Vec<u8> = (0..suite::LARGE_BLOB_BYTES)
        .map(|i| (i % 251) as u8)
        .collect();
    w.write(&body).unwrap();
    let id = w.commit().unwrap();
    let mut r = blobs.open(&id).unwrap();
    let mut first = vec![0u8; 1000];
    r.read_exact(&mut first).unwrap();
    blobs.remove(&id).unwrap();
    let mut rest = vec![];
    r.read_to_end(&mut rest).unwrap();
    first.extend(rest);
    assert!(first == body, "the burned file is served whole");
}

#[test]
fn prefixes_keep_services_in_one_bucket_apart() {
    let (a, b) = (fresh(PART_BYTES_DEFAULT), fresh(PART_BYTES_DEFAULT));
    let in_a = a.create().unwrap().commit().unwrap();
    let in_b = b.create().unwrap().commit().unwrap();
    assert_eq!(a.list().unwrap(), vec![in_a.clone()]);
    assert_eq!(b.list().unwrap(), vec![in_b.clone()]);
    assert_eq!(
        a.open(&in_b).err().map(|e| e.kind),
        Some(StorageErrorKind::Missing),
        "a blob of another prefix is not there"
    );
}

#[test]
fn a_store_that_cannot_be_reached_is_unavailable_and_says_no_secret() {
    let mut c = config(&s3::fresh_prefix(), PART_BYTES_DEFAULT);
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    c.endpoint = format!("http://127.0.0.1:{port}");
    let e = S3Blobs::connect(&c, random()).unwrap_err();
    assert_eq!(e.kind, StorageErrorKind::Unavailable, "{e}");
    assert!(!e.message.contains(&c.secret_access_key), "{e}");
    assert!(!format!("{c:?}").contains(&c.secret_access_key));
}

#[test]
fn wrong_credentials_are_refused_at_connect_without_saying_them() {
    let mut c = config(&s3::fresh_prefix(), PART_BYTES_DEFAULT);
    c.secret_access_key = "0".repeat(64);
    let e = S3Blobs::connect(&c, random()).unwrap_err();
    assert_ne!(e.kind, StorageErrorKind::Missing, "{e}");
    assert!(!e.message.contains(&c.secret_access_key), "{e}");
    let mut c = config(&s3::fresh_prefix(), PART_BYTES_DEFAULT);
    c.bucket = "no-such-bucket".into();
    let e = S3Blobs::connect(&c, random()).unwrap_err();
    assert!(
        e.message.contains("no-such-bucket"),
        "names the bucket: {e}"
    );
}

#[test]
fn a_listing_goes_on_page_after_page() {
    let blobs = fresh(PART_BYTES_DEFAULT);
    let mut ids: Vec<String> = (0..5)
        .map(|_| blobs.create().unwrap().commit().unwrap().0)
        .collect();
    ids.sort();
    let client = Arc::clone(&blobs.shared.client);
    let prefix = format!("{}/", blobs.shared.blobs);
    let keys = blobs
        .run(async move { client.list_in_pages(&prefix, 2).await })
        .unwrap();
    let mut names: Vec<String> = keys
        .iter()
        .map(|k| k.rsplit('/').next().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ids, "three pages of two, two and one");
}

#[test]
fn ping_needs_the_marker() {
    let blobs = fresh(PART_BYTES_DEFAULT);
    blobs.ping().unwrap();
    blobs.remove_marker().unwrap();
    assert!(blobs.ping().is_err(), "a bucket emptied under the service");
}
