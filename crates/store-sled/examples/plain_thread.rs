//! store-app on the embedded default (sled records, bytes as files) from
//! plain threads: no async runtime anywhere. The use cases are synchronous;
//! the HTTP shell is one way to call them, a thread is another.
//!
//! It stores a file from one thread, reads it from another, then reopens
//! the store to show the file survived.
//!
//! ```sh
//! cargo run -p store-sled --example plain_thread
//! ```

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use store_app::system::{OsRandom, SystemClock};
use store_app::{App, AppConfig, NewFile, Opened, Ports};
use store_core::ports::Random;
use store_core::{ReadIntent, RetainAuth};
use store_sled::{FsBlobStore, SledRepository};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The store under `data`, as the server opens it (minus imports: this
/// program never fetches a URL, so a fake fetcher that refuses is enough).
fn open(data: &Path) -> Result<App, Error> {
    let random: Arc<dyn Random> = Arc::new(OsRandom);
    let ports = Ports {
        repo: Arc::new(SledRepository::open(data)?),
        blobs: Arc::new(FsBlobStore::open(data, Arc::clone(&random))?),
        clock: Arc::new(SystemClock),
        random,
        fetcher: Arc::new(store_testkit::FakeFetcher::new()),
        coordination: Default::default(),
    };
    let (app, recovery) = App::open(ports, AppConfig::new("http://localhost:8080"))?;
    println!("opened {}: {recovery:?}", data.display());
    Ok(app)
}

fn main() -> Result<(), Error> {
    let data = tempfile::tempdir()?;
    let app = Arc::new(open(data.path())?);

    let writer = {
        let app = Arc::clone(&app);
        std::thread::spawn(move || -> Result<String, Error> {
            let mut upload = app.begin_upload(app.config().limits.file_bytes_max)?;
            upload.push(b"written by a plain thread")?;
            let req = NewFile {
                name: Some("note.txt".into()),
                ..NewFile::default()
            };
            let made = app.create_file(&req, upload.finish()?, RetainAuth::Absent)?;
            Ok(made.id.clone())
        })
    };
    let id = writer.join().expect("the writer thread")?;

    let reader = {
        let app = Arc::clone(&app);
        let id = id.clone();
        std::thread::spawn(move || -> Result<Vec<u8>, Error> {
            let Opened::File(mut download) =
                app.read(&id, ReadIntent::Get, &store_app::ReadKey::NONE)?
            else {
                return Err("a single file, not a bundle".into());
            };
            let mut bytes = Vec::new();
            download.reader.read_to_end(&mut bytes)?;
            Ok(bytes)
        })
    };
    let bytes = reader.join().expect("the reader thread")?;
    assert_eq!(bytes, b"written by a plain thread");
    println!("read back {} bytes of {id}", bytes.len());

    // Close the store (sled holds a lock on its directory) and open it
    // again: what was acknowledged is still there.
    drop(app);
    let again = open(data.path())?;
    let info = again.file_info(&id, &store_app::ReadKey::NONE)?;
    assert_eq!(info.name, "note.txt");
    println!(
        "after reopening, {id} is {:?}, {} bytes",
        info.name, info.size
    );
    Ok(())
}
