//! The route table: a pure function from method, path and query keywords to
//! an [`Endpoint`], unit-tested as a table with no server (garage style).
//! Query keywords pick the variant, as `?retain=1` or `?tag=` do.

use http::Method;

use crate::query::Query;

/// Everything the service answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// GET /: upload page for browsers, a pointer for agents.
    Home,
    /// POST /: raw or multipart upload.
    Upload,
    /// POST /?url=: import a remote document.
    Import,
    /// POST /?dir=1: create a dir.
    CreateDir,
    /// GET /api: the contract.
    Api,
    /// GET /browse.
    Browse,
    /// GET /help.
    Help,
    /// GET /help/<topic>.
    HelpTopic {
        topic: String,
    },
    /// GET /write_for_agents.
    WriteForAgents,
    /// GET /copy_for_agents.
    CopyForAgents,
    /// GET /releases.
    Releases,
    /// GET /static/<file>: the pages' stylesheet and script.
    Static {
        file: String,
    },
    /// GET /robots.txt.
    Robots,
    /// GET /healthz: the process serves.
    Healthz,
    /// GET /readyz: the store can be reached.
    Readyz,
    /// GET or HEAD /<id>.
    GetFile {
        id: String,
    },
    /// GET or HEAD /<id>/<filename>: one file of a bundle.
    GetBundleMember {
        id: String,
        name: String,
    },
    /// POST /<id>?retain=1.
    RetainFile {
        id: String,
    },
    /// POST /<id>?tag=..&untag=..
    TagFile {
        id: String,
    },
    /// PUT /<id>.
    ReplaceFile {
        id: String,
    },
    /// PATCH /<id>.
    AppendFile {
        id: String,
    },
    /// DELETE /<id>.
    DeleteFile {
        id: String,
    },
    /// GET /d: listed dirs.
    ListDirs,
    /// GET or HEAD /d/<key> (listing, page, or `?zip=1`).
    GetDir {
        key: String,
    },
    /// POST /d/<key>: add files.
    AddToDir {
        key: String,
    },
    /// POST /d/<key>?show=1.
    ShowDir {
        key: String,
    },
    /// POST /d/<key>?retain=1.
    RetainDir {
        key: String,
    },
    /// DELETE /d/<key>.
    DeleteDir {
        key: String,
    },
    /// GET /d/<key>/history.
    DirHistory {
        key: String,
    },
    /// GET or HEAD /d/<key>/<file>.
    GetDirFile {
        key: String,
        name: String,
    },
    /// PUT /d/<key>/<file>.
    PutDirFile {
        key: String,
        name: String,
    },
    /// PATCH /d/<key>/<file>.
    AppendDirFile {
        key: String,
        name: String,
    },
    /// DELETE /d/<key>/<file>.
    DeleteDirFile {
        key: String,
        name: String,
    },
    /// GET /pics: listed galleries.
    PicsIndex,
    /// POST /pics?create=1.
    CreateGallery,
    /// GET /pics/g/<gid> (grid or JSON; `?likes=1` counters).
    Gallery {
        gid: String,
    },
    /// POST /pics/g/<gid>?name=: upload.
    UploadImage {
        gid: String,
    },
    /// POST /pics/g/<gid>?url=.
    ImportImage {
        gid: String,
    },
    /// POST /pics/g/<gid>?comment=1.
    Comment {
        gid: String,
    },
    /// POST /pics/g/<gid>?clike=<cid>.
    LikeComment {
        gid: String,
    },
    /// GET /pics/g/<gid>/<secret> (page) or .../json.
    GalleryAdmin {
        gid: String,
        secret: String,
        json: bool,
    },
    /// POST /pics/g/<gid>/<secret>.
    GalleryAdminAction {
        gid: String,
        secret: String,
    },
    /// GET /pics/i/<id>.
    Image {
        id: String,
    },
    /// POST /pics/i/<id>?like=1.
    LikeImage {
        id: String,
    },
    /// A known path with a method it does not support.
    MethodNotAllowed,
    /// POST /<id> without an action keyword.
    MissingAction {
        id: String,
    },
    NotFound,
}

