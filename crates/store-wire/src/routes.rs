//! The route table: every route the service answers, as data. The parser
//! (`router.rs`), the route names of logs and metrics, `/api`'s
//! `endpoints`, the endpoints of each `/help` topic, `/openapi.json`, the
//! list of known query parameters and every URL the HTTP layer builds
//! (`router::url_for`) come from this one list, so that a route is added,
//! renamed or documented in exactly one place (garage's router does the
//! same with a macro).
//!
//! A row is a variant of [`Endpoint`] (its fields are the path's captures,
//! in order) and a [`Route`]. Rows sharing a path and method are told apart
//! by their `keywords`: the query keys that select them (`?retain=1`,
//! `?tag=`), at most one row's keywords in a request.

use store_core::{Limits, StoreError};

use crate::params::{
    AdminPage, AdminQuery, AsDownload, AsZip, Browse, CloseDrop, CommentLike, DirList, FileRead,
    FromQuery, GalleryShow, ImageImport, ImageRead, ImageUpload, NewGallery, NewTtl, Parsed,
    QrFormat, RawName, TagEdit,
};
use crate::query::Query;
use store_app::ImportRequest;
use store_core::requests::{NewDir, NewFile};

/// A request method as the table names it; `Get` answers HEAD too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET, and HEAD with it.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
    /// OPTIONS (what a tus server supports).
    Options,
}

impl Verb {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
            Self::Options => "OPTIONS",
        }
    }

    /// The method a request of this verb is made with.
    pub fn method(self) -> http::Method {
        match self {
            Self::Get => http::Method::GET,
            Self::Post => http::Method::POST,
            Self::Put => http::Method::PUT,
            Self::Patch => http::Method::PATCH,
            Self::Delete => http::Method::DELETE,
            Self::Options => http::Method::OPTIONS,
        }
    }

    /// Whether a request's method is this verb (HEAD is a GET).
    pub fn admits(self, method: &http::Method) -> bool {
        match self {
            Self::Get => method == http::Method::GET || method == http::Method::HEAD,
            Self::Post => method == http::Method::POST,
            Self::Put => method == http::Method::PUT,
            Self::Patch => method == http::Method::PATCH,
            Self::Delete => method == http::Method::DELETE,
            Self::Options => method == http::Method::OPTIONS,
        }
    }
}

/// What values a query parameter takes: for `/openapi.json` and for the
/// strict check of repeated keys (`query.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `1` or `0` (also `true`/`false`, `yes`/`no`, `on`/`off`, or empty).
    Flag,
    /// Any non-empty text.
    Text,
    /// A whole number.
    Integer,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Text that may be given more than once, or comma-separated.
    List,
}

/// One query parameter of a route (or a form field it also reads there).
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The parameter's name on the wire.
    pub name: &'static str,
    /// How the value is written in the route's usage line: `<filename>`,
    /// `1`, `created|name`.
    pub shown: &'static str,
    /// The route needs it.
    pub required: bool,
    /// The kind of value it takes.
    pub shape: Shape,
}

impl Param {
    const fn opt(name: &'static str, shown: &'static str, shape: Shape) -> Self {
        Self {
            name,
            shown,
            required: false,
            shape,
        }
    }

    const fn req(self) -> Self {
        Self {
            required: true,
            ..self
        }
    }
}

/// The JSON views routes answer with; `openapi.rs` gives each its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// `GET /admin`: a page of every live object.
    AdminList,
    /// What a gallery admin action answers: done, or the admin view.
    AdminResult,
    /// `POST /admin/block`: the block, and what it removed.
    Blocked,
    /// A visitor's report, taken.
    Reported,
    /// `GET /admin?reports=1`: the report queue.
    Reports,
    /// `GET /browse`: the live tagged files.
    BrowseList,
    /// A gallery comment.
    Comment,
    /// `/api`: the contract.
    Contract,
    /// What a delete answers.
    Deleted,
    /// `GET /d`: the listed dirs.
    DirList,
    /// `GET /drop/<token>`: what a drop link takes, and how.
    DropRoom,
    /// `POST /drop/<token>`: the files a drop took.
    Dropped,
    /// A dir's record.
    DirRecord,
    /// A single file's record.
    FileRecord,
    /// A gallery: its page of images, its creation, or its counts.
    Gallery,
    /// `GET /pics`: the listed galleries.
    GalleryList,
    /// `/help`: the topics.
    HelpIndex,
    /// `/help/<topic>`: one topic.
    HelpTopic,
    /// A dir's history.
    History,
    /// `GET /`: where the contract and the help are.
    Home,
    /// One image of a gallery.
    Image,
    /// An image upload: one image, or a batch.
    ImageUpload,
    /// A like toggled.
    Like,
    /// `/openapi.json`: this document.
    Openapi,
    /// A single file's or a bundle's record.
    OwnedRecord,
    /// What retaining answers.
    RetainResponse,
    /// `/healthz` and `/readyz`.
    Status,
    /// What an upload makes: a file, a bundle, or (with `share=`) a dir.
    Upload,
}

/// What a route answers when it succeeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// JSON of the view, for every client.
    Json(View),
    /// JSON of the view for agents, an HTML page for browsers.
    Page(View),
    /// As `Page`, or for some captures text of this media type
    /// (`/help/errors` is plain text).
    PageOrText(View, &'static str),
    /// Stored bytes of any type, with ranges and validators.
    Bytes,
    /// Text of this media type.
    Text(&'static str),
    /// A QR code: `image/svg+xml`, or `text/plain` for a terminal.
    Qr,
    /// No body: what the answer says is in its status and headers (the
    /// tus protocol's answers).
    Empty,
    /// A JSON-RPC message (the MCP endpoint), or 202 with no body.
    JsonRpc,
}

/// What a route reads from the request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// No body.
    Nothing,
    /// A file's raw bytes, or multipart/form-data with file parts.
    Bytes,
    /// UTF-8 text (PUT and PATCH of text files).
    Text,
    /// A comment: JSON or a form with `name` and `text`.
    Comment,
    /// A form: `id` and `action`.
    Form,
    /// A form with one field, `password`: what a password page sends.
    Password,
    /// A resumable upload's bytes from some offset on
    /// (`application/offset+octet-stream`); optional on its creation.
    Offset,
    /// One JSON-RPC message (the MCP endpoint).
    JsonRpc,
    /// JSON or a form with `sha256` and `reason`: a block.
    Block,
    /// JSON or a form with `key`: the object the admin deletes.
    Key,
    /// JSON or a form with `reason`: a visitor's report.
    Report,
    /// JSON or a form with `id`: the report the admin clears.
    Id,
}

