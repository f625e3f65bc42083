//! The HTML pages, parsed by an HTML5 parser: every page is well-formed,
//! carries its security headers, loads no inline script or style, and
//! shows hostile names, tags and comments as text.

use crate::common::qr;

use crate::common::{header, json, multipart, repo, text, Server};
use scraper::{Html, Selector};

const BROWSER: (&str, &str) = ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8");
const HOSTILE: &str = "<img src=x onerror=alert(1)>";

fn sel(css: &str) -> Selector {
    Selector::parse(css).expect("valid selector")
}

/// Fetches a page as a browser and checks what every app page must be.
fn page(s: &Server, path: &str) -> Html {
    let mut res = s.get_with(path, &[BROWSER]);
    assert_eq!(res.status(), 200, "{path}");
    assert_eq!(
        header(&res, "content-type"),
        "text/html; charset=utf-8",
        "{path}"
    );
    assert_eq!(header(&res, "referrer-policy"), "no-referrer", "{path}");
    let csp = header(&res, "content-security-policy");
    assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
    assert!(csp.contains("style-src 'self'"), "{path}: {csp}");
    assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
    assert!(!csp.contains("unsafe-eval"), "{path}: {csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
    let body = text(&mut res);
    let doc = Html::parse_document(&body);
    assert!(
        doc.errors.is_empty(),
        "{path} is not well-formed: {:?}",
        doc.errors
    );
    no_inline_code(&doc, path);
    doc
}

/// Nothing a strict CSP would block, and nothing from another origin.
fn no_inline_code(doc: &Html, path: &str) {
    for script in doc.select(&sel("script")) {
        let src = script.value().attr("src").unwrap_or_else(|| {
            panic!("{path}: inline script {}", script.html());
        });
        assert!(src.starts_with("/static/"), "{path}: script from {src}");
        assert!(script.inner_html().trim().is_empty(), "{path}");
    }
    assert_eq!(doc.select(&sel("style")).count(), 0, "{path}: <style>");
    assert_eq!(doc.select(&sel("[style]")).count(), 0, "{path}: style=");
    for link in doc.select(&sel("link[href], img[src], iframe[src]")) {
        let v = link.value();
        let url = v.attr("href").or(v.attr("src")).unwrap();
        assert!(
            url.starts_with('/') || url.starts_with("http://127.0.0.1"),
            "{path}: third-party resource {url}"
        );
    }
    let on_attrs = doc
        .select(&sel("*"))
        .flat_map(|e| {
            e.value()
                .attrs()
                .map(|(k, _)| k.to_string())
                .collect::<Vec<_>>()
        })
        .filter(|k| k.starts_with("on"))
        .count();
    assert_eq!(on_attrs, 0, "{path}: inline event handler");
}

fn texts(doc: &Html, css: &str) -> Vec<String> {
    doc.select(&sel(css))
        .map(|e| e.text().collect::<String>())
        .collect()
}

#[test]
fn every_page_is_well_formed_strict_and_escapes_hostile_strings() {
    let s = Server::start();
    // A single file with a hostile name and tag.
    let file = json(&mut s.post(
        &format!("/?name={}&tag=xss", crate::common::enc(HOSTILE)),
        b"hello",
    ));
    let id = file["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{file}"))
        .to_string();
    // A bundle and a listed, tagged dir with a hostile file name.
    let (ct, body) = multipart(&[("file", Some("a.txt"), b"a"), ("file", Some(HOSTILE), b"b")]);
    let bundle = json(&mut s.post_with("/", &[("Content-Type", &ct)], &body));
    let bundle_id = bundle["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{bundle}"))
        .to_string();
    let (ct, body) = multipart(&[("file", Some(HOSTILE), b"in a dir")]);
    let dir = s.post_with(
        "/?dir=1&name=page-tests&listed=1&tag=xss",
        &[("Content-Type", &ct)],
        &body,
    );
    assert_eq!(dir.status(), 201);
    // A listed gallery with an image and a hostile comment.
    let g = json(&mut s.post_empty("/pics?create=1&name=page-gallery&listed=1", &[]));
    let admin = g["admin_url"]
        .as_str()
        .unwrap()
        .strip_prefix(&s.base)
        .unwrap()
        .to_string();
    let png = std::fs::read(repo("fixtures/pixel.png")).unwrap();
    let up = s.post(
        &format!(
            "/pics/g/page-gallery?name={}",
            crate::common::enc(&format!("{HOSTILE}.png"))
        ),
        &png,
    );
    assert_eq!(up.status(), 201);
    let c = s.post_with(
        "/pics/g/page-gallery?comment=1",
        &[("Content-Type", "application/json")],
        serde_json::json!({ "name": "<script>alert(1)</script>", "text": HOSTILE })
            .to_string()
            .as_bytes(),
    );
    assert_eq!(c.status(), 201);

    let pages = [
        "/".to_string(),
        "/browse?tag=xss".into(),
        "/d".into(),
        "/d/page-tests".into(),
        "/d/page-tests/history".into(),
        format!("/{bundle_id}"),
        format!("/{id}?info=1"),
        "/pics".into(),
        "/pics/g/page-gallery".into(),
        admin.clone(),
        "/help".into(),
        "/help/galleries".into(),
        "/write_for_agents".into(),
        "/copy_for_agents".into(),
        "/releases".into(),
    ];
    for path in &pages {
        let doc = page(&s, path);
        // Every app page shares the navigation and the one stylesheet.
        assert_eq!(texts(&doc, "header.top nav a").len(), 5, "{path}");
        assert_eq!(
            doc.select(&sel("link[rel=stylesheet]")).count(),
            1,
            "{path}"
        );
        // The hostile strings never became elements.
        assert_eq!(doc.select(&sel("img[onerror]")).count(), 0, "{path}");
        let inline_scripts = doc.select(&sel("script:not([src])")).count();
        assert_eq!(inline_scripts, 0, "{path}");
    }

    // ...and show as text where they appear.
    let browse = page(&s, "/browse?tag=xss");
    assert!(texts(&browse, "td a").contains(&HOSTILE.to_string()));
    let info = page(&s, &format!("/{id}?info=1"));
    assert_eq!(texts(&info, "h1"), vec![HOSTILE.to_string()]);
    let dir = page(&s, "/d/page-tests");
    assert!(texts(&dir, "td a").contains(&HOSTILE.to_string()));
    // Issue 38: a person reads "folder" where the API says "dir".
    assert_eq!(texts(&dir, "h1"), vec!["Folder page-tests".to_string()]);
    let dirs = page(&s, "/d");
    assert_eq!(texts(&dirs, "h1"), vec!["Listed folders".to_string()]);
    assert!(texts(&dirs, "header.top nav a").contains(&"Folders".to_string()));
    let bundle = page(&s, &format!("/{bundle_id}"));
    assert!(texts(&bundle, "td a").contains(&HOSTILE.to_string()));
    let gallery = page(&s, "/pics/g/page-gallery");
    assert!(texts(&gallery, "article.comment p").contains(&HOSTILE.to_string()));
    assert!(texts(&gallery, "article.comment strong")
        .contains(&"<script>alert(1)</script>".to_string()));
    assert!(texts(&gallery, "figcaption .name").contains(&format!("{HOSTILE}.png")));
    let admin_page = page(&s, &admin);
    assert!(texts(&admin_page, "article.comment p").contains(&HOSTILE.to_string()));
}

