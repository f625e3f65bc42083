//! Galleries over HTTP against the real binary (issue 5): creation, uploads
//! through the media pipeline, thumbnails, likes, comments, admin, import,
//! and the pics pool.

use crate::common::*;
use serde_json::Value;

fn media(name: &str) -> Vec<u8> {
    std::fs::read(repo(&format!("fixtures/media/{name}"))).expect(name)
}

fn create(s: &Server, query: &str) -> (u16, Value) {
    let mut res = s.post_empty(&format!("/pics?create=1&{query}"), &[]);
    (res.status().as_u16(), json(&mut res))
}

fn upload(s: &Server, gid: &str, name: &str, bytes: &[u8]) -> Value {
    let mut res = s.post(&format!("/pics/g/{gid}?name={name}"), bytes);
    assert_eq!(res.status(), 201, "upload of {name}");
    json(&mut res)
}

fn path_of(url: &Value, s: &Server) -> String {
    url.as_str()
        .unwrap()
        .trim_start_matches(&s.base)
        .to_string()
}

#[test]
fn create_answers_the_spec_record_once() {
    let s = Server::start();
    let (status, g) = create(&s, "name=trip-2026&listed=1");
    assert_eq!(status, 201);
    assert_eq!(g["id"], "trip-2026");
    assert_eq!(g["url"], s.url("/pics/g/trip-2026"));
    let token = g["token"].as_str().unwrap();
    assert!(token.len() >= 22);
    assert_eq!(g["admin_url"], s.url(&format!("/pics/g/trip-2026/{token}")));
    assert!(g["expires_at"].is_string());
    let (status, again) = create(&s, "name=trip-2026");
    assert_eq!(status, 200);
    assert_eq!(again["existed"], true);
    assert!(again.get("token").is_none() && again.get("admin_url").is_none());
    let (_, display) = create(&s, "name=Our%20Trip%20%3Cb%3E");
    assert_eq!(display["id"].as_str().unwrap().len(), 32);
    let index = json(&mut s.get("/pics"));
    let ids: Vec<&str> = index
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["trip-2026"], "only listed galleries");
    let page = text(&mut s.get_with("/pics", &[("accept", "text/html")]));
    assert!(page.contains("trip-2026"));
}

