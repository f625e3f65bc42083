//! The MCP tools: each is one route of the table (two for the tools that
//! act on a file or a dir), and its input schema and description are made
//! from that route's row, the same parameters and text `/api` and
//! `/openapi.json` show. A call becomes the HTTP request the route would
//! get ([`Call`]), which the server runs through the same handler, so a
//! tool answers exactly what the HTTP API answers.
//!
//! A route parameter is a tool argument of the same name, but for the two
//! whose wire names read badly as arguments ([`ARG_NAMES`]: `tag=` is
//! `tags`, `owner=` is `owner_token`). A test fails when a route's
//! parameter is in none of a tool's arguments, its fixed values or its
//! stated omissions, so the tools cannot drift from the table.

use base64::Engine as _;
use serde_json::{json, Map, Value};
use store_core::{Limits, StoreError};

use crate::query::Query;
use crate::router::{route, url_for, Endpoint};
use crate::routes::{Answer, Param, RouteId, Shape};

/// What a tool acts on, as the agent names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Nothing: it makes something new, or lists.
    Nothing,
    /// A file or bundle: `id`, or its `url`.
    Object,
    /// Any stored bytes: `id`, or the `url` of a file, a bundle's file, a
    /// dir's file or an image.
    Bytes,
    /// A dir: `key`, or its `url`.
    Dir,
    /// A file, bundle or dir: `id`, `key` or `url`.
    Either,
}

/// The bytes a tool sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carries {
    /// None.
    Nothing,
    /// One file: `content` (text) or `content_base64`.
    OneFile,
    /// Several: `files`, each with a name and its content.
    Files,
}

/// One tool: the route it calls and what it adds to the route's row.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// The tool's name.
    pub name: &'static str,
    /// Its title, for people.
    pub title: &'static str,
    /// What the tool is for, the first sentence of its description.
    pub says: &'static str,
    /// The route it calls.
    pub route: RouteId,
    /// The route it calls when the target is a dir.
    pub dir_route: Option<RouteId>,
    /// What it acts on.
    pub target: Target,
    /// The bytes it sends.
    pub carries: Carries,
    /// Parameters the tool sets itself (they select the route).
    pub fixed: &'static [(&'static str, &'static str)],
    /// Parameters of the route the tool does not take, each for the reason
    /// in [`TOOLS`]' comments.
    pub omitted: &'static [&'static str],
    /// It changes nothing.
    pub read_only: bool,
    /// It may remove something.
    pub destructive: bool,
    /// Its name in the request log and the metrics.
    pub metric: &'static str,
}

/// Which tools take an argument that is no route parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgGroup {
    /// Those that act on a file or bundle.
    Id,
    /// Those that act on a dir.
    Key,
    /// Those that act on anything.
    Url,
    /// Those that send one file.
    OneFile,
    /// Those that send several.
    Files,
}

/// An argument that is no route parameter.
#[derive(Debug)]
pub struct OwnArg {
    name: &'static str,
    group: ArgGroup,
    says: &'static str,
}

const fn own(name: &'static str, group: ArgGroup, says: &'static str) -> OwnArg {
    OwnArg { name, group, says }
}

/// Every argument that is no route parameter, in the order the schemas
/// list them.
const OWN_ARGS: &[OwnArg] = &[
    own("id", ArgGroup::Id, "the file's or bundle's id"),
    own("key", ArgGroup::Key, "the dir's key"),
    own("url", ArgGroup::Url, "its URL"),
    own("content", ArgGroup::OneFile, "the file's text (UTF-8)"),
    own(
        "content_base64",
        ArgGroup::OneFile,
        "or its bytes in base64",
    ),
    own(
        "content_type",
        ArgGroup::OneFile,
        "its media type, when the name and bytes do not say it",
    ),
    own(
        "password",
        ArgGroup::OneFile,
        "a password reading it will need (4 to 256 characters): HTTP Basic with it (curl -u :<password>), or the owner token",
    ),
    own(
        "files",
        ArgGroup::Files,
        "the files: each with a name, and content (text) or content_base64",
    ),
];

/// Route parameters whose tool argument is named otherwise.
pub const ARG_NAMES: &[(&str, &str)] = &[("tag", "tags"), ("owner", "owner_token")];