#[test]
fn the_embed_view_may_be_framed_and_loads_no_script() {
    let s = Server::start();
    s.post_empty("/pics?create=1&name=embed-me", &[]);
    let mut res = s.get_with("/pics/g/embed-me?embed=1", &[BROWSER]);
    assert_eq!(res.status(), 200);
    let csp = header(&res, "content-security-policy");
    assert!(!csp.contains("frame-ancestors"), "{csp}");
    assert!(!csp.contains("script-src"), "{csp}");
    let doc = Html::parse_document(&text(&mut res));
    assert!(doc.errors.is_empty(), "{:?}", doc.errors);
    assert_eq!(doc.select(&sel("script")).count(), 0);
    assert_eq!(doc.select(&sel("form")).count(), 0, "no forms in an embed");
}

#[test]
fn static_files_are_served_cacheable_and_typed() {
    let s = Server::start();
    let doc = page(&s, "/");
    let css = doc.select(&sel("link[rel=stylesheet]")).next().unwrap();
    let js = doc.select(&sel("script[src]")).next().unwrap();
    for (url, ty) in [
        (css.value().attr("href").unwrap(), "text/css"),
        (js.value().attr("src").unwrap(), "text/javascript"),
    ] {
        let mut res = s.get(url);
        assert_eq!(res.status(), 200, "{url}");
        assert!(header(&res, "content-type").starts_with(ty), "{url}");
        assert!(header(&res, "cache-control").contains("immutable"));
        assert_eq!(header(&res, "x-content-type-options"), "nosniff");
        assert!(text(&mut res).len() > 500, "{url}");
    }
    let mut res = s.get("/static/nope.js");
    crate::common::assert_error(&mut res, 404, "not_found");
}