#[test]
fn uploads_go_through_the_pipeline() {
    let s = Server::start();
    let (_, g) = create(&s, "name=pipeline");
    let jpg = upload(
        &s,
        "pipeline",
        "cam.jpg",
        &media("exif-gps-orientation.jpg"),
    );
    assert_eq!(jpg["content_type"], "image/jpeg");
    let stored = bytes(&mut s.get(&path_of(&jpg["url"], &s)));
    let contains = |hay: &[u8], n: &[u8]| hay.windows(n.len()).any(|w| w == n);
    assert!(!contains(&stored, b"FixtureCam"), "metadata stripped");
    assert!(stored.len() < media("exif-gps-orientation.jpg").len());
    let big = upload(&s, "pipeline", "big.jpg", &media("large-4000x3000.jpg"));
    assert_eq!(big["content_type"], "image/webp");
    assert_eq!(
        (big["width"].as_u64(), big["height"].as_u64()),
        (Some(2048), Some(1536))
    );
    assert!(big["size"].as_u64().unwrap() <= 1_048_576);
    let gif = upload(&s, "pipeline", "anim.gif", &media("animated.gif"));
    assert_eq!(
        bytes(&mut s.get(&path_of(&gif["url"], &s))),
        media("animated.gif"),
        "GIFs pass untouched"
    );
    // Images and their previews carry validators and serve ranges.
    for path in [
        path_of(&gif["url"], &s),
        format!("{}?thumb=160", path_of(&big["url"], &s)),
    ] {
        let etag = header(&s.get(&path), "etag");
        assert_eq!(
            s.get_with(&path, &[("if-none-match", &etag)]).status(),
            304,
            "{path}"
        );
        let mut head = s.get_with(&path, &[("range", "bytes=0-5")]);
        assert_eq!(head.status(), 206, "{path}");
        assert_eq!(bytes(&mut head).len(), 6);
    }
    let gif_head = s.get_with(&path_of(&gif["url"], &s), &[("range", "bytes=0-5")]);
    assert_eq!(
        header(&gif_head, "content-range"),
        format!("bytes 0-5/{}", media("animated.gif").len())
    );
    let heic = upload(&s, "pipeline", "phone.heic", &media("photo.heic"));
    assert_eq!(heic["content_type"], "image/webp");
    // Thumbnails fit their box and are served as WebP.
    for (q, side) in [("1", 320), ("160", 160), ("320", 320), ("640", 640)] {
        let mut res = s.get(&format!("{}?thumb={q}", path_of(&big["url"], &s)));
        assert_eq!(res.status(), 200);
        assert_eq!(header(&res, "content-type"), "image/webp");
        let b = bytes(&mut res);
        assert!(b.starts_with(b"RIFF") && &b[8..12] == b"WEBP");
        // A lossy opaque WebP: "VP8 " chunk, 14-bit width and height.
        assert_eq!(&b[12..16], b"VP8 ");
        let w = u16::from_le_bytes([b[26], b[27]]) & 0x3FFF;
        let h = u16::from_le_bytes([b[28], b[29]]) & 0x3FFF;
        assert_eq!(u32::from(w.max(h)), side, "thumb={q} fits its box exactly");
        assert_eq!(
            u32::from(w) * 3,
            u32::from(h) * 4,
            "the aspect ratio is kept"
        );
    }
    assert_error(
        &mut s.get(&format!("{}?thumb=999", path_of(&big["url"], &s))),
        400,
        "bad_request",
    );
    // Batch upload with multipart.
    let (ct, body) = multipart(&[
        ("file", Some("a.gif"), &media("animated.gif")),
        ("file", Some("b.gif"), &media("animated.gif")),
    ]);
    let mut res = s.post_with("/pics/g/pipeline", &[("content-type", &ct)], &body);
    assert_eq!(res.status(), 201);
    assert_eq!(json(&mut res)["images"].as_array().unwrap().len(), 2);
    // Hostile and oversized files.
    assert_error(
        &mut s.post("/pics/g/pipeline?name=bomb.png", &media("bomb-65535.png")),
        413,
        "too_large",
    );
    assert_error(
        &mut s.post("/pics/g/pipeline?name=cut.jpg", &media("truncated.jpg")),
        400,
        "bad_request",
    );
    assert_error(
        &mut s.post("/pics/g/pipeline?name=x.svg", b"<svg onload=alert(1)>"),
        400,
        "bad_request",
    );
    let res = s.raw_answer(b"POST /pics/g/pipeline?name=x.jpg HTTP/1.1\r\nHost: x\r\nContent-Length: 31457281\r\nConnection: close\r\n\r\n");
    assert!(res.starts_with("HTTP/1.1 413"), "{res}");
    assert_error(
        &mut s.post("/pics/g/no-such-gallery?name=a.gif", &media("animated.gif")),
        404,
        "not_found",
    );
    let view = json(&mut s.get("/pics/g/pipeline"));
    assert_eq!(view["images"].as_array().unwrap().len(), 6);
    for field in ["images", "selected", "pool", "limits", "upload"] {
        assert!(view.get(field).is_some(), "gallery JSON has {field}");
    }
    assert!(g["token"].is_string());
}

