//! The pages in a real browser: headless Chromium driven over WebDriver.
//! A person uploads from the home page, adds to a dir, likes and comments
//! in a gallery; an uploaded HTML page cannot act with the service's
//! origin; "Your uploads" survives a reload and extends, shows as a QR
//! code and deletes; a once file survives a chat app's link preview; the
//! page script uploads under a mount path.
//! Screenshots of the main pages land in
//! `target/tmp/screenshots/` as artifacts.

use crate::common::qr;
use crate::common::repo;
use crate::common::webdriver;

use std::path::PathBuf;

use crate::common::{json, Server};
use serde_json::{json, Value};
use webdriver::Browser;

fn fixture(name: &str) -> PathBuf {
    repo("fixtures")
        .join(name)
        .canonicalize()
        .expect("fixture exists")
}

/// Saves a screenshot of the page under `target/tmp/screenshots`, for a
/// person to look at, when `STORE_TEST_SCREENSHOTS` is set: the suite
/// takes over a hundred, and they were a quarter of the axe tests'
/// processor time (docs/DECISIONS.md, "Screenshots when asked for").
fn shot(b: &Browser, name: &str) {
    if std::env::var_os("STORE_TEST_SCREENSHOTS").is_some_and(|v| !v.is_empty()) {
        save_shot(b, name);
    }
}

fn save_shot(b: &Browser, name: &str) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    b.screenshot(&dir.join(format!("{name}.png")));
}

/// Waits until the page's script has run (it marks `<html data-ready>`),
/// which also proves the strict CSP lets our own script load.
pub(crate) fn ready(b: &Browser) {
    b.wait_for("app.js to start", || {
        (b.execute(
            "return document.documentElement.dataset.ready || null",
            json!([]),
        ) == "1")
            .then_some(())
    });
}

/// Sets a marker on the current page: if it is still there later, the
/// page was not reloaded in between.
fn mark(b: &Browser) {
    b.execute("window.__sameLoad = 'yes'", json!([]));
}

/// Waits until the image `css` selects has loaded and has pixels.
fn image_loaded(b: &Browser, css: &str) {
    b.wait_for(&format!("{css} to load"), || {
        let done = b.execute(
            "const i = document.querySelector(arguments[0]); return !!i && i.complete && i.naturalWidth > 0",
            json!([css]),
        );
        (done == true).then_some(())
    });
}

fn still_marked(b: &Browser) -> bool {
    b.execute("return window.__sameLoad || null", json!([])) == "yes"
}

#[test]
fn a_person_uploads_shares_browses_and_uses_a_gallery() {
    let s = Server::start();
    let b = Browser::start();

    // Home: pick a file, upload, read the URL the page shows.
    b.goto(&s.url("/"));
    ready(&b);
    let styled = b.execute("return getComputedStyle(document.body).margin", json!([]));
    assert_eq!(styled, "0px", "the stylesheet applies under the CSP");
    shot(&b, "home");
    let notes = fixture("notes-utf8.txt");
    b.send_keys(
        &b.find("form[data-upload=home] input[type=file]"),
        notes.to_str().unwrap(),
    );
    b.click(&b.find("form[data-upload=home] button[type=submit]"));
    let link = b.find("a[data-result-url]");
    let url = b.attr(&link, "href").expect("the result link");
    assert!(url.starts_with(&s.base), "{url}");
    let shown = b.text(&b.find(".results time[data-rel]"));
    assert!(
        shown.contains("hour"),
        "expiry in the reader's terms: {shown}"
    );
    let path = url.strip_prefix(&s.base).unwrap().to_string();
    assert_eq!(
        crate::common::bytes(&mut s.get(&path)),
        std::fs::read(&notes).unwrap(),
        "the uploaded bytes come back"
    );
    shot(&b, "home-uploaded");

    // Bundle mode: two files in one request.
    b.goto(&s.url("/"));
    ready(&b);
    let input = b.find("form[data-upload=home] input[type=file]");
    b.send_keys(
        &input,
        &format!("{}\n{}", notes.display(), fixture("pixel.png").display()),
    );
    // The choice shows once two files are picked.
    b.click(&b.find("input[name=mode][value=bundle]"));
    b.click(&b.find("form[data-upload=home] button[type=submit]"));
    let bundle_url = b.attr(&b.find("a[data-result-url]"), "href").unwrap();
    let bundle = json(&mut s.get(&format!(
        "{}?json=1",
        bundle_url.strip_prefix(&s.base).unwrap()
    )));
    assert_eq!(
        bundle["files"].as_array().map(Vec::len),
        Some(2),
        "{bundle}"
    );

    // A dir page: upload into it with the page's own form.
    let made = s.post_empty("/?dir=1&name=browser-dir&listed=1", &[]);
    assert_eq!(made.status(), 201);
    b.goto(&s.url("/d/browser-dir"));
    ready(&b);
    b.send_keys(
        &b.find("form[data-upload=dir] input[type=file]"),
        notes.to_str().unwrap(),
    );
    b.click(&b.find("form[data-upload=dir] button[type=submit]"));
    let row = b.find("table a[href$='/d/browser-dir/notes-utf8.txt']");
    assert_eq!(b.text(&row), "notes-utf8.txt");
    let listing = json(&mut s.get("/d/browser-dir"));
    assert_eq!(listing["files"][0]["name"], "notes-utf8.txt");
    shot(&b, "dir");
    b.goto(&s.url("/d"));
    ready(&b);
    assert!(b.text(&b.find("table")).contains("browser-dir"));
    shot(&b, "dirs");

    // A gallery: like an image and comment without a page reload.
    let g = json(&mut s.post_empty("/pics?create=1&name=browser-gallery", &[]));
    let png = std::fs::read(fixture("media/alpha-2400x1600.png")).unwrap();
    let up = s.post("/pics/g/browser-gallery?name=alpha.png", &png);
    assert_eq!(up.status(), 201);
    b.goto(&s.url("/pics/g/browser-gallery"));
    ready(&b);
    image_loaded(&b, ".grid img");
    mark(&b);
    b.click(&b.find(".grid form[data-like] button"));
    b.wait_for("the like count to show 1", || {
        (b.text(&b.find(".grid [data-likes]")) == "1").then_some(())
    });
    assert!(still_marked(&b), "liking reloaded the page");
    b.send_keys(&b.find("form[data-comment] input[name=name]"), "Ana");
    b.send_keys(&b.find("form[data-comment] textarea"), "What a view");
    b.click(&b.find("form[data-comment] button[type=submit]"));
    let posted = b.find("#comment-list article.comment p");
    assert_eq!(b.text(&posted), "What a view");
    assert!(still_marked(&b), "commenting reloaded the page");
    // A second comment inside the cooldown shows the cooldown message.
    b.send_keys(&b.find("form[data-comment] textarea"), "Again");
    b.click(&b.find("form[data-comment] button[type=submit]"));
    b.wait_for("the cooldown message", || {
        b.text(&b.find("form[data-comment] .status"))
            .contains("Please wait")
            .then_some(())
    });
    let counters = json(&mut s.get("/pics/g/browser-gallery?likes=1"));
    assert_eq!(counters["comments"], 1);
    assert_eq!(
        counters["likes"].as_object().unwrap().values().next(),
        Some(&json!(1))
    );
    shot(&b, "gallery");

    // The lightbox opens the full image and closes with Escape.
    b.click(&b.find(".grid a[data-lightbox]"));
    b.wait_for("the lightbox", || {
        (b.execute(
            "return document.querySelector('dialog.lightbox').open",
            json!([]),
        ) == true)
            .then_some(())
    });
    shot(&b, "gallery-lightbox");
    // It offers the download and the original of the image it shows, and
    // a like that is the grid's (liked above: this click takes it back).
    let image = b.attr(&b.find(".grid a[data-lightbox]"), "href").unwrap();
    let download = b.attr(&b.find("dialog.lightbox a[data-lightbox-download]"), "href");
    assert_eq!(download, Some(format!("{image}?download=1")));
    let original = b.attr(&b.find("dialog.lightbox a[target=_blank]"), "href");
    assert_eq!(original, Some(image));
    b.click(&b.find("dialog.lightbox button[data-lightbox-like]"));
    b.wait_for("the like to be taken back", || {
        (b.text(&b.find(".grid [data-likes]")) == "0").then_some(())
    });
    // The heart and the count, then words for a screen reader.
    let shown = b.text(&b.find("dialog.lightbox button[data-lightbox-like]"));
    assert!(shown.starts_with("♥ 0"), "{shown}");
    b.execute(
        "document.querySelector('dialog.lightbox').close()",
        json!([]),
    );
    // A like button keeps its heart and count on one line.
    let wrap = b.execute(
        "return getComputedStyle(document.querySelector('.grid figcaption button')).whiteSpace",
        json!([]),
    );
    assert_eq!(wrap, "nowrap");

    // The admin page hides the image.
    let admin = g["admin_url"].as_str().unwrap().to_string();
    b.goto(&admin);
    ready(&b);
    shot(&b, "gallery-admin");
    // Its thumbnails are cropped squares, never squashed.
    let fit = b.execute(
        "return getComputedStyle(document.querySelector('img.thumb')).objectFit",
        json!([]),
    );
    assert_eq!(fit, "cover");
    b.click(&b.find("form input[value=hide] ~ button"));
    b.find("form input[value=unhide]");
    let public = json(&mut s.get("/pics/g/browser-gallery"));
    assert_eq!(public["images"].as_array().map(Vec::len), Some(0));
    // Deleting takes a second click: the button is inside a closed
    // <details>, which the first click opens.
    let delete = "details.confirm button";
    let visible = |b: &Browser| {
        b.execute(
            "return document.querySelector(arguments[0]).checkVisibility()",
            json!([delete]),
        ) == true
    };
    assert!(!visible(&b), "the delete button is hidden at first");
    b.click(&b.find("details.confirm summary"));
    assert!(visible(&b));
    b.click(&b.find(delete));
    b.wait_for("the image to be deleted", || {
        let secret = admin.rsplit('/').next().unwrap();
        let all = json(&mut s.get(&format!("/pics/g/browser-gallery/{secret}/json")));
        (all["images"].as_array().map(Vec::len) == Some(0)).then_some(())
    });

    // The other main pages, at desktop and phone widths.
    for (name, path) in [
        ("browse", "/browse"),
        ("galleries", "/pics"),
        ("help", "/help"),
        ("help-dirs", "/help/dirs"),
        ("releases", "/releases"),
    ] {
        b.goto(&s.url(path));
        ready(&b);
        shot(&b, name);
    }
    b.set_window(390, 844);
    for (name, path) in [("home-phone", "/"), ("dir-phone", "/d/browser-dir")] {
        b.goto(&s.url(path));
        ready(&b);
        assert!(!overflows(&b), "{path} scrolls sideways on a phone");
        shot(&b, name);
    }
}