#[test]
fn a_file_page_never_burns_a_once_file() {
    let s = Server::start();
    let made = json(&mut s.post("/?name=secret.txt&once=1", b"only once"));
    let id = made["id"].as_str().unwrap();
    let doc = page(&s, &format!("/{id}?info=1"));
    assert_eq!(texts(&doc, "h1"), vec!["secret.txt".to_string()]);
    // No preview was embedded, so nothing fetched the bytes...
    assert_eq!(doc.select(&sel("iframe, .preview")).count(), 0);
    // ...and the one read is still there.
    let mut res = s.get(&format!("/{id}"));
    assert_eq!(text(&mut res), "only once");
    assert_eq!(s.get(&format!("/{id}")).status(), 404);
}

#[test]
fn a_browser_or_a_link_preview_gets_a_page_before_a_once_file_burns() {
    let s = Server::start();
    let made = json(&mut s.post("/?name=secret.txt&once=1", b"only once"));
    let id = made["id"].as_str().unwrap();
    // A browser, or a chat app's link preview (which asks for HTML too),
    // gets a page that names the file and links to the download, as many
    // times as it asks.
    for _ in 0..3 {
        let res = s.get_with(&format!("/{id}"), &[BROWSER]);
        assert_eq!(header(&res, "cache-control"), "no-store");
        let doc = page(&s, &format!("/{id}"));
        assert_eq!(texts(&doc, "h1"), vec!["secret.txt".to_string()]);
        let links: Vec<_> = doc
            .select(&sel("a[data-burn]"))
            .map(|a| a.value().attr("href").unwrap().to_string())
            .collect();
        assert_eq!(links, vec![format!("/{id}?download=1")]);
        assert_eq!(doc.select(&sel("img, iframe, video")).count(), 0);
    }
    // Following the link is the one download; then it is gone.
    let mut res = s.get_with(&format!("/{id}?download=1"), &[BROWSER]);
    assert_eq!(text(&mut res), "only once");
    assert_eq!(s.get_with(&format!("/{id}"), &[BROWSER]).status(), 404);
    // Chat apps' previewers often send `Accept: */*`; they are told by
    // their User-Agent and shown the page too, even for ?download=1.
    let made = json(&mut s.post("/?name=chat.txt&once=1", b"for the recipient"));
    let id = made["id"].as_str().unwrap();
    for (ua, path) in [
        (
            "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
            format!("/{id}"),
        ),
        (
            "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
            format!("/{id}?download=1"),
        ),
        (
            "facebookexternalhit/1.1 Facebot Twitterbot/1.0",
            format!("/{id}"),
        ),
    ] {
        let res = s.get_with(&path, &[("User-Agent", ua), ("Accept", "*/*")]);
        assert_eq!(res.status(), 200, "{ua}");
        assert_eq!(
            header(&res, "content-type"),
            "text/html; charset=utf-8",
            "{ua}"
        );
    }
    assert_eq!(text(&mut s.get(&format!("/{id}"))), "for the recipient");
    // An agent gets the bytes at once, as SPEC.md says.
    let made = json(&mut s.post("/?name=agent.txt&once=1", b"for curl"));
    let id = made["id"].as_str().unwrap();
    assert_eq!(text(&mut s.get(&format!("/{id}"))), "for curl");
    assert_eq!(s.get(&format!("/{id}")).status(), 404);
}

