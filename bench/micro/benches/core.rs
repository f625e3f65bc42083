//! Micro benchmarks of the domain rules on the request path (`just bench`
//! runs them after the HTTP scenarios; docs/PERFORMANCE.md).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use store_core::lifetime::Lifetime;
use store_core::ratelimit::RateLimiter;
use store_core::record::{FileRecord, Object, ReadIntent};
use store_core::{names, ttl, BlobId, Timestamp};

fn record() -> Object {
    let now = Timestamp::from_secs(1_800_000_000);
    Object::File(FileRecord {
        id: "Xq3aB9kLm2Pz".into(),
        name: "quarterly report.pdf".into(),
        content_type: "application/pdf".into(),
        size: 48_213,
        blob: BlobId("3fa9c2d4e5f60718293a4b5c6d7e8f90".into()),
        created_at: now,
        updated_at: now,
        lifetime: Lifetime::fixed(now, 14_400),
        once: false,
        tags: vec!["report".into(), "2026".into()],
        text: false,
        link: false,
        thumbs: Default::default(),
        owner: None,
        encrypted: None,
        downloads_left: None,
        password: None,
        sha256: None,
    })
}

fn rules(c: &mut Criterion) {
    c.bench_function("ttl::parse_ttl 7d", |b| {
        b.iter(|| ttl::parse_ttl(black_box("7d")))
    });
    c.bench_function("names::validate_memorable_name", |b| {
        b.iter(|| {
            names::validate_memorable_name(
                &store_core::Limits::DEFAULT,
                black_box("team-notes-2026"),
            )
        })
    });
    let now = Timestamp::from_secs(1_800_000_000);
    let Object::File(file) = record() else {
        unreachable!()
    };
    c.bench_function("FileRecord::decide_read", |b| {
        b.iter(|| black_box(&file).decide_read(now, ReadIntent::Get))
    });
    let mut limiter = RateLimiter::new(100);
    let mut n = 0u32;
    c.bench_function("RateLimiter::check, 1000 clients", |b| {
        b.iter(|| {
            n = (n + 1) % 1000;
            let _ = limiter.check(&n, now);
        })
    });
}

fn records(c: &mut Criterion) {
    let obj = record();
    let bytes = serde_json::to_vec(&obj).expect("encodes");
    c.bench_function("record encode (JSON)", |b| {
        b.iter(|| serde_json::to_vec(black_box(&obj)))
    });
    c.bench_function("record decode (JSON)", |b| {
        b.iter(|| serde_json::from_slice::<Object>(black_box(&bytes)))
    });
}

criterion_group!(benches, rules, records);
criterion_main!(benches);