#[test]
fn uploaded_html_cannot_act_with_the_service_origin() {
    let s = Server::start();
    let b = Browser::start();
    let page = b"<!doctype html><title>t</title><script>\
        let t = 'origin:' + window.origin;\
        try { localStorage.setItem('k', '1'); t += '|storage'; } catch (e) { t += '|no-storage'; }\
        try { t += document.cookie === '' ? '|no-cookie' : '|cookie'; } catch (e) { t += '|no-cookie'; }\
        document.title = t;\
        </script>";
    let made = json(&mut s.post("/?name=evil.html", page));
    let url = made["url"].as_str().unwrap().to_string();
    b.goto(&url);
    let title = b.wait_for("the page's script", || {
        let t = b.title();
        t.starts_with("origin:").then_some(t)
    });
    // The script ran, but in an opaque origin with no access to the
    // service's storage or cookies.
    assert!(title.starts_with("origin:null|"), "{title}");
    assert!(title.contains("|no-storage"), "{title}");
    // The app itself, under the real origin, still works.
    b.goto(&s.url("/"));
    ready(&b);
    let origin = b.execute("return window.origin", json!([]));
    assert_eq!(origin, s.base.as_str());
    // A hostile file name on the file page is text, and no dialog opened
    // (an open alert would make the next WebDriver call fail).
    let hostile = "<img src=x onerror=alert(1)>.txt";
    let made = json(&mut s.post("/?name=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E.txt", b"x"));
    assert_eq!(made["name"], hostile);
    b.goto(&format!("{}?info=1", made["url"].as_str().unwrap()));
    ready(&b);
    assert_eq!(b.text(&b.find("h1")), hostile);
    let imgs = b.execute(
        "return document.querySelectorAll('main h1 img').length",
        json!([]),
    );
    assert_eq!(imgs, 0);
}

/// The playing position of the page's video, or `None` before it has one.
fn video_state(b: &Browser) -> Value {
    b.execute(
        "const v = document.querySelector('video');
         if (!v) return null;
         return { time: v.currentTime, ready: v.readyState, seeking: v.seeking,
                  error: v.error ? v.error.code : null,
                  codec: v.canPlayType('video/mp4; codecs=\"avc1.42C01E\"') };",
        json!([]),
    )
}

/// A real player: Chromium opens an uploaded MP4 (its index at the end
/// of the file, so the player must ask for ranges), plays it, and seeks
/// near its end; the server answered with 206s.
#[test]
fn a_video_plays_and_seeks_over_ranges() {
    let s = Server::start();
    let clip = std::fs::read(fixture("clip.mp4")).unwrap();
    let r = json(&mut s.post("/?name=clip.mp4", &clip));
    // Downloads are attachments (SPEC.md), so the video plays in a page, as
    // on any site that embeds it: here a page uploaded beside it.
    let page = format!(
        "<!doctype html><video src=\"/{}\" muted preload=\"metadata\"></video>",
        r["id"].as_str().unwrap()
    );
    let p = json(&mut s.post("/?name=player.html", page.as_bytes()));
    let b = Browser::start();
    b.goto(p["url"].as_str().unwrap());
    let state = b.wait_for("the video to load", || {
        let st = video_state(&b);
        (st["ready"].as_i64().unwrap_or(0) >= 2 || !st["error"].is_null()).then_some(st)
    });
    assert!(state["error"].is_null(), "the video decodes: {state}");
    b.execute(
        "const v = document.querySelector('video'); v.muted = true; v.play(); return null",
        json!([]),
    );
    b.wait_for("the video to play", || {
        (video_state(&b)["time"].as_f64().unwrap_or(0.0) > 0.3).then_some(())
    });
    b.execute(
        "document.querySelector('video').currentTime = 4.5; return null",
        json!([]),
    );
    let seeked = b.wait_for("the seek to land", || {
        let st = video_state(&b);
        let landed = st["time"].as_f64().unwrap_or(0.0) >= 4.5 && st["seeking"] == false;
        landed.then_some(st)
    });
    assert!(seeked["error"].is_null(), "{seeked}");
    let log = s.log();
    let partial = log
        .lines()
        .filter(|l| l.contains("route=\"get_file\"") && l.contains("status=206"))
        .count();
    assert!(partial >= 1, "the player asked for ranges: {log}");
}

/// Whether the page scrolls sideways (it must not, on a phone).
fn overflows(b: &Browser) -> bool {
    b.execute(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
        json!([]),
    ) != 0
}

