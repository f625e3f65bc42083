//! `storesrv migrate --from-data DIR` (issues 13 and 14): a sled store,
//! written through the real server, moves into PostgreSQL and a new blob
//! directory (or, under STORE_TEST_BACKEND=cluster, the S3 bucket),
//! survives being killed in the middle, and a PostgreSQL server then
//! serves every object as the sled one did. Always on PostgreSQL (the
//! cluster named by STORE_TEST_DATABASE_URL).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use serde_json::Value;

/// A sled server, whatever backend the suite runs on.
fn sled_server(data: &Path) -> Server {
    Server::on(data.to_path_buf(), None, &[("STORE_DATABASE_URL", "")])
}

fn migrate_command(from: &Path, to: &Path, url: &str) -> Command {
    let mut cmd = Command::new(crate::common::storesrv_bin());
    cmd.args(["migrate", "--from-data"])
        .arg(from)
        .arg("--data")
        .arg(to)
        .env("STORE_DATABASE_URL", url)
        // Under STORE_TEST_BACKEND=cluster the bytes move into the bucket,
        // where the server started on `to` then reads them.
        .envs(s3_env(to));
    cmd
}

fn migrate(from: &Path, to: &Path, url: &str) -> Value {
    let out: Output = migrate_command(from, to, url).output().unwrap();
    assert!(
        out.status.success(),
        "migrate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the report is JSON")
}

/// What the sled store held, to find again after the move.
struct Written {
    /// Paths whose bytes are fixed, with those bytes.
    bytes: Vec<(String, Vec<u8>)>,
    once: String,
    records: u64,
}

fn write_a_store(s: &Server) -> Written {
    let mut bytes = vec![];
    for i in 0..120 {
        let body = format!("file {i} ").repeat(i + 1).into_bytes();
        let r = s.upload(&format!("f{i}.txt"), &body);
        bytes.push((format!("/{}", r["id"].as_str().unwrap()), body));
    }
    let tagged = json(&mut s.post("/?name=t.txt&tag=moved", b"tagged"));
    bytes.push((
        format!("/{}", tagged["id"].as_str().unwrap()),
        b"tagged".to_vec(),
    ));
    let once = json(&mut s.post("/?name=o.txt&once=1", b"burn me"));
    let (ct, body) = multipart(&[
        ("file", Some("a.txt"), b"aa"),
        ("file", Some("b.txt"), b"bb"),
    ]);
    let bundle = json(&mut s.post_with("/", &[("content-type", &ct)], &body));
    bytes.push((
        format!("/{}/b.txt", bundle["id"].as_str().unwrap()),
        b"bb".to_vec(),
    ));
    assert_eq!(s.post("/?dir=1&name=moved-dir&listed=1", b"").status(), 201);
    assert_eq!(s.post("/d/moved-dir?name=n.txt", b"in a dir").status(), 200);
    bytes.push(("/d/moved-dir/n.txt".into(), b"in a dir".to_vec()));
    assert_eq!(
        s.post_empty("/pics?create=1&name=moved-pics&listed=1", &[])
            .status(),
        201
    );
    Written {
        bytes,
        once: format!("/{}", once["id"].as_str().unwrap()),
        // The files, the tagged one, the once file, the bundle, the dir
        // and the gallery.
        records: 120 + 1 + 1 + 1 + 1 + 1,
    }
}

#[test]
fn a_sled_store_moves_whole_even_when_killed_midway() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (dir.path().join("sled"), dir.path().join("shared"));
    let mut s = sled_server(&from);
    let written = write_a_store(&s);
    assert!(s.stop().success());
    let url = store_testkit::pg::fresh_database();

    // Killed once it has moved a record (most often in the middle; on a
    // fast machine, perhaps at its end): a run after it finishes the move.
    let mut first = migrate_command(&from, &to, &url)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let moved = || {
        let n = store_testkit::pg::psql(
            &url,
            "SELECT count(*) FROM pg_tables WHERE tablename = 'store_objects'",
        );
        n == "1" && store_testkit::pg::psql(&url, "SELECT count(*) FROM store_objects") != "0"
    };
    while !moved() {
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first run is still working"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let report = migrate(&from, &to, &url);
    assert!(report["records_present"].as_u64().unwrap() >= 1, "{report}");
    assert_eq!(report["records"], written.records, "{report}");
    assert_eq!(
        report["records_copied"].as_u64().unwrap() + report["records_present"].as_u64().unwrap(),
        written.records,
        "{report}"
    );
    assert_eq!(report["blobs_missing"], 0);

    let again = migrate(&from, &to, &url);
    assert_eq!(
        again["records_present"], written.records,
        "a third run finds it all: {again}"
    );
    assert_eq!(again["records_copied"], 0);
    assert_eq!(again["blobs_copied"], 0);
    assert_eq!(again["blob_bytes"], report["blob_bytes"]);

    let pg = Server::on(to, None, &[("STORE_DATABASE_URL", &url)]);
    for (path, body) in &written.bytes {
        let mut res = pg.get(path);
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(&bytes(&mut res), body, "{path}");
    }
    assert_eq!(
        pg.get(&written.once).status(),
        200,
        "the once file moved unread"
    );
    assert_eq!(pg.get(&written.once).status(), 404, "and burns there");
    let browse = json(&mut pg.get("/browse"));
    assert_eq!(browse.as_array().map(Vec::len), Some(1), "{browse}");
    let dirs = json(&mut pg.get("/d"));
    assert_eq!(dirs.as_array().map(Vec::len), Some(1), "{dirs}");
    let pics = json(&mut pg.get("/pics"));
    assert!(pics.to_string().contains("moved-pics"), "{pics}");
}

#[test]
fn migrate_refuses_what_it_cannot_move() {
    let dir = tempfile::tempdir().unwrap();
    let url = store_testkit::pg::fresh_database();
    let nowhere = migrate_command(&dir.path().join("none"), &dir.path().join("to"), &url)
        .output()
        .unwrap();
    assert_eq!(nowhere.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&nowhere.stderr).contains("holds no sled store"));

    let from = dir.path().join("sled");
    let s = sled_server(&from);
    let busy = migrate_command(&from, &dir.path().join("to"), &url)
        .output()
        .unwrap();
    assert_eq!(busy.status.code(), Some(1), "a store in use is not read");
    assert!(String::from_utf8_lossy(&busy.stderr).contains("stop it first"));
    drop(s);

    let no_database = Command::new(crate::common::storesrv_bin())
        .args(["migrate", "--from-data"])
        .arg(&from)
        .env_remove("STORE_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(no_database.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_database.stderr).contains("STORE_DATABASE_URL"));
}