impl Endpoint {
    /// The route's name, for logs: never an id, a name or a secret.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Home => "home",
            Self::Upload => "upload",
            Self::Import => "import",
            Self::CreateDir => "create_dir",
            Self::Api => "api",
            Self::Browse => "browse",
            Self::Help => "help",
            Self::HelpTopic { .. } => "help_topic",
            Self::WriteForAgents => "write_for_agents",
            Self::CopyForAgents => "copy_for_agents",
            Self::Releases => "releases",
            Self::Static { .. } => "static",
            Self::Robots => "robots",
            Self::Healthz => "healthz",
            Self::Readyz => "readyz",
            Self::GetFile { .. } => "get_file",
            Self::GetBundleMember { .. } => "get_bundle_member",
            Self::RetainFile { .. } => "retain_file",
            Self::TagFile { .. } => "tag_file",
            Self::ReplaceFile { .. } => "replace_file",
            Self::AppendFile { .. } => "append_file",
            Self::DeleteFile { .. } => "delete_file",
            Self::ListDirs => "list_dirs",
            Self::GetDir { .. } => "get_dir",
            Self::AddToDir { .. } => "add_to_dir",
            Self::ShowDir { .. } => "show_dir",
            Self::RetainDir { .. } => "retain_dir",
            Self::DeleteDir { .. } => "delete_dir",
            Self::DirHistory { .. } => "dir_history",
            Self::GetDirFile { .. } => "get_dir_file",
            Self::PutDirFile { .. } => "put_dir_file",
            Self::AppendDirFile { .. } => "append_dir_file",
            Self::DeleteDirFile { .. } => "delete_dir_file",
            Self::PicsIndex => "pics_index",
            Self::CreateGallery => "create_gallery",
            Self::Gallery { .. } => "gallery",
            Self::UploadImage { .. } => "upload_image",
            Self::ImportImage { .. } => "import_image",
            Self::Comment { .. } => "comment",
            Self::LikeComment { .. } => "like_comment",
            Self::GalleryAdmin { .. } => "gallery_admin",
            Self::GalleryAdminAction { .. } => "gallery_admin_action",
            Self::Image { .. } => "image",
            Self::LikeImage { .. } => "like_image",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::MissingAction { .. } => "missing_action",
            Self::NotFound => "not_found",
        }
    }
}