#[test]
fn your_uploads_survive_a_reload_and_extend_show_as_qr_and_delete() {
    let s = Server::start();
    let b = Browser::start();
    b.goto(&s.url("/"));
    ready(&b);
    let notes = fixture("notes-utf8.txt");
    b.send_keys(
        &b.find("form[data-upload=home] input[type=file]"),
        notes.to_str().unwrap(),
    );
    // Nothing ticked: a browser upload is protected by default.
    b.click(&b.find("form[data-upload=home] button[type=submit]"));
    let url = b.attr(&b.find("a[data-result-url]"), "href").unwrap();
    let path = url.strip_prefix(&s.base).unwrap().to_string();
    let info = format!("{path}?info=1");
    assert_eq!(json(&mut s.get(&info))["protected"], true);
    // Whoever has the link can neither replace nor delete it.
    crate::common::assert_error(&mut s.put(&path, &[], b"defaced"), 401, "write_denied");
    crate::common::assert_error(&mut s.delete(&path, &[]), 401, "write_denied");

    // A reload: the upload is still listed, from this browser's storage.
    b.goto(&s.url("/"));
    ready(&b);
    let item = format!("#your-uploads li[data-upload-url='{url}']");
    b.find(&item);
    b.execute(
        "document.getElementById('your-uploads').scrollIntoView(); return null",
        json!([]),
    );
    shot(&b, "your-uploads");

    // Its QR code, drawn by the server, read back from the pixels Chromium
    // painted.
    b.click(&b.find(&format!("{item} button[data-qr]")));
    let img = format!("{item} img.qr");
    image_loaded(&b, &img);
    let png = b.element_png(&b.find(&img));
    assert_eq!(qr::decode_png(&png), vec![url.clone()]);

    // Extend it to seven days with the owner token the browser kept.
    let before = json(&mut s.get(&info))["expires_at"].clone();
    b.execute(
        "document.querySelector(arguments[0]).value = '7d'; return null",
        json!([format!("{item} select[data-extend-ttl]")]),
    );
    b.click(&b.find(&format!("{item} button[data-extend]")));
    let record = b.wait_for("the new expiry", || {
        let r = json(&mut s.get(&info));
        (r["expires_at"] != before).then_some(r)
    });
    let left = record["expires_in"].as_i64().unwrap();
    assert!(left > 6 * 86_400 && left <= 7 * 86_400, "{record}");
    let kept = b.wait_for("the list to show it", || {
        let v = b.execute(
            "return JSON.parse(localStorage.getItem('storesrv.uploads'))[0].expires_at",
            json!([]),
        );
        (v == record["expires_at"]).then_some(v)
    });
    assert_eq!(kept, record["expires_at"]);
    // The control now starts at the lifetime the upload has, and asks
    // before it shortens it.
    let select = format!("{item} select[data-extend-ttl]");
    b.wait_for("the control to start at seven days", || {
        (b.execute(
            "return document.querySelector(arguments[0]).value",
            json!([select]),
        ) == "7d")
            .then_some(())
    });
    b.execute(
        "const s = document.querySelector(arguments[0]); s.value = '4h'; s.dispatchEvent(new Event('change')); return null",
        json!([select]),
    );
    b.click(&b.find(&format!("{item} button[data-extend]")));
    let asks = b.text(&b.find(&format!("{item} button[data-extend][data-armed]")));
    assert!(asks.starts_with("Shorten to 4 hours"), "{asks}");
    assert_eq!(
        json(&mut s.get(&info))["expires_at"],
        record["expires_at"],
        "one click shortens nothing"
    );
    // An entry whose stored expiry has passed is asked about, not dropped:
    // the server still has it (another device may have extended it).
    b.execute(
        "const l = JSON.parse(localStorage.getItem('storesrv.uploads'));
         l[0].expires_at = '2000-01-01T00:00:00Z';
         localStorage.setItem('storesrv.uploads', JSON.stringify(l)); return null",
        json!([]),
    );
    b.goto(&s.url("/"));
    ready(&b);
    b.wait_for("the stale expiry to be refreshed", || {
        let v = b.execute(
            "return JSON.parse(localStorage.getItem('storesrv.uploads'))[0].expires_at",
            json!([]),
        );
        (v == record["expires_at"]).then_some(())
    });

    // On a phone: no sideways scrolling, and screenshots as artifacts.
    b.set_window(390, 844);
    for (name, page) in [
        ("your-uploads-phone", "/".to_string()),
        ("file-info-phone", info.clone()),
    ] {
        b.goto(&s.url(&page));
        ready(&b);
        assert!(!overflows(&b), "{page} scrolls sideways on a phone");
        shot(&b, name);
    }
    b.set_window(1280, 900);

    // Delete: the first click asks, the second deletes (it is protected,
    // so only the owner token could).
    b.goto(&s.url("/"));
    ready(&b);
    b.click(&b.find(&format!("{item} button[data-delete]")));
    let armed = b.find(&format!("{item} button[data-delete][data-armed]"));
    assert_eq!(b.text(&armed), "Really delete?");
    assert_eq!(s.get(&info).status(), 200, "one click deletes nothing");
    b.click(&armed);
    b.wait_for("the upload to be deleted", || {
        (s.get(&info).status() == 404).then_some(())
    });
    b.wait_for("the list to drop it", || {
        let n = b.execute(
            "return document.querySelectorAll(arguments[0]).length",
            json!([item]),
        );
        (n == 0).then_some(())
    });
}

#[test]
fn a_password_page_opens_a_file_on_a_phone_and_a_folder_on_a_desktop() {
    let s = Server::start();
    let file = json(&mut s.post_with(
        "/?name=code.txt&once=1",
        &[("X-Store-Password", "correct horse")],
        b"the door code is 4711",
    ));
    let info = format!("/{}?info=1", file["id"].as_str().unwrap());
    let owner = file["owner_token"].as_str().unwrap().to_string();
    let b = Browser::start();
    b.set_window(390, 844);
    b.goto(file["url"].as_str().unwrap());
    ready(&b);
    assert!(b.text(&b.find("h1")).contains("Password needed"));
    assert!(!overflows(&b));
    shot(&b, "password-phone");
    b.send_keys(&b.find("input[type=password]"), "wrong horse");
    b.click(&b.find("form button[type=submit]"));
    let said = b.wait_for("the wrong password said", || {
        b.execute(
            "const e = document.querySelector('[role=alert]'); return e ? e.textContent : null",
            json!([]),
        )
        .as_str()
        .map(str::to_string)
    });
    assert!(said.contains("not the right one"), "{said}");
    b.send_keys(&b.find("input[type=password]"), "correct horse");
    b.click(&b.find("form button[type=submit]"));
    // Past the password, the once page: nothing is spent yet.
    b.wait_for("the once page", || b.try_find("a[data-burn]"));
    let with_owner = [("x-store-owner", owner.as_str())];
    assert_eq!(
        s.get_with(&info, &with_owner).status(),
        200,
        "the form spent nothing"
    );
    b.click(&b.find("a[data-burn]"));
    b.wait_for("the download to spend it", || {
        (s.get_with(&info, &with_owner).status() == 404).then_some(())
    });

    // A folder at desktop width: its listing and its files open after it.
    b.set_window(1280, 900);
    let made = s.post_with(
        "/?dir=1&name=private-plans",
        &[("X-Store-Password", "open sesame")],
        b"",
    );
    assert_eq!(made.status(), 201);
    assert_eq!(
        s.post("/d/private-plans?name=plan.md", b"# Plan\n")
            .status(),
        200
    );
    b.goto(&s.url("/d/private-plans"));
    ready(&b);
    b.send_keys(&b.find("input[type=password]"), "open sesame");
    b.click(&b.find("form button[type=submit]"));
    b.wait_for("the folder's page", || {
        b.current_url()
            .ends_with("/d/private-plans")
            .then_some(())?;
        b.try_find("a[href$='/d/private-plans/plan.md']")
    });
    assert!(!overflows(&b));
    shot(&b, "password-folder-desktop");
}