const fn tool(name: &'static str, metric: &'static str, route: RouteId) -> Tool {
    Tool {
        name,
        title: "",
        says: "",
        route,
        dir_route: None,
        target: Target::Nothing,
        carries: Carries::Nothing,
        fixed: &[],
        omitted: &[],
        read_only: false,
        destructive: false,
        metric,
    }
}

/// Every tool, in the order `tools/list` answers them.
pub const TOOLS: &[Tool] = &[
    Tool {
        title: "Upload a file",
        says: "Store one file (text in content, other bytes in content_base64) and get its URL; keep the owner_token it answers.",
        carries: Carries::OneFile,
        ..tool("upload_file", "mcp_upload_file", RouteId::Upload)
    },
    Tool {
        title: "Import a URL",
        says: "Have the server fetch a public http(s) URL and store what it answers (or, with link, store the URL as a redirect).",
        ..tool("import_url", "mcp_import_url", RouteId::Import)
    },
    Tool {
        title: "Read a file",
        says: "Read stored bytes by id or URL: text as text, other bytes as base64. A burn-after-reading file is spent, as by a download.",
        target: Target::Bytes,
        fixed: &[("download", "1")],
        // What the page shows a browser instead of the bytes: the tool
        // always answers the bytes, and file_info the record.
        omitted: &["info"],
        read_only: true,
        ..tool("read_file", "mcp_read_file", RouteId::GetFile)
    },
    Tool {
        title: "Describe a file",
        says: "The record of a file or bundle: name, size, type, expiry, downloads left; never spends a download.",
        target: Target::Object,
        fixed: &[("info", "1")],
        // Bytes, not a record: read_file's.
        omitted: &["download", "thumb"],
        read_only: true,
        ..tool("file_info", "mcp_file_info", RouteId::GetFile)
    },
    Tool {
        title: "Delete a file",
        says: "Delete a file or bundle, with the owner token its upload answered (or the retain token).",
        target: Target::Object,
        destructive: true,
        ..tool("delete_file", "mcp_delete_file", RouteId::DeleteFile)
    },
    Tool {
        title: "Set a lifetime",
        says: "Give a file, bundle or dir a new lifetime counted from now, with its owner token.",
        target: Target::Either,
        dir_route: Some(RouteId::SetDirTtl),
        ..tool("set_lifetime", "mcp_set_lifetime", RouteId::SetFileTtl)
    },
    Tool {
        title: "Create a dir",
        says: "Create a mutable dir (or get the named one); add files to it with add_to_dir.",
        fixed: &[("dir", "1")],
        ..tool("create_dir", "mcp_create_dir", RouteId::CreateDir)
    },
    Tool {
        title: "Add a file to a dir",
        says: "Add one file (text in content, other bytes in content_base64) to a dir, by its key or URL.",
        target: Target::Dir,
        carries: Carries::OneFile,
        ..tool("add_to_dir", "mcp_add_to_dir", RouteId::AddToDir)
    },
    Tool {
        title: "List a dir",
        says: "A dir's record: its files with their URLs, sizes and times.",
        target: Target::Dir,
        // A zip is bytes; read_file reads a dir's files one by one.
        omitted: &["zip"],
        read_only: true,
        ..tool("list_dir", "mcp_list_dir", RouteId::GetDir)
    },
    Tool {
        title: "Browse tagged files",
        says: "List the live tagged files, filtered and sorted.",
        read_only: true,
        ..tool("browse", "mcp_browse", RouteId::Browse)
    },
    Tool {
        title: "Create a bundle",
        says: "Store several files as one immutable bundle (files: name and content or content_base64 each), downloadable as a zip.",
        carries: Carries::Files,
        // The files carry their own names; share= adds them to a dir,
        // which is add_to_dir.
        omitted: &["name", "share"],
        ..tool("create_bundle", "mcp_create_bundle", RouteId::Upload)
    },
    Tool {
        title: "Retain",
        says: "Keep a file, bundle or dir indefinitely, with the retain token (as token, or the Authorization header).",
        target: Target::Either,
        dir_route: Some(RouteId::RetainDir),
        fixed: &[("retain", "1")],
        ..tool("retain", "mcp_retain", RouteId::RetainFile)
    },
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The tool a `tools/call` names, and its arguments; or why it names
/// none (a protocol error: the call never reaches a tool).
pub fn read_call(mut params: Value) -> Result<(&'static Tool, Map<String, Value>), String> {
    let name = params["name"].as_str().unwrap_or_default();
    let tool = find(name).ok_or_else(|| format!("no tool {name:?}; tools/list has them"))?;
    // Taken, not copied: the arguments may carry a whole file.
    match params.get_mut("arguments").map(Value::take) {
        None | Some(Value::Null) => Ok((tool, Map::new())),
        Some(Value::Object(args)) => Ok((tool, args)),
        Some(_) => Err("arguments is an object".into()),
    }
}

/// The retain or upload token a call names itself (`token`), if any.
pub fn token_arg(args: &Map<String, Value>) -> Option<&str> {
    args.get(arg_name(crate::routes::TOKEN.name))
        .and_then(Value::as_str)
}

/// The argument a route parameter is given as.
pub fn arg_name(param: &str) -> &str {
    ARG_NAMES
        .iter()
        .find(|(p, _)| *p == param)
        .map_or(param, |(_, a)| a)
}

impl Tool {
    /// The routes it may call.
    fn routes(&self) -> impl Iterator<Item = RouteId> {
        std::iter::once(self.route).chain(self.dir_route)
    }

    /// The route parameters it takes as arguments.
    pub fn params(&self) -> Vec<&'static Param> {
        let mut out: Vec<&'static Param> = Vec::new();
        for r in self.routes() {
            for p in r.route().params {
                let set = self.fixed.iter().any(|(k, _)| *k == p.name);
                let skip = set || self.omitted.contains(&p.name);
                if !skip && !out.iter().any(|q| q.name == p.name) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// Whether every route the tool may call needs the parameter.
    fn required(&self, name: &str) -> bool {
        self.routes().all(|r| {
            r.route()
                .params
                .iter()
                .any(|p| p.name == name && p.required)
        })
    }

    /// The arguments that are not route parameters: what the tool acts
    /// on and the bytes it sends, from [`OWN_ARGS`].
    fn own_args(&self) -> impl Iterator<Item = &'static OwnArg> + '_ {
        OWN_ARGS.iter().filter(|a| match a.group {
            ArgGroup::Id => matches!(self.target, Target::Object | Target::Bytes | Target::Either),
            ArgGroup::Key => matches!(self.target, Target::Dir | Target::Either),
            ArgGroup::Url => self.target != Target::Nothing,
            ArgGroup::OneFile => self.carries == Carries::OneFile,
            ArgGroup::Files => self.carries == Carries::Files,
        })
    }

    /// The description of the `url` argument.
    fn url_says(&self) -> &'static str {
        match self.target {
            Target::Bytes => "or the URL of a file, a bundle's file, a dir's file or an image",
            Target::Either => "or the URL of either",
            _ => "or its URL",
        }
    }

    /// An argument's JSON Schema.
    fn own_schema(&self, arg: &OwnArg) -> Value {
        match arg.group {
            ArgGroup::Files => json!({
                "type": "array", "minItems": 2, "description": arg.says,
                "items": { "type": "object", "required": ["name"], "properties": {
                    "name": { "type": "string", "minLength": 1 },
                    "content": { "type": "string" },
                    "content_base64": { "type": "string" },
                } },
            }),
            ArgGroup::Url => {
                json!({ "type": "string", "minLength": 1, "description": self.url_says() })
            }
            // Empty text is a file too.
            _ if arg.name == "content" => json!({ "type": "string", "description": arg.says }),
            _ => json!({ "type": "string", "minLength": 1, "description": arg.says }),
        }
    }

    /// The tool as `tools/list` shows it.
    pub fn describe(&self, limits: &Limits) -> Value {
        let mut properties = Map::new();
        let mut required: Vec<&str> = Vec::new();
        for arg in self.own_args() {
            properties.insert(arg.name.into(), self.own_schema(arg));
        }
        for p in self.params() {
            let name = arg_name(p.name);
            properties.insert(name.into(), param_schema(p));
            if self.required(p.name) {
                required.push(name);
            }
        }
        if self.carries == Carries::Files {
            required.push("files");
        }
        let calls: Vec<String> = self
            .routes()
            .map(|r| {
                let route = r.route();
                format!("{}: {}", route.usage(), route.describe(limits))
            })
            .collect();
        json!({
            "name": self.name,
            "title": self.title,
            "description": format!("{} Calls {}.", self.says, calls.join("; or ")),
            "inputSchema": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            },
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                "idempotentHint": self.read_only,
                "openWorldHint": self.route == RouteId::Import,
            },
        })
    }
}

