//! The parser of the route table (`routes.rs`): a pure function from
//! method, path and query keywords to an [`Endpoint`], unit-tested as a
//! table with no server (garage style), and its reverse, [`url_for`].
//!
//! How a request finds its route:
//! 1. The routes whose path pattern matches: literal segments equal,
//!    captures non-empty and valid UTF-8 once decoded. A capture in the
//!    first segment never takes a route word (`/api/x` is no bundle member).
//!    None: 404.
//! 2. Of those, the ones of the request's method (HEAD is a GET). None:
//!    501, the path is known.
//! 3. Of those, the most specific pattern (most literal segments):
//!    `/d/<key>/history` before `/d/<key>/<file>`.
//! 4. Of those, the one whose keyword the query has; the keyword-less one
//!    when it has none; a 400 when it has two routes' keywords (garage's
//!    "multiple keywords") or when every one needs a keyword.

use http::Method;

use crate::query::Query;
pub use crate::routes::{Endpoint, RouteId};
use crate::routes::{Route, ROUTES};
use store_core::{Limits, StoreError};

/// Decodes a percent-encoded path segment; `None` if it is not UTF-8.
fn decode(segment: &str) -> Option<String> {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
}

/// Whether a path segment is a valid capture: non-empty once decoded, and
/// valid UTF-8. Decoding borrows when there is nothing to decode.
fn capturable(segment: &str) -> bool {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .is_ok_and(|s| !s.is_empty())
}

/// Words that name service routes rather than objects.
fn is_route_word(s: &str) -> bool {
    store_core::ids::ROUTE_WORDS.contains(&s)
}

/// Whether `path` is a load balancer's probe (`/healthz`, `/readyz`):
/// answered before the rate limit, which may live in the store it probes.
pub fn is_probe(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz")
}

/// The segments of a route's pattern.
fn pattern(route: &Route) -> impl Iterator<Item = &'static str> {
    route.path.trim_start_matches('/').split('/')
}

fn capture_name(segment: &str) -> Option<&str> {
    segment.strip_prefix('{')?.strip_suffix('}')
}

/// A segment of a route's pattern, split from its text once.
#[derive(Debug)]
enum Seg {
    Literal(&'static str),
    Capture,
}

/// A route's pattern as matching reads it.
#[derive(Debug)]
struct Compiled {
    segs: Vec<Seg>,
    /// How specific the pattern is: its literal segments.
    literals: usize,
}

/// Every route's pattern, split once: matching runs on every request, and
/// splitting and scanning each pattern's text on each had made routing
/// the largest single cost of a small GET (docs/PERFORMANCE.md).
static COMPILED: std::sync::LazyLock<Vec<Compiled>> = std::sync::LazyLock::new(|| {
    ROUTES
        .iter()
        .map(|r| {
            let segs: Vec<Seg> = pattern(r)
                .map(|s| match capture_name(s) {
                    Some(_) => Seg::Capture,
                    None => Seg::Literal(s),
                })
                .collect();
            let literals = segs.iter().filter(|s| matches!(s, Seg::Literal(_))).count();
            Compiled { segs, literals }
        })
        .collect()
});

/// A request path's segments, with what matching asks of each worked out
/// once rather than once per route.
struct PathSegs<'p> {
    segs: Vec<&'p str>,
    /// Whether each segment may be a capture: a first segment that is a
    /// route word may not.
    capturable: Vec<bool>,
}

impl<'p> PathSegs<'p> {
    fn new(path: &'p str) -> Self {
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let capturable = segs
            .iter()
            .enumerate()
            .map(|(i, s)| capturable(s) && !(i == 0 && is_route_word(s)))
            .collect();
        Self { segs, capturable }
    }

    /// Whether the segments fit the pattern `c`.
    fn fit(&self, c: &Compiled) -> bool {
        c.segs.len() == self.segs.len()
            && c.segs
                .iter()
                .zip(&self.segs)
                .enumerate()
                .all(|(i, (want, got))| match want {
                    Seg::Capture => self.capturable[i],
                    Seg::Literal(lit) => lit == got,
                })
    }
}