#[test]
fn a_drop_link_takes_a_second_persons_files_for_its_owner_alone() {
    let s = Server::start();
    let owner = Browser::start();
    owner.set_window(1280, 900);
    owner.goto(&s.url("/"));
    ready(&owner);
    owner.click(&owner.find("form[data-collect] button[type=submit]"));
    let link = owner.find("[data-drop-url] a");
    let drop_url = owner.attr(&link, "href").expect("the drop link");
    let mine = owner.find("a[data-owner-link]");
    let owner_path = owner.attr(&mine, "href").expect("the owner's link");
    shot(&owner, "drop-made-desktop");

    // Someone else, in a browser of their own, on a phone.
    let other = Browser::start();
    other.set_window(390, 844);
    other.goto(&drop_url);
    ready(&other);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.txt");
    std::fs::write(&file, "quarterly figures").unwrap();
    other.send_keys(
        &other.find("form[data-upload=drop] input[type=file]"),
        file.to_str().unwrap(),
    );
    other.click(&other.find("form[data-upload=drop] button[type=submit]"));
    let said = other.wait_for("what the drop took", || {
        other.try_find("[data-dropped]").map(|e| other.text(&e))
    });
    assert!(said.contains("report.txt"), "{said}");
    assert!(!overflows(&other));
    shot(&other, "drop-sent-phone");
    // A second send of the same name does not replace the first.
    other.goto(&drop_url);
    ready(&other);
    other.send_keys(
        &other.find("form[data-upload=drop] input[type=file]"),
        file.to_str().unwrap(),
    );
    other.click(&other.find("form[data-upload=drop] button[type=submit]"));
    let again = other.wait_for("the second send", || {
        other.try_find("[data-dropped]").map(|e| other.text(&e))
    });
    assert!(again.contains("report (2).txt"), "{again}");

    // Its owner sees both: under Your uploads, which counts them, and on
    // the folder's page; without the owner link the folder is not there.
    owner.goto(&s.url("/"));
    ready(&owner);
    let entry = owner.wait_for("the drop under Your uploads", || {
        let said = owner
            .execute("const u = document.querySelector('#your-uploads ul.uploads'); return u ? u.textContent : null", json!([]))
            .as_str()
            .map(str::to_string)?;
        said.contains("2 file(s) received").then_some(said)
    });
    assert!(entry.contains("Drop link"), "{entry}");
    owner.goto(&s.url(&owner_path));
    ready(&owner);
    let listed = owner.text(&owner.find("main"));
    assert!(
        listed.contains("report.txt") && listed.contains("report (2).txt"),
        "{listed}"
    );
    let bare = owner_path.split('?').next().unwrap().to_string();
    assert_eq!(s.get(&bare).status(), 404);
    // Its history opens from there too: the owner's link carries on.
    owner.click(&owner.find("a[href*='/history']"));
    owner.wait_for("the folder's history", || {
        let said = owner.text(&owner.find("main"));
        said.contains("report (2).txt").then_some(())
    });
}

#[test]
fn a_once_file_survives_a_link_preview_and_opens_once_in_a_browser() {
    let s = Server::start();
    let made = json(&mut s.post("/?name=secret.txt&once=1", b"for one reader"));
    let url = made["url"].as_str().unwrap().to_string();
    let info = format!("/{}?info=1", made["id"].as_str().unwrap());
    // A chat app unfurls the link as it is pasted: with its own
    // User-Agent, asking for anything. It gets the page, and spends nothing.
    let path = url.strip_prefix(&s.base).unwrap();
    for accept in ["text/html", "*/*"] {
        let res = s.get_with(
            path,
            &[
                (
                    "User-Agent",
                    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
                ),
                ("Accept", accept),
            ],
        );
        assert_eq!(res.status(), 200);
        assert!(crate::common::header(&res, "content-type").starts_with("text/html"));
    }
    assert_eq!(s.get(&info).status(), 200);
    // The recipient opens the link: a page that says what will happen.
    let b = Browser::start();
    b.set_window(390, 844);
    b.goto(&url);
    ready(&b);
    let button = b.find("a[data-burn]");
    assert_eq!(b.text(&button), "Download and delete");
    assert!(b
        .text(&b.find(".notice"))
        .contains("deleted when it is downloaded"));
    assert!(!overflows(&b));
    shot(&b, "once-phone");
    b.goto(&url);
    ready(&b);
    assert_eq!(
        s.get(&info).status(),
        200,
        "opening the page twice spends nothing"
    );
    // The button downloads it, once, and the page says the link is spent
    // (the next visit answers SPEC.md's JSON 404).
    b.click(&b.find("a[data-burn]"));
    b.wait_for("the download to spend it", || {
        (s.get(&info).status() == 404).then_some(())
    });
    let said = b.text(&b.find("[data-burnt]"));
    assert!(said.contains("no longer works"), "{said}");
    assert_eq!(
        b.execute(
            "return document.querySelector('.once-actions').hidden",
            json!([])
        ),
        true,
        "nothing left to click"
    );
    shot(&b, "once-spent-phone");

    // A short text once file reads on the page, which spends it: at
    // desktop width, so that the once page is tried at both.
    b.set_window(1280, 900);
    let note = json(&mut s.post("/?name=note.txt&once=1", b"the door code is 4711"));
    let note_info = format!("/{}?info=1", note["id"].as_str().unwrap());
    b.goto(note["url"].as_str().unwrap());
    ready(&b);
    b.click(&b.find("button[data-reveal]"));
    let shown = b.wait_for("the text on the page", || {
        let t = b.execute(
            "const p = document.querySelector('[data-revealed]'); return p.hidden ? null : p.textContent",
            json!([]),
        );
        t.as_str().map(str::to_string)
    });
    assert_eq!(shown, "the door code is 4711");
    assert_eq!(s.get(&note_info).status(), 404, "reading it spent it");
    assert!(b.text(&b.find("[data-burnt]")).contains("no longer works"));
    assert!(!overflows(&b));
    shot(&b, "once-revealed-desktop");
}

// Issue 38, item 1, without the script: nothing can disable the download
// limits when several files are picked (they go as one bundle, which has
// none), so the form says so before the upload; one file gets what was
// ticked, protected as with the script.
#[test]
fn without_the_script_the_form_says_what_it_cannot_do_and_does_the_rest() {
    let s = Server::start();
    let b = Browser::start();
    b.without_script();
    b.goto(&s.url("/"));
    b.find("form[data-upload=home]");
    assert_eq!(
        b.execute(
            "return document.documentElement.dataset.ready || null",
            json!([])
        ),
        Value::Null,
        "app.js did not run"
    );
    let note = b.find("[data-noscript-single]");
    assert!(
        b.text(&note).contains("several files go as one zip bundle"),
        "the reason is shown: {:?}",
        b.text(&note)
    );
    assert_eq!(
        b.execute(
            "return document.querySelector('[data-several]').checkVisibility()",
            json!([])
        ),
        false,
        "no mode choice the server would not read"
    );
    let form = "form[data-upload=home]";
    b.send_keys(
        &b.find(&format!("{form} input[type=file]")),
        fixture("notes-utf8.txt").to_str().unwrap(),
    );
    b.click(&b.find("input[name=once]"));
    b.click(&b.find(&format!("{form} button[type=submit]")));
    // The link as the page shows it (WebDriver's attribute reading runs a
    // script of its own, which the page does not allow now).
    let url = b.text(&b.find("a[data-result-url]"));
    shot(&b, "noscript-uploaded");
    let path = url.strip_prefix(&s.base).unwrap();
    let record = json(&mut s.get(&format!("{path}?info=1")));
    assert_eq!(record["once"], true, "{record}");
    assert_eq!(record["protected"], true, "{record}");
    assert_eq!(record["name"], "notes-utf8.txt", "{record}");
}

