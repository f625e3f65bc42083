//! storesrv's domain in memory: the use cases of store-app over
//! store-testkit's memory adapters and a manual clock. No disk, no network,
//! no sleeping: time moves when the example says so.
//!
//! It uploads a file with a four-hour lifetime, makes a dir whose lifetime
//! slides with every write, and watches both expire.
//!
//! ```sh
//! cargo run -p store-app --example in_memory
//! ```

use std::sync::Arc;

use store_app::{Access, App, AppConfig, NewDir, NewFile, Part, Ports, Staged};
use store_core::{RetainAuth, Timestamp};
use store_testkit::{FakeFetcher, ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom};

const HOUR_SECS: u64 = 3600;

/// Bytes staged for an upload, as a request body would be.
fn staged(app: &App, bytes: &[u8]) -> Result<Staged, store_app::AppError> {
    let mut upload = app.begin_upload(app.config().limits.file_bytes_max)?;
    upload.push(bytes)?;
    upload.finish()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
    let ports = Ports {
        repo: Arc::new(MemoryRepository::new()),
        blobs: Arc::new(MemoryBlobStore::new()),
        clock: clock.clone(),
        random: Arc::new(SeededRandom::new(7)),
        fetcher: Arc::new(FakeFetcher::new()),
        coordination: Default::default(),
    };
    let (app, _recovery) = App::open(ports, AppConfig::new("http://files.example"))?;
    let nobody = Access::retain_only(RetainAuth::Absent);

    // A single file: a fixed lifetime of four hours.
    let file = NewFile {
        name: Some("hello.txt".into()),
        ttl_secs: Some(4 * HOUR_SECS),
        ..NewFile::default()
    };
    let file = app.create_file(&file, staged(&app, b"hello")?, RetainAuth::Absent)?;
    let shown = |at: Option<Timestamp>| at.map_or("never".to_string(), |t| t.to_string());
    println!(
        "file {} expires at {}",
        file.id,
        shown(file.lifetime.expires_at())
    );

    // A dir: a sliding lifetime of four hours, moved on by every write.
    let dir = NewDir {
        name: Some("field-notes".into()),
        ttl_secs: Some(4 * HOUR_SECS),
        ..NewDir::default()
    };
    let made = app.create_dir(&dir, vec![], &nobody)?;
    let first = made.dir.lifetime.expires_at();
    println!("dir {} expires at {}", made.dir.key, shown(first));

    // Three hours later someone writes to the dir: its expiry moves on.
    clock.advance_secs(3 * HOUR_SECS);
    let part = Part {
        name: Some("day-1.txt".into()),
        declared_type: None,
        body: staged(&app, b"rain all day")?,
    };
    let dir = app.add_to_dir("field-notes", vec![part], &nobody)?;
    let slid = dir.lifetime.expires_at();
    println!("after a write the dir expires at {}", shown(slid));
    assert!(slid > first, "a write slides a dir's lifetime");

    // At four hours the file is gone; the dir lives on.
    clock.advance_secs(HOUR_SECS);
    assert!(
        app.file_info(&file.id, &store_app::ReadKey::NONE).is_err(),
        "the file has expired"
    );
    assert!(
        app.get_dir("field-notes", &store_app::ReadKey::NONE)
            .is_ok(),
        "the dir is still live"
    );
    println!("at +4h: the file is gone, the dir lives");

    // Past the slid expiry the dir is gone too, and a sweep removes both.
    clock.set(slid.expect("a dir that is not retained expires"));
    assert!(
        app.get_dir("field-notes", &store_app::ReadKey::NONE)
            .is_err(),
        "the dir has expired"
    );
    let swept = app.sweep(100)?;
    println!("the sweep removed {} objects", swept.removed);
    assert_eq!(swept.removed, 2);
    Ok(())
}