/// Finds the endpoint of a request: the steps of the module's docs. The
/// endpoint carries the route's parameters, read from `query` with the
/// server's `limits`.
pub fn route(method: &Method, path: &str, query: &Query, limits: &Limits) -> Endpoint {
    let path = PathSegs::new(path);
    let compiled = &*COMPILED;
    let mut path_known = false;
    let mut candidates: Vec<usize> = Vec::new();
    for (i, (r, c)) in ROUTES.iter().zip(compiled).enumerate() {
        if path.fit(c) {
            path_known = true;
            if r.verb.admits(method) {
                candidates.push(i);
            }
        }
    }
    let Some(top) = candidates.iter().map(|&i| compiled[i].literals).max() else {
        return if path_known {
            Endpoint::MethodNotAllowed
        } else {
            Endpoint::NotFound
        };
    };
    candidates.retain(|&i| compiled[i].literals == top);
    let chosen = match by_keyword(&candidates, query) {
        Ok(i) => i,
        Err(Refusal::Missing(keys)) => return Endpoint::MissingKeyword { keys },
        Err(Refusal::Conflicting(keys)) => return Endpoint::ConflictingKeywords { keys },
    };
    let id = RouteId::ALL[chosen];
    let captures = compiled[chosen]
        .segs
        .iter()
        .zip(&path.segs)
        .filter(|(want, _)| matches!(want, Seg::Capture))
        .map(|(_, got)| decode(got));
    match captures.collect::<Option<Vec<String>>>() {
        Some(values) => id.endpoint(values.into_iter(), query, limits),
        None => Endpoint::NotFound,
    }
}

/// Why the keywords of a request pick no route.
enum Refusal {
    /// None given, and the path and method need one of these.
    Missing(Vec<&'static str>),
    /// These, of more than one route.
    Conflicting(Vec<&'static str>),
}

/// Picks among routes of one pattern and verb by the query's keywords.
fn by_keyword(candidates: &[usize], query: &Query) -> Result<usize, Refusal> {
    let selected: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&i| ROUTES[i].keywords.iter().any(|k| query.has(k)))
        .collect();
    match selected.as_slice() {
        [one] => Ok(*one),
        [] => candidates
            .iter()
            .copied()
            .find(|&i| ROUTES[i].keywords.is_empty())
            .ok_or_else(|| Refusal::Missing(keywords_of(candidates, |_| true))),
        _ => Err(Refusal::Conflicting(keywords_of(&selected, |k| {
            query.has(k)
        }))),
    }
}

fn keywords_of(routes: &[usize], keep: impl Fn(&str) -> bool) -> Vec<&'static str> {
    routes
        .iter()
        .flat_map(|&i| ROUTES[i].keywords.iter().copied())
        .filter(|k| keep(k))
        .collect()
}

/// Room made at once for the path of a URL: a few words and an id or a
/// name fit, so most URLs are written without growing.
const URL_PATH_BYTES_TYPICAL: usize = 64;

/// The path (and query) of one of our own absolute URLs: what a page
/// links to, a cookie's `Path`, a form's way back.
pub fn local_path(url: &str) -> &str {
    match url.find("://") {
        Some(i) => url[i + 3..].find('/').map_or("/", |j| &url[i + 3 + j..]),
        None => url,
    }
}

/// The URL of a route: the base URL, then the route's path with each
/// capture replaced by the next of `args`, percent-encoded. The only place
/// the HTTP layer writes a path (scripts/check-invariants.sh).
pub fn url_for(base_url: &str, id: RouteId, args: &[&str]) -> String {
    let mut out = String::with_capacity(base_url.len() + URL_PATH_BYTES_TYPICAL);
    out.push_str(base_url);
    let mut args = args.iter();
    let route = id.route();
    if route.path == "/" {
        out.push('/');
        return out;
    }
    for segment in pattern(route) {
        out.push('/');
        match capture_name(segment) {
            Some(_) => {
                let arg = args.next().copied().unwrap_or_default();
                out.push_str(&encode_path_segment(arg));
            }
            None => out.push_str(segment),
        }
    }
    debug_assert!(args.next().is_none(), "{} takes fewer captures", route.name);
    out
}

