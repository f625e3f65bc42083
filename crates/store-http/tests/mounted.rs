//! The service mounted inside a host's own hyper server under `/files`
//! (issue 18): every URL and page link it writes stays under the mount,
//! the host keeps its own routes, and the service works on any body type
//! with the client's address given per connection or per request.

mod common;

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use serde_json::Value;
use store_http::{PeerAddr, ServeOptions, StoreService};

const MOUNT: &str = "/files";

struct Host {
    /// `http://<addr>`: the host's root, not the store's.
    origin: String,
    agent: ureq::Agent,
    rt: tokio::runtime::Runtime,
    service: StoreService,
}

/// A host server on 127.0.0.1 that hands `/files...` to the store and
/// answers everything else itself.
fn host(rate_limit_per_min: u32) -> Host {
    let rt = common::runtime();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let origin = format!("http://{addr}");
    let limits = store_core::Limits {
        rate_limit_per_min,
        ..Default::default()
    };
    let app = Arc::new(common::app(&format!("{origin}{MOUNT}"), limits));
    let service = StoreService::new(app, &ServeOptions::default())
        .mounted_at(MOUNT)
        .unwrap();
    rt.spawn(accept(listener, service.clone()));
    let agent = common::agent();
    Host {
        origin,
        agent,
        rt,
        service,
    }
}

async fn accept(listener: tokio::net::TcpListener, files: StoreService) {
    loop {
        let (stream, peer) = listener.accept().await.unwrap();
        let files = files.for_peer(peer.ip());
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let files = files.clone();
                async move {
                    let path = req.uri().path().to_string();
                    let mounted = path == MOUNT || path.starts_with(&format!("{MOUNT}/"));
                    let res = if mounted {
                        files.handle(req).await
                    } else {
                        host_page(&path)
                    };
                    Ok::<_, Infallible>(res)
                }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

/// The host's own pages: `/` and `/hello`, and its own 404 for every
/// other path outside the mount, so that a link escaping the mount fails.
fn host_page(path: &str) -> Response<store_http::ResBody> {
    let text = Full::new(Bytes::from(format!("host: {path}")));
    let mut res = Response::new(text.map_err(|never| match never {}).boxed());
    if !matches!(path, "/" | "/hello") {
        *res.status_mut() = http::StatusCode::NOT_FOUND;
    }
    res
}

impl Host {
    fn base(&self) -> String {
        format!("{}{MOUNT}", self.origin)
    }

    /// GET of a path on the host (or an absolute URL), as a browser when
    /// `html`: the status, the Location header and the body.
    fn get(&self, target: &str, html: bool) -> (u16, String, String) {
        let url = self.absolute(target);
        let accept = if html {
            "text/html"
        } else {
            "application/json"
        };
        let mut res = self
            .agent
            .get(&url)
            .header("accept", accept)
            .call()
            .unwrap();
        answer(&mut res)
    }

    fn post(&self, target: &str, content_type: &str, body: &[u8]) -> (u16, String, String) {
        self.send(target, content_type, None, body)
    }

    /// A form posted by a browser without the page script: urlencoded,
    /// asking for HTML.
    fn post_form(&self, target: &str, body: &[u8]) -> (u16, String, String) {
        let form = "application/x-www-form-urlencoded";
        self.send(target, form, Some("text/html"), body)
    }

    fn send(
        &self,
        target: &str,
        content_type: &str,
        accept: Option<&str>,
        body: &[u8],
    ) -> (u16, String, String) {
        let mut req = self
            .agent
            .post(self.absolute(target))
            .header("content-type", content_type);
        if let Some(accept) = accept {
            req = req.header("accept", accept);
        }
        answer(&mut req.send(body).unwrap())
    }

    fn post_json(&self, target: &str, body: &[u8]) -> Value {
        let (status, _, text) = self.post(target, "text/plain", body);
        assert!(status < 300, "{target}: {status} {text}");
        serde_json::from_str(&text).unwrap()
    }

    fn absolute(&self, target: &str) -> String {
        if target.starts_with("http") {
            target.to_string()
        } else {
            format!("{}{target}", self.origin)
        }
    }

    /// Answers a request handed straight to the service, as a host would
    /// whose server gives no per-connection hook.
    fn call<B>(&self, req: Request<B>) -> (u16, String)
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.rt.block_on(async {
            let res = self.service.handle(req).await;
            let status = res.status().as_u16();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8_lossy(&body).into_owned())
        })
    }
}

fn answer(res: &mut http::Response<ureq::Body>) -> (u16, String, String) {
    let location = res
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = res.body_mut().read_to_string().unwrap_or_default();
    (res.status().as_u16(), location, body)
}

/// The values of every `href`, `src` and `action` attribute of a page.
fn links(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in [" href=\"", " src=\"", " action=\""] {
        let mut rest = page;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let end = rest.find('"').unwrap();
            out.push(rest[..end].replace("&amp;", "&"));
        }
    }
    out
}