/// `tools/list`'s result.
pub fn list(limits: &Limits) -> Value {
    json!({ "tools": TOOLS.iter().map(|t| t.describe(limits)).collect::<Vec<_>>() })
}

/// A parameter's JSON Schema as an argument: flags are booleans, lists
/// arrays.
fn param_schema(p: &Param) -> Value {
    let mut schema = match p.shape {
        Shape::Flag => json!({ "type": "boolean" }),
        Shape::Text => json!({ "type": "string", "minLength": 1 }),
        Shape::Integer => json!({ "type": "integer", "minimum": 1 }),
        Shape::Choice(words) => json!({ "type": "string", "enum": words }),
        Shape::List => json!({ "type": "array", "items": { "type": "string", "minLength": 1 } }),
    };
    schema["description"] = json!(format!("{}={} in the HTTP API", p.name, p.shown));
    schema
}

/// The body of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// None.
    Nothing,
    /// One file's bytes, with the media type the agent named.
    Raw {
        /// The bytes.
        bytes: Vec<u8>,
        /// `Content-Type`, if given.
        content_type: Option<String>,
    },
    /// `multipart/form-data` with this boundary.
    Multipart {
        /// The whole body.
        bytes: Vec<u8>,
        /// Its boundary.
        boundary: String,
    },
}

