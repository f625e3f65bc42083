//! Fixtures, and the scenarios measured in process: the media pipeline
//! against libvips (7 and 8) and expiry over a million records (9).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use store_app::{App, AppConfig, Ports};
use store_core::lifetime::Lifetime;
use store_core::record::{FileRecord, Object};
use store_core::{BlobId, Limits, Timestamp};
use store_media::MediaLimits;
use store_sled::{FsBlobStore, SledRepository};
use store_testkit::{FakeFetcher, ManualClock, SeededRandom};

use crate::tools::{self, median};
use crate::{Bench, Row};

/// The bytes the scenarios use, made once per run.
#[derive(Debug)]
pub struct Fixtures {
    pub small: Vec<u8>,
    pub large: Vec<u8>,
    /// A 6000x4000 (24 MP) JPEG with photo-like detail.
    pub photo: Vec<u8>,
    pub photo_path: PathBuf,
    /// 20 incompressible JPEG-typed files of about 5 MB.
    pub noise_images: Vec<Vec<u8>>,
}

/// splitmix64: reproducible noise without a dependency.
fn noise(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Fixtures {
    pub fn make(dir: &Path) -> Self {
        let small = vec![b'x'; 1024];
        let large = vec![b'x'; 5 * 1024 * 1024];
        let photo = photo(6000, 4000);
        let photo_path = dir.join("photo-24mp.jpg");
        std::fs::write(&photo_path, &photo).expect("photo fixture");
        let mut seed = 7;
        let noise_images = (0..20)
            .map(|_| {
                // A JPEG start-of-image marker, then noise: typed as a
                // JPEG, incompressible, never decoded by a dir.
                let mut v = vec![0xFF, 0xD8, 0xFF, 0xE0];
                v.extend((0..(5_000_000 - 4) / 8).flat_map(|_| noise(&mut seed).to_le_bytes()));
                v
            })
            .collect();
        Self {
            small,
            large,
            photo,
            photo_path,
            noise_images,
        }
    }
}

/// A synthetic photograph: smooth gradients and shapes with fine noise,
/// so the JPEG weighs what a real 24 MP photo does (several MB).
fn photo(width: u32, height: u32) -> Vec<u8> {
    let mut seed = 42;
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        let n = (noise(&mut seed) & 0x1f) as i32 - 16;
        let fx = x as f32 / width as f32;
        let fy = y as f32 / height as f32;
        let ring = (((fx - 0.5).powi(2) + (fy - 0.4).powi(2)).sqrt() * 40.0).sin() * 40.0;
        let c = |base: f32| (base + ring + n as f32).clamp(0.0, 255.0) as u8;
        image::Rgb([
            c(60.0 + 150.0 * fx),
            c(90.0 + 120.0 * fy),
            c(180.0 - 100.0 * fx * fy),
        ])
    });
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&img)
        .expect("JPEG encoding");
    out
}

fn ms(secs: f64) -> String {
    format!("{:.0} ms", secs * 1e3)
}

fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let v = f();
    (start.elapsed().as_secs_f64(), v)
}

/// Scenarios 7 and 8, against `vips` on the same file.
pub fn media(f: &Fixtures) -> Vec<Row> {
    let limits = MediaLimits::default();
    // A/B alternated, five times: the host's noise moves both alike.
    let runs = 5;
    let work = f.photo_path.parent().expect("dir");
    let vips_out = work.join("vips-2048.webp");
    let (mut ours, mut vips, mut ratios) = (vec![], vec![], vec![]);
    let mut out_bytes = 0;
    for _ in 0..runs {
        let (t, p) = timed(|| store_media::process(&f.photo, &limits).expect("process"));
        out_bytes = p.bytes.len();
        let v = tools::time_command(
            Command::new("vips")
                .arg("thumbnail")
                .arg(&f.photo_path)
                .arg(format!("{}[Q=75]", vips_out.display()))
                .arg("2048"),
        );
        ours.push(t);
        vips.push(v);
        ratios.push(t / v);
    }
    let ratio = median(ratios);
    let (ours, vips) = (median(ours), median(vips));
    println!(
        "  7: ours {} ({} bytes), vips {}",
        ms(ours),
        out_bytes,
        ms(vips)
    );
    let mut rows = vec![Row::new(
        "7",
        format!(
            "24 MP JPEG to 2048 px WebP ({:.0} KiB)",
            out_bytes as f64 / 1024.0
        ),
        format!(
            "{} (vips thumbnail {}, median ratio {ratio:.2}x)",
            ms(ours),
            ms(vips)
        ),
        "<= vips, < 1 s",
        Some(ratio <= 1.0 && ours < 1.0 && out_bytes as u64 <= limits.target_bytes),
    )];

    let thumbs: Vec<f64> = (0..runs)
        .map(|_| {
            // What the server does on the first preview request of an
            // image: every size from one decode.
            timed(|| {
                store_media::thumbnails(&f.photo, &[160, 320, 640], &limits).expect("thumbnails")
            })
            .0
        })
        .collect();
    let vips_thumbs: Vec<f64> = (0..runs)
        .map(|_| {
            [160, 320, 640]
                .iter()
                .map(|size| {
                    tools::time_command(
                        Command::new("vipsthumbnail")
                            .arg(&f.photo_path)
                            .args(["-s", &size.to_string(), "-o"])
                            .arg(work.join(format!("t{size}.webp[Q=80]"))),
                    )
                })
                .sum()
        })
        .collect();
    let (t, v) = (median(thumbs), median(vips_thumbs));
    println!("  8: ours {}, vipsthumbnail {}", ms(t), ms(v));
    rows.push(Row::new(
        "8",
        "thumbnails 160/320/640 from a 24 MP JPEG, cold",
        format!("{} (vipsthumbnail {}, {:.2}x)", ms(t), ms(v), t / v),
        "<= 0.5x vipsthumbnail",
        Some(t <= 0.5 * v),
    ));
    rows
}