/// One file, a bundle, a dir and a gallery, made under the mount; answers
/// their JSON records.
fn objects(h: &Host) -> Vec<Value> {
    let file = h.post_json(&format!("{MOUNT}/?name=a.txt"), b"alpha");
    let boundary = "XyZ";
    let multipart = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.txt\"\r\n\r\nbeta\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.txt\"\r\n\r\ngamma\r\n--{boundary}--\r\n"
    );
    let form = format!("multipart/form-data; boundary={boundary}");
    let (status, _, bundle) = h.post(&format!("{MOUNT}/"), &form, multipart.as_bytes());
    assert_eq!(status, 201, "{bundle}");
    let (status, _, dir) = h.post(
        &format!("{MOUNT}/?dir=1&listed=1"),
        &form,
        multipart.as_bytes(),
    );
    assert_eq!(status, 201, "{dir}");
    let gallery = h.post_json(&format!("{MOUNT}/pics?create=1&listed=1"), b"");
    let parse = |t: &str| serde_json::from_str::<Value>(t).unwrap();
    vec![file, parse(&bundle), parse(&dir), gallery]
}

#[test]
fn urls_in_answers_carry_the_mount_and_lead_to_the_objects() {
    let h = host(store_core::Limits::DEFAULT.rate_limit_per_min);
    let base = h.base();
    let (status, location, text) = h.post(&format!("{MOUNT}/?name=n.txt"), "text/plain", b"n");
    assert_eq!(status, 201, "{text}");
    let made: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(location, made["url"].as_str().unwrap());
    for record in objects(&h) {
        let url = record["url"].as_str().unwrap();
        assert!(url.starts_with(&format!("{base}/")), "{record}");
        let (status, _, body) = h.get(url, false);
        assert_eq!(status, 200, "{url}: {body}");
        for member in record["files"].as_array().into_iter().flatten() {
            let url = member["url"].as_str().unwrap();
            assert!(url.starts_with(&format!("{base}/")), "{member}");
            assert_eq!(h.get(url, false).0, 200, "{url}");
        }
    }
    let (_, _, api) = h.get(&format!("{MOUNT}/api"), false);
    let api: Value = serde_json::from_str(&api).unwrap();
    assert_eq!(api["base_url"], base);
}

#[test]
fn the_host_keeps_its_own_routes() {
    let h = host(store_core::Limits::DEFAULT.rate_limit_per_min);
    for path in ["/", "/hello"] {
        let (status, _, body) = h.get(path, false);
        assert_eq!((status, body), (200, format!("host: {path}")));
    }
    // The store's own paths, outside the mount, are the host's to answer.
    for path in ["/api", "/filesystem", "/static/app.js"] {
        let (status, _, body) = h.get(path, false);
        assert_eq!((status, body), (404, format!("host: {path}")));
    }
    // The mount itself, with or without its slash, is the store's home.
    for path in [MOUNT.to_string(), format!("{MOUNT}/")] {
        let (status, _, body) = h.get(&path, true);
        assert_eq!(status, 200);
        assert!(body.contains("Share a file"), "{path}: {body}");
    }
}

/// No rate limit: a crawl asks for many pages at once.
/// No rate limit: a crawl asks for every page at once.
const CRAWL_RATE_PER_MIN: u32 = 0;