impl Body {
    /// The bytes and the `Content-Type` of the body; `None` for none.
    pub fn into_parts(self) -> Option<(Vec<u8>, Option<String>)> {
        match self {
            Self::Nothing => None,
            Self::Raw {
                bytes,
                content_type,
            } => Some((bytes, content_type)),
            Self::Multipart { bytes, boundary } => Some((
                bytes,
                Some(format!("multipart/form-data; boundary={boundary}")),
            )),
        }
    }
}

/// The query a creating call is held to the upload token with, as the
/// door reads it: the call's own `token` argument, if it names one.
pub fn token_query(args: &Map<String, Value>) -> Result<Query, StoreError> {
    let pairs = token_arg(args)
        .map(|t| (crate::routes::TOKEN.name.to_string(), t.to_string()))
        .into_iter()
        .collect();
    Query::from_pairs(pairs)
}

/// A tool call as the HTTP request its route gets.
#[derive(Debug, Clone)]
pub struct Call {
    /// The route it is for.
    pub endpoint: Endpoint,
    /// Its method.
    pub method: http::Method,
    /// Its query, which the route's parameters were read from.
    pub query: Query,
    /// Its body.
    pub body: Body,
    /// The answer is stored bytes, not a record.
    pub reads_bytes: bool,
    /// The password the new file will need, sent as X-Store-Password.
    pub password: Option<String>,
}

/// What a call is planned with, besides its arguments.
#[derive(Debug, Clone, Copy)]
pub struct Setting<'a> {
    /// The service's base URL: a `url` argument is read under its path.
    pub base_url: &'a str,
    /// The configured limits.
    pub limits: &'a Limits,
    /// Random bits, for a multipart boundary no one can put in a file
    /// beforehand.
    pub nonce: u128,
}

/// The HTTP request a call of `tool` with `args` is, checked the way the
/// route checks a request: an unknown or mistyped argument is a 400, a
/// query longer than a request target may be is a 414. The arguments are
/// taken: a file's bytes move into the body.
pub fn plan(
    tool: &Tool,
    mut args: Map<String, Value>,
    at: &Setting<'_>,
) -> Result<Call, StoreError> {
    let limits = at.limits;
    let params = tool.params();
    check_names(tool, &params, &args)?;
    let (id, captures) = target(tool, &args, at)?;
    let mut pairs: Vec<(String, String)> = tool
        .fixed
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for p in params {
        if let Some(v) = args.get(arg_name(p.name)) {
            for value in query_values(p, arg_name(p.name), v)? {
                pairs.push((p.name.to_string(), value));
            }
        }
    }
    // What the door refuses in a request target (414), refused here too.
    let target_bytes: usize = pairs.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
    if target_bytes as u64 > limits.server.uri_bytes_max {
        return Err(StoreError::UriTooLong {
            max_bytes: limits.server.uri_bytes_max as usize,
        });
    }
    let query = Query::from_pairs(pairs)?;
    let captures: Vec<&str> = captures.iter().map(String::as_str).collect();
    let path = url_for("", id, &captures);
    let method = id.route().verb.method();
    let endpoint = route(&method, &path, &query, limits);
    if endpoint.id() != Some(id) {
        return Err(StoreError::bad_request(format!(
            "the arguments do not make a request of {}",
            id.route().usage()
        )));
    }
    let password = text_arg(&args, "password")?.map(str::to_string);
    Ok(Call {
        endpoint,
        method,
        query,
        body: body(tool, &mut args, at.nonce)?,
        reads_bytes: tool.target == Target::Bytes,
        password,
    })
}