/// The OpenGraph property `name` of a page, if it has one.
fn og(doc: &Html, name: &str) -> Option<String> {
    doc.select(&sel(&format!("meta[property=\"og:{name}\"]")))
        .next()
        .and_then(|m| m.value().attr("content").map(str::to_string))
}

#[test]
fn shared_pages_carry_opengraph_without_spending_a_download() {
    let s = Server::start();
    let png = std::fs::read(repo("fixtures/pixel.png")).unwrap();
    let g = json(&mut s.post_empty("/pics?create=1&name=og-gallery", &[]));
    let gallery_url = g["url"].as_str().unwrap();
    let image = json(&mut s.post("/pics/g/og-gallery?name=p.png", &png));
    let doc = page(&s, "/pics/g/og-gallery");
    assert_eq!(og(&doc, "url").as_deref(), Some(gallery_url));
    assert_eq!(og(&doc, "title").as_deref(), Some("og-gallery"));
    let preview = og(&doc, "image").expect("a gallery previews its first image");
    assert_eq!(
        preview,
        format!("{}?thumb=640", image["url"].as_str().unwrap())
    );
    let path = preview.strip_prefix(&s.base).unwrap();
    let res = s.get(path);
    assert_eq!(res.status(), 200);
    assert!(header(&res, "content-type").starts_with("image/"));

    let file = json(&mut s.post("/?name=p.png", &png));
    let doc = page(&s, &format!("/{}?info=1", file["id"].as_str().unwrap()));
    assert_eq!(og(&doc, "title").as_deref(), Some("p.png"));
    assert!(og(&doc, "image").is_some(), "an image file previews itself");

    // A counted file's pages never point a preview at its bytes.
    let limited = json(&mut s.post("/?name=p.png&max_downloads=2", &png));
    let id = limited["id"].as_str().unwrap();
    for path in [format!("/{id}"), format!("/{id}?info=1")] {
        let doc = page(&s, &path);
        assert_eq!(og(&doc, "title").as_deref(), Some("p.png"), "{path}");
        assert_eq!(og(&doc, "image"), None, "{path}");
    }
    assert_eq!(
        json(&mut s.get(&format!("/{id}?info=1")))["downloads_left"],
        2
    );
}

#[test]
fn a_protected_dir_takes_its_write_token_from_a_plain_form() {
    let s = Server::start();
    let made = json(&mut s.post_empty("/?dir=1&name=form-token&write=1", &[]));
    let token = made["write_token"].as_str().unwrap().to_string();
    // Without the token the browser form is refused...
    let (ct, body) = multipart(&[("file", Some("a.txt"), b"a")]);
    let mut res = s.post_with("/d/form-token", &[BROWSER, ("Content-Type", &ct)], &body);
    crate::common::assert_error(&mut res, 401, "write_denied");
    // ...with it, as the form's `write` field, the files are added.
    let (ct, body) = multipart(&[
        ("write", None, token.as_bytes()),
        ("file", Some("a.txt"), b"a"),
    ]);
    let res = s.post_with("/d/form-token", &[BROWSER, ("Content-Type", &ct)], &body);
    assert_eq!(res.status(), 303, "a browser is sent back to the dir");
    let listing = json(&mut s.get("/d/form-token"));
    assert_eq!(listing["files"][0]["name"], "a.txt");
    // An agent still gets the early refusal, body unread.
    let (ct, body) = multipart(&[
        ("write", None, token.as_bytes()),
        ("file", Some("b.txt"), b"b"),
    ]);
    let mut res = s.post_with("/d/form-token", &[("Content-Type", &ct)], &body);
    crate::common::assert_error(&mut res, 401, "write_denied");
}

