//! Virus scanning with ClamAV (CONTRACT.md "Operators: moderation and
//! webhooks"): a real clamd refuses the EICAR test file whichever way it
//! comes (422 `infected`, nothing stored, the signature in the log), takes
//! a clean file, and when it is out of reach every upload is refused (503
//! `unavailable`: fail closed).

use crate::common::clamd::{eicar, Clamd};
use crate::common::tus::{patch_at, start};
use crate::common::{assert_error, json, multipart, Server};

fn scanned(clamd: &Clamd) -> Server {
    let setting = clamd.setting();
    Server::with_env(&[("STORE_CLAMD", setting.as_str())])
}

#[test]
fn eicar_is_refused_every_way_it_comes_and_clean_files_pass() {
    let clamd = Clamd::start();
    let s = scanned(&clamd);
    let virus = eicar();
    assert_error(&mut s.post("/?name=eicar.com", &virus), 422, "infected");
    let (ctype, body) = multipart(&[
        ("file", Some("clean.txt"), b"clean"),
        ("file", Some("eicar.com"), &virus),
    ]);
    assert_error(
        &mut s.post_with("/", &[("content-type", &ctype)], &body),
        422,
        "infected",
    );
    let mut dir = s.post_empty("/?dir=1&name=scanned-box", &[]);
    assert_eq!(dir.status(), 201);
    drop(json(&mut dir));
    assert_error(
        &mut s.post("/d/scanned-box?name=eicar.com", &virus),
        422,
        "infected",
    );
    let mut g = s.post_empty("/pics?create=1&name=scanned-pics", &[]);
    assert_eq!(g.status(), 201);
    drop(json(&mut g));
    assert_error(
        &mut s.post("/pics/g/scanned-pics?name=e.png", &virus),
        422,
        "infected",
    );
    let upload = start(&s, virus.len(), "eicar.com");
    assert_error(&mut patch_at(&s, &upload, 0, &virus), 422, "infected");
    let gone = s.head_with(&upload, &[crate::common::tus::TUS]);
    assert_eq!(gone.status(), 404, "a refused upload is gone");

    let mut clean = s.post("/?name=clean.txt", b"nothing to see");
    assert_eq!(clean.status(), 201);
    let id = json(&mut clean)["id"].as_str().unwrap().to_string();
    assert_eq!(s.get(&format!("/{id}")).status(), 200);
    let mut dir = s.get("/d/scanned-box?json=1");
    assert_eq!(json(&mut dir)["files"].as_array().unwrap().len(), 0);
    assert!(
        s.log().contains("UNOFFICIAL"),
        "the signature's name is logged"
    );
}

#[test]
fn with_clamd_out_of_reach_every_upload_is_refused() {
    let mut clamd = Clamd::start();
    let s = scanned(&clamd);
    assert_eq!(s.post("/?name=a.txt", b"a").status(), 201);
    clamd.stop();
    assert_error(&mut s.post("/?name=b.txt", b"b"), 503, "unavailable");
    let upload = start(&s, 1, "c.txt");
    assert_error(&mut patch_at(&s, &upload, 0, b"c"), 503, "unavailable");
}