/// A host serving storesrv (memory ports) under `/files` on 127.0.0.1:
/// answers the host's origin, `http://<addr>`.
fn mounted_host() -> (String, tokio::runtime::Runtime) {
    use std::sync::Arc;
    use store_testkit::{
        FakeFetcher, ManualClock, MemoryBlobStore, MemoryRepository, SeededRandom,
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let ports = store_app::Ports {
        repo: Arc::new(MemoryRepository::new()),
        blobs: Arc::new(MemoryBlobStore::new()),
        clock: Arc::new(ManualClock::new(store_core::Timestamp::from_secs(
            1_800_000_000,
        ))),
        random: Arc::new(SeededRandom::new(3)),
        fetcher: Arc::new(FakeFetcher::new()),
        coordination: Default::default(),
    };
    let config = store_app::AppConfig::new(format!("{origin}/files"));
    let app = Arc::new(store_app::App::open(ports, config).unwrap().0);
    let files = store_http::StoreService::new(app, &store_http::ServeOptions::default())
        .mounted_at("/files")
        .unwrap();
    rt.spawn(async move {
        while let Ok((stream, peer)) = listener.accept().await {
            let files = files.for_peer(peer.ip());
            let service = hyper::service::service_fn(move |req| {
                let files = files.clone();
                async move { Ok::<_, std::convert::Infallible>(files.handle(req).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(io, service));
        }
    });
    (origin, rt)
}

/// The page script posts where the home form says: under a mount, an
/// upload from the home page lands there and its link leads there.
#[test]
fn the_home_page_uploads_under_a_mount() {
    let (origin, _rt) = mounted_host();
    let b = Browser::start();
    b.goto(&format!("{origin}/files/"));
    ready(&b);
    let notes = fixture("notes-utf8.txt");
    b.send_keys(
        &b.find("form[data-upload=home] input[type=file]"),
        notes.to_str().unwrap(),
    );
    b.click(&b.find("form[data-upload=home] button[type=submit]"));
    let url = b.attr(&b.find("a[data-result-url]"), "href").unwrap();
    assert!(url.starts_with(&format!("{origin}/files/")), "{url}");
    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    let got = agent
        .get(&url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_vec()
        .unwrap();
    assert_eq!(got, std::fs::read(&notes).unwrap());
    // The script's own list links there too, after a reload.
    b.goto(&format!("{origin}/files/"));
    ready(&b);
    b.find(&format!("#your-uploads li[data-upload-url='{url}']"));
}

/// The number of files the home form lists as picked.
fn picked_count(b: &Browser) -> Value {
    b.execute(
        "return document.querySelectorAll('form[data-upload=home] ul.picked-files li').length",
        json!([]),
    )
}

/// Issue 38, first part: what a person ticks is what happens. The
/// options a mode cannot honour are off with the reason beside them, the
/// result says what was applied, a browser upload is safe from the people
/// it is shared with, a refusal keeps the form, and a double click sends
/// once.
#[test]
fn what_a_person_ticks_is_what_happens_on_a_desktop() {
    what_a_person_ticks_is_what_happens(1280, 900);
}

#[test]
fn what_a_person_ticks_is_what_happens_on_a_phone() {
    what_a_person_ticks_is_what_happens(390, 844);
}

/// The home form at one window size: the options follow what was picked,
/// a refusal keeps the form, a double click sends once, and the result
/// says what was applied, which is what the server did.
fn what_a_person_ticks_is_what_happens(width: u32, height: u32) {
    let s = Server::with_env(&[("STORE_UPLOAD_TOKEN", "right-token")]);
    let b = Browser::start();
    b.set_window(width, height);
    b.goto(&s.url("/"));
    ready(&b);
    let form = "form[data-upload=home]";
    // Upload is in sight without scrolling, on a phone too.
    assert_eq!(
        b.execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect(); return r.bottom <= window.innerHeight && r.top >= 0",
            json!([format!("{form} button[type=submit]")])
        ),
        true,
        "the Upload button is above the fold at {width}x{height}"
    );
    let two = format!(
        "{}\n{}",
        fixture("notes-utf8.txt").display(),
        fixture("pixel.png").display()
    );
    let hidden = |css: &str| {
        b.execute(
            "return document.querySelector(arguments[0]).hidden",
            json!([css]),
        )
    };
    let disabled = |css: &str| {
        b.execute(
            "return document.querySelector(arguments[0]).disabled",
            json!([css]),
        )
    };
    assert_eq!(
        hidden("[data-several]"),
        true,
        "no mode choice for one file or none"
    );

    // Two files: the choice shows; a bundle cannot burn or count, and
    // says so.
    b.send_keys(&b.find(&format!("{form} input[type=file]")), &two);
    assert_eq!(picked_count(&b), 2);
    assert_eq!(hidden("[data-several]"), false);
    b.click(&b.find("input[name=mode][value=bundle]"));
    assert_eq!(disabled("input[name=once]"), true);
    assert_eq!(disabled("input[name=max_downloads]"), true);
    assert_eq!(disabled("input[name=protect][value='1']"), false);
    let note = b.text(&b.find("[data-mode-note]"));
    assert!(
        note.contains("bundle") && note.contains("burn after reading"),
        "{note}"
    );
    // A folder: its fields show, and owner-only changes are off too.
    b.click(&b.find("input[name=mode][value=dir]"));
    assert_eq!(hidden("[data-folder]"), false);
    assert_eq!(disabled("input[name=protect][value='1']"), true);
    assert_eq!(
        b.execute(
            "const i = document.querySelector('input[name=dirname]'); i.value = 'Not A Name!'; const bad = i.checkValidity(); i.value = 'a-good-name'; return [bad, i.checkValidity()]",
            json!([])
        ),
        json!([false, true]),
        "the folder name's pattern compiles and checks"
    );
    b.click(&b.find("input[name=mode][value=bundle]"));
    assert_eq!(hidden("[data-folder]"), true);

    // A wrong token: the refusal says so in words, and the form keeps the
    // files and the choice.
    b.send_keys(&b.find(&format!("{form} input[name=token]")), "wrong-token");
    b.click(&b.find(&format!("{form} button[type=submit]")));
    let refusal = b.text(&b.find(".results .error"));
    assert!(refusal.contains("upload token is wrong"), "{refusal}");
    assert_eq!(picked_count(&b), 2, "the picked files are still there");
    assert_eq!(
        b.execute(
            "return document.querySelector('input[name=mode][value=bundle]').checked",
            json!([])
        ),
        true
    );
    shot(&b, "home-refused");

    // The right token, and two clicks in a row: one bundle.
    b.execute(
        "const t = document.querySelector(arguments[0]); t.value = 'right-token'; document.querySelector('.results').textContent = ''; const go = document.querySelector(arguments[1]); go.click(); go.click(); return null",
        json!([format!("{form} input[name=token]"), format!("{form} button[type=submit]")]),
    );
    let url = b.attr(&b.find("a[data-result-url]"), "href").unwrap();
    let applied = b.text(&b.find("[data-applied]"));
    assert_eq!(applied, "Applied: only you may change or delete it.");
    assert_eq!(
        b.execute(
            "return document.querySelectorAll('.results > li').length",
            json!([])
        ),
        1,
        "a second click while sending sends nothing"
    );
    b.wait_for("a whole success to clear the form", || {
        (picked_count(&b) == 0).then_some(())
    });
    let path = url.strip_prefix(&s.base).unwrap().to_string();
    let bundle = json(&mut s.get(&format!("{path}?json=1")));
    assert_eq!(bundle["protected"], true, "{bundle}");
    assert_eq!(bundle["files"].as_array().map(Vec::len), Some(2));
    crate::common::assert_error(&mut s.delete(&path, &[]), 401, "write_denied");
    let bundle_url = url;

    // One file, nothing ticked: protected, so a link holder can neither
    // replace nor delete it; burn after reading ticked is applied.
    b.send_keys(
        &b.find(&format!("{form} input[type=file]")),
        fixture("notes-utf8.txt").to_str().unwrap(),
    );
    b.send_keys(&b.find(&format!("{form} input[name=token]")), "right-token");
    b.click(&b.find("input[name=once]"));
    b.execute(
        "document.querySelector('.results').textContent = ''; return null",
        json!([]),
    );
    b.click(&b.find(&format!("{form} button[type=submit]")));
    let url = b.attr(&b.find("a[data-result-url]"), "href").unwrap();
    assert_eq!(
        b.text(&b.find("[data-applied]")),
        "Applied: burn after reading; only you may change or delete it."
    );
    let path = url.strip_prefix(&s.base).unwrap().to_string();
    crate::common::assert_error(&mut s.delete(&path, &[]), 401, "write_denied");

    // Item 8: whoever the links reach sees what they are first.
    a_recipient_sees_the_content_first(&b, &bundle_url, "notes-utf8.txt and pixel.png");
    a_recipient_sees_the_content_first(&b, &format!("{url}?info=1"), "notes-utf8.txt");
    assert_eq!(
        s.get(&format!("{path}?info=1")).status(),
        200,
        "a page spends nothing"
    );
}

/// Issue 38, item 8: a recipient opens a shared link and sees its title
/// and its download button in sight; the sender's tools (the link to copy,
/// the QR code) wait, folded, under "Share".
fn a_recipient_sees_the_content_first(b: &Browser, url: &str, title: &str) {
    b.goto(url);
    ready(b);
    assert_eq!(b.text(&b.find("main h1")), title);
    assert_eq!(
        b.execute(
            "const r = document.querySelector('main a.button').getBoundingClientRect(); const share = document.querySelector('details.share'); return [r.top >= 0 && r.bottom <= window.innerHeight, share.open, share.querySelector('svg').checkVisibility()]",
            json!([])
        ),
        json!([true, false, false]),
        "{url}: the download in sight, the share box folded"
    );
}

// Issue 38, item 5: the owner of a protected folder adds, edits and
// deletes its files from its page with the owner token this browser
// kept; a stranger cannot; whoever holds the write token can, typing it.
// Each change reloads the page: the test waits for the new page before
// it touches anything on it.

#[test]
fn the_owner_manages_their_folder_from_its_page_on_a_desktop() {
    the_owner_manages_their_folder_from_its_page(1280, 900);
}

#[test]
fn the_owner_manages_their_folder_from_its_page_on_a_phone() {
    the_owner_manages_their_folder_from_its_page(390, 844);
}

fn the_owner_manages_their_folder_from_its_page(width: u32, height: u32) {
    let s = Server::start();
    let b = Browser::start();
    b.set_window(width, height);
    b.goto(&s.url("/"));
    ready(&b);
    let two = format!(
        "{}\n{}",
        fixture("notes-utf8.txt").display(),
        fixture("pixel.png").display()
    );
    b.send_keys(&b.find("form[data-upload=home] input[type=file]"), &two);
    b.click(&b.find("input[name=mode][value=dir]"));
    b.send_keys(&b.find("input[name=dirname]"), "owned-folder");
    b.click(&b.find("form[data-upload=home] button[type=submit]"));
    b.find("a[data-result-url]");
    let write = b.execute(
        "return [...document.querySelectorAll('.results .secret')].find(p => p.textContent.startsWith('Write token')).querySelector('code').textContent",
        json!([]),
    );
    let write = write
        .as_str()
        .expect("the write token, shown once")
        .to_string();
    let folder = json(&mut s.get("/d/owned-folder"));
    assert_eq!(folder["write_protected"], true, "{folder}");

    // Its page knows this browser made it: no token to type.
    b.goto(&s.url("/d/owned-folder"));
    ready(&b);
    let shown = |css: &str| {
        b.execute(
            "return !document.querySelector(arguments[0]).hidden",
            json!([css]),
        )
    };
    assert_eq!(shown("[data-owner-note]"), true);
    assert_eq!(shown("[data-write-field]"), false);
    let count = |s: &Server| {
        json(&mut s.get("/d/owned-folder"))["files"]
            .as_array()
            .map(Vec::len)
    };
    b.send_keys(
        &b.find("form[data-upload=dir] input[type=file]"),
        fixture("page.html").to_str().unwrap(),
    );
    b.click(&b.find("form[data-upload=dir] button[type=submit]"));
    b.find("table a[href$='/d/owned-folder/page.html']");
    assert_eq!(count(&s), Some(3), "the owner added a file");
    ready(&b);
    edit_in_the_page(&b, "notes-utf8.txt", "edited by the owner\n");
    let text = |s: &Server| {
        s.get("/d/owned-folder/notes-utf8.txt")
            .body_mut()
            .read_to_string()
            .unwrap()
    };
    b.wait_for("the owner's edit", || {
        (text(&s) == "edited by the owner\n").then_some(())
    });
    let del = "tr[data-file-name='pixel.png'] button[data-delete-file]";
    b.click(&b.find(del));
    assert_eq!(
        b.text(&b.find(del)),
        "Really delete?",
        "the first click asks"
    );
    mark(&b);
    b.click(&b.find(del));
    b.wait_for("the owner's delete", || {
        (count(&s) == Some(2)).then_some(())
    });
    b.wait_for("the page to reload", || (!still_marked(&b)).then_some(()));
    ready(&b);
    shot(&b, &format!("folder-owner-{width}"));

    // A stranger with the link: refused.
    crate::common::assert_error(
        &mut s.delete("/d/owned-folder/notes-utf8.txt", &[]),
        401,
        "write_denied",
    );

    // Another browser (this one, forgetting its uploads) holds only the
    // write token: the field shows, and the typed token edits.
    b.execute("localStorage.clear(); return null", json!([]));
    b.goto(&s.url("/d/owned-folder"));
    ready(&b);
    assert_eq!(shown("[data-write-field]"), true);
    assert_eq!(shown("[data-owner-note]"), false);
    b.send_keys(&b.find("form[data-upload=dir] input[name=write]"), &write);
    edit_in_the_page(&b, "notes-utf8.txt", "edited with the write token\n");
    b.wait_for("the write token holder's edit", || {
        (text(&s) == "edited with the write token\n").then_some(())
    });
}

/// Opens the editor of the folder file `name` on its page, waits for its
/// text, replaces it with `text`, saves, and waits for the page to reload
/// (which it does once the server has saved).
fn edit_in_the_page(b: &Browser, name: &str, text: &str) {
    b.click(&b.find(&format!("tr[data-file-name='{name}'] button[data-edit]")));
    b.wait_for("the file's text in the editor", || {
        (b.execute(
            "return !document.querySelector('tr[data-editor] button[data-save]').disabled",
            json!([]),
        ) == true)
            .then_some(())
    });
    mark(b);
    b.execute(
        "document.querySelector('tr[data-editor] textarea').value = arguments[0]; document.querySelector('tr[data-editor] button[data-save]').click(); return null",
        json!([text]),
    );
    b.wait_for("the page to reload after saving", || {
        (!still_marked(b)).then_some(())
    });
    ready(b);
}

// Issue 38, item 6: Your uploads says what became of each upload (a
// burnt once file reads "Read, gone" after a reload, not "Expires in"),
// and keeps the galleries made in this browser with their admin link.

#[test]
fn your_uploads_tell_what_became_of_each_and_keep_galleries_on_a_desktop() {
    your_uploads_tell_what_became_of_each_and_keep_galleries(1280, 900);
}

#[test]
fn your_uploads_tell_what_became_of_each_and_keep_galleries_on_a_phone() {
    your_uploads_tell_what_became_of_each_and_keep_galleries(390, 844);
}

fn your_uploads_tell_what_became_of_each_and_keep_galleries(width: u32, height: u32) {
    let s = Server::start();
    let b = Browser::start();
    b.set_window(width, height);
    b.goto(&s.url("/"));
    ready(&b);
    b.send_keys(
        &b.find("form[data-upload=home] input[type=file]"),
        fixture("notes-utf8.txt").to_str().unwrap(),
    );
    b.click(&b.find("input[name=once]"));
    b.click(&b.find("form[data-upload=home] button[type=submit]"));
    let url = b.attr(&b.find("a[data-result-url]"), "href").unwrap();
    let entry = format!("#your-uploads li[data-upload-url='{url}']");
    let about = b.text(&b.find(&entry));
    assert!(about.contains("1 download(s) left"), "{about}");

    // An agent spends its one download; the page, reloaded, says so.
    let path = url.strip_prefix(&s.base).unwrap().to_string();
    let mut got = s.get(&path);
    assert_eq!(got.status(), 200);
    got.body_mut().read_to_string().unwrap();
    b.goto(&s.url("/"));
    ready(&b);
    let state = format!("{entry} .expiry[data-state=read]");
    let said = b.wait_for("the burnt upload's new state", || {
        b.execute(
            "const e = document.querySelector(arguments[0]); return e && e.textContent",
            json!([state]),
        )
        .as_str()
        .map(str::to_string)
    });
    assert!(said.starts_with("Read, gone"), "{said}");

    // A gallery made from the Galleries page lands on its admin page,
    // and Your uploads keeps it with that page's link.
    b.goto(&s.url("/pics"));
    ready(&b);
    b.send_keys(
        &b.find("form[method=post] input[name=name]"),
        "kept-gallery",
    );
    b.click(&b.find("form[method=post] button[type=submit]"));
    b.find("h1[data-gallery-admin]");
    ready(&b);
    let admin = b.execute("return window.location.pathname", json!([]));
    b.goto(&s.url("/"));
    ready(&b);
    // The list is drawn again when the refresh brings the gallery's
    // expiry: the link is read once that has happened, in one call.
    let link = b.wait_for("the gallery's entry, refreshed", || {
        b.execute(
            "const t = document.querySelector('#your-uploads li:has(a[data-admin]) .expiry time'); const a = document.querySelector('#your-uploads a[data-admin]'); return t && a && a.getAttribute('href')",
            json!([]),
        )
        .as_str()
        .map(str::to_string)
    });
    assert_eq!(Some(link.as_str()), admin.as_str());
    shot(&b, &format!("your-uploads-kept-{width}"));
}

/// A site with one of everything a page shows: a text file, a once file,
/// a bundle, a listed dir, a listed gallery with an image and a comment.
/// Answers every page's name and path, the gallery's admin page among
/// them.
/// The admin token of the server the accessibility checks run on.
const AXE_ADMIN: &str = "axe-admin-token";

fn one_of_everything(s: &Server) -> Vec<(String, String)> {
    let file = s.upload("notes.txt", b"some notes\n");
    let once = json(&mut s.post("/?name=secret.txt&once=1", b"read me once"));
    // Ciphertext needs only the format's first line to be taken.
    let sealed = json(&mut s.post(
        "/?encrypted=age&name=sealed.age",
        b"age-encryption.org/v1\n-> X25519 x\n--- y\nz",
    ));
    let drop = json(&mut s.post_empty("/?dir=1&drop=1", &[]));
    let locked = json(&mut s.post_with(
        "/?name=locked.txt",
        &[("X-Store-Password", "correct horse")],
        b"behind a password",
    ));
    let (ct, body) =
        crate::common::multipart(&[("file", Some("a.txt"), b"a"), ("file", Some("b.txt"), b"b")]);
    let bundle = json(&mut s.post_with("/", &[("Content-Type", &ct)], &body));
    let (ct, body) = crate::common::multipart(&[("file", Some("plan.md"), b"# Plan\n")]);
    let made = s.post_with(
        "/?dir=1&name=axe-dir&listed=1&tag=team",
        &[("Content-Type", &ct)],
        &body,
    );
    assert_eq!(made.status(), 201);
    let g = json(&mut s.post_empty("/pics?create=1&name=axe-gallery&listed=1", &[]));
    let png = std::fs::read(fixture("pixel.png")).unwrap();
    assert_eq!(
        s.post("/pics/g/axe-gallery?name=pixel.png", &png).status(),
        201
    );
    let report = serde_json::json!({ "reason": "It looks like spam" }).to_string();
    let reported = s.post_with(
        "/d/axe-dir?report=1",
        &[("Content-Type", "application/json")],
        report.as_bytes(),
    );
    assert_eq!(reported.status(), 202);
    let comment = serde_json::json!({ "name": "Ana", "text": "Lovely" }).to_string();
    let c = s.post_with(
        "/pics/g/axe-gallery?comment=1",
        &[("Content-Type", "application/json")],
        comment.as_bytes(),
    );
    assert_eq!(c.status(), 201);
    let local = |v: &Value, key: &str| {
        let url = v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}"));
        url.strip_prefix(&s.base).unwrap().to_string()
    };
    [
        ("home", "/".to_string()),
        ("file", format!("{}?info=1", local(&file, "url"))),
        ("once", local(&once, "url")),
        ("encrypted", local(&sealed, "url")),
        ("password", local(&locked, "url")),
        ("drop", local(&drop, "drop_url")),
        ("bundle", local(&bundle, "url")),
        ("browse", "/browse".into()),
        ("dirs", "/d".into()),
        ("dir", "/d/axe-dir".into()),
        ("dir-history", "/d/axe-dir/history".into()),
        ("galleries", "/pics".into()),
        ("gallery", "/pics/g/axe-gallery".into()),
        ("embed", "/pics/g/axe-gallery?embed=1".into()),
        ("gallery-admin", local(&g, "admin_url")),
        ("help", "/help".into()),
        ("help-topic", "/help/browser".into()),
        ("for-agents", "/write_for_agents".into()),
        ("releases", "/releases".into()),
        ("admin", format!("/admin?token={AXE_ADMIN}")),
        (
            "admin-reports",
            format!("/admin?reports=1&token={AXE_ADMIN}"),
        ),
    ]
    .map(|(name, path)| (name.to_string(), path))
    .to_vec()
}

/// Runs axe-core over every page at one window size, in light and in
/// dark, and over the gallery's lightbox open; fails listing every
/// violation found, with a screenshot of each page that has one.
fn axe_every_page(width: u32, height: u32, label: &str) {
    // With moderation on: the admin's pages, and the Report form on every
    // shared page.
    let s = Server::with_env(&[
        ("STORE_RETAIN_TOKEN", crate::common::RETAIN_TOKEN),
        ("STORE_ADMIN_TOKEN", AXE_ADMIN),
    ]);
    let pages = one_of_everything(&s);
    let b = Browser::start();
    b.set_window(width, height);
    let mut found = Vec::new();
    let mut check = |name: &str, page: &str| {
        for (dark, theme) in [(false, "light"), (true, "dark")] {
            b.color_scheme(dark);
            let shot_name = format!("axe-{label}-{theme}-{name}");
            shot(&b, &shot_name);
            // The dark scheme changes colours only: the markup, names and
            // roles every other rule reads are the light run's.
            let violations = if dark {
                b.axe_colour_violations()
            } else {
                b.axe_violations()
            };
            if !violations.is_empty() {
                // A page that fails is one to look at, asked for or not.
                save_shot(&b, &shot_name);
                found.push(format!("{page} ({label}, {theme}): see {shot_name}.png"));
            }
            for v in violations {
                found.push(format!("{page} ({label}, {theme}): {v}"));
            }
        }
    };
    for (page, path) in &pages {
        b.goto(&s.url(path));
        if path.contains("embed=1") {
            // The embed view runs no script: its load is enough.
            b.wait_for("the page to load", || {
                (b.execute("return document.readyState", json!([])) == "complete").then_some(())
            });
        } else {
            ready(&b);
        }
        check(page, path);
    }
    b.goto(&s.url("/pics/g/axe-gallery"));
    ready(&b);
    b.click(&b.find("a[data-lightbox]"));
    b.find("dialog.lightbox[open]");
    check("lightbox", "the lightbox");
    assert!(
        found.is_empty(),
        "axe-core violations:\n{}",
        found.join("\n")
    );
}

// Issue 38: axe-core finds nothing on any page, in light and dark, at a
// desktop's and at a phone's width: two tests, so that they share the
// cores with the rest of the suite.

#[test]
fn every_page_passes_axe_on_a_desktop() {
    axe_every_page(1280, 900, "desktop");
}

#[test]
fn every_page_passes_axe_on_a_phone() {
    axe_every_page(390, 844, "phone");
}

/// The axe tests can fail: on a page with faint text and an image with
/// no text alternative, the whole run finds both, and the run of the
/// colour rules alone (the dark scheme's) finds the faint text and
/// nothing else.
#[test]
fn axe_finds_planted_faults_and_the_colour_run_only_colours() {
    let b = Browser::start();
    b.goto(
        "data:text/html,<!doctype html><html lang=en><title>Planted</title><main><h1>Planted</h1>\
         <p style='color:%23777;background:%23888'>faint words</p>\
         <img src='data:image/gif;base64,R0lGODlhAQABAAAAACw='></main></html>",
    );
    let rules = |found: Vec<Value>| -> Vec<String> {
        let mut ids: Vec<String> = found
            .iter()
            .map(|v| v["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(rules(b.axe_violations()), ["color-contrast", "image-alt"]);
    assert_eq!(rules(b.axe_colour_violations()), ["color-contrast"]);
}

/// Issue 33: a person uploads a large file from the home page, reloads
/// halfway, picks the same file again and starts over; reloads halfway
/// again, picks it again, goes on, and finishes it. The options ticked
/// for the upload (burn after reading) hold after the reload. The page
/// sends it through tus-js-client (vendored), which no one here wrote. A
/// proxy holds a PATCH after some of its 8 MiB, as a network that stops
/// would; a reload drops it, the server keeps what came, and the PATCH
/// that goes on carries only the rest.
#[test]
fn a_large_upload_resumes_after_a_reload() {
    use crate::common::proxy::StallProxy;
    const MIB: u64 = 1 << 20;
    let proxy = StallProxy::start();
    // The links name another origin than the page's (as behind a proxy
    // that the base URL names): the page sends to its own.
    let named = proxy.base.replace("127.0.0.1", "localhost");
    let s = Server::with_env(&[
        ("STORE_BASE_URL", &named),
        ("STORE_MAX_FILE_BYTES", "16777216"),
    ]);
    proxy.to(&s.base);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.bin");
    let bytes = crate::common::pattern(8 * MIB as usize);
    std::fs::write(&file, &bytes).unwrap();
    let b = Browser::start();
    let home = format!("{}/", proxy.base);
    b.goto(&home);
    ready(&b);
    let form = "form[data-upload=home]";
    let pick_and_send = || {
        b.send_keys(
            &b.find(&format!("{form} input[type=file]")),
            file.to_str().unwrap(),
        );
        b.click(&b.find(&format!("{form} button[type=submit]")));
    };
    proxy.stall_next_patch(3 * MIB);
    pick_and_send();
    b.wait_for("the PATCH to be held", || proxy.stalled().then_some(()));
    b.wait_for("progress to show", || {
        let shown = b.execute(
            "const p = document.querySelector('ul.results progress'); return p.value / p.max",
            json!([]),
        );
        (shown.as_f64().unwrap_or(0.0) > 0.0).then_some(())
    });
    shot(&b, "tus-halfway");
    // Reloaded: the server keeps what came, and the page offers to go on.
    // Starting over ends that upload and sends the file as a new one,
    // which is held in turn, after 2 MiB.
    let head = |path: &str| {
        let res = s.head_with(path, &[("Tus-Resumable", "1.0.0")]);
        (res.status(), crate::common::header(&res, "upload-offset"))
    };
    b.goto(&home);
    ready(&b);
    let (first, held) = proxy.patches()[0].clone();
    assert_eq!(held, 3 * MIB);
    b.wait_for("the server to keep what came", || {
        (head(&first).1 == (3 * MIB).to_string()).then_some(())
    });
    proxy.stall_next_patch(2 * MIB);
    b.click(&b.find("input[name=once]"));
    pick_and_send();
    let offer = b.text(&b.find("[data-resume]"));
    assert!(offer.contains("stopped at 37% (3 MiB of 8 MiB)"), "{offer}");
    shot(&b, "tus-resume-offer");
    b.click(&b.find("[data-resume-over]"));
    b.wait_for("the new upload's PATCH to be held", || {
        proxy.stalled().then_some(())
    });
    b.wait_for("the first upload to be ended", || {
        (head(&first).0 == 404).then_some(())
    });
    // Reloaded again: this time the page goes on from where it stopped.
    b.goto(&home);
    ready(&b);
    let (upload, held) = proxy.patches()[1].clone();
    assert_ne!(upload, first, "a new upload");
    assert_eq!(held, 2 * MIB);
    b.wait_for("the server to keep what came", || {
        (head(&upload).1 == (2 * MIB).to_string()).then_some(())
    });
    pick_and_send();
    let offer = b.text(&b.find("[data-resume]"));
    assert!(offer.contains("stopped at 25% (2 MiB of 8 MiB)"), "{offer}");
    b.click(&b.find("[data-resume-go]"));
    let url = b.text(&b.find("a[data-result-url]"));
    let owner = b.text(&b.find("ul.results .secret"));
    assert!(
        owner.contains("Owner token"),
        "kept across the reload: {owner}"
    );
    let applied = b.text(&b.find("ul.results [data-applied]"));
    assert!(applied.contains("burn after reading"), "{applied}");
    shot(&b, "tus-done");
    assert_eq!(
        proxy.patches(),
        vec![
            (first, 3 * MIB),
            (upload.clone(), 2 * MIB),
            (upload, 6 * MIB)
        ],
        "resumed, not sent again"
    );
    let id = url.rsplit('/').next().unwrap();
    let record = json(&mut s.get(&format!("/{id}?info=1")));
    assert_eq!(record["name"], "big.bin", "{record}");
    assert_eq!(record["once"], true, "{record}");
    let got = crate::common::bytes(&mut s.get(&format!("/{id}")));
    assert!(got == bytes, "{} bytes back, not the 8 MiB sent", got.len());
}

/// Issue 36: the admin finds an object on the admin page, deletes it
/// only once the confirmation is ticked, and blocks bytes by their
/// SHA-256, which removes their copy and refuses them from then on.
#[test]
fn the_admin_searches_deletes_after_confirming_and_blocks() {
    const ADMIN: &str = "browser-admin-token";
    let s = Server::with_env(&[("STORE_ADMIN_TOKEN", ADMIN)]);
    let evil = s.upload("evil-notes.txt", b"click this link");
    let kept = s.upload("kept-notes.txt", b"keep me");
    let spam: &[u8] = b"the same spam again and again";
    let copy = s.upload("copy.txt", spam);
    let path = |v: &Value| {
        v["url"]
            .as_str()
            .unwrap()
            .strip_prefix(&s.base)
            .unwrap()
            .to_string()
    };
    let b = Browser::start();
    b.set_window(1280, 900);
    b.goto(&s.url(&format!("/admin?token={ADMIN}")));
    ready(&b);
    b.send_keys(&b.find("input[name=q]"), "evil");
    b.click(&b.find("form.admin-search button"));
    b.wait_for("the search's answer", || {
        let rows = b.execute(
            "return document.querySelectorAll('tr[data-key]').length",
            json!([]),
        );
        (rows == json!(1)).then_some(())
    });
    assert!(b.text(&b.find("tr[data-key]")).contains("evil-notes.txt"));

    // Unticked, the browser does not send the form.
    b.click(&b.find("form.admin-delete button"));
    let invalid = b.execute(
        "return document.querySelector('form.admin-delete input[name=confirm]').matches(':invalid')",
        json!([]),
    );
    assert_eq!(invalid, json!(true));
    assert_eq!(s.get(&path(&evil)).status(), 200, "nothing deleted yet");
    b.click(&b.find("form.admin-delete input[name=confirm]"));
    b.click(&b.find("form.admin-delete button"));
    b.wait_for("the delete", || {
        (s.get(&path(&evil)).status() == 404).then_some(())
    });
    ready(&b);
    assert!(b.current_url().contains("/admin"), "back on the admin page");
    assert_eq!(s.get(&path(&kept)).status(), 200);

    let digest: String = {
        use sha2::Digest;
        sha2::Sha256::digest(spam)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    b.send_keys(&b.find("input[name=sha256]"), &digest);
    b.send_keys(&b.find("input[name=reason]"), "spam");
    b.click(&b.find("form.admin-block button"));
    b.wait_for("the block", || b.try_find("ul.admin-blocked"));
    assert!(b.text(&b.find("ul.admin-blocked")).contains(&digest));
    assert_eq!(s.get(&path(&copy)).status(), 404, "its copy went");
    let mut again = s.post("/?name=again.txt", spam);
    assert_eq!(again.status(), 451);
    drop(json(&mut again));
    shot(&b, "admin-desktop");
}