/// `url` with the query parameter `name` set to `value`, percent-encoded,
/// after any query `url` has already. `name` comes from the route table
/// (`routes::DOWNLOAD.name`), never a literal.
pub fn with_query(url: &str, name: &str, value: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    // A comma separates a list's items (`stars=a,b`) and needs no escape
    // in a query.
    let value = encode_path_segment(value).replace("%2C", ",");
    format!("{url}{sep}{name}={value}")
}

/// `url`, the URL of route `id`'s path, with the keyword that selects `id`
/// among the routes of that path set to `value` (`1` for a flag):
/// `/pics/g/<gid>` and `RouteId::Comment` make `/pics/g/<gid>?comment=1`.
pub fn with_keyword(url: &str, id: RouteId, value: &str) -> String {
    let keyword = id.route().keywords.first().copied().unwrap_or_default();
    debug_assert!(!keyword.is_empty(), "{} has no keyword", id.route().name);
    with_query(url, keyword, value)
}

/// Percent-encodes a capture for a URL path segment: everything but RFC
/// 3986's unreserved characters, so a file name with `/`, `?` or spaces
/// stays one segment.
fn encode_path_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Endpoint {
    /// The route's name, for logs and metrics: never an id, a name or a
    /// secret.
    pub fn name(&self) -> &'static str {
        match self {
            Self::MethodNotAllowed => "method_not_allowed",
            Self::MissingKeyword { .. } => "missing_keyword",
            Self::ConflictingKeywords { .. } => "conflicting_keywords",
            Self::NotFound => "not_found",
            _ => self.id().map_or("not_found", |id| id.route().name),
        }
    }

    /// What a request the router could not hand to a route answers, asked
    /// with `method`: no action named where the path needs one (400), two
    /// actions at once (400), or a method the path does not take (501,
    /// `unsupported`).
    /// `None` for an endpoint that is a route's (or 404's).
    pub fn unrouted(&self, method: &Method) -> Option<StoreError> {
        Some(match self {
            Self::MissingKeyword { keys } => StoreError::bad_request(format!(
                "{method} on this path needs an action, one of the parameters: {}",
                keys.join(", ")
            )),
            Self::ConflictingKeywords { keys } => StoreError::bad_request(format!(
                "the parameters {} ask for different actions: give one",
                keys.join(" and ")
            )),
            Self::MethodNotAllowed => {
                StoreError::Unsupported(format!("method {method} is not supported on this path"))
            }
            _ => return None,
        })
    }
}