/// One route: everything known about it, in one place.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// The route's name in logs and metrics: never an id, a name or a
    /// secret.
    pub name: &'static str,
    /// The method it answers.
    pub verb: Verb,
    /// `/d/{key}/{name}`: literal segments and `{capture}`s (the OpenAPI
    /// path template syntax).
    pub path: &'static str,
    /// The query keys that select this route among those of the same path
    /// and verb; empty for the route taken when none is given.
    pub keywords: &'static [&'static str],
    /// The query parameters it reads.
    pub params: &'static [Param],
    /// The `/help/<topic>` that explains it; `about` for the
    /// self-description routes.
    pub topic: &'static str,
    /// What it does; `{limit}` placeholders name fields of [`Limits`],
    /// filled in by [`Route::describe`] with the running values.
    pub does: &'static str,
    /// What it reads from the body.
    pub takes: Takes,
    /// What it answers with.
    pub answers: Answer,
}

impl Route {
    /// What the route does, with this server's limits in it: the numbers
    /// are never written into the table, so a configured limit shows as
    /// configured.
    pub fn describe(&self, limits: &Limits) -> String {
        let sizes = [
            ("{import_bytes_max}", limits.import_bytes_max),
            ("{pics_upload_bytes_max}", limits.pics_upload_bytes_max),
        ];
        let counts = [
            ("{comment_name_chars_max}", limits.comment_name_chars_max),
            ("{comment_text_chars_max}", limits.comment_text_chars_max),
            ("{downloads_max}", limits.downloads_max as usize),
        ];
        let mut out = self.does.to_string();
        for (key, n) in sizes {
            out = out.replace(key, &store_core::limits::binary_size(n));
        }
        for (key, n) in counts {
            out = out.replace(key, &n.to_string());
        }
        out
    }

    /// The route as `/api` and `/help` show it: method, path with
    /// `<capture>`s, keyword and parameters, optional ones in brackets.
    pub fn usage(&self) -> String {
        let mut out = format!("{} ", self.verb.as_str());
        for segment in self.path.trim_start_matches('/').split('/') {
            out.push('/');
            match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(capture) => out.push_str(&format!("<{capture}>")),
                None => out.push_str(segment),
            }
        }
        let mut first = true;
        let ordered = self.params.iter().filter(|p| p.required);
        for p in ordered.chain(self.params.iter().filter(|p| !p.required)) {
            let sep = if first { '?' } else { '&' };
            first = false;
            let pair = format!("{sep}{}={}", p.name, p.shown);
            if p.required {
                out.push_str(&pair);
            } else {
                out.push_str(&format!("[{pair}]"));
            }
        }
        out
    }
}

// Parameters that several routes read.
/// `name=`: a file's name.
pub const NAME: Param = Param::opt("name", "<filename>", Shape::Text);
/// `ttl=`: a lifetime.
pub const TTL: Param = Param::opt("ttl", "<N>h|<N>d", Shape::Text);
/// `once=1`: burn after reading.
pub const ONCE: Param = Param::opt("once", "1", Shape::Flag);
/// `tag=`: a tag, each.
pub const TAG: Param = Param::opt("tag", "<t>", Shape::List);
/// `untag=`: a tag to remove, each.
pub const UNTAG: Param = Param::opt("untag", "<t>", Shape::List);
/// `share=`: the dir to upload into.
pub const SHARE: Param = Param::opt("share", "<name>", Shape::Text);
/// `url=`: the address to fetch.
pub const URL: Param = Param::opt("url", "<url>", Shape::Text).req();
/// `link=1`: store a link, not the bytes.
pub const LINK: Param = Param::opt("link", "1", Shape::Flag);
/// `token=`: a retain or upload token.
pub const TOKEN: Param = Param::opt("token", "<retain token>", Shape::Text);
/// `report=1` of an object's URL: a visitor's report.
pub const REPORT: Param = Param::opt("report", "1", Shape::Flag).req();

/// What every report route does.
const REPORT_DOES: &str = "report it to this server's admin: JSON {\"reason\": \"...\"} or a form field reason, 1 to 1000 characters; answers 202 (404 when the server has no admin); rate limited like any request";

/// `token=` of the admin's routes: STORE_ADMIN_TOKEN, for a browser
/// (agents send it as `Authorization: Bearer`).
pub const ADMIN_TOKEN: Param = Param::opt("token", "<admin token>", Shape::Text);
/// `retain=1`.
pub const RETAIN: Param = Param::opt("retain", "1", Shape::Flag).req();
/// `download=1`: the bytes, even for a browser.
pub const DOWNLOAD: Param = Param::opt("download", "1", Shape::Flag);
/// `info=1`: a file's page or record.
pub const INFO: Param = Param::opt("info", "1", Shape::Flag);
/// `thumb=`: a preview's size.
pub const THUMB: Param = Param::opt(
    "thumb",
    "1|160|320|640",
    Shape::Choice(&["1", "160", "320", "640"]),
);
/// `write=`: a dir's write token, or on creation a request for one.
pub const WRITE: Param = Param::opt("write", "1|<token>", Shape::Text);
/// The owner token an upload answered (or the X-Store-Owner header).
/// `owner=`: an owner token.
pub const OWNER: Param = Param::opt("owner", "<owner token>", Shape::Text);
/// `protect=1`.
pub const PROTECT: Param = Param::opt("protect", "1", Shape::Flag);
/// `max_downloads=N`.
pub const MAX_DOWNLOADS: Param = Param::opt("max_downloads", "N", Shape::Integer);
/// `encrypted=age`: the body is an age file its client encrypted.
pub const ENCRYPTED: Param = Param::opt("encrypted", "age", Shape::Choice(&["age"]));
/// `password=1`: the owner sets (or with an empty X-Store-Password
/// removes) the password reading needs.
pub const PASSWORD: Param = Param::opt("password", "1", Shape::Flag).req();
/// `unlock=1`: a password page's form, which answers a pass for an hour.
pub const UNLOCK: Param = Param::opt("unlock", "1", Shape::Flag).req();
const SET_PASSWORD_DOES: &str = "with the owner token: the new password in X-Store-Password (4 to 256 characters), or an empty X-Store-Password to remove it; reading then needs HTTP Basic with it (curl -u :<password>) or the owner token";
const UNLOCK_DOES: &str = "a password page's form (field password): the right one answers 303 back to the object with a cookie that opens it for an hour; a wrong one answers the page again (401), the 11th wrong try within 10 minutes 429";
/// `dir=1`: make a dir.
pub const DIR: Param = Param::opt("dir", "1", Shape::Flag).req();
/// `drop=1`: a dir that collects files through a drop link.
pub const DROP: Param = Param::opt("drop", "1", Shape::Flag);
/// `drop_files=N`: the most files a drop link takes.
pub const DROP_FILES: Param = Param::opt("drop_files", "N", Shape::Integer);
/// `drop_bytes=N`: the most bytes a drop link takes.
pub const DROP_BYTES: Param = Param::opt("drop_bytes", "N", Shape::Integer);
/// `qr=1` (or `svg`): the link's QR code as SVG; `qr=text` for a terminal.
/// `qr=`: a QR code's format.
pub const QR: Param = Param::opt("qr", "1|svg|text", Shape::Choice(&["1", "svg", "text"])).req();
const QR_DOES: &str = "the QR code of this link: SVG (qr=1), or text blocks for a terminal (qr=text); never spends a counted download";
/// `q=`: text to find.
pub const Q: Param = Param::opt("q", "<substr>", Shape::Text);
/// `order=`: asc or desc.
pub const ORDER: Param = Param::opt("order", "asc|desc", Shape::Choice(&["asc", "desc"]));
/// `listed=1`.
pub const LISTED: Param = Param::opt("listed", "1", Shape::Flag);
/// `show=1`.
pub const SHOW: Param = Param::opt("show", "1", Shape::Flag);
/// `name=`: a dir's name.
pub const DIR_NAME: Param = Param::opt("name", "<name>", Shape::Text);
/// `zip=1`: every file as one zip.
pub const ZIP: Param = Param::opt("zip", "1", Shape::Flag);
/// `p=`: a gallery's page.
pub const PAGE: Param = Param::opt("p", "N", Shape::Integer);
/// `embed=1`: a gallery framed in another site.
pub const EMBED: Param = Param::opt("embed", "1", Shape::Flag);
/// `stars=`: the images a visitor liked.
pub const STARS: Param = Param::opt("stars", "<pid1>,<pid2>", Shape::List);