#[test]
fn several_files_from_a_plain_form_make_a_bundle_page() {
    let s = Server::start();
    let (ct, body) = multipart(&[
        ("ttl", None, b""),
        ("file", Some("a.txt"), b"a"),
        ("file", Some("b.txt"), b"b"),
    ]);
    let mut res = s.post_with("/", &[BROWSER, ("Content-Type", &ct)], &body);
    assert_eq!(res.status(), 201, "{}", text(&mut res));
    assert!(header(&res, "content-type").starts_with("text/html"));
    let doc = Html::parse_document(&text(&mut res));
    assert_eq!(
        texts(&doc, "td a"),
        vec!["a.txt".to_string(), "b.txt".to_string()]
    );
}

/// The SVG a page embeds, as a document of its own (for the decoder).
fn inline_svg(doc: &Html) -> String {
    let svg = doc
        .select(&sel("figure.qr svg"))
        .next()
        .expect("a QR code on the page")
        .html();
    assert!(!svg.contains("<script"), "{svg}");
    svg
}

#[test]
fn qr_codes_read_back_as_the_link_and_spend_no_download() {
    let s = Server::start();
    let once = json(&mut s.post("/?name=once.txt&once=1", b"for one reader"));
    let (id, url) = (once["id"].as_str().unwrap(), once["url"].as_str().unwrap());
    // As SVG and as terminal text, the code is the file's link...
    let mut res = s.get(&format!("/{id}?qr=1"));
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "content-type"), "image/svg+xml");
    assert_eq!(header(&res, "x-content-type-options"), "nosniff");
    assert_eq!(qr::decode_svg(&text(&mut res)), vec![url.to_string()]);
    let mut res = s.get(&format!("/{id}?qr=text"));
    assert_eq!(header(&res, "content-type"), "text/plain; charset=utf-8");
    assert_eq!(qr::decode_text(&text(&mut res)), vec![url.to_string()]);
    // ...and drawing it never counted a download, nor did the info page
    // that embeds it.
    let info = page(&s, &format!("/{id}?info=1"));
    assert_eq!(qr::decode_svg(&inline_svg(&info)), vec![url.to_string()]);
    assert_eq!(text(&mut s.get(&format!("/{id}"))), "for one reader");
    assert_eq!(s.get(&format!("/{id}?qr=1")).status(), 404, "spent: gone");

    // A bundle, a dir and a gallery: their pages and `?qr=1` carry their
    // own links.
    let (ct, body) = multipart(&[("file", Some("a.txt"), b"a"), ("file", Some("b.txt"), b"b")]);
    let bundle = json(&mut s.post_with("/", &[("Content-Type", &ct)], &body));
    let dir = json(&mut s.post_empty("/?dir=1&name=qr-dir", &[]));
    let gallery = json(&mut s.post_empty("/pics?create=1&name=qr-pics", &[]));
    for (made, path) in [
        (&bundle, format!("/{}", bundle["id"].as_str().unwrap())),
        (&dir, "/d/qr-dir".to_string()),
        (&gallery, "/pics/g/qr-pics".to_string()),
    ] {
        let link = made["url"].as_str().unwrap().to_string();
        let doc = page(&s, &path);
        assert_eq!(
            qr::decode_svg(&inline_svg(&doc)),
            vec![link.clone()],
            "{path}"
        );
        let mut res = s.get(&format!("{path}?qr=1"));
        assert_eq!(qr::decode_svg(&text(&mut res)), vec![link], "{path}");
    }
    // Unknown things have no code, and `qr` takes three words only.
    crate::common::assert_error(&mut s.get("/nosuchid?qr=1"), 404, "not_found");
    crate::common::assert_error(&mut s.get("/d/no-such-dir?qr=1"), 404, "not_found");
    crate::common::assert_error(&mut s.get("/pics/g/no-such-pics?qr=1"), 404, "not_found");
    let id = bundle["id"].as_str().unwrap();
    crate::common::assert_error(&mut s.get(&format!("/{id}?qr=png")), 400, "bad_request");
}