/// Refuses an argument the tool does not take, naming those it does.
fn check_names(
    tool: &Tool,
    params: &[&'static Param],
    args: &Map<String, Value>,
) -> Result<(), StoreError> {
    let known = |k: &str| {
        tool.own_args().any(|a| a.name == k) || params.iter().any(|p| arg_name(p.name) == k)
    };
    if let Some(unknown) = args.keys().find(|k| !known(k)) {
        let mut names: Vec<&str> = tool.own_args().map(|a| a.name).collect();
        names.extend(params.iter().map(|p| arg_name(p.name)));
        return Err(StoreError::bad_request(format!(
            "{} takes no argument {unknown:?}; it takes: {}",
            tool.name,
            names.join(", ")
        )));
    }
    Ok(())
}

/// A text argument, if given: a non-empty string.
fn text_arg<'a>(args: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, StoreError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
        Some(_) => Err(StoreError::bad_request(format!(
            "{name} must be a non-empty string"
        ))),
    }
}

/// The route a call is for, and the path's captures.
fn target(
    tool: &Tool,
    args: &Map<String, Value>,
    at: &Setting<'_>,
) -> Result<(RouteId, Vec<String>), StoreError> {
    let id = text_arg(args, "id")?;
    let key = text_arg(args, "key")?;
    let url = text_arg(args, "url")?;
    let dir_route = tool.dir_route.unwrap_or(tool.route);
    match (tool.target, id, key, url) {
        (Target::Nothing, ..) => Ok((tool.route, Vec::new())),
        (_, Some(id), None, None) if tool.target != Target::Dir => {
            Ok((tool.route, vec![id.to_string()]))
        }
        (Target::Dir | Target::Either, None, Some(key), None) => {
            Ok((dir_route, vec![key.to_string()]))
        }
        (_, None, None, Some(url)) => by_url(tool, url, at),
        _ => Err(StoreError::bad_request(format!(
            "{} needs one of: {}",
            tool.name,
            match tool.target {
                Target::Dir => "key, url",
                Target::Either => "id, key, url",
                _ => "id, url",
            }
        ))),
    }
}

/// The route and captures a URL of this service names, for the tool.
fn by_url(tool: &Tool, url: &str, at: &Setting<'_>) -> Result<(RouteId, Vec<String>), StoreError> {
    let not_ours = || {
        StoreError::bad_request(format!(
            "{url:?} is not the URL of something {} acts on",
            tool.name
        ))
    };
    let path = path_of(url).ok_or_else(not_ours)?;
    // A service mounted under a path hands out URLs under it.
    let mount = path_of(at.base_url).unwrap_or("").trim_end_matches('/');
    let path = match path.strip_prefix(mount) {
        Some("") => "/",
        Some(rest) if rest.starts_with('/') => rest,
        _ => path,
    };
    let found = route(&http::Method::GET, path, &Query::default(), at.limits);
    let captures = found.captures().into_iter().map(str::to_string).collect();
    let object = matches!(found, Endpoint::GetFile { .. });
    let dir = matches!(found, Endpoint::GetDir { .. });
    let chosen = match tool.target {
        Target::Bytes => found.id().filter(|id| id.route().answers == Answer::Bytes),
        Target::Object | Target::Either if object => Some(tool.route),
        Target::Dir | Target::Either if dir => tool.dir_route.or(Some(tool.route)),
        _ => None,
    };
    chosen.map(|id| (id, captures)).ok_or_else(not_ours)
}