#[test]
fn likes_are_one_per_visitor() {
    let s = Server::start();
    create(&s, "name=liking");
    let img = upload(&s, "liking", "a.gif", &media("animated.gif"));
    let like = |ua: &str| {
        json(&mut s.post_with(
            &format!("{}?like=1", path_of(&img["url"], &s)),
            &[("user-agent", ua)],
            b"",
        ))
    };
    let a = like("visitor-a");
    assert_eq!(
        (a["likes"].as_u64(), a["liked"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(a["id"], img["id"]);
    let b = like("visitor-b");
    assert_eq!(b["likes"], 2);
    let a2 = like("visitor-a");
    assert_eq!(
        (a2["likes"].as_u64(), a2["liked"].as_bool()),
        (Some(1), Some(false))
    );
    let counters = json(&mut s.get("/pics/g/liking?likes=1"));
    assert_eq!(counters["likes"][img["id"].as_str().unwrap()], 1);
    assert_eq!(counters["comments"], 0);
    assert!(counters["cl"].is_object());
}

#[test]
fn comments_with_limits_cooldown_and_browser_redirects() {
    let s = Server::start();
    create(&s, "name=guests");
    let mut res = s.post_with(
        "/pics/g/guests?comment=1",
        &[("content-type", "application/json"), ("user-agent", "a")],
        br#"{"text": "Hallo!"}"#,
    );
    assert_eq!(res.status(), 201);
    let c = json(&mut res);
    assert_eq!(c["name"], "Gast");
    assert_eq!(c["text"], "Hallo!");
    assert!(c["ts"].is_f64());
    assert_eq!(c["likes"], 0);
    let mut res = s.post_with(
        "/pics/g/guests?comment=1",
        &[("content-type", "application/json"), ("user-agent", "a")],
        br#"{"text": "again"}"#,
    );
    assert_eq!(res.status(), 429);
    let retry: u64 = header(&res, "retry-after").parse().unwrap();
    assert_eq!(json(&mut res)["retry_after"], retry);
    assert!((1..=20).contains(&retry));
    let form = "name=Bob&text=Sch%C3%B6n%20hier";
    let res = s.post_with(
        "/pics/g/guests?comment=1",
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("accept", "text/html"),
            ("user-agent", "b"),
        ],
        form.as_bytes(),
    );
    assert_eq!(res.status(), 303);
    assert!(header(&res, "location").ends_with("/pics/g/guests#comments"));
    let long_name = format!(r#"{{"name": "{}", "text": "x"}}"#, "n".repeat(41));
    assert_error(
        &mut s.post_with(
            "/pics/g/guests?comment=1",
            &[("content-type", "application/json"), ("user-agent", "c")],
            long_name.as_bytes(),
        ),
        400,
        "bad_request",
    );
    let long_text = format!(r#"{{"text": "{}"}}"#, "ü".repeat(501));
    assert_error(
        &mut s.post_with(
            "/pics/g/guests?comment=1",
            &[("content-type", "application/json"), ("user-agent", "d")],
            long_text.as_bytes(),
        ),
        400,
        "bad_request",
    );
    let ok_text = format!(r#"{{"text": "{}"}}"#, "ü".repeat(500));
    assert_eq!(
        s.post_with(
            "/pics/g/guests?comment=1",
            &[("content-type", "application/json"), ("user-agent", "e")],
            ok_text.as_bytes()
        )
        .status(),
        201,
        "500 characters, not bytes"
    );
    let liked = json(&mut s.post_with(
        &format!("/pics/g/guests?clike={}", c["id"].as_str().unwrap()),
        &[("user-agent", "z")],
        b"",
    ));
    assert_eq!(
        (liked["likes"].as_u64(), liked["liked"].as_bool()),
        (Some(1), Some(true))
    );
    let page = text(&mut s.get_with("/pics/g/guests", &[("accept", "text/html")]));
    assert!(page.contains("Schön hier") && page.contains("id=\"comments\""));
}

#[test]
fn admins_hide_reorder_and_delete_and_a_wrong_secret_is_a_404() {
    let s = Server::with_env(&[("STORE_SUPERADMIN_TOKEN", "super-secret-token-xyz")]);
    let (_, g) = create(&s, "name=admin-me");
    let token = g["token"].as_str().unwrap().to_string();
    let one = upload(&s, "admin-me", "1.gif", &media("animated.gif"));
    let two = upload(&s, "admin-me", "2.gif", &media("animated.gif"));
    let act = |secret: &str, action: &str, id: &str| {
        s.post_with(
            &format!("/pics/g/admin-me/{secret}"),
            &[("content-type", "application/x-www-form-urlencoded")],
            format!("id={id}&action={action}").as_bytes(),
        )
    };
    let id1 = one["id"].as_str().unwrap();
    let id2 = two["id"].as_str().unwrap();
    assert_error(&mut act("wrong-secret", "hide", id1), 404, "not_found");
    assert_error(
        &mut s.get("/pics/g/admin-me/wrong-secret"),
        404,
        "not_found",
    );
    let res = act(&token, "hide", id1);
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "cache-control"), "no-store");
    assert_eq!(header(&res, "referrer-policy"), "no-referrer");
    assert_error(&mut s.get(&path_of(&one["url"], &s)), 404, "not_found");
    assert_error(
        &mut s.post_empty(&format!("{}?like=1", path_of(&one["url"], &s)), &[]),
        404,
        "not_found",
    );
    assert_error(
        &mut s.get(&format!("{}?thumb=160", path_of(&one["url"], &s))),
        404,
        "not_found",
    );
    let admin_json = json(&mut s.get(&format!("/pics/g/admin-me/{token}/json")));
    assert_eq!(
        admin_json["images"].as_array().unwrap().len(),
        2,
        "the admin listing includes hidden images"
    );
    assert_eq!(
        json(&mut s.get("/pics/g/admin-me"))["images"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let page = s.get_with(
        &format!("/pics/g/admin-me/{token}"),
        &[("accept", "text/html")],
    );
    assert_eq!(header(&page, "cache-control"), "no-store");
    assert_eq!(act(&token, "unhide", id1).status(), 200);
    assert_eq!(
        act("super-secret-token-xyz", "up", id2).status(),
        200,
        "the superadmin works on every gallery"
    );
    let order: Vec<String> = json(&mut s.get("/pics/g/admin-me"))["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order, [id2, id1]);
    let stars = json(&mut s.get(&format!("/pics/g/admin-me?stars={id1},unknown")));
    assert_eq!(stars["selected"], serde_json::json!([id1]));
    assert_eq!(stars["images"][0]["id"], id1);
    assert_eq!(act(&token, "down", id2).status(), 200);
    let c = json(&mut s.post_with(
        "/pics/g/admin-me?comment=1",
        &[("content-type", "application/json")],
        br#"{"text":"spam"}"#,
    ));
    assert_eq!(act(&token, "cdel", c["id"].as_str().unwrap()).status(), 200);
    assert_eq!(json(&mut s.get("/pics/g/admin-me?likes=1"))["comments"], 0);
    assert_eq!(act(&token, "delete", id1).status(), 200);
    assert_error(&mut s.get(&path_of(&one["url"], &s)), 404, "not_found");
    assert_error(&mut act(&token, "explode", id2), 400, "bad_request");
    assert!(
        !s.log().contains(&token),
        "the secret never reaches the log"
    );
    let embed = text(&mut s.get_with("/pics/g/admin-me?embed=1", &[("accept", "text/html")]));
    assert!(
        !embed.contains("type=\"file\""),
        "the embed view has no uploader"
    );
}

#[test]
fn the_pics_pool_answers_507_and_never_evicts() {
    let s = Server::with_env(&[("STORE_PICS_POOL_BYTES", "400")]);
    create(&s, "name=small-pool");
    let first = upload(&s, "small-pool", "a.gif", &media("animated.gif"));
    let mut refused = None;
    for i in 0..5 {
        let mut res = s.post(
            &format!("/pics/g/small-pool?name={i}.gif"),
            &media("animated.gif"),
        );
        if res.status() != 201 {
            refused = Some((res.status(), header(&res, "retry-after"), json(&mut res)));
            break;
        }
    }
    let (status, retry, body) = refused.expect("the pool filled");
    assert_eq!(status, 507);
    assert_eq!(retry, "300");
    assert_eq!(body["code"], "pool_full");
    assert_eq!(
        s.get(&path_of(&first["url"], &s)).status(),
        200,
        "nothing was evicted"
    );
}

#[test]
fn single_files_get_previews_when_they_are_raster_images() {
    let s = Server::start();
    let jpg = s.upload("photo.jpg", &media("large-4000x3000.jpg"));
    let mut res = s.get(&format!("/{}?thumb=160", jpg["id"].as_str().unwrap()));
    assert_eq!(header(&res, "content-type"), "image/webp");
    assert!(bytes(&mut res).len() < 50_000);
    let txt = s.upload("notes.txt", b"not an image");
    assert_eq!(
        text(&mut s.get(&format!("/{}?thumb=1", txt["id"].as_str().unwrap()))),
        "not an image",
        "other files fall back to their bytes"
    );
}

#[test]
fn a_browser_creates_likes_and_comments_without_javascript() {
    let s = Server::start();
    let form = [
        ("content-type", "application/x-www-form-urlencoded"),
        ("accept", "text/html"),
    ];
    // The form leads to the admin page, whose address is the admin key:
    // a reload there posts nothing again.
    let res = s.post_with("/pics?create=1", &form, b"name=from-a-form");
    assert_eq!(res.status(), 303);
    let admin = header(&res, "location");
    assert!(admin.contains("/pics/g/from-a-form/"), "{admin}");
    assert_eq!(header(&res, "cache-control"), "no-store");
    let admin_page = text(&mut s.get_with(
        admin.strip_prefix(&s.base).unwrap(),
        &[("accept", "text/html")],
    ));
    assert!(admin_page.contains("admin key"), "{admin_page}");
    let img = upload(&s, "from-a-form", "a.gif", &media("animated.gif"));
    let id = img["id"].as_str().unwrap();
    let res = s.post_with(&format!("/pics/i/{id}?like=1"), &form, b"");
    assert_eq!(res.status(), 303);
    assert!(header(&res, "location").ends_with(&format!("/pics/g/from-a-form#{id}")));
    let res = s.post_with("/pics/g/from-a-form?comment=1", &form, b"text=nice");
    assert_eq!(res.status(), 303);
    let c = &json(&mut s.get("/pics/g/from-a-form"))["comments"][0];
    let res = s.post_with(
        &format!("/pics/g/from-a-form?clike={}", c["id"].as_str().unwrap()),
        &form,
        b"",
    );
    assert_eq!(res.status(), 303);
    let counters = json(&mut s.get("/pics/g/from-a-form?likes=1"));
    assert_eq!(counters["likes"][id], 1);
    assert_eq!(counters["cl"][c["id"].as_str().unwrap()], 1);
}

#[test]
fn a_gallery_downloads_whole_as_a_zip_of_what_visitors_see() {
    let s = Server::start();
    let (_, g) = create(&s, "name=zip-me");
    let token = g["token"].as_str().unwrap().to_string();
    let one = upload(&s, "zip-me", "same.gif", &media("animated.gif"));
    let two = upload(&s, "zip-me", "same.gif", &media("animated.gif"));
    let hidden = upload(&s, "zip-me", "hidden.gif", &media("animated.gif"));
    let res = s.post_with(
        &format!("/pics/g/zip-me/{token}"),
        &[("content-type", "application/x-www-form-urlencoded")],
        format!("id={}&action=hide", hidden["id"].as_str().unwrap()).as_bytes(),
    );
    assert_eq!(res.status(), 200);
    let mut res = s.get("/pics/g/zip-me?zip=1");
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "content-type"), "application/zip");
    assert!(header(&res, "content-disposition").contains("zip-me.zip"));
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes(&mut res))).unwrap();
    let mut members = std::collections::BTreeMap::new();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let mut data = vec![];
        std::io::Read::read_to_end(&mut f, &mut data).unwrap();
        members.insert(f.name().unwrap().to_string(), data);
    }
    // Repeated names are numbered; the hidden image is not there.
    let names: Vec<&String> = members.keys().collect();
    assert_eq!(names, ["same (2).gif", "same.gif"]);
    for (name, image) in [("same.gif", &one), ("same (2).gif", &two)] {
        let served = bytes(&mut s.get(&path_of(&image["url"], &s)));
        assert_eq!(members[name], served, "{name} is the image a visitor gets");
    }
    // The page offers it.
    let mut page = s.get_with("/pics/g/zip-me", &[("Accept", "text/html")]);
    assert!(text(&mut page).contains("/pics/g/zip-me?zip=1"));
    assert_eq!(s.get("/pics/g/no-such-gallery?zip=1").status(), 404);
}

#[test]
fn a_server_can_take_gallery_images_from_admins_only() {
    let s = Server::with_env(&[
        ("STORE_PICS_UPLOADS", "admin"),
        ("STORE_SUPERADMIN_TOKEN", "super-secret-token-xyz"),
    ]);
    assert_eq!(json(&mut s.get("/api"))["gallery_uploads"], "admin");
    let (status, g) = create(&s, "name=closed");
    assert_eq!(status, 201, "creating a gallery stays open");
    let token = g["token"].as_str().unwrap().to_string();
    // A visitor's upload and import are refused, and nothing is stored.
    let mut res = s.post("/pics/g/closed?name=a.gif", &media("animated.gif"));
    assert_error(&mut res, 401, "write_denied");
    let mut res = s.post_empty("/pics/g/closed?url=http://127.0.0.1:9/a.gif", &[]);
    assert_error(&mut res, 401, "write_denied");
    let closed = json(&mut s.get("/pics/g/closed"));
    assert_eq!(closed["images"], serde_json::json!([]));
    let how = closed["upload"].as_str().unwrap();
    assert!(
        how.contains("/pics/g/closed/<admin token>?upload=1"),
        "{how}"
    );
    // A wrong admin token is 404, as on the admin page.
    let mut res = s.post(
        "/pics/g/closed/not-the-token?upload=1&name=a.gif",
        &media("animated.gif"),
    );
    assert_error(&mut res, 404, "not_found");
    // The admin, and the superadmin, upload through the admin path.
    for secret in [token.as_str(), "super-secret-token-xyz"] {
        let mut res = s.post(
            &format!("/pics/g/closed/{secret}?upload=1&name=a.gif"),
            &media("animated.gif"),
        );
        assert_eq!(res.status(), 201);
        assert_eq!(json(&mut res)["name"], "a.gif");
    }
    assert_eq!(
        json(&mut s.get("/pics/g/closed"))["images"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // The gallery page has no upload form; the admin page has one.
    let mut page = s.get_with("/pics/g/closed", &[("Accept", "text/html")]);
    let html = text(&mut page);
    assert!(!html.contains("data-upload=\"gallery\""), "{html}");
    assert!(html.contains("Only this gallery's admin adds photos here."));
    let mut admin = s.get_with(
        &format!("/pics/g/closed/{token}"),
        &[("Accept", "text/html")],
    );
    let html = text(&mut admin);
    assert!(
        html.contains(&format!("action=\"/pics/g/closed/{token}?upload=1\"")),
        "{html}"
    );
    // Deleting from the admin page takes a second click.
    assert!(html.contains("<details class=\"confirm\">"), "{html}");
    // An open server (the default) takes a visitor's upload, and says so.
    let open = Server::start();
    assert_eq!(json(&mut open.get("/api"))["gallery_uploads"], "open");
    let (status, made) = create(&open, "name=open-pics");
    assert_eq!(status, 201, "{made}");
    upload(&open, "open-pics", "a.gif", &media("animated.gif"));
}