#[test]
fn text_files_show_their_start_on_their_info_page() {
    let s = Server::start();
    // CSV is text a browser downloads instead of showing: the page shows it.
    let csv = "name,count\n<b>bold</b>,3\n";
    let made = json(&mut s.post("/?name=table.csv", csv.as_bytes()));
    let id = made["id"].as_str().unwrap();
    let doc = page(&s, &format!("/{id}?info=1"));
    assert_eq!(texts(&doc, ".preview pre"), vec![csv.to_string()]);
    assert_eq!(doc.select(&sel(".preview b, .preview iframe")).count(), 0);
    assert!(
        texts(&doc, ".preview p").is_empty(),
        "the whole file is shown"
    );
    // A long one shows its first 64 KiB, cut at a character, and says so.
    let long = "é".repeat(40_000);
    let made = json(&mut s.post("/?name=long.txt", long.as_bytes()));
    let doc = page(&s, &format!("/{}?info=1", made["id"].as_str().unwrap()));
    let shown = texts(&doc, ".preview pre").remove(0);
    assert_eq!(shown.len(), 64 * 1024, "32,768 two-byte characters");
    assert!(long.starts_with(&shown));
    assert_eq!(texts(&doc, ".preview p").len(), 1);
    // A counted file's page reads none of its bytes.
    let made = json(&mut s.post("/?name=limited.csv&max_downloads=1", csv.as_bytes()));
    let id = made["id"].as_str().unwrap();
    let doc = page(&s, &format!("/{id}?info=1"));
    assert_eq!(doc.select(&sel(".preview")).count(), 0);
    assert_eq!(
        json(&mut s.get(&format!("/{id}?info=1")))["downloads_left"],
        1
    );
}

#[test]
fn the_home_form_sets_every_upload_option_without_the_script() {
    let s = Server::start();
    let home = page(&s, "/");
    for field in ["ttl", "once", "max_downloads", "write", "listed"] {
        let css = format!("form[data-upload=home] [name={field}]");
        assert_eq!(home.select(&sel(&css)).count(), 1, "{field}");
    }
    // Protected unless the person opts out, with or without the script
    // (CONTRACT.md): the checked choice of two is protect=1.
    let protect = "form[data-upload=home] input[name=protect]";
    assert_eq!(home.select(&sel(protect)).count(), 2);
    let checked = format!("{protect}[value='1'][checked]");
    assert_eq!(home.select(&sel(&checked)).count(), 1);
    // A plain form post (no script) with a download limit and protection.
    let (ct, body) = multipart(&[
        ("max_downloads", None, b"2"),
        ("protect", None, b"1"),
        ("once", None, b""),
        ("file", Some("form.txt"), b"from a form"),
    ]);
    let mut res = s.post_with("/", &[BROWSER, ("Content-Type", &ct)], &body);
    assert_eq!(res.status(), 201);
    let doc = Html::parse_document(&text(&mut res));
    let link = doc.select(&sel("a[data-result-url]")).next().unwrap();
    let path = link.value().attr("href").unwrap().to_string();
    let record = json(&mut s.get(&format!("{path}?info=1")));
    assert_eq!(record["downloads_left"], 2);
    assert_eq!(record["protected"], true);
    assert_eq!(doc.select(&sel("figure.qr svg")).count(), 1);
    // Browse links each file to its page, beside the bytes.
    let tagged = json(&mut s.post("/?name=tagged.txt&tag=shown", b"t"));
    let id = tagged["id"].as_str().unwrap();
    let doc = page(&s, "/browse?tag=shown");
    let hrefs: Vec<_> = doc
        .select(&sel("td a"))
        .filter_map(|a| a.value().attr("href"))
        .collect();
    assert!(
        hrefs.contains(&format!("/{id}?info=1").as_str()),
        "{hrefs:?}"
    );
    assert!(hrefs.contains(&format!("/{id}").as_str()), "{hrefs:?}");
    // On a phone the table's header row is hidden: each cell is labelled.
    let labels = texts(&doc, "td[data-label]").len();
    assert_eq!(labels, doc.select(&sel("tbody td")).count());
}