fn file_record(i: usize, now: Timestamp, expires: Timestamp) -> (String, Object) {
    let id = format!("bench{i:08}");
    let rec = FileRecord {
        id: id.clone(),
        name: format!("f{i}.txt"),
        content_type: "text/plain".into(),
        size: 1024,
        blob: BlobId(format!("{:016x}", i + 1)),
        created_at: now,
        updated_at: now,
        lifetime: Lifetime::Fixed {
            expires_at: expires,
        },
        once: false,
        tags: vec![],
        text: true,
        link: false,
        thumbs: Default::default(),
        owner: None,
        downloads_left: None,
        encrypted: None,
        password: None,
        sha256: None,
    };
    (id, Object::File(rec))
}

/// The file blob store, timing its removals: scenario 9's target excludes
/// unlink time, so the report separates it.
struct TimedRemovals {
    inner: FsBlobStore,
    nanos: std::sync::atomic::AtomicU64,
}

impl store_core::ports::BlobStore for TimedRemovals {
    fn create(&self) -> store_core::ports::StorageResult<Box<dyn store_core::BlobWriter>> {
        self.inner.create()
    }

    fn create_with_id(
        &self,
        id: &BlobId,
    ) -> store_core::ports::StorageResult<Box<dyn store_core::BlobWriter>> {
        self.inner.create_with_id(id)
    }

    fn open(
        &self,
        id: &BlobId,
    ) -> store_core::ports::StorageResult<Box<dyn store_core::BlobReader>> {
        self.inner.open(id)
    }

    fn remove(&self, id: &BlobId) -> store_core::ports::StorageResult<()> {
        timed_into(&self.nanos, || self.inner.remove(id))
    }

    fn list(&self) -> store_core::ports::StorageResult<Vec<BlobId>> {
        self.inner.list()
    }

    fn ping(&self) -> store_core::ports::StorageResult<()> {
        self.inner.ping()
    }

    fn reads_wait(&self) -> bool {
        self.inner.reads_wait()
    }

    fn stages(&self) -> bool {
        self.inner.stages()
    }

    fn stage(&self) -> store_core::ports::StorageResult<store_core::resumable::Staging> {
        self.inner.stage()
    }

    fn resume(
        &self,
        staging: &store_core::resumable::Staging,
        offset: u64,
    ) -> store_core::ports::StorageResult<Box<dyn store_core::ports::StagedWriter>> {
        self.inner.resume(staging, offset)
    }

    fn discard(
        &self,
        staging: &store_core::resumable::Staging,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.discard(staging)
    }
}

/// The sled repository, timing the sweep's two kinds of call, so that
/// scenario 9 can say where the time of a removal goes.
struct TimedRepo {
    inner: SledRepository,
    remove_nanos: Arc<std::sync::atomic::AtomicU64>,
    index_nanos: Arc<std::sync::atomic::AtomicU64>,
}

