//! Fetching remote documents and links.

use super::*;

use store_core::FetchError;
use store_testkit::FakeFetcher;

fn world_with_fetcher(fetcher: Arc<FakeFetcher>) -> World {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let blobs = Arc::new(MemoryBlobStore::new());
    let repo = Arc::new(MemoryRepository::new());
    let mut p = ports(&clock, &blobs, &repo);
    p.fetcher = fetcher;
    let (app, _) = App::open(p, config(store_core::Limits::DEFAULT.pool_bytes)).unwrap();
    World {
        app,
        clock,
        blobs,
        repo,
    }
}

fn req(url: &str) -> ImportRequest {
    ImportRequest {
        url: url.into(),
        ..ImportRequest::default()
    }
}

#[test]
fn names_come_from_the_header_then_the_path_then_the_request() {
    let f = Arc::new(FakeFetcher::new());
    f.serve(
        "https://e.example/files/report.csv",
        Some("text/csv"),
        None,
        b"a,b",
    );
    f.serve(
        "https://e.example/dl?id=7",
        Some("application/pdf"),
        Some("paper.pdf"),
        b"%PDF-1.4",
    );
    f.serve("https://e.example/", None, None, b"plain");
    let w = world_with_fetcher(f);
    let v = w
        .app
        .import(
            &req("https://e.example/files/report.csv"),
            RetainAuth::Absent,
        )
        .unwrap();
    assert_eq!(
        (v.name.as_str(), v.content_type.as_str()),
        ("report.csv", "text/csv")
    );
    let v = w
        .app
        .import(&req("https://e.example/dl?id=7"), RetainAuth::Absent)
        .unwrap();
    assert_eq!(v.name, "paper.pdf");
    let v = w
        .app
        .import(&req("https://e.example/"), RetainAuth::Absent)
        .unwrap();
    assert_eq!(v.name, "upload.txt", "a safe default");
    let named = ImportRequest {
        file: NewFile {
            name: Some("mine.csv".into()),
            ..NewFile::default()
        },
        ..req("https://e.example/files/report.csv")
    };
    assert_eq!(
        w.app.import(&named, RetainAuth::Absent).unwrap().name,
        "mine.csv"
    );
    assert_eq!(read(&w.app, &v.id).unwrap(), b"plain");
}

#[test]
fn failures_store_nothing() {
    let f = Arc::new(FakeFetcher::new());
    f.fail("https://blocked.example/", FetchError::Refused);
    f.serve("https://big.example/", None, None, &vec![0u8; 5_242_881]);
    let w = world_with_fetcher(f);
    assert_eq!(
        code(
            w.app
                .import(&req("https://blocked.example/"), RetainAuth::Absent)
        ),
        ErrorCode::BadRequest
    );
    assert_eq!(
        code(
            w.app
                .import(&req("https://big.example/"), RetainAuth::Absent)
        ),
        ErrorCode::TooLarge
    );
    let share = ImportRequest {
        file: NewFile {
            share: Some("a-dir".into()),
            ..NewFile::default()
        },
        ..req("https://x.example/")
    };
    assert_eq!(
        code(w.app.import(&share, RetainAuth::Absent)),
        ErrorCode::BadRequest
    );
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
}

#[test]
fn link_stores_an_editable_redirect_document() {
    let w = world_with_fetcher(Arc::new(FakeFetcher::new()));
    let r = ImportRequest {
        link: true,
        ..req("https://example.com/a?b=\"c\"")
    };
    let v = w.app.import(&r, RetainAuth::Absent).unwrap();
    assert_eq!(v.name, "link.html");
    assert_eq!(v.content_type, "text/html");
    assert!(v.text);
    let doc = String::from_utf8(read(&w.app, &v.id).unwrap()).unwrap();
    assert_eq!(
        store_core::import::link_target(&doc).as_deref(),
        Some("https://example.com/a?b=\"c\"")
    );
    let Opened::File(d) = w
        .app
        .read(&v.id, ReadIntent::Head, &crate::ReadKey::NONE)
        .unwrap()
    else {
        panic!()
    };
    assert!(d.link);
    assert_eq!(
        code(w.app.import(
            &ImportRequest {
                link: true,
                ..req("javascript:alert(1)")
            },
            RetainAuth::Absent
        )),
        ErrorCode::BadRequest
    );
}