/// Decodes a percent-encoded path segment; `None` if it is not UTF-8.
fn decode(segment: &str) -> Option<String> {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
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

pub fn route(method: &Method, path: &str, query: &Query) -> Endpoint {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let get = method == Method::GET || method == Method::HEAD;
    match segments.as_slice() {
        [""] => match *method {
            _ if get => Endpoint::Home,
            Method::POST if query.has("dir") => Endpoint::CreateDir,
            Method::POST if query.has("url") => Endpoint::Import,
            Method::POST => Endpoint::Upload,
            _ => Endpoint::MethodNotAllowed,
        },
        ["api"] if get => Endpoint::Api,
        ["browse"] if get => Endpoint::Browse,
        ["help"] if get => Endpoint::Help,
        ["help", raw] if get => match decode(raw) {
            Some(topic) => Endpoint::HelpTopic { topic },
            None => Endpoint::NotFound,
        },
        ["write_for_agents"] if get => Endpoint::WriteForAgents,
        ["copy_for_agents"] if get => Endpoint::CopyForAgents,
        ["releases"] if get => Endpoint::Releases,
        ["robots.txt"] if get => Endpoint::Robots,
        ["healthz"] if get => Endpoint::Healthz,
        ["readyz"] if get => Endpoint::Readyz,
        ["static", file] if get => Endpoint::Static {
            file: file.to_string(),
        },
        ["api"]
        | ["browse"]
        | ["help"]
        | ["help", _]
        | ["write_for_agents"]
        | ["copy_for_agents"]
        | ["releases"]
        | ["robots.txt"]
        | ["healthz"]
        | ["readyz"]
        | ["static", _] => Endpoint::MethodNotAllowed,
        ["pics"] if get => Endpoint::PicsIndex,
        ["pics"] if *method == Method::POST && query.has("create") => Endpoint::CreateGallery,
        ["pics"] => Endpoint::MethodNotAllowed,
        ["pics", "g", raw] => {
            let Some(gid) = decode(raw).filter(|s| !s.is_empty()) else {
                return Endpoint::NotFound;
            };
            match *method {
                _ if get => Endpoint::Gallery { gid },
                Method::POST if query.has("comment") => Endpoint::Comment { gid },
                Method::POST if query.has("clike") => Endpoint::LikeComment { gid },
                Method::POST if query.has("url") => Endpoint::ImportImage { gid },
                Method::POST => Endpoint::UploadImage { gid },
                _ => Endpoint::MethodNotAllowed,
            }
        }
        ["pics", "g", raw, secret] | ["pics", "g", raw, secret, "json"] => {
            let json = segments.len() == 5;
            let (Some(gid), Some(secret)) = (decode(raw), decode(secret)) else {
                return Endpoint::NotFound;
            };
            match *method {
                _ if get => Endpoint::GalleryAdmin { gid, secret, json },
                Method::POST if !json => Endpoint::GalleryAdminAction { gid, secret },
                _ => Endpoint::MethodNotAllowed,
            }
        }
        ["pics", "i", raw] => {
            let Some(id) = decode(raw).filter(|s| !s.is_empty()) else {
                return Endpoint::NotFound;
            };
            match *method {
                _ if get => Endpoint::Image { id },
                Method::POST if query.has("like") => Endpoint::LikeImage { id },
                _ => Endpoint::MethodNotAllowed,
            }
        }
        ["d"] if get => Endpoint::ListDirs,
        ["d"] => Endpoint::MethodNotAllowed,
        ["d", raw_key] => {
            let Some(key) = decode(raw_key).filter(|s| !s.is_empty()) else {
                return Endpoint::NotFound;
            };
            match *method {
                _ if get => Endpoint::GetDir { key },
                Method::POST if query.has("show") => Endpoint::ShowDir { key },
                Method::POST if query.has("retain") => Endpoint::RetainDir { key },
                Method::POST => Endpoint::AddToDir { key },
                Method::DELETE => Endpoint::DeleteDir { key },
                _ => Endpoint::MethodNotAllowed,
            }
        }
        ["d", raw_key, "history"] if get => match decode(raw_key) {
            Some(key) if !key.is_empty() => Endpoint::DirHistory { key },
            _ => Endpoint::NotFound,
        },
        ["d", raw_key, raw_name] => {
            let (Some(key), Some(name)) = (decode(raw_key), decode(raw_name)) else {
                return Endpoint::NotFound;
            };
            if key.is_empty() || name.is_empty() {
                return Endpoint::NotFound;
            }
            match *method {
                _ if get => Endpoint::GetDirFile { key, name },
                Method::PUT => Endpoint::PutDirFile { key, name },
                Method::PATCH => Endpoint::AppendDirFile { key, name },
                Method::DELETE => Endpoint::DeleteDirFile { key, name },
                _ => Endpoint::MethodNotAllowed,
            }
        }
        [word, ..] if is_route_word(word) => Endpoint::NotFound,
        [raw_id] => {
            let Some(id) = decode(raw_id).filter(|s| !s.is_empty()) else {
                return Endpoint::NotFound;
            };
            match *method {
                _ if get => Endpoint::GetFile { id },
                Method::POST if query.has("retain") => Endpoint::RetainFile { id },
                Method::POST if query.has("tag") || query.has("untag") => Endpoint::TagFile { id },
                Method::POST => Endpoint::MissingAction { id },
                Method::PUT => Endpoint::ReplaceFile { id },
                Method::PATCH => Endpoint::AppendFile { id },
                Method::DELETE => Endpoint::DeleteFile { id },
                _ => Endpoint::MethodNotAllowed,
            }
        }
        [raw_id, raw_name] if get => match (decode(raw_id), decode(raw_name)) {
            (Some(id), Some(name)) if !id.is_empty() && !name.is_empty() => {
                Endpoint::GetBundleMember { id, name }
            }
            _ => Endpoint::NotFound,
        },
        [_, _] => Endpoint::MethodNotAllowed,
        _ => Endpoint::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(method: &str, target: &str, want: Endpoint) {
        let (path, q) = target.split_once('?').unwrap_or((target, ""));
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        assert_eq!(
            route(&method, path, &Query::parse(q).unwrap()),
            want,
            "{method} {target}"
        );
    }

    fn id(s: &str) -> String {
        s.to_string()
    }

    #[test]
    fn table() {
        use Endpoint::*;
        check("GET", "/", Home);
        check("HEAD", "/", Home);
        check("POST", "/", Upload);
        check("POST", "/?name=a.txt&ttl=1d", Upload);
        check("POST", "/?url=http://x", Import);
        check("POST", "/?dir=1&name=abcde", CreateDir);
        check("DELETE", "/", MethodNotAllowed);
        check("GET", "/api", Api);
        check("GET", "/healthz", Healthz);
        check("HEAD", "/readyz", Readyz);
        check("POST", "/readyz", MethodNotAllowed);
        check("POST", "/api", MethodNotAllowed);
        check("GET", "/browse?tag=x", Browse);
        check("GET", "/help", Help);
        check("GET", "/help/dirs", HelpTopic { topic: id("dirs") });
        check(
            "GET",
            "/help/no%20such",
            HelpTopic {
                topic: id("no such"),
            },
        );
        check("POST", "/help/dirs", MethodNotAllowed);
        check("GET", "/help/a/b", NotFound);
        check("GET", "/write_for_agents", WriteForAgents);
        check("GET", "/copy_for_agents", CopyForAgents);
        check("GET", "/releases", Releases);
        check("PUT", "/releases", MethodNotAllowed);
        check("GET", "/static/app.js", Static { file: id("app.js") });
        check("GET", "/robots.txt", Robots);
        check("GET", "/abc123", GetFile { id: id("abc123") });
        check("HEAD", "/abc123", GetFile { id: id("abc123") });
        check("GET", "/abc123?download=1", GetFile { id: id("abc123") });
        check("POST", "/abc123?retain=1", RetainFile { id: id("abc123") });
        check(
            "POST",
            "/abc123?tag=a&untag=b",
            TagFile { id: id("abc123") },
        );
        check("POST", "/abc123?untag=b", TagFile { id: id("abc123") });
        check("POST", "/abc123", MissingAction { id: id("abc123") });
        check("PUT", "/abc123", ReplaceFile { id: id("abc123") });
        check("PATCH", "/abc123", AppendFile { id: id("abc123") });
        check("DELETE", "/abc123", DeleteFile { id: id("abc123") });
        check("OPTIONS", "/abc123", MethodNotAllowed);
        check(
            "GET",
            "/abc123/a%20b.txt",
            GetBundleMember {
                id: id("abc123"),
                name: id("a b.txt"),
            },
        );
        check("PUT", "/abc123/a.txt", MethodNotAllowed);
        check("GET", "/abc123/a/b", NotFound);
        check("GET", "/%ff", NotFound);
        check("GET", "/help/../api", NotFound);
        check("GET", "/pics", PicsIndex);
        check("POST", "/pics?create=1&name=x", CreateGallery);
        check("POST", "/pics", MethodNotAllowed);
        check("GET", "/pics/g/holiday?p=2", Gallery { gid: id("holiday") });
        check(
            "POST",
            "/pics/g/holiday?name=a.jpg",
            UploadImage { gid: id("holiday") },
        );
        check(
            "POST",
            "/pics/g/holiday?url=http://x",
            ImportImage { gid: id("holiday") },
        );
        check(
            "POST",
            "/pics/g/holiday?comment=1",
            Comment { gid: id("holiday") },
        );
        check(
            "POST",
            "/pics/g/holiday?clike=c1",
            LikeComment { gid: id("holiday") },
        );
        check(
            "GET",
            "/pics/g/holiday/s3cret",
            GalleryAdmin {
                gid: id("holiday"),
                secret: id("s3cret"),
                json: false,
            },
        );
        check(
            "GET",
            "/pics/g/holiday/s3cret/json",
            GalleryAdmin {
                gid: id("holiday"),
                secret: id("s3cret"),
                json: true,
            },
        );
        check(
            "POST",
            "/pics/g/holiday/s3cret",
            GalleryAdminAction {
                gid: id("holiday"),
                secret: id("s3cret"),
            },
        );
        check("GET", "/pics/i/img1?thumb=160", Image { id: id("img1") });
        check("POST", "/pics/i/img1?like=1", LikeImage { id: id("img1") });
        check("POST", "/pics/i/img1", MethodNotAllowed);
        check("GET", "/pics/x", NotFound);
        check("GET", "/d", ListDirs);
        check("POST", "/d", MethodNotAllowed);
        check("GET", "/d/proj?zip=1", GetDir { key: id("proj") });
        check("HEAD", "/d/proj", GetDir { key: id("proj") });
        check("POST", "/d/proj", AddToDir { key: id("proj") });
        check("POST", "/d/proj?show=1", ShowDir { key: id("proj") });
        check("POST", "/d/proj?retain=1", RetainDir { key: id("proj") });
        check("DELETE", "/d/proj", DeleteDir { key: id("proj") });
        check("PUT", "/d/proj", MethodNotAllowed);
        check("GET", "/d/proj/history", DirHistory { key: id("proj") });
        check(
            "DELETE",
            "/d/proj/history",
            DeleteDirFile {
                key: id("proj"),
                name: id("history"),
            },
        );
        check(
            "GET",
            "/d/proj/a%20b.txt",
            GetDirFile {
                key: id("proj"),
                name: id("a b.txt"),
            },
        );
        check(
            "PUT",
            "/d/proj/a.txt",
            PutDirFile {
                key: id("proj"),
                name: id("a.txt"),
            },
        );
        check(
            "PATCH",
            "/d/proj/a.txt",
            AppendDirFile {
                key: id("proj"),
                name: id("a.txt"),
            },
        );
        check(
            "DELETE",
            "/d/proj/a.txt",
            DeleteDirFile {
                key: id("proj"),
                name: id("a.txt"),
            },
        );
        check("POST", "/d/proj/a.txt", MethodNotAllowed);
        check("GET", "/d/proj/a/b", NotFound);
        check(
            "GET",
            "/d/%2e%2e/x",
            GetDirFile {
                key: id(".."),
                name: id("x"),
            },
        );
    }
}
