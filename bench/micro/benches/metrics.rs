//! What counting a request costs (`just bench` runs it after the HTTP
//! scenarios; docs/PERFORMANCE.md, scenario 15): the per-request work of
//! a server with a metrics listener, and one scrape's rendering.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use store_http::Metrics;

fn observe(c: &mut Criterion) {
    let m = Metrics::default();
    let took = Duration::from_micros(30);
    c.bench_function("metrics: count one request", |b| {
        b.iter(|| m.observe(black_box("get_file"), black_box(200), took))
    });
    let t = store_app::Telemetry::default();
    c.bench_function("metrics: render a scrape", |b| {
        b.iter(|| black_box(m.render(&t)).len())
    });
}

criterion_group!(benches, observe);
criterion_main!(benches);