/// Declares the table: one line per route,
/// `Variant { captures ; params: Type } => Route`, where the captures and
/// the typed parameters are each optional. It makes [`Endpoint`] (with the
/// outcomes that are no route), [`RouteId`] and [`ROUTES`] from the same
/// lines, so they cannot drift apart; the router reads a route's `Type`
/// from the query ([`FromQuery`]) once, and the variant carries it.
macro_rules! route_table {
    ($( $(#[$doc:meta])* $variant:ident
        $({ $($field:ident),* $(; $params:ident: $pty:ty)? })? => $route:expr, )+) => {
        /// What a request asks for: a route with its decoded captures and
        /// its typed parameters, or why it matches none.
        // A variant's `String` fields are the path's captures, named as in
        // its template (`{key}`); its other field is the route's
        // parameters, read from the query. The table documents them.
        #[allow(missing_docs)]
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Endpoint {
            $( $(#[$doc])* $variant $({ $($field: String,)* $($params: Parsed<$pty>)? })?, )+
            /// A known path with a method it does not support (501).
            MethodNotAllowed,
            /// A path and method that need one of these keywords (400).
            MissingKeyword { keys: Vec<&'static str> },
            /// Keywords of more than one route in one request (400).
            ConflictingKeywords { keys: Vec<&'static str> },
            /// No route has this path (404).
            NotFound,
        }

        /// A route of the table, without its captures.
        // Each variant is documented on the `Endpoint` of the same name.
        #[allow(missing_docs)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RouteId { $($variant,)+ }

        /// Every route, in [`RouteId`] order.
        pub static ROUTES: &[Route] = &[$($route,)+];

        impl RouteId {
            /// Every route id, in table order.
            pub const ALL: &'static [RouteId] = &[$(RouteId::$variant,)+];

            /// The route this id names.
            pub fn route(self) -> &'static Route {
                &ROUTES[self as usize]
            }

            /// The names of the variant's capture fields, which must be the
            /// path's captures in order (checked by a test).
            pub fn fields(self) -> &'static [&'static str] {
                match self {
                    $(RouteId::$variant => &[$($(stringify!($field)),*)?],)+
                }
            }

            /// The endpoint of this route with these captures, in path
            /// order, and its parameters read from `query`.
            pub(crate) fn endpoint(
                self,
                mut captures: impl Iterator<Item = String>,
                query: &Query,
                limits: &Limits,
            ) -> Endpoint {
                let _ = (&mut captures, query, limits);
                match self {
                    $(RouteId::$variant => Endpoint::$variant $({
                        $($field: captures.next().unwrap_or_default(),)*
                        $($params: <$pty as FromQuery>::from_query(query, limits),)?
                    })?,)+
                }
            }
        }

        impl Endpoint {
            /// The route this endpoint is, if it is one.
            pub fn id(&self) -> Option<RouteId> {
                match self {
                    $(Endpoint::$variant { .. } => Some(RouteId::$variant),)+
                    _ => None,
                }
            }

            /// The path's captures, in order (empty for an outcome that is
            /// no route).
            pub fn captures(&self) -> Vec<&str> {
                match self {
                    $(Endpoint::$variant $({ $($field,)* .. })? => {
                        vec![$($($field.as_str()),*)?]
                    })+
                    _ => Vec::new(),
                }
            }

            /// Why the route's parameters were refused, if they were.
            pub fn refusal(&self) -> Option<&StoreError> {
                match self {
                    $($(Endpoint::$variant { $($params,)? .. } => {
                        None$(.or($params.as_ref().err()))?
                    })?)+
                    _ => None,
                }
            }
        }
    };
}

route_table! {
    /// GET /: upload page for browsers, a pointer for agents.
    Home => Route { name: "home", verb: Verb::Get, path: "/", keywords: &[], params: &[],
        topic: "files", does: "the upload page for browsers; for agents, where the contract and the help are",
        takes: Takes::Nothing, answers: Answer::Page(View::Home) },
    /// POST /: raw or multipart upload (one part: a file; 2+: a bundle).
    Upload { ; file: NewFile } => Route { name: "upload", verb: Verb::Post, path: "/", keywords: &[],
        params: &[NAME, TTL, ONCE, MAX_DOWNLOADS, TAG, SHARE, PROTECT, ENCRYPTED, TOKEN],
        topic: "files",
        does: "upload raw bytes, or multipart/form-data: one file part answers the single file record, 2+ file parts create an immutable bundle (the bundle record); share=<name> uploads into that named dir (create-or-get); the answer carries owner_token (also in X-Store-Owner), once; protect=1: changes need it; max_downloads=N (1 to {downloads_max}): removed after its Nth whole download; encrypted=age: the body is an age file (age-encryption.org/v1, binary) encrypted by the client, stored and served as application/octet-stream, never decrypted here (see /help/private)",
        takes: Takes::Bytes, answers: Answer::Json(View::Upload) },
    /// POST /?url=: import a remote document.
    Import { ; import: ImportRequest } => Route { name: "import", verb: Verb::Post, path: "/", keywords: &["url"],
        params: &[URL, Param::opt("name", "<name>", Shape::Text), LINK, TAG, TTL, MAX_DOWNLOADS, PROTECT, TOKEN],
        topic: "import",
        does: "import a public http(s) document ({import_bytes_max} at most), or with link=1 store the URL as a redirect document; the answer carries owner_token, once",
        takes: Takes::Nothing, answers: Answer::Json(View::FileRecord) },
    /// POST /?dir=1: create a dir.
    CreateDir { ; dir: NewDir } => Route { name: "create_dir", verb: Verb::Post, path: "/", keywords: &["dir"],
        params: &[DIR, DIR_NAME, LISTED, TAG, TTL, WRITE, SHOW, DROP, DROP_FILES, DROP_BYTES, TOKEN],
        topic: "dirs",
        does: "create (or get, when named) a dir; optional multipart parts become its first files; a creation answers owner_token, once; X-Store-Password protects reading it; drop=1 makes a dir only its owner reads, whose drop_url (answered once) takes files from anyone who has it: drop_files=N (1 to 1000, default 100) and drop_bytes=N (default a tenth of the pool) bound it",
        takes: Takes::Bytes, answers: Answer::Json(View::DirRecord) },
    /// GET /api: the contract.
    Api => Route { name: "api", verb: Verb::Get, path: "/api", keywords: &[], params: &[],
        topic: "about", does: "this contract: every endpoint, parameter, limit and error code, as JSON", takes: Takes::Nothing, answers: Answer::Json(View::Contract) },
    /// GET /openapi.json: the contract as an OpenAPI 3.1 document.
    Openapi => Route { name: "openapi", verb: Verb::Get, path: "/openapi.json", keywords: &[], params: &[],
        topic: "about", does: "this contract as an OpenAPI 3.1 document, generated from the route table",
        takes: Takes::Nothing, answers: Answer::Json(View::Openapi) },
    /// GET /browse.
    Browse { ; browse: Browse } => Route { name: "browse", verb: Verb::Get, path: "/browse", keywords: &[],
        params: &[TAG, Q, Param::opt("sort", "created|name|size|expires", Shape::Choice(&["created", "name", "size", "expires"])), ORDER],
        topic: "browse", does: "list live tagged files", takes: Takes::Nothing, answers: Answer::Page(View::BrowseList) },
    /// GET /help.
    Help => Route { name: "help", verb: Verb::Get, path: "/help", keywords: &[], params: &[],
        topic: "about", does: "topics with a one-line summary and URL each (JSON for agents, HTML for browsers)",
        takes: Takes::Nothing, answers: Answer::Page(View::HelpIndex) },
    /// GET `/help/<topic>`.
    HelpTopic { topic } => Route { name: "help_topic", verb: Verb::Get, path: "/help/{topic}", keywords: &[], params: &[],
        topic: "about", does: "one topic: its endpoints and a text with this server's values; /help/errors is plain text",
        takes: Takes::Nothing, answers: Answer::PageOrText(View::HelpTopic, "text/plain") },
    /// GET /write_for_agents.
    WriteForAgents => Route { name: "write_for_agents", verb: Verb::Get, path: "/write_for_agents", keywords: &[], params: &[],
        topic: "about", does: "copy-pasteable instructions for uploading, sharing, editing and retaining",
        takes: Takes::Nothing, answers: Answer::Text("text/markdown") },
    /// GET /copy_for_agents.
    CopyForAgents => Route { name: "copy_for_agents", verb: Verb::Get, path: "/copy_for_agents", keywords: &[], params: &[],
        topic: "about", does: "copy-pasteable instructions for copying files, bundles, dirs and galleries out",
        takes: Takes::Nothing, answers: Answer::Text("text/markdown") },
    /// GET /releases.
    Releases => Route { name: "releases", verb: Verb::Get, path: "/releases", keywords: &[], params: &[],
        topic: "about", does: "the changelog: markdown for agents, HTML for browsers",
        takes: Takes::Nothing, answers: Answer::Text("text/markdown") },
    /// GET `/static/<file>`: the pages' stylesheet and script.
    Static { file } => Route { name: "static", verb: Verb::Get, path: "/static/{file}", keywords: &[], params: &[],
        topic: "about", does: "the pages' stylesheet and script", takes: Takes::Nothing, answers: Answer::Bytes },
    /// GET /llms.txt.
    LlmsTxt => Route { name: "llms_txt", verb: Verb::Get, path: "/llms.txt", keywords: &[], params: &[],
        topic: "about", does: "a summary for language models (llmstxt.org): what this service is, uploading and reading with curl, this server's limits, and where everything else is described",
        takes: Takes::Nothing, answers: Answer::Text("text/markdown") },
    /// GET /robots.txt.
    Robots => Route { name: "robots", verb: Verb::Get, path: "/robots.txt", keywords: &[], params: &[],
        topic: "about", does: "what crawlers may index", takes: Takes::Nothing, answers: Answer::Text("text/plain") },
    /// GET /healthz: the process serves.
    Healthz => Route { name: "healthz", verb: Verb::Get, path: "/healthz", keywords: &[], params: &[],
        topic: "operations", does: "200 {\"status\": \"ok\"} while the process serves",
        takes: Takes::Nothing, answers: Answer::Json(View::Status) },
    /// GET /readyz: the store can be reached.
    Readyz => Route { name: "readyz", verb: Verb::Get, path: "/readyz", keywords: &[], params: &[],
        topic: "operations",
        does: "200 {\"status\": \"ok\"} when the records and the bytes can be reached, 503 (code unavailable) otherwise; for load balancers, never rate limited",
        takes: Takes::Nothing, answers: Answer::Json(View::Status) },
    /// GET or HEAD `/<id>`.
    GetFile { id ; read: FileRead } => Route { name: "get_file", verb: Verb::Get, path: "/{id}", keywords: &[],
        params: &[DOWNLOAD, INFO, THUMB],
        topic: "files",
        does: "file bytes (a bundle: its index.html for browsers, a zip for agents); ?download=1 forces download; ?info=1 the record; images and text render inline; ETag, Last-Modified, If-None-Match/If-Modified-Since (304) and one Range (206) on every download; HEAD never burns a once=1 file, and a browser gets a page with a download link before one burns",
        takes: Takes::Nothing, answers: Answer::Bytes },
    /// GET `/<id>?qr=1`: the QR code of a file's or bundle's link.
    FileQr { id ; qr: QrFormat } => Route { name: "file_qr", verb: Verb::Get, path: "/{id}", keywords: &["qr"], params: &[QR],
        topic: "files", does: QR_DOES, takes: Takes::Nothing, answers: Answer::Qr },
    /// GET or HEAD `/<id>/<filename>`: one file of a bundle.
    GetBundleMember { id, filename ; download: AsDownload } => Route { name: "get_bundle_member", verb: Verb::Get, path: "/{id}/{filename}", keywords: &[],
        params: &[DOWNLOAD, THUMB],
        topic: "bundles", does: "one file of a bundle", takes: Takes::Nothing, answers: Answer::Bytes },
    /// POST `/<id>?retain=1`.
    RetainFile { id } => Route { name: "retain_file", verb: Verb::Post, path: "/{id}", keywords: &["retain"],
        params: &[RETAIN, TOKEN],
        topic: "retention", does: "retain indefinitely; needs the retain token", takes: Takes::Nothing, answers: Answer::Json(View::RetainResponse) },
    /// POST `/<id>?tag=..&untag=`..
    TagFile { id ; tags: TagEdit } => Route { name: "tag_file", verb: Verb::Post, path: "/{id}", keywords: &["tag", "untag"],
        params: &[TAG, UNTAG, OWNER],
        topic: "browse", does: "add or remove tags; content and expiry untouched", takes: Takes::Nothing, answers: Answer::Json(View::FileRecord) },
    /// POST `/<id>?ttl=`: the owner sets a new expiry.
    SetFileTtl { id ; ttl: NewTtl } => Route { name: "set_file_ttl", verb: Verb::Post, path: "/{id}", keywords: &["ttl"],
        params: &[TTL.req(), OWNER],
        topic: "owners", does: "with the owner token: a new lifetime counted from now, clamped as at upload (a retained object keeps its own)",
        takes: Takes::Nothing, answers: Answer::Json(View::OwnedRecord) },
    /// POST `/<id>?password=1`: the owner sets or removes the password.
    SetFilePassword { id } => Route { name: "set_file_password", verb: Verb::Post, path: "/{id}", keywords: &["password"],
        params: &[PASSWORD, OWNER],
        topic: "private", does: SET_PASSWORD_DOES, takes: Takes::Nothing, answers: Answer::Json(View::OwnedRecord) },
    /// POST `/<id>?unlock=1`: a password page's form.
    UnlockFile { id } => Route { name: "unlock_file", verb: Verb::Post, path: "/{id}", keywords: &["unlock"],
        params: &[UNLOCK],
        topic: "private", does: UNLOCK_DOES, takes: Takes::Password, answers: Answer::Empty },
    /// POST `/<id>?report=1`: a visitor reports a file or bundle.
    ReportFile { id } => Route { name: "report_file", verb: Verb::Post, path: "/{id}", keywords: &["report"],
        params: &[REPORT], topic: "operators", does: REPORT_DOES, takes: Takes::Report, answers: Answer::Json(View::Reported) },
    /// PUT `/<id>`.
    ReplaceFile { id } => Route { name: "replace_file", verb: Verb::Put, path: "/{id}", keywords: &[], params: &[OWNER, TOKEN],
        topic: "files", does: "replace a text file's content", takes: Takes::Text, answers: Answer::Json(View::FileRecord) },
    /// PATCH `/<id>`.
    AppendFile { id } => Route { name: "append_file", verb: Verb::Patch, path: "/{id}", keywords: &[], params: &[OWNER, TOKEN],
        topic: "files", does: "append text to a text file", takes: Takes::Text, answers: Answer::Json(View::FileRecord) },
    /// DELETE `/<id>`.
    DeleteFile { id } => Route { name: "delete_file", verb: Verb::Delete, path: "/{id}", keywords: &[], params: &[OWNER, TOKEN],
        topic: "files", does: "delete a file or a bundle", takes: Takes::Nothing, answers: Answer::Json(View::Deleted) },
    /// GET /d: listed dirs.
    ListDirs { ; list: DirList } => Route { name: "list_dirs", verb: Verb::Get, path: "/d", keywords: &[],
        params: &[Param::opt("q", "<sub>", Shape::Text),
            Param::opt("created_after", "<ts>", Shape::Text), Param::opt("created_before", "<ts>", Shape::Text),
            Param::opt("updated_after", "<ts>", Shape::Text), Param::opt("updated_before", "<ts>", Shape::Text),
            Param::opt("sort", "created|updated|name", Shape::Choice(&["created", "updated", "name"])), ORDER],
        topic: "browse", does: "listed dirs", takes: Takes::Nothing, answers: Answer::Page(View::DirList) },
    /// GET or HEAD `/d/<key>` (listing, page, or `?zip=1`).
    GetDir { key ; zip: AsZip } => Route { name: "get_dir", verb: Verb::Get, path: "/d/{key}", keywords: &[],
        params: &[ZIP],
        topic: "dirs", does: "the dir listing, or with zip=1 a zip of every file", takes: Takes::Nothing, answers: Answer::Page(View::DirRecord) },
    /// GET `/d/<key>?qr=1`: the QR code of a dir's link.
    DirQr { key ; qr: QrFormat } => Route { name: "dir_qr", verb: Verb::Get, path: "/d/{key}", keywords: &["qr"], params: &[QR],
        topic: "dirs", does: QR_DOES, takes: Takes::Nothing, answers: Answer::Qr },
    /// POST `/d/<key>`: add files.
    AddToDir { key ; name: RawName } => Route { name: "add_to_dir", verb: Verb::Post, path: "/d/{key}", keywords: &[],
        params: &[NAME, WRITE, OWNER],
        topic: "dirs", does: "add files (multipart parts, or a raw body with name=)", takes: Takes::Bytes, answers: Answer::Json(View::DirRecord) },
    /// POST `/d/<key>?show=1`.
    ShowDir { key } => Route { name: "show_dir", verb: Verb::Post, path: "/d/{key}", keywords: &["show"],
        params: &[SHOW.req(), TOKEN],
        topic: "show-dirs", does: "make a show-dir; needs the retain token", takes: Takes::Nothing, answers: Answer::Json(View::DirRecord) },
    /// POST `/d/<key>?retain=1`.
    RetainDir { key } => Route { name: "retain_dir", verb: Verb::Post, path: "/d/{key}", keywords: &["retain"],
        params: &[RETAIN, TOKEN],
        topic: "retention", does: "retain a dir; needs the retain token", takes: Takes::Nothing, answers: Answer::Json(View::RetainResponse) },
    /// POST `/d/<key>?ttl=`: the owner sets a new sliding lifetime.
    SetDirTtl { key ; ttl: NewTtl } => Route { name: "set_dir_ttl", verb: Verb::Post, path: "/d/{key}", keywords: &["ttl"],
        params: &[TTL.req(), OWNER],
        topic: "owners", does: "with the owner token: a new sliding lifetime counted from now, clamped as at creation (a retained dir keeps its own)",
        takes: Takes::Nothing, answers: Answer::Json(View::DirRecord) },
    /// POST `/d/<key>?password=1`: the owner sets or removes the password.
    SetDirPassword { key } => Route { name: "set_dir_password", verb: Verb::Post, path: "/d/{key}", keywords: &["password"],
        params: &[PASSWORD, OWNER],
        topic: "private", does: SET_PASSWORD_DOES, takes: Takes::Nothing, answers: Answer::Json(View::DirRecord) },
    /// POST `/d/<key>?unlock=1`: a password page's form.
    UnlockDir { key } => Route { name: "unlock_dir", verb: Verb::Post, path: "/d/{key}", keywords: &["unlock"],
        params: &[UNLOCK],
        topic: "private", does: UNLOCK_DOES, takes: Takes::Password, answers: Answer::Empty },
    /// POST `/d/<key>?report=1`: a visitor reports a dir.
    ReportDir { key } => Route { name: "report_dir", verb: Verb::Post, path: "/d/{key}", keywords: &["report"],
        params: &[REPORT], topic: "operators", does: REPORT_DOES, takes: Takes::Report, answers: Answer::Json(View::Reported) },
    /// POST `/d/<key>?drop=0`: the owner closes the drop link.
    CloseDrop { key ; close: CloseDrop } => Route { name: "close_drop", verb: Verb::Post, path: "/d/{key}", keywords: &["drop"],
        params: &[Param::opt("drop", "0", Shape::Choice(&["0"])).req(), OWNER],
        topic: "private", does: "with the owner token: close the dir's drop link early (it answers 404 from then on); the dir stays its owner's",
        takes: Takes::Nothing, answers: Answer::Json(View::DirRecord) },
    /// GET `/drop/<token>`: a drop link's page or how-to.
    DropPage { token } => Route { name: "drop_page", verb: Verb::Get, path: "/drop/{token}", keywords: &[], params: &[],
        topic: "private", does: "a drop link: an upload page for browsers, for agents what it still takes and how; 404 once closed",
        takes: Takes::Nothing, answers: Answer::Page(View::DropRoom) },
    /// POST `/drop/<token>`: files dropped.
    DropFiles { token ; name: RawName } => Route { name: "drop_files", verb: Verb::Post, path: "/drop/{token}", keywords: &[],
        params: &[NAME],
        topic: "private", does: "add files through a drop link (multipart parts, or a raw body with name=): 201 with the names and sizes taken, never a URL or a listing; a name already there gets a number (a (2).txt); 403 past the link's files or bytes",
        takes: Takes::Bytes, answers: Answer::Json(View::Dropped) },
    /// DELETE `/d/<key>`.
    DeleteDir { key } => Route { name: "delete_dir", verb: Verb::Delete, path: "/d/{key}", keywords: &[], params: &[WRITE, OWNER, TOKEN],
        topic: "dirs", does: "delete the whole dir", takes: Takes::Nothing, answers: Answer::Json(View::Deleted) },
    /// GET `/d/<key>/history`.
    DirHistory { key } => Route { name: "dir_history", verb: Verb::Get, path: "/d/{key}/history", keywords: &[], params: &[],
        topic: "dirs", does: "the dir's history, newest first", takes: Takes::Nothing, answers: Answer::Page(View::History) },
    /// GET or HEAD `/d/<key>/<file>`.
    GetDirFile { key, file ; download: AsDownload } => Route { name: "get_dir_file", verb: Verb::Get, path: "/d/{key}/{file}", keywords: &[],
        params: &[DOWNLOAD, THUMB],
        topic: "dirs", does: "one file of a dir", takes: Takes::Nothing, answers: Answer::Bytes },
    /// PUT `/d/<key>/<file>`.
    PutDirFile { key, file } => Route { name: "put_dir_file", verb: Verb::Put, path: "/d/{key}/{file}", keywords: &[], params: &[WRITE, OWNER],
        topic: "dirs", does: "replace (or create) a text file", takes: Takes::Text, answers: Answer::Json(View::DirRecord) },
    /// PATCH `/d/<key>/<file>`.
    AppendDirFile { key, file } => Route { name: "append_dir_file", verb: Verb::Patch, path: "/d/{key}/{file}", keywords: &[], params: &[WRITE, OWNER],
        topic: "dirs", does: "append text to a text file", takes: Takes::Text, answers: Answer::Json(View::DirRecord) },
    /// DELETE `/d/<key>/<file>`.
    DeleteDirFile { key, file } => Route { name: "delete_dir_file", verb: Verb::Delete, path: "/d/{key}/{file}", keywords: &[], params: &[WRITE, OWNER],
        topic: "dirs", does: "delete one file", takes: Takes::Nothing, answers: Answer::Json(View::DirRecord) },
    /// GET /pics: listed galleries.
    PicsIndex => Route { name: "pics_index", verb: Verb::Get, path: "/pics", keywords: &[], params: &[],
        topic: "galleries", does: "listed galleries", takes: Takes::Nothing, answers: Answer::Page(View::GalleryList) },
    /// POST /pics?create=1.
    CreateGallery { ; gallery: NewGallery } => Route { name: "create_gallery", verb: Verb::Post, path: "/pics", keywords: &["create"],
        params: &[Param::opt("create", "1", Shape::Flag).req(), DIR_NAME, LISTED],
        topic: "galleries",
        does: "create a gallery; a dir-style name is its key (create-or-get); the token comes back once, in admin_url",
        takes: Takes::Nothing, answers: Answer::Json(View::Gallery) },
    /// GET `/pics/g/<gid>` (grid or JSON; `?likes=1` counters).
    Gallery { gid ; show: GalleryShow } => Route { name: "gallery", verb: Verb::Get, path: "/pics/g/{gid}", keywords: &[],
        params: &[PAGE, EMBED, STARS, Param::opt("likes", "1", Shape::Flag), ZIP],
        topic: "galleries",
        does: "the gallery: a grid for browsers, JSON (images, selected, pool, limits, upload how-to) for agents; likes=1: like and comment counters; zip=1: every visible image in one zip",
        takes: Takes::Nothing, answers: Answer::Page(View::Gallery) },
    /// GET `/pics/g/<gid>?qr=1`: the QR code of a gallery's link.
    GalleryQr { gid ; qr: QrFormat } => Route { name: "gallery_qr", verb: Verb::Get, path: "/pics/g/{gid}", keywords: &["qr"], params: &[QR],
        topic: "galleries", does: QR_DOES, takes: Takes::Nothing, answers: Answer::Qr },
    /// POST `/pics/g/<gid>?name=`: upload.
    UploadImage { gid ; image: ImageUpload } => Route { name: "upload_image", verb: Verb::Post, path: "/pics/g/{gid}", keywords: &[],
        params: &[NAME],
        topic: "galleries",
        does: "upload an image (raw bytes, or multipart for several): JPEG, PNG, WebP, GIF or HEIC, {pics_upload_bytes_max} each at most",
        takes: Takes::Bytes, answers: Answer::Json(View::ImageUpload) },
    /// POST `/pics/g/<gid>?url=`.
    ImportImage { gid ; import: ImageImport } => Route { name: "import_image", verb: Verb::Post, path: "/pics/g/{gid}", keywords: &["url"],
        params: &[Param::opt("url", "<image URL>", Shape::Text).req(), NAME],
        topic: "galleries", does: "import an image from a public host", takes: Takes::Nothing, answers: Answer::Json(View::Image) },
    /// POST `/pics/g/<gid>?comment=1`.
    Comment { gid } => Route { name: "comment", verb: Verb::Post, path: "/pics/g/{gid}", keywords: &["comment"],
        params: &[Param::opt("comment", "1", Shape::Flag).req(), Param::opt("name", "<name>", Shape::Text), Param::opt("text", "<text>", Shape::Text)],
        topic: "galleries",
        does: "post a comment: form or JSON with name (optional, {comment_name_chars_max} characters) and text ({comment_text_chars_max} characters)",
        takes: Takes::Comment, answers: Answer::Json(View::Comment) },
    /// POST `/pics/g/<gid>?clike=<cid>`.
    LikeComment { gid ; comment: CommentLike } => Route { name: "like_comment", verb: Verb::Post, path: "/pics/g/{gid}", keywords: &["clike"],
        params: &[Param::opt("clike", "<cid>", Shape::Text).req()],
        topic: "galleries", does: "toggle your like of a comment", takes: Takes::Nothing, answers: Answer::Json(View::Like) },
    /// POST `/pics/g/<gid>?report=1`: a visitor reports a gallery.
    ReportGallery { gid } => Route { name: "report_gallery", verb: Verb::Post, path: "/pics/g/{gid}", keywords: &["report"],
        params: &[REPORT], topic: "operators", does: REPORT_DOES, takes: Takes::Report, answers: Answer::Json(View::Reported) },
    /// GET `/pics/g/<gid>/<secret>`: the admin page.
    GalleryAdmin { gid, secret ; page: AdminPage } => Route { name: "gallery_admin", verb: Verb::Get, path: "/pics/g/{gid}/{secret}", keywords: &[],
        params: &[],
        topic: "galleries", does: "the admin page (JSON for agents, hidden images included)", takes: Takes::Nothing, answers: Answer::Page(View::Gallery) },
    /// GET `/pics/g/<gid>/<secret>/json`: the admin view as JSON.
    GalleryAdminJson { gid, secret ; page: AdminPage } => Route { name: "gallery_admin_json", verb: Verb::Get, path: "/pics/g/{gid}/{secret}/json", keywords: &[],
        params: &[],
        topic: "galleries", does: "the admin view as JSON, hidden images included", takes: Takes::Nothing, answers: Answer::Json(View::Gallery) },
    /// POST `/pics/g/<gid>/<secret>`.
    GalleryAdminAction { gid, secret } => Route { name: "gallery_admin_action", verb: Verb::Post, path: "/pics/g/{gid}/{secret}", keywords: &[],
        params: &[Param::opt("id", "<image or comment id>", Shape::Text),
            Param::opt("action", "hide|unhide|delete|up|down|cdel", Shape::Choice(&["hide", "unhide", "delete", "up", "down", "cdel"]))],
        topic: "galleries",
        does: "admin action: form fields id and action (hide, unhide, delete, up, down, cdel)",
        takes: Takes::Form, answers: Answer::Json(View::AdminResult) },
    /// POST `/pics/g/<gid>/<secret>?upload=1`: the admin uploads.
    AdminUploadImage { gid, secret ; image: ImageUpload } => Route { name: "admin_upload_image", verb: Verb::Post, path: "/pics/g/{gid}/{secret}", keywords: &["upload"],
        params: &[Param::opt("upload", "1", Shape::Flag).req(), NAME],
        topic: "galleries",
        does: "the admin uploads images, as at POST /pics/g/<gid>: the way in when the server takes gallery images from admins only (STORE_PICS_UPLOADS=admin)",
        takes: Takes::Bytes, answers: Answer::Json(View::ImageUpload) },
    /// POST `/pics/g/<gid>/<secret>?url=`: the admin imports.
    AdminImportImage { gid, secret ; import: ImageImport } => Route { name: "admin_import_image", verb: Verb::Post, path: "/pics/g/{gid}/{secret}", keywords: &["url"],
        params: &[Param::opt("url", "<image URL>", Shape::Text).req(), NAME],
        topic: "galleries", does: "the admin imports an image from a public host", takes: Takes::Nothing, answers: Answer::Json(View::Image) },
    /// GET `/pics/i/<id>`.
    Image { id ; read: ImageRead } => Route { name: "image", verb: Verb::Get, path: "/pics/i/{id}", keywords: &[],
        params: &[THUMB, DOWNLOAD],
        topic: "galleries", does: "an image, or a WebP preview fitting that box", takes: Takes::Nothing, answers: Answer::Bytes },
    /// POST `/pics/i/<id>?like=1`.
    LikeImage { id } => Route { name: "like_image", verb: Verb::Post, path: "/pics/i/{id}", keywords: &["like"],
        params: &[Param::opt("like", "1", Shape::Flag).req()],
        topic: "galleries", does: "toggle your like of an image", takes: Takes::Nothing, answers: Answer::Json(View::Like) },
    /// POST `/pics/i/<id>?report=1`: a visitor reports an image.
    ReportImage { id } => Route { name: "report_image", verb: Verb::Post, path: "/pics/i/{id}", keywords: &["report"],
        params: &[REPORT], topic: "operators", does: REPORT_DOES, takes: Takes::Report, answers: Answer::Json(View::Reported) },
    /// OPTIONS /uploads: what the tus server supports.
    TusOptions => Route { name: "tus_options", verb: Verb::Options, path: "/uploads", keywords: &[], params: &[],
        topic: "uploads",
        does: "204 with Tus-Version, Tus-Extension (creation, creation-with-upload, termination, checksum, expiration), Tus-Checksum-Algorithm (sha1, sha256) and Tus-Max-Size (the single-file limit)",
        takes: Takes::Nothing, answers: Answer::Empty },
    /// POST /uploads: a resumable upload (tus creation).
    TusCreate => Route { name: "tus_create", verb: Verb::Post, path: "/uploads", keywords: &[], params: &[TOKEN],
        topic: "uploads",
        does: "create a resumable upload (tus 1.0.0): Upload-Length (the whole size, reserved in the pool) and Upload-Metadata (filename required; filetype, ttl, once, max_downloads, protect, tags as for a plain upload, each base64); 201 with Location, Upload-Expires (24 h) and X-Store-Owner; a body of application/offset+octet-stream is its first bytes",
        takes: Takes::Offset, answers: Answer::Empty },
    /// GET or HEAD `/uploads/<uid>`.
    TusUpload { uid } => Route { name: "tus_upload", verb: Verb::Get, path: "/uploads/{uid}", keywords: &[], params: &[],
        topic: "uploads",
        does: "HEAD: where the upload stands (Upload-Offset, Upload-Length, Upload-Expires, Upload-Metadata); GET: the single file record once complete, 404 before",
        takes: Takes::Nothing, answers: Answer::Json(View::FileRecord) },
    /// PATCH `/uploads/<uid>`: the next bytes.
    TusPatch { uid } => Route { name: "tus_patch", verb: Verb::Patch, path: "/uploads/{uid}", keywords: &[], params: &[],
        topic: "uploads",
        does: "the next bytes, from Upload-Offset (409 if the upload is elsewhere or another PATCH is sending), as application/offset+octet-stream (415 otherwise), optionally with Upload-Checksum (460 on a mismatch, nothing kept); 204 with the new Upload-Offset; the last byte makes the single file, named in X-Store-Id and X-Store-Url",
        takes: Takes::Offset, answers: Answer::Empty },
    /// DELETE `/uploads/<uid>`: ends an upload (tus termination).
    TusDelete { uid } => Route { name: "tus_delete", verb: Verb::Delete, path: "/uploads/{uid}", keywords: &[], params: &[],
        topic: "uploads", does: "end an upload in progress: its bytes go and its room in the pool is given back (204)",
        takes: Takes::Nothing, answers: Answer::Empty },
    /// POST /mcp: the Model Context Protocol.
    Mcp => Route { name: "mcp", verb: Verb::Post, path: "/mcp", keywords: &[], params: &[],
        topic: "agents",
        does: "the Model Context Protocol over Streamable HTTP, stateless (no session; any process answers), answered in JSON: initialize, tools/list, tools/call and ping; each tool calls one route of this table and answers its JSON record, a refusal as a tool error (isError) starting with the HTTP status and code; Authorization: Bearer carries the upload or retain token",
        takes: Takes::JsonRpc, answers: Answer::JsonRpc },
    /// GET /mcp: no event stream.
    McpStream => Route { name: "mcp_stream", verb: Verb::Get, path: "/mcp", keywords: &[], params: &[],
        topic: "agents", does: "405 (Allow: POST): the server sends nothing unasked, so it opens no event stream",
        takes: Takes::Nothing, answers: Answer::Empty },
    /// DELETE /mcp: no session to end.
    McpEnd => Route { name: "mcp_end", verb: Verb::Delete, path: "/mcp", keywords: &[], params: &[],
        topic: "agents", does: "405 (Allow: POST): there is no session to end",
        takes: Takes::Nothing, answers: Answer::Empty },
    /// GET /admin: every live object, for the admin.
    AdminList { ; list: AdminQuery } => Route { name: "admin_list", verb: Verb::Get, path: "/admin", keywords: &[],
        params: &[Param::opt("q", "<words, type, sha256 or id>", Shape::Text), Param::opt("after", "<next>", Shape::Text),
            Param::opt("limit", "1..200", Shape::Integer), ADMIN_TOKEN],
        topic: "operators",
        does: "with STORE_ADMIN_TOKEN (Authorization: Bearer, or token=): every live object of every kind, newest first, 50 a page (limit= up to 200; after= the next value a page answered); q= finds objects by the words of their names, a content type (with a /), a SHA-256 of their bytes, or an id; the blocklist comes with the first page. Without the server's admin token: 401; with no admin token configured: 404",
        takes: Takes::Nothing, answers: Answer::Page(View::AdminList) },
    /// GET /admin?reports=1: the visitors' reports.
    AdminReports => Route { name: "admin_reports", verb: Verb::Get, path: "/admin", keywords: &["reports"],
        params: &[Param::opt("reports", "1", Shape::Flag).req(), ADMIN_TOKEN],
        topic: "operators",
        does: "the visitors' reports, the oldest first (200 at most), each with the object it is about while that is live; clear one with POST /admin/clear",
        takes: Takes::Nothing, answers: Answer::Page(View::Reports) },
    /// POST /admin/clear: takes a report out of the queue.
    AdminClear => Route { name: "admin_clear", verb: Verb::Post, path: "/admin/clear", keywords: &[], params: &[ADMIN_TOKEN],
        topic: "operators",
        does: "JSON {\"id\": \"<report id>\"} (or a form): the report leaves the queue (the object stays; delete or block it first if it must go)",
        takes: Takes::Id, answers: Answer::Json(View::Deleted) },
    /// POST /admin/block: blocks a digest.
    AdminBlock => Route { name: "admin_block", verb: Verb::Post, path: "/admin/block", keywords: &[], params: &[ADMIN_TOKEN],
        topic: "operators",
        does: "JSON {\"sha256\": \"<hex>\", \"reason\": \"...\"} (or a form): uploads and imports of these bytes answer 451 blocked from now on, on every process, and every live object holding them is removed (a dir loses only those files)",
        takes: Takes::Block, answers: Answer::Json(View::Blocked) },
    /// POST /admin/delete: removes any object.
    AdminDelete => Route { name: "admin_delete", verb: Verb::Post, path: "/admin/delete", keywords: &[], params: &[ADMIN_TOKEN],
        topic: "operators",
        does: "JSON {\"key\": \"<key>\"} (or a form): removes the object GET /admin lists under that key, whatever its kind (a gallery with its images); DELETE of a file, bundle or dir by its usual URL with the admin token does the same",
        takes: Takes::Key, answers: Answer::Json(View::Deleted) },
}

/// Parameters every route reads besides its own: `json=1` and `html=1`
/// choose the representation where a route has two (negotiate.rs).
pub const GLOBAL_PARAMS: &[Param] = &[
    Param::opt("json", "1", Shape::Flag),
    Param::opt("html", "1", Shape::Flag),
];

/// Whether a query key is one the service reads somewhere.
/// The routes that create something: the ones STORE_UPLOAD_TOKEN closes.
pub const CREATING: &[RouteId] = &[
    RouteId::Upload,
    RouteId::Import,
    RouteId::CreateDir,
    RouteId::CreateGallery,
    RouteId::UploadImage,
    RouteId::ImportImage,
    RouteId::AdminUploadImage,
    RouteId::AdminImportImage,
    RouteId::TusCreate,
];

/// The creating routes a browser form reaches, whose form may carry the
/// upload token as a `token` field (checked before any file is written).
pub const CREATING_BY_FORM: &[RouteId] = &[
    RouteId::Upload,
    RouteId::CreateDir,
    RouteId::CreateGallery,
    RouteId::UploadImage,
    RouteId::AdminUploadImage,
];

/// Whether any route (or every route) reads the query parameter `key`.
pub fn is_known_param(key: &str) -> bool {
    GLOBAL_PARAMS.iter().chain(params()).any(|p| p.name == key)
}

/// Whether a known parameter may be given more than once.
pub fn is_list_param(key: &str) -> bool {
    params().any(|p| p.name == key && p.shape == Shape::List)
}

/// Every parameter of every route (with repeats).
pub fn params() -> impl Iterator<Item = &'static Param> {
    ROUTES.iter().flat_map(|r| r.params.iter())
}

/// The routes that `/help/<topic>` lists.
pub fn of_topic(topic: &str) -> impl Iterator<Item = &'static Route> + '_ {
    ROUTES.iter().filter(move |r| r.topic == topic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_take_their_numbers_from_the_limits() {
        let mut limits = Limits::default();
        for r in ROUTES {
            let text = r.describe(&limits);
            let left = text.split('{').skip(1).any(|rest| {
                let word: String = rest.chars().take_while(|c| *c != '}').collect();
                !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            });
            assert!(!left, "{}: a placeholder is left: {text}", r.name);
        }
        limits.import_bytes_max = 3 << 20;
        limits.comment_text_chars_max = 77;
        let import = RouteId::Import.route().describe(&limits);
        assert!(import.contains("(3 MiB at most)"), "{import}");
        assert!(RouteId::Comment
            .route()
            .describe(&limits)
            .contains("text (77 characters)"));
    }
}