/// The path of a URL (absolute, or a path alone), without its query and
/// fragment. The base URL's host is not required: an agent may reach the
/// service by another name than the one it answers with.
fn path_of(url: &str) -> Option<&str> {
    let rest = match url.split_once("://") {
        Some((_, rest)) => &rest[rest.find('/')?..],
        None if url.starts_with('/') => url,
        None => return None,
    };
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// A parameter's value in the query, from its argument.
fn query_values(p: &Param, arg: &str, v: &Value) -> Result<Vec<String>, StoreError> {
    let wrong = |want: &str| StoreError::bad_request(format!("{arg} must be {want}"));
    Ok(match (p.shape, v) {
        (_, Value::Null) => Vec::new(),
        (Shape::Flag, Value::Bool(b)) => vec![if *b { "1" } else { "0" }.to_string()],
        (Shape::Flag, _) => return Err(wrong("true or false")),
        (Shape::Integer, Value::Number(n)) if n.is_u64() => vec![n.to_string()],
        (Shape::Integer, _) => return Err(wrong("a whole number")),
        (Shape::List, Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| wrong("a list of strings"))
            })
            .collect::<Result<_, _>>()?,
        (Shape::List | Shape::Text | Shape::Choice(_), Value::String(s)) => vec![s.clone()],
        (Shape::List, _) => return Err(wrong("a list of strings")),
        (Shape::Text | Shape::Choice(_), _) => return Err(wrong("a string")),
    })
}

/// A file's bytes, taken from the arguments: `content` as UTF-8, or
/// `content_base64` decoded.
fn content(args: &mut Map<String, Value>, what: &str) -> Result<Vec<u8>, StoreError> {
    match (args.remove("content"), args.remove("content_base64")) {
        (Some(Value::String(text)), None) => Ok(text.into_bytes()),
        (None, Some(Value::String(b64))) => BASE64.decode(b64.trim()).map_err(|e| {
            StoreError::bad_request(format!("{what}'s content_base64 is not base64: {e}"))
        }),
        _ => Err(StoreError::bad_request(format!(
            "{what} needs content (a string) or content_base64 (a string), one of them"
        ))),
    }
}

/// Standard base64, with or without its padding.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

/// The call's body, from the tool's content arguments (taken).
fn body(tool: &Tool, args: &mut Map<String, Value>, nonce: u128) -> Result<Body, StoreError> {
    match tool.carries {
        Carries::Nothing => Ok(Body::Nothing),
        Carries::OneFile => {
            let content_type = text_arg(args, "content_type")?.map(str::to_string);
            if content_type
                .as_deref()
                .is_some_and(|t| http::HeaderValue::from_str(t).is_err())
            {
                return Err(StoreError::bad_request("content_type is not a media type"));
            }
            Ok(Body::Raw {
                bytes: content(args, "the file")?,
                content_type,
            })
        }
        Carries::Files => {
            let Some(Value::Array(files)) = args.remove("files") else {
                return Err(StoreError::bad_request("files must be a list of files"));
            };
            let mut parts = Vec::with_capacity(files.len());
            for (i, f) in files.into_iter().enumerate() {
                let what = format!("files[{i}]");
                let Value::Object(mut f) = f else {
                    return Err(StoreError::bad_request(format!("{what} must be an object")));
                };
                let name = text_arg(&f, "name")?
                    .ok_or_else(|| StoreError::bad_request(format!("{what} needs a name")))?
                    .to_string();
                parts.push((name, content(&mut f, &what)?));
            }
            if parts.len() < 2 {
                return Err(StoreError::bad_request(
                    "a bundle is two files or more: upload_file stores one",
                ));
            }
            multipart(&parts, nonce)
        }
    }
}

/// A `multipart/form-data` body of file parts. Its boundary carries 128
/// random bits, so no file can hold it but by chance; one that does is
/// refused, to be sent again (with another boundary).
fn multipart(parts: &[(String, Vec<u8>)], nonce: u128) -> Result<Body, StoreError> {
    let boundary = format!("storesrv-mcp-{nonce:032x}");
    let needle = boundary.as_bytes();
    if parts
        .iter()
        .any(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle))
    {
        return Err(StoreError::bad_request(
            "a file holds this call's multipart boundary by chance: send the call again",
        ));
    }
    let mut bytes = Vec::with_capacity(parts.iter().map(|(_, b)| b.len() + 200).sum());
    for (name, content) in parts {
        // RFC 7578's `filename*` carries any name (multipart reading
        // takes it first), as a download's disposition does.
        let disposition = crate::disposition::content_disposition("form-data; name=\"file\"", name);
        bytes.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n").as_bytes(),
        );
        bytes.extend_from_slice(content);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok(Body::Multipart { bytes, boundary })
}

#[cfg(test)]
mod tests;