fn timed_into<T>(counter: &std::sync::atomic::AtomicU64, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    counter.fetch_add(
        started.elapsed().as_nanos() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    out
}

impl store_core::Repository for TimedRepo {
    fn get(&self, key: &str) -> store_core::ports::StorageResult<Option<Object>> {
        self.inner.get(key)
    }

    fn insert_new(&self, key: &str, object: &Object) -> store_core::ports::StorageResult<bool> {
        self.inner.insert_new(key, object)
    }

    fn load(
        &self,
        key: &str,
    ) -> store_core::ports::StorageResult<Option<(Object, store_core::Rev)>> {
        self.inner.load(key)
    }

    fn replace(
        &self,
        key: &str,
        rev: store_core::Rev,
        object: &Object,
        doomed: &[store_core::BlobId],
    ) -> store_core::ports::StorageResult<store_core::Rev> {
        self.inner.replace(key, rev, object, doomed)
    }

    fn remove_at(
        &self,
        key: &str,
        rev: store_core::Rev,
        doomed: &[store_core::BlobId],
    ) -> store_core::ports::StorageResult<()> {
        self.inner.remove_at(key, rev, doomed)
    }

    fn remove(&self, key: &str) -> store_core::ports::StorageResult<Option<Object>> {
        self.inner.remove(key)
    }

    fn remove_dead_many(
        &self,
        keys: &[String],
        now: Timestamp,
    ) -> store_core::ports::StorageResult<Vec<Option<Object>>> {
        timed_into(&self.remove_nanos, || {
            self.inner.remove_dead_many(keys, now)
        })
    }

    fn totals(&self) -> store_core::ports::StorageResult<store_core::Totals> {
        self.inner.totals()
    }

    fn expiring(&self, limit: usize) -> store_core::ports::StorageResult<Vec<(Timestamp, String)>> {
        timed_into(&self.index_nanos, || self.inner.expiring(limit))
    }

    fn keys_with_tag(&self, tag: &str) -> store_core::ports::StorageResult<Vec<String>> {
        self.inner.keys_with_tag(tag)
    }

    fn listed(
        &self,
        listing: store_core::Listing,
        visit: &mut dyn FnMut(&str, &Object) -> std::ops::ControlFlow<()>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.listed(listing, visit)
    }

    fn searched(
        &self,
        term: &str,
        after: Option<&store_core::moderation::AdminCursor>,
        visit: &mut dyn FnMut(&str, &Object) -> std::ops::ControlFlow<()>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.searched(term, after, visit)
    }
    fn block(
        &self,
        block: &store_core::moderation::Block,
        event: Option<&store_core::events::Event>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.block(block, event)
    }
    fn blocked(
        &self,
        digests: &[store_core::digest::Sha256],
    ) -> store_core::ports::StorageResult<Option<store_core::moderation::Block>> {
        self.inner.blocked(digests)
    }
    fn report(
        &self,
        report: &store_core::moderation::Report,
        event: Option<&store_core::events::Event>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.report(report, event)
    }
    fn keep_events(&self, on: bool) {
        self.inner.keep_events(on)
    }
    fn claim_events(
        &self,
        now: store_core::Timestamp,
        lease_ms: u64,
        limit: usize,
    ) -> store_core::ports::StorageResult<Vec<store_core::events::Claimed>> {
        self.inner.claim_events(now, lease_ms, limit)
    }
    fn event_delivered(&self, seq: u64) -> store_core::ports::StorageResult<()> {
        self.inner.event_delivered(seq)
    }
    fn event_failed(
        &self,
        seq: u64,
        next: Option<store_core::Timestamp>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.event_failed(seq, next)
    }
    fn reports(
        &self,
        limit: usize,
    ) -> store_core::ports::StorageResult<Vec<store_core::moderation::Report>> {
        self.inner.reports(limit)
    }
    fn clear_report(&self, id: &str) -> store_core::ports::StorageResult<bool> {
        self.inner.clear_report(id)
    }
    fn blocks(&self) -> store_core::ports::StorageResult<Vec<store_core::moderation::Block>> {
        self.inner.blocks()
    }
    fn for_each(
        &self,
        visit: &mut dyn FnMut(&str, &Object) -> std::ops::ControlFlow<()>,
    ) -> store_core::ports::StorageResult<()> {
        self.inner.for_each(visit)
    }
}

/// Scenario 9: a store of `bench.objects` live records (the blobs they
/// name do not exist: this measures the records and indexes, not unlink).
pub fn expiry(bench: &Bench) -> Vec<Row> {
    let dir = bench.work.join("expiry");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("expiry dir");
    let t0 = Timestamp::from_secs(1_800_000_000);
    let n = bench.objects;
    let expiring = (n / 100).min(10_000);
    {
        let repo = SledRepository::open(&dir).expect("sled");
        let (took, ()) = timed(|| {
            let records = (0..n).map(|i| {
                // The first `expiring` die in an hour, the rest in a day.
                let at = if i < expiring {
                    t0.plus_secs(3_600)
                } else {
                    t0.plus_secs(86_400)
                };
                file_record(i, t0, at)
            });
            repo.bulk_load(records).expect("bulk load");
        });
        println!("  9: loaded {n} records in {took:.1} s");
    }
    let clock = Arc::new(ManualClock::new(t0));
    let removals = Arc::new(TimedRemovals {
        inner: FsBlobStore::open(&dir, Arc::new(SeededRandom::new(1))).expect("blobs"),
        nanos: Default::default(),
    });
    let remove_nanos = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let index_nanos = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let open = || {
        let repo = Arc::new(TimedRepo {
            inner: SledRepository::open(&dir).expect("sled"),
            remove_nanos: remove_nanos.clone(),
            index_nanos: index_nanos.clone(),
        });
        let ports = Ports {
            repo,
            blobs: removals.clone(),
            clock: clock.clone(),
            random: Arc::new(SeededRandom::new(2)),
            fetcher: Arc::new(FakeFetcher::default()),
            coordination: Default::default(),
        };
        let config = AppConfig {
            limits: Limits {
                pool_bytes: u64::MAX / 4,
                ..Limits::default()
            },
            ..AppConfig::new("http://bench")
        };
        App::open(ports, config).expect("open")
    };
    let (restart, (app, recovery)) = timed(open);
    assert_eq!(recovery.objects, n as u64);
    // What a restart no longer waits for: reading every record to find
    // orphan blobs, now done in the background while the server answers.
    let (collection, report) = timed(|| {
        app.collect_orphans(&std::sync::atomic::AtomicBool::new(false))
            .expect("collect")
    });
    assert!(!report.gave_up);
    let idle: Vec<f64> = (0..5)
        .map(|_| {
            let (t, r) = timed(|| app.sweep(1000).expect("sweep"));
            assert_eq!(r.removed, 0);
            t
        })
        .collect();
    let idle = median(idle);
    clock.advance_secs(7_200);
    remove_nanos.store(0, std::sync::atomic::Ordering::Relaxed);
    index_nanos.store(0, std::sync::atomic::Ordering::Relaxed);
    let (removal, removed) = timed(|| {
        let mut removed = 0;
        loop {
            let r = app.sweep(1000).expect("sweep");
            removed += r.removed;
            if r.removed == 0 {
                break removed;
            }
        }
    });
    assert_eq!(removed, expiring);
    let unlink = removals.nanos.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9;
    let seconds = |c: &std::sync::atomic::AtomicU64| {
        c.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9
    };
    let (in_tx, in_index) = (seconds(&remove_nanos), seconds(&index_nanos));
    drop(app);
    // What a clean stop of the server does (bins/storesrv), then a restart.
    let (fold, folded) = timed(|| SledRepository::fold_log(&dir, Duration::from_secs(5)));
    folded.expect("fold the log");
    let (clean, (app, recovery)) = timed(open);
    assert_eq!(recovery.objects, (n - removed) as u64);
    drop(app);
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "  9: open {restart:.2} s (log not folded), idle sweep {:.3} ms, {removed} removed in {removal:.2} s, log folded in {fold:.2} s, open {clean:.2} s",
        idle * 1e3
    );
    vec![
        Row::new(
            "9",
            format!("sweep with nothing expired, {n} live"),
            format!("{:.3} ms", idle * 1e3),
            "< 5 ms",
            Some(idle < 0.005),
        ),
        Row::new(
            "9",
            format!("remove {removed} expired of {n}"),
            format!(
                "{removal:.2} s: sled transactions {in_tx:.2} s, expiry index reads {in_index:.2} s, unlink {unlink:.2} s (the blobs do not exist: a failed unlink each)"
            ),
            "< 0.5 s + unlink",
            Some(removal - unlink < 0.5),
        ),
        Row::new(
            "9",
            format!("restart with {n} after a clean stop (until it can answer)"),
            format!("{clean:.2} s"),
            "< 1 s, no full scan",
            Some(clean < 1.0),
        ),
        Row::new(
            "9",
            format!("restart after a crash, {n} written since the last start"),
            format!("{restart:.2} s (sled replays its log)"),
            "reported",
            None,
        ),
        Row::new(
            "9",
            "folding sled's log at a clean stop".to_string(),
            format!("{fold:.2} s"),
            "reported",
            None,
        ),
        Row::new(
            "9",
            format!("background orphan collection over {n}"),
            format!("{collection:.1} s"),
            "reported (runs while serving)",
            None,
        ),
    ]
}