#[test]
fn every_page_links_within_the_mount_and_every_link_answers() {
    let h = host(CRAWL_RATE_PER_MIN);
    let made = objects(&h);
    let admin = made[3]["admin_url"].as_str().unwrap().to_string();
    let mut pages: Vec<String> = ["/", "/browse", "/d", "/pics", "/help", "/help/limits"]
        .iter()
        .map(|p| format!("{MOUNT}{p}"))
        .collect();
    pages.push(format!("{}?info=1", made[0]["url"].as_str().unwrap()));
    pages.extend(
        made[1..]
            .iter()
            .map(|m| m["url"].as_str().unwrap().to_string()),
    );
    let dir = made[2]["url"].as_str().unwrap();
    pages.push(format!("{dir}/history"));
    pages.push(format!("{}?embed=1", made[3]["url"].as_str().unwrap()));
    pages.push(admin);
    // The page a counted download shows a browser before it spends one.
    let once = h.post_json(&format!("{MOUNT}/?name=once.txt&once=1"), b"once");
    let once = once["url"].as_str().unwrap().to_string();
    // Its links with a query (`?download=1` above all) would spend it.
    let spends = format!("{}?", once.strip_prefix(&h.origin).unwrap());
    pages.push(once);
    let mut checked = 0;
    for page in &pages {
        let (status, _, html) = h.get(page, true);
        assert_eq!(status, 200, "{page}");
        for link in links(&html) {
            if link.starts_with('#') || link.starts_with(&spends) {
                continue;
            }
            let inside = link.starts_with(&format!("{MOUNT}/")) || link.starts_with(&h.base());
            assert!(inside, "{page} links outside the mount: {link}");
            let (status, _, body) = h.get(&link, true);
            assert!(
                status < 400,
                "{page} links to {link}, which answers {status}: {body}"
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} links were found");
}

#[test]
fn forms_posted_without_the_script_answer_within_the_mount() {
    let h = host(CRAWL_RATE_PER_MIN);
    // A new gallery leads to its admin page, under the mount.
    let (status, admin, body) = h.post_form(&format!("{MOUNT}/pics?create=1"), b"name=holiday");
    assert_eq!(status, 303, "{body}");
    assert!(
        admin.contains(&format!("{MOUNT}/pics/g/holiday/")),
        "{admin}"
    );
    let (status, _, page) = h.get(&admin, true);
    assert_eq!(status, 200, "{page}");
    let found = links(&page);
    assert!(
        found
            .iter()
            .any(|l| l.starts_with(&format!("{MOUNT}/pics/g/"))),
        "{found:?}"
    );
    for link in found.iter().filter(|l| !l.starts_with('#')) {
        assert!(link.starts_with(&format!("{MOUNT}/")), "{link}");
    }
    // A comment redirects back to the gallery, under the mount.
    let record = h.post_json(&format!("{MOUNT}/pics?create=1"), b"");
    let gallery = record["url"].as_str().unwrap();
    let (status, location, body) =
        h.post_form(&format!("{gallery}?comment=1"), b"name=ann&text=nice");
    assert_eq!(status, 303, "{body}");
    assert_eq!(location, format!("{gallery}#comments"));
}

#[test]
fn paths_outside_the_mount_are_not_found() {
    let h = host(store_core::Limits::DEFAULT.rate_limit_per_min);
    for path in ["/", "/elsewhere", "/filesx", "/filesx/a"] {
        let req = Request::get(path).body(Empty::<Bytes>::new()).unwrap();
        let (status, body) = h.call(req);
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains("\"not_found\""), "{body}");
    }
    let req = Request::get(format!("{MOUNT}/api"))
        .body(Empty::<Bytes>::new())
        .unwrap();
    assert_eq!(h.call(req).0, 200);
}

#[test]
fn mount_paths_are_checked() {
    let app = || Arc::new(common::app("http://h/files", Default::default()));
    let mount = |p: &str| StoreService::new(app(), &ServeOptions::default()).mounted_at(p);
    for bad in [
        "files",
        "/files/",
        "/a?b",
        "/a#b",
        "//files",
        "/a%20b",
        "/a b",
        "/données",
    ] {
        assert!(mount(bad).is_err(), "{bad} was accepted");
    }
    for good in ["", "/", "/files", "/a/b", "/a-b_c.d~"] {
        assert!(mount(good).is_ok(), "{good} was refused");
    }
}

#[test]
fn any_body_type_is_served() {
    let h = host(store_core::Limits::DEFAULT.rate_limit_per_min);
    let req = Request::post(format!("{MOUNT}/?name=full.txt"))
        .header("content-length", "4")
        .body(Full::new(Bytes::from_static(b"full")))
        .unwrap();
    let (status, body) = h.call(req);
    assert_eq!(status, 201, "{body}");
    let url = serde_json::from_str::<Value>(&body).unwrap()["url"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(h.get(&url, false).2, "full");
}

/// A per-connection address wins over what a request says of itself: a
/// client cannot choose its own rate-limit bucket.
#[test]
fn the_connections_address_wins_over_the_requests() {
    let h = host(2);
    let conn = h.service.for_peer("192.0.2.9".parse().unwrap());
    let statuses: Vec<u16> = (1..=3)
        .map(|i| {
            let mut req = Request::get(format!("{MOUNT}/api"))
                .body(Empty::<Bytes>::new())
                .unwrap();
            let claimed = format!("198.51.100.{i}").parse::<IpAddr>().unwrap();
            req.extensions_mut().insert(PeerAddr(claimed));
            h.rt.block_on(conn.handle(req)).status().as_u16()
        })
        .collect();
    assert_eq!(statuses, [200, 200, 429]);
}

/// The rate limit counts the client the request names, when the host
/// gives no per-connection address.
#[test]
fn a_request_extension_names_the_client() {
    let h = host(2);
    let from = |ip: &str| {
        let mut req = Request::get(format!("{MOUNT}/api"))
            .body(Empty::<Bytes>::new())
            .unwrap();
        req.extensions_mut()
            .insert(PeerAddr(ip.parse::<IpAddr>().unwrap()));
        req
    };
    assert_eq!(h.call(from("192.0.2.1")).0, 200);
    assert_eq!(h.call(from("192.0.2.1")).0, 200);
    assert_eq!(h.call(from("192.0.2.1")).0, 429);
    assert_eq!(h.call(from("198.51.100.7")).0, 200);
}