/// The path a request's route is chosen by: its own path without the
/// service's mount prefix, or `None` when it lies outside the prefix.
pub fn routed_path<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    match path.strip_prefix(prefix)? {
        "" => Some("/"),
        rest if rest.starts_with('/') => Some(rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_come_from_the_table() {
        let gallery = url_for("", RouteId::Gallery, &["g1"]);
        assert_eq!(
            with_keyword(&gallery, RouteId::Comment, "1"),
            "/pics/g/g1?comment=1"
        );
        assert_eq!(
            with_keyword(&gallery, RouteId::LikeComment, "c 1"),
            "/pics/g/g1?clike=c%201"
        );
        let page = with_query(&gallery, crate::routes::PAGE.name, "2");
        assert_eq!(page, "/pics/g/g1?p=2");
        assert_eq!(
            with_query(&page, crate::routes::STARS.name, "a,b"),
            "/pics/g/g1?p=2&stars=a,b"
        );
        // Each URL the helpers write routes back to what it names.
        routes("POST", "/pics/g/g1?comment=1", RouteId::Comment, &["g1"]);
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(encode_path_segment("a b/c.txt"), "a%20b%2Fc.txt");
        assert_eq!(encode_path_segment("ré.md"), "r%C3%A9.md");
        assert_eq!(encode_path_segment("plain-name_1.~x"), "plain-name_1.~x");
    }

    fn endpoint(method: &str, target: &str) -> Endpoint {
        let (path, q) = target.split_once('?').unwrap_or((target, ""));
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        route(&method, path, &Query::parse(q).unwrap(), &Limits::DEFAULT)
    }

    /// A target that is no route: the outcome as said.
    fn check(method: &str, target: &str, want: Endpoint) {
        assert_eq!(endpoint(method, target), want, "{method} {target}");
    }

    /// A target that is a route: which one, with these captures.
    fn routes(method: &str, target: &str, want: RouteId, captures: &[&str]) {
        let got = endpoint(method, target);
        assert_eq!(got.id(), Some(want), "{method} {target}");
        assert_eq!(got.captures(), captures, "{method} {target}");
    }

    #[test]
    fn table() {
        // (Dir files capture `file`, bundle members `filename`, as SPEC.md.)
        use Endpoint::*;
        routes("GET", "/", RouteId::Home, &[]);
        routes("HEAD", "/", RouteId::Home, &[]);
        routes("POST", "/", RouteId::Upload, &[]);
        routes("POST", "/?name=a.txt&ttl=1d", RouteId::Upload, &[]);
        routes("POST", "/?url=http://x", RouteId::Import, &[]);
        routes("POST", "/?dir=1&name=abcde", RouteId::CreateDir, &[]);
        check(
            "POST",
            "/?dir=1&url=http://x",
            ConflictingKeywords {
                keys: vec!["url", "dir"],
            },
        );
        routes("GET", "/openapi.json", RouteId::Openapi, &[]);
        check("GET", "/api/x", NotFound);
        check("DELETE", "/", MethodNotAllowed);
        routes("GET", "/api", RouteId::Api, &[]);
        routes("GET", "/healthz", RouteId::Healthz, &[]);
        routes("HEAD", "/readyz", RouteId::Readyz, &[]);
        check("POST", "/readyz", MethodNotAllowed);
        check("POST", "/api", MethodNotAllowed);
        routes("GET", "/browse?tag=x", RouteId::Browse, &[]);
        routes("GET", "/help", RouteId::Help, &[]);
        routes("GET", "/help/dirs", RouteId::HelpTopic, &["dirs"]);
        routes("GET", "/help/no%20such", RouteId::HelpTopic, &["no such"]);
        check("POST", "/help/dirs", MethodNotAllowed);
        check("GET", "/help/a/b", NotFound);
        routes("GET", "/write_for_agents", RouteId::WriteForAgents, &[]);
        routes("GET", "/copy_for_agents", RouteId::CopyForAgents, &[]);
        routes("GET", "/releases", RouteId::Releases, &[]);
        check("PUT", "/releases", MethodNotAllowed);
        routes("GET", "/static/app.js", RouteId::Static, &["app.js"]);
        routes("GET", "/robots.txt", RouteId::Robots, &[]);
        routes("GET", "/llms.txt", RouteId::LlmsTxt, &[]);
        routes("GET", "/abc123", RouteId::GetFile, &["abc123"]);
        routes("HEAD", "/abc123", RouteId::GetFile, &["abc123"]);
        routes("GET", "/abc123?download=1", RouteId::GetFile, &["abc123"]);
        routes("POST", "/abc123?retain=1", RouteId::RetainFile, &["abc123"]);
        routes(
            "POST",
            "/abc123?tag=a&untag=b",
            RouteId::TagFile,
            &["abc123"],
        );
        routes("POST", "/abc123?untag=b", RouteId::TagFile, &["abc123"]);
        check(
            "POST",
            "/abc123",
            MissingKeyword {
                keys: vec![
                    "retain", "tag", "untag", "ttl", "password", "unlock", "report",
                ],
            },
        );
        routes("POST", "/abc123?ttl=2d", RouteId::SetFileTtl, &["abc123"]);
        check(
            "POST",
            "/abc123?ttl=2d&tag=a",
            ConflictingKeywords {
                keys: vec!["tag", "ttl"],
            },
        );
        check(
            "POST",
            "/abc123?retain=1&tag=a",
            ConflictingKeywords {
                keys: vec!["retain", "tag"],
            },
        );
        routes("PUT", "/abc123", RouteId::ReplaceFile, &["abc123"]);
        routes("PATCH", "/abc123", RouteId::AppendFile, &["abc123"]);
        routes("DELETE", "/abc123", RouteId::DeleteFile, &["abc123"]);
        check("OPTIONS", "/abc123", MethodNotAllowed);
        routes(
            "GET",
            "/abc123/a%20b.txt",
            RouteId::GetBundleMember,
            &["abc123", "a b.txt"],
        );
        check("PUT", "/abc123/a.txt", MethodNotAllowed);
        check("GET", "/abc123/a/b", NotFound);
        check("GET", "/%ff", NotFound);
        check("GET", "/help/../api", NotFound);
        routes("GET", "/pics", RouteId::PicsIndex, &[]);
        routes("POST", "/pics?create=1&name=x", RouteId::CreateGallery, &[]);
        check(
            "POST",
            "/pics",
            MissingKeyword {
                keys: vec!["create"],
            },
        );
        routes("GET", "/pics/g/holiday?p=2", RouteId::Gallery, &["holiday"]);
        routes(
            "POST",
            "/pics/g/holiday?name=a.jpg",
            RouteId::UploadImage,
            &["holiday"],
        );
        routes(
            "POST",
            "/pics/g/holiday?url=http://x",
            RouteId::ImportImage,
            &["holiday"],
        );
        routes(
            "POST",
            "/pics/g/holiday?comment=1",
            RouteId::Comment,
            &["holiday"],
        );
        routes(
            "POST",
            "/pics/g/holiday?clike=c1",
            RouteId::LikeComment,
            &["holiday"],
        );
        routes(
            "GET",
            "/pics/g/holiday/s3cret",
            RouteId::GalleryAdmin,
            &["holiday", "s3cret"],
        );
        routes(
            "GET",
            "/pics/g/holiday/s3cret/json",
            RouteId::GalleryAdminJson,
            &["holiday", "s3cret"],
        );
        routes(
            "POST",
            "/pics/g/holiday/s3cret",
            RouteId::GalleryAdminAction,
            &["holiday", "s3cret"],
        );
        routes("GET", "/pics/i/img1?thumb=160", RouteId::Image, &["img1"]);
        routes("POST", "/pics/i/img1?like=1", RouteId::LikeImage, &["img1"]);
        check(
            "POST",
            "/pics/i/img1",
            MissingKeyword {
                keys: vec!["like", "report"],
            },
        );
        check("GET", "/pics/x", NotFound);
        routes("GET", "/d", RouteId::ListDirs, &[]);
        check("POST", "/d", MethodNotAllowed);
        routes("GET", "/d/proj?zip=1", RouteId::GetDir, &["proj"]);
        routes("HEAD", "/d/proj", RouteId::GetDir, &["proj"]);
        routes("POST", "/d/proj", RouteId::AddToDir, &["proj"]);
        routes("POST", "/d/proj?show=1", RouteId::ShowDir, &["proj"]);
        routes("POST", "/d/proj?retain=1", RouteId::RetainDir, &["proj"]);
        routes("POST", "/d/proj?ttl=1d", RouteId::SetDirTtl, &["proj"]);
        routes(
            "POST",
            "/d/proj?password=1",
            RouteId::SetDirPassword,
            &["proj"],
        );
        routes("POST", "/d/proj?unlock=1", RouteId::UnlockDir, &["proj"]);
        routes(
            "POST",
            "/abc123?password=1",
            RouteId::SetFilePassword,
            &["abc123"],
        );
        routes("POST", "/abc123?unlock=1", RouteId::UnlockFile, &["abc123"]);
        check(
            "POST",
            "/d/proj?retain=1&show=1",
            ConflictingKeywords {
                keys: vec!["show", "retain"],
            },
        );
        check("POST", "/d/proj/history", MethodNotAllowed);
        check("POST", "/pics/g/h/s/json", MethodNotAllowed);
        routes("DELETE", "/d/proj", RouteId::DeleteDir, &["proj"]);
        check("PUT", "/d/proj", MethodNotAllowed);
        routes("GET", "/d/proj/history", RouteId::DirHistory, &["proj"]);
        routes(
            "DELETE",
            "/d/proj/history",
            RouteId::DeleteDirFile,
            &["proj", "history"],
        );
        routes(
            "GET",
            "/d/proj/a%20b.txt",
            RouteId::GetDirFile,
            &["proj", "a b.txt"],
        );
        routes(
            "PUT",
            "/d/proj/a.txt",
            RouteId::PutDirFile,
            &["proj", "a.txt"],
        );
        routes(
            "PATCH",
            "/d/proj/a.txt",
            RouteId::AppendDirFile,
            &["proj", "a.txt"],
        );
        routes(
            "DELETE",
            "/d/proj/a.txt",
            RouteId::DeleteDirFile,
            &["proj", "a.txt"],
        );
        check("POST", "/d/proj/a.txt", MethodNotAllowed);
        check("GET", "/d/proj/a/b", NotFound);
        routes("GET", "/d/%2e%2e/x", RouteId::GetDirFile, &["..", "x"]);
    }

    #[test]
    fn each_variant_has_the_captures_of_its_path() {
        for &id in RouteId::ALL {
            let r = id.route();
            let captures: Vec<&str> = pattern(r).filter_map(capture_name).collect();
            assert_eq!(captures, id.fields(), "{}", r.name);
        }
    }

    #[test]
    fn each_name_is_its_variant_in_snake_case() {
        for &id in RouteId::ALL {
            let mut snake = String::new();
            for (i, c) in format!("{id:?}").chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert_eq!(id.route().name, snake);
        }
    }

    #[test]
    fn each_first_literal_is_a_route_word() {
        // An id equal to a route's first segment would be shadowed by it.
        for r in ROUTES {
            let first = pattern(r).next().unwrap();
            if !first.is_empty() && capture_name(first).is_none() {
                assert!(is_route_word(first), "{first} is not in ROUTE_WORDS");
            }
        }
    }

    #[test]
    fn each_route_is_reached_by_its_own_usage() {
        // The path of url_for, with the route's keyword, parses back to the
        // same route: the parser and the reverse agree on every row.
        for &id in RouteId::ALL {
            let r = id.route();
            let args: Vec<String> = id.fields().iter().map(|f| format!("x-{f}")).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let url = url_for("", id, &args);
            let query = r
                .keywords
                .first()
                .map_or(String::new(), |k| format!("{k}=1"));
            let method = Method::from_bytes(r.verb.as_str().as_bytes()).unwrap();
            let got = route(
                &method,
                &url,
                &Query::parse(&query).unwrap(),
                &Limits::DEFAULT,
            );
            assert_eq!(got.id(), Some(id), "{url}?{query}");
            assert_eq!(got.captures(), args);
        }
    }

    #[test]
    fn endpoints_carry_their_parameters_parsed_or_refused() {
        match endpoint("GET", "/abc123?info=1&thumb=256") {
            Endpoint::GetFile { id, read } => {
                assert_eq!(id, "abc123");
                let read = read.expect("valid parameters");
                assert!(read.info && !read.download);
                assert_eq!(read.thumb.as_deref(), Some("256"));
            }
            other => panic!("{other:?}"),
        }
        // A refused value is carried, not answered by the router: the
        // handler answers it where it needs the value.
        match endpoint("POST", "/?ttl=forever&name=a.txt") {
            Endpoint::Upload { file } => assert!(file.is_err()),
            other => panic!("{other:?}"),
        }
        match endpoint("GET", "/d/k/f.txt?download=maybe") {
            Endpoint::GetDirFile { key, download, .. } => {
                assert_eq!(key, "k");
                assert!(download.is_err());
            }
            other => panic!("{other:?}"),
        }
        // The limits are the configured ones.
        let mut limits = Limits::DEFAULT;
        limits.downloads_max = 3;
        let q = Query::parse("max_downloads=5").unwrap();
        match route(&Method::POST, "/", &q, &limits) {
            Endpoint::Upload { file } => assert!(file.is_err(), "5 is past 3"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_routes_allowed_words_are_the_words_its_parameters_take() {
        // The table's word lists (`Shape::Choice`, for /api, /openapi.json
        // and the strict check) and the parsers' matches in params.rs say
        // the same: every listed word is taken, another is refused.
        // `thumb` is a size the use case checks against the core's sizes,
        // and `action` a form field, read from the body.
        let not_parsed_here = ["thumb", "action"];
        let mut checked = 0;
        for &id in RouteId::ALL {
            let r = id.route();
            let args: Vec<String> = id.fields().iter().map(|f| format!("x-{f}")).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let url = url_for("", id, &args);
            let method = Method::from_bytes(r.verb.as_str().as_bytes()).unwrap();
            let keyword = r.keywords.first().map(|k| format!("{k}=1&"));
            for p in r.params {
                let crate::routes::Shape::Choice(words) = p.shape else {
                    continue;
                };
                if not_parsed_here.contains(&p.name) {
                    continue;
                }
                let ask = |word: &str| {
                    let q = format!("{}{}={word}", keyword.as_deref().unwrap_or(""), p.name);
                    let q = if r.keywords.first() == Some(&p.name) {
                        format!("{}={word}", p.name)
                    } else {
                        q
                    };
                    route(&method, &url, &Query::parse(&q).unwrap(), &Limits::DEFAULT)
                };
                for word in words {
                    let got = ask(word);
                    assert_eq!(got.id(), Some(id), "{url} {}={word}", p.name);
                    assert!(
                        got.refusal().is_none(),
                        "{url} {}={word}: {:?}",
                        p.name,
                        got.refusal()
                    );
                }
                assert!(ask("zzz").refusal().is_some(), "{url} {}=zzz", p.name);
                checked += 1;
            }
        }
        assert!(checked >= 6, "the word lists were checked ({checked})");
    }

    #[test]
    fn urls_encode_their_captures() {
        assert_eq!(
            url_for("http://h", RouteId::GetDirFile, &["k", "a b/c.txt"]),
            "http://h/d/k/a%20b%2Fc.txt"
        );
        assert_eq!(url_for("http://h", RouteId::Home, &[]), "http://h/");
        assert_eq!(url_for("http://h", RouteId::Help, &[]), "http://h/help");
    }

    #[test]
    fn usage_lines() {
        assert_eq!(
            RouteId::Import.route().usage(),
            "POST /?url=<url>[&name=<name>][&link=1][&tag=<t>][&ttl=<N>h|<N>d][&max_downloads=N][&protect=1][&token=<retain token>]"
        );
        assert_eq!(RouteId::HelpTopic.route().usage(), "GET /help/<topic>");
        assert_eq!(
            RouteId::DeleteDirFile.route().usage(),
            "DELETE /d/<key>/<file>[?write=1|<token>][&owner=<owner token>]"
        );
    }

    #[test]
    fn a_route_is_chosen_by_the_path_under_the_mount_prefix() {
        assert_eq!(routed_path("/store/abc", "/store"), Some("/abc"));
        assert_eq!(routed_path("/store", "/store"), Some("/"));
        assert_eq!(routed_path("/storefront", "/store"), None);
        assert_eq!(routed_path("/elsewhere", "/store"), None);
        assert_eq!(routed_path("/abc", ""), Some("/abc"));
    }

    #[test]
    fn a_request_no_route_takes_says_why() {
        let missing = Endpoint::MissingKeyword {
            keys: vec!["a", "b"],
        };
        let e = missing.unrouted(&Method::POST).unwrap();
        assert_eq!(e.code().http_status(), 400);
        assert!(e
            .to_string()
            .starts_with("POST on this path needs an action"));
        assert!(e.to_string().ends_with("a, b"));
        let two = Endpoint::ConflictingKeywords {
            keys: vec!["a", "b"],
        };
        assert!(two
            .unrouted(&Method::POST)
            .unwrap()
            .to_string()
            .contains("a and b"));
        let e = Endpoint::MethodNotAllowed.unrouted(&Method::PUT).unwrap();
        assert_eq!(e.code().http_status(), 501);
        assert!(Endpoint::NotFound.unrouted(&Method::GET).is_none());
    }
}
