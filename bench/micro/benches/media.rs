//! Micro benchmarks of the media pipeline on the repository's 12 MP
//! fixture (`just bench`; the 24 MP comparison with libvips is storebench
//! scenarios 7 and 8).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use store_media::MediaLimits;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../../fixtures/media/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn media(c: &mut Criterion) {
    let photo = fixture("large-4000x3000.jpg");
    let limits = MediaLimits::default();
    let mut g = c.benchmark_group("12 MP JPEG");
    g.sample_size(10);
    g.bench_function("probe", |b| {
        b.iter(|| store_media::probe(black_box(&photo), &limits))
    });
    g.bench_function("thumbnail 160", |b| {
        b.iter(|| store_media::thumbnail(black_box(&photo), 160, &limits))
    });
    g.bench_function("thumbnails 160/320/640", |b| {
        b.iter(|| store_media::thumbnails(black_box(&photo), &[160, 320, 640], &limits))
    });
    g.bench_function("process (2048 px WebP)", |b| {
        b.iter(|| store_media::process(black_box(&photo), &limits))
    });
    g.finish();
    let exif = fixture("exif-gps-orientation.jpg");
    c.bench_function("jpeg::strip (EXIF, keep orientation)", |b| {
        b.iter(|| store_media::jpeg::strip(black_box(&exif)))
    });
}

criterion_group!(benches, media);
criterion_main!(benches);
