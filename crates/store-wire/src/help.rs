//! The self-description for agents and people: `/help`, `/help/<topic>`,
//! `/write_for_agents`, `/copy_for_agents` and `/releases`.
//!
//! Every number in these texts comes from the running configuration's
//! [`Limits`] or from `store_core::limits`, every error from
//! [`ErrorCode::ALL`], and every endpoint line from the route table, so
//! the help cannot drift from what the server does. Texts are markdown: raw
//! for agents, rendered (by pulldown-cmark) for browsers.

use std::fmt::Write as _;

use serde::Serialize;
use store_app::AppConfig;
use store_core::gallery::GalleryUploads;
use store_core::{ErrorCode, Limits};

use crate::api;
use crate::router::{url_for, RouteId};
use crate::routes;

/// One help topic.
#[derive(Debug, Clone, Copy)]
pub struct Topic {
    /// The path segment: `/help/<slug>`.
    pub slug: &'static str,
    /// The topic's heading.
    pub title: &'static str,
    /// One sentence: what the topic covers.
    pub summary: &'static str,
}

/// Every topic, in reading order. Each route of the table names one of
/// these; a test checks that each name exists.
pub const TOPICS: &[Topic] = &[
    Topic {
        slug: "browser",
        title: "In a browser",
        summary: "The upload page, Your uploads, folders and galleries, for people without a terminal.",
    },
    Topic {
        slug: "files",
        title: "Single files",
        summary: "Upload bytes, get a URL; the file expires on its own (ttl, burn after reading, edit text).",
    },
    Topic {
        slug: "uploads",
        title: "Resumable uploads",
        summary: "Large files over the tus 1.0.0 protocol: an upload survives a broken connection and resumes where it stopped.",
    },
    Topic {
        slug: "bundles",
        title: "Bundles",
        summary: "Several files uploaded together as one immutable object, downloadable as a zip.",
    },
    Topic {
        slug: "dirs",
        title: "Dirs",
        summary: "Mutable folders with a sliding lifetime, optional write tokens, history and zip.",
    },
    Topic {
        slug: "show-dirs",
        title: "Show-dirs",
        summary: "Indefinite dirs that anyone with the URL may write to; creating one needs the retain token.",
    },
    Topic {
        slug: "private",
        title: "Private sharing",
        summary: "Passwords that work with curl (HTTP Basic) and browsers, drop links that collect files from others, and files the server cannot read (age).",
    },
    Topic {
        slug: "retention",
        title: "Retention",
        summary: "Keep a file, bundle or dir indefinitely with the retain token.",
    },
    Topic {
        slug: "owners",
        title: "Owner tokens",
        summary: "The token an upload answers: change the expiry of what you shared, and protect it from others' changes.",
    },
    Topic {
        slug: "import",
        title: "Import",
        summary: "Have the service fetch a public http(s) URL, or store a link that redirects.",
    },
    Topic {
        slug: "browse",
        title: "Browse and tags",
        summary: "Tag files and dirs, then list and search them.",
    },
    Topic {
        slug: "galleries",
        title: "Galleries",
        summary: "Image galleries with thumbnails, downscaling, likes, comments and an admin link.",
    },
    Topic {
        slug: "agents",
        title: "For AI agents (MCP)",
        summary: "Add this server to an MCP client by its URL: tools to upload, read, organise and retain files, made from the same table as the HTTP API.",
    },
    Topic {
        slug: "auth",
        title: "Authentication",
        summary: "Reading is open; the kinds of token and how to send each.",
    },
    Topic {
        slug: "limits",
        title: "Limits",
        summary: "Sizes, lifetimes, rates and counts this server enforces.",
    },
    Topic {
        slug: "operations",
        title: "Operations",
        summary: "Health and readiness probes for load balancers and process supervisors.",
    },
    Topic {
        slug: "operators",
        title: "Moderation",
        summary: "For whoever runs a public instance: find, delete and block what is stored (STORE_ADMIN_TOKEN).",
    },
    Topic {
        slug: "about",
        title: "About this service",
        summary: "How the service describes itself: the contract, the OpenAPI document, these topics, the agents' texts and the changelog.",
    },
    Topic {
        slug: "errors",
        title: "Errors",
        summary: "Every error code, its HTTP status, meaning and whether to retry (plain text).",
    },
];

impl Topic {
    /// How the topic is listed: in `/help`, and at the head of its page.
    fn entry(&'static self, base_url: &str) -> TopicEntry {
        TopicEntry {
            topic: self.slug,
            title: self.title,
            summary: self.summary,
            url: url_for(base_url, RouteId::HelpTopic, &[self.slug]),
        }
    }
}

/// The topic whose slug is `slug`, if there is one.
pub fn topic(slug: &str) -> Option<&'static Topic> {
    TOPICS.iter().find(|t| t.slug == slug)
}

/// `/help` for agents.
// The fields are the JSON fields, and a doc comment on them would become
// a description in /openapi.json: the wire is documented by SPEC.md and
// /api instead.
#[allow(missing_docs)]
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Index {
    pub service: &'static str,
    pub version: &'static str,
    pub topics: Vec<TopicEntry>,
    pub also: Vec<String>,
}

// One topic of `/help`: where it is and what it covers.
// The fields are the JSON fields, and a doc comment on them would become
// a description in /openapi.json: the wire is documented by SPEC.md and
// /api instead.
#[allow(missing_docs)]
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TopicEntry {
    pub topic: &'static str,
    pub title: &'static str,
    pub summary: &'static str,
    pub url: String,
}

/// `/help` for agents, for the configuration `config`.
pub fn index(config: &AppConfig) -> Index {
    let b = &config.base_url;
    Index {
        service: api::SERVICE_NAME,
        version: api::SPEC_VERSION,
        topics: TOPICS.iter().map(|t| t.entry(b)).collect(),
        also: [
            RouteId::Api,
            RouteId::Openapi,
            RouteId::WriteForAgents,
            RouteId::CopyForAgents,
            RouteId::Releases,
        ]
        .map(|id| url_for(b, id, &[]))
        .to_vec(),
    }
}

/// `/help/<topic>` for agents.
// The fields are the JSON fields, and a doc comment on them would become
// a description in /openapi.json: the wire is documented by SPEC.md and
// /api instead.
#[allow(missing_docs)]
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TopicPage {
    #[serde(flatten)]
    pub entry: TopicEntry,
    /// The topic's endpoints, as in `/api`.
    pub endpoints: Vec<EndpointLine>,
    /// The topic's text, markdown.
    pub text: String,
}

// One endpoint of a topic, as `/api` lists it.
// The fields are the JSON fields, and a doc comment on them would become
// a description in /openapi.json: the wire is documented by SPEC.md and
// /api instead.
#[allow(missing_docs)]
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EndpointLine {
    pub endpoint: String,
    pub does: String,
}

/// `/help/<topic>` for agents, for the configuration `config`.
pub fn topic_page(t: &'static Topic, config: &AppConfig) -> TopicPage {
    TopicPage {
        entry: t.entry(&config.base_url),
        endpoints: endpoints_of(t.slug, &config.limits),
        text: topic_text(t.slug, config),
    }
}

/// The endpoints of the topic `slug`, described under `limits`.
pub fn endpoints_of(slug: &str, limits: &Limits) -> Vec<EndpointLine> {
    routes::of_topic(slug)
        .map(|r| EndpointLine {
            endpoint: r.usage(),
            does: r.describe(limits),
        })
        .collect()
}

pub use store_core::limits::{binary_size, duration};

/// `5 MiB (5242880 bytes)`: a limit as people read it, and exactly.
pub fn bytes(n: u64) -> String {
    if n < 1024 {
        return format!("{n} bytes");
    }
    format!("{} ({n} bytes)", binary_size(n))
}

/// The markdown text of one topic, with this server's values filled in.
pub fn topic_text(slug: &str, config: &AppConfig) -> String {
    let b = &config.base_url;
    let l = &config.limits;
    match slug {
        "browser" => browser_text(l),
        "files" => files_text(b, l),
        "uploads" => uploads_text(b, l),
        "bundles" => bundles_text(b, l),
        "dirs" => dirs_text(b, l),
        "show-dirs" => show_dirs_text(config),
        "private" => private_text(b),
        "retention" => retention_text(config),
        "owners" => owners_text(b, l),
        "import" => import_text(b, l),
        "browse" => browse_text(b, l),
        "galleries" => galleries_text(b, l),
        "agents" => crate::mcp::guide::agents_text(config),
        "auth" => auth_text(b, l, config.upload_token.is_required()),
        "limits" => limits_text(l) + &who_creates(config),
        "operations" => operations_text(b),
        "operators" => operators_text(b, config.admin_token.is_set()),
        "about" => about_text(b),
        "errors" => errors_text(l),
        _ => String::new(),
    }
}

fn private_text(b: &str) -> String {
    format!(
        "Two ways to keep a link's contents to the people you choose: a password, which the service checks, and encryption, which the service never sees the key of.\n\n\
## Passwords\n\n\
    curl -H 'X-Store-Password: correct horse' --data-binary @plan.pdf '{b}/?name=plan.pdf'\n\
    curl -u ':correct horse' '{b}/<id>' -o plan.pdf\n\n\
A password (4 to 256 characters) goes in the `X-Store-Password` header at upload (a form's `password` field, or tus metadata `password`), never in the URL (400): it protects a single file, a bundle (`POST /` with two files or more) or a dir (`POST /?dir=1`). Reading it then needs HTTP Basic with any user name and that password (`curl -u :<password>`), or the owner token (`X-Store-Owner`). Without either, the answer is 401 `write_denied` with `WWW-Authenticate: Basic realm=\"storesrv\"`; a wrong password answers the same. A browser gets a page with a password field instead, which downloads nothing: after the right password it goes on to the file, with a cookie that opens this one link for an hour. A burn-after-reading file is spent by the download after the password, never by the page or a wrong try.\n\n\
After 10 wrong passwords for one link within 10 minutes, every try is 429 `rate_limited` (with `Retry-After`) until the oldest leaves the window. The service keeps only a slow salted hash (argon2id) and never logs the password. A protected object shows `\"password\": true` in its record and is never listed in `/browse` or `/d`; writing a dir keeps its own gate (its write token). The owner changes the password, or removes it with an empty header:\n\n\
    curl -X POST -H 'X-Store-Owner: <owner token>' -H 'X-Store-Password: new one' '{b}/<id>?password=1'\n\
    curl -X POST -H 'X-Store-Owner: <owner token>' -H 'X-Store-Password:' '{b}/d/<key>?password=1'\n\n\
## Drop links: collect files from others\n\n\
    curl -X POST '{b}/?dir=1&drop=1&drop_files=20'\n\
    curl -F file=@report.pdf '<drop_url>'\n\
    curl -H 'X-Store-Owner: <owner token>' '{b}/d/<key>'\n\n\
`drop=1` makes a dir that only its owner reads: its listing, files, zip and history answer 404 to anyone without the owner token, as if it did not exist, and it is never listed. The answer carries `drop_url` (once): anyone with that link sends files to it (multipart, or a raw body with `?name=`) and gets back only the names and sizes taken, never a URL or a listing. A name already there gets a number (`report (2).pdf`); nothing is ever replaced. `drop_files=N` (1 to 1000, default 100) and `drop_bytes=N` (default a tenth of the pool) bound it: past them the link answers 403. A browser opening the link gets an upload page; the home page makes one under \"Collect files\". The owner closes it early with `curl -X POST -H 'X-Store-Owner: <owner token>' '{b}/d/<key>?drop=0'`: the link then answers 404.\n\n\
## Encryption\n\n\
A file can be encrypted before it leaves your machine, so that the service stores bytes it cannot read and only the people you give the key to can open them. The format is age (age-encryption.org/v1), an open standard with tools for every platform: the `age` command (Debian's `age` package), its Go and Rust libraries, and typage in browsers.\n\n\
## Encrypt, upload, share\n\n\
    age-keygen -o key.txt\n\
    age -r age1<recipient> report.pdf | curl --data-binary @- '{b}/?encrypted=age&name=report.pdf.age'\n\n\
`encrypted=age` says the body is an age file: the service checks that it begins with the line `age-encryption.org/v1` (400 otherwise; the ASCII armor of `age -a` is not taken), stores it as it came, and shows `\"encrypted\": \"age\"` in its record. It is served as `application/octet-stream`, as an attachment, never as text, and never edited (PUT and PATCH answer 403). The name you give is shown to anyone with the link: give one that says nothing, if the name itself is private. A resumable upload takes it too (`encrypted` in `Upload-Metadata`); a bundle or a shared dir's file does not.\n\n\
## In a browser\n\n\
The home page's \"Encrypt in this browser\" (under More options) does the same without a terminal: it makes a key, encrypts the file in the page, uploads it without its name, and gives a link whose part after # is the key. Browsers never send that part. Opening the link shows a page that downloads the file, decrypts it in the browser and saves it under its name, which travels encrypted inside the file. The key in such a link is an age identity: `age -d -i` opens the file with it too.\n\n\
## Open it\n\n\
    curl -fsS '{b}/<id>' | age -d -i key.txt > report.pdf\n\n\
With a passphrase instead of a key pair: `age -p` to encrypt, `age -d` asks for it. Burn after reading (`once=1`), download limits (`max_downloads=N`), `ttl` and `protect=1` combine with `encrypted=age` as with any file.\n"
    )
}

fn uploads_text(b: &str, l: &Limits) -> String {
    format!(
        "A resumable upload takes a file in as many requests as it needs: when a connection breaks, ask where the upload stands and send the rest. The service speaks tus 1.0.0 (tus.io), so a tus client does all of it: tus-js-client or Uppy in a browser, tuspy in Python, tusd's `tus-upload` at a terminal. Any process of a cluster may take any request. The Upload page sends large files this way: after a reload, pick the same file again and it offers to go on from where it stopped.\n\n\
Every request carries `Tus-Resumable: 1.0.0` (412 without it); so does every answer.\n\n\
## With curl\n\n\
1. Create it with its length and its name (base64: `notes.txt` is `bm90ZXMudHh0`):\n\n\
    curl -i -X POST -H 'Tus-Resumable: 1.0.0' -H 'Upload-Length: 11' -H 'Upload-Metadata: filename bm90ZXMudHh0' {b}/uploads\n\n\
   The answer is 201 with `Location: {b}/uploads/<id>`, `Upload-Expires` and the owner token in `X-Store-Owner`.\n\
2. Send bytes from an offset, as many times as it takes:\n\n\
    curl -i -X PATCH -H 'Tus-Resumable: 1.0.0' -H 'Upload-Offset: 0' -H 'Content-Type: application/offset+octet-stream' --data-binary @notes.txt {b}/uploads/<id>\n\n\
   The answer is 204 with the new `Upload-Offset`. The PATCH that brings the last byte makes the file and names it in `X-Store-Id` and `X-Store-Url`.\n\
3. After a broken connection, ask where it stands, then PATCH from there:\n\n\
    curl -I -H 'Tus-Resumable: 1.0.0' {b}/uploads/<id>\n\n\
## Options\n\n\
`Upload-Metadata` is comma-separated `key base64value` pairs: `filename` (required), `filetype`, and what a plain upload takes in its query, with the same meanings: `ttl`, `once`, `max_downloads`, `protect` and `tags` (comma-separated). Other keys are ignored.\n\n\
## Rules\n\n\
- `Upload-Length` is at most {max} (`Tus-Max-Size`), and is reserved in the pool at creation (507 `pool_full` when it cannot fit).\n\
- A PATCH at another offset than the upload's, or while another PATCH of it is sending, is 409 `conflict`; a body not of `application/offset+octet-stream` is 415. If the server process a PATCH was sending to died, the next PATCH answers 409 for up to {lease} s, then goes on: retry (tus clients do).\n\
- `Upload-Checksum: sha1 <base64>` (or `sha256`) checks a PATCH's bytes: on a mismatch it answers 460 `checksum_mismatch` and keeps none of them. Without one, a PATCH cut short keeps what arrived.\n\
- An upload not complete within 24 hours expires: its bytes and its room in the pool are freed. `DELETE` ends one sooner.\n\
- `GET {b}/uploads/<id>` answers the file's record once the upload is complete, and 404 before.\n\
- Where `STORE_UPLOAD_TOKEN` is set, the creation needs it, as any upload does.\n",
        max = bytes(l.file_bytes_max),
        lease = l.upload_lease_secs,
    )
}

fn browser_text(l: &Limits) -> String {
    format!(
        "Everything here works from the pages, without a terminal.\n\n\
## Share files\n\n\
1. On the Upload page, choose files (or drop them anywhere on the page). Each is listed with its size and a Remove button. Up to {max} per file.\n\
2. Pick a lifetime ({def} by default) and, for a secret, **Burn after reading**: the first download deletes it. Under **More options**: how many downloads are allowed, and who may change or delete it.\n\
3. With two files or more, choose separate links, **one bundle** (one link, downloaded as a zip) or **a folder** (a dir: files can be added, changed and deleted later). An option the choice cannot honour is switched off, with the reason beside it.\n\
4. Upload. Each result shows its link, a QR code page, and what was applied. After a refusal the form keeps what you picked: fix it and upload again.\n\n\
A large file ({resumable} or more) goes as a resumable upload: a lost connection is retried from where it stopped, and after a reload, picking the same file again offers to go on from there instead of starting over.\n\n\
What you upload from the page is protected unless you choose otherwise: only you, with the owner token this browser keeps, may change or delete a file or bundle. Choose \"Anyone with the link\" under More options to let the people you share it with edit a text file. A folder is made with a write token (shown once) unless you untick it: you and whoever you give the token may change it.\n\n\
## Your uploads\n\n\
The Upload page lists what this browser uploaded, with the owner tokens, in this browser only. Each entry says when it expires, how many downloads are left, or that it was read and is gone. Extend a lifetime (the control asks before it shortens one), show a QR code, delete, or forget the entry. Galleries you made are kept here with their admin link.\n\n\
## Burn after reading\n\n\
A recipient who opens the link first sees a page, never the bytes: a link preview in a chat app spends nothing. **Download and delete** downloads it once; a short text can be shown on the page instead. Afterwards the page says the link no longer works.\n\n\
## Folders\n\n\
A folder's page lists its files. If you made it in this browser, you may add, edit (text) and delete its files there without its write token; others need the write token when it has one.\n\n\
## Galleries\n\n\
Create one on the Galleries page: you land on its admin page, whose address is the admin key (this browser keeps it under Your uploads). Share the public page; visitors like images and sign the guestbook.\n",
        resumable = bytes(crate::tus::PAGE_FROM_BYTES),
        max = bytes(l.file_bytes_max),
        def = duration(l.file_ttl_default_secs),
    )
}

fn files_text(b: &str, l: &Limits) -> String {
    format!(
        "Upload the raw bytes of one file; the answer is its record, with `url`.\n\n\
```sh\ncurl --data-binary @notes.txt '{b}/?name=notes.txt'\ncurl -F file=@photo.jpg '{b}/'\n```\n\n\
- Size: at most {max}; bigger answers 413 `too_large`. Send Content-Length (411 without).\n\
- Lifetime: {def} by default; `ttl=<N>h` or `ttl=<N>d` (a bare number is hours) is clamped to [{min}, {tmax}].\n\
- `once=1`: burn after reading; the first GET of the bytes deletes it (HEAD does not). A browser, or a chat app's link preview (told by its User-Agent), first gets a page with a \"Download and delete\" link (`?download=1`), so a preview never uses the file up; agents get the bytes at once.\n\
- `max_downloads=N` (1 to {dmax}): the file is removed after its Nth whole download; the record's `downloads_left` counts down. `once=1` is `max_downloads=1`. Such files ignore Range, are never cached and never listed.\n\
- `tag=<t>` (repeatable, up to {tags}) makes the file show in `/browse`.\n\
- `share=<name>` puts the upload into the dir `/d/<name>` instead (see /help/dirs); not with `once=1`.\n\
- `GET /<id>` serves the bytes (images and text inline); `?download=1` forces a download; `?thumb=1` is a small WebP preview of a raster image.\n\
- Downloads (files, bundle members, dir files, images) carry `ETag` and `Last-Modified`: `If-None-Match` or `If-Modified-Since` answers 304 while the bytes are the same. One `Range: bytes=a-b` (or `a-`, `-n`) answers 206 (`curl -C -` resumes); a range past the end answers 416. A `once=1` file ignores both.\n\
- Upload the bytes as they are: a `Content-Encoding` other than identity answers 501 `unsupported`.\n\
- Text files can be replaced with `PUT /<id>` and appended to with `PATCH /<id>`.\n\
- `DELETE /<id>` removes it at once.\n",
        max = bytes(l.file_bytes_max),
        def = duration(l.file_ttl_default_secs),
        min = duration(l.file_ttl_min_secs),
        tmax = duration(l.file_ttl_max_secs),
        tags = l.tags_per_object_max,
        dmax = l.downloads_max,
    )
}

fn bundles_text(b: &str, l: &Limits) -> String {
    format!(
        "Two or more multipart file parts in one `POST /` make a bundle: immutable, one id, one lifetime.\n\n\
```sh\ncurl -F file=@a.txt -F file=@b.txt '{b}/'\n```\n\n\
- `GET /<id>/<filename>` serves one file; `GET /<id>` serves `index.html` to browsers when the bundle has one, and a zip to agents.\n\
- `GET /<id>?download=1` is the zip for everyone.\n\
- PUT and PATCH on a bundle answer 403 `forbidden`.\n\
- At most {files} files; each file at most {max}.\n",
        files = l.files_per_container_max,
        max = bytes(l.file_bytes_max),
    )
}

fn dirs_text(b: &str, l: &Limits) -> String {
    format!(
        "A dir is a mutable folder at `/d/<key>`. Each add, edit or delete slides its expiry forward by its ttl, capped at {cap} from now.\n\n\
```sh\ncurl -X POST '{b}/?dir=1&name=my-notes&write=1'\ncurl -F file=@a.txt -H 'X-Store-Write: <write_token>' '{b}/d/my-notes'\ncurl -X PUT --data-binary @a.txt -H 'X-Store-Write: <write_token>' '{b}/d/my-notes/a.txt'\ncurl -o my-notes.zip '{b}/d/my-notes?zip=1'\n```\n\n\
- Unnamed dirs get a 32-character hex id; named dirs ({nmin}-{nmax} characters of `a-z`, `0-9` and `-`, at least one letter) are create-or-get.\n\
- `ttl` is clamped to [{dmin}, {dmax}], default {ddef}. Flags count only on first creation.\n\
- `write=1` answers a `write_token` once; writes then need it as the X-Store-Write header or `write=<token>`, otherwise 401 `write_denied`. Reads stay open.\n\
- `listed=1` shows the dir in `GET /d`; `tag=<t>` up to {tags}.\n\
- `GET /d/<key>/history` lists the last {hist} changes, newest first.\n\
- `share=<name>` on a plain upload puts the file into the dir `<name>`.\n",
        cap = duration(l.dir_sliding_cap_secs),
        nmin = l.name_chars_min,
        nmax = l.name_chars_max,
        dmin = duration(l.dir_ttl_min_secs),
        dmax = duration(l.dir_ttl_max_secs),
        ddef = duration(l.dir_ttl_default_secs),
        tags = l.tags_per_object_max,
        hist = l.history_limit,
    )
}

fn show_dirs_text(config: &AppConfig) -> String {
    let b = &config.base_url;
    format!(
        "A show-dir is a dir that never expires and that anyone with its URL may add to, edit and delete files in. History records everything.\n\n\
```sh\ncurl -X POST -H 'Authorization: Bearer <RETAIN_TOKEN>' '{b}/?dir=1&show=1&name=our-board'\ncurl -X POST -H 'Authorization: Bearer <RETAIN_TOKEN>' '{b}/d/existing-dir?show=1'\n```\n\n\
- Creating or flipping one needs the retain token; deleting the whole show-dir still does.\n\
- The answer has `open: true`.\n\
- Writers without the retain token may put at most {cap} into one show-dir, and their writes never evict other objects: past either, 507 `pool_full`.\n",
        cap = bytes(config.limits.show_dir_bytes_max)
    )
}

fn owners_text(b: &str, l: &Limits) -> String {
    format!(
        "Every upload that creates a single file, a bundle or a dir answers an `owner_token`, once (also as the `X-Store-Owner` response header). Only its digest is stored: keep it, it cannot be shown again.\n\n\
```sh\ncurl -i --data-binary @notes.txt '{b}/?name=notes.txt&protect=1'\ncurl -X POST -H 'X-Store-Owner: <owner_token>' '{b}/<id>?ttl=2d'\ncurl -X DELETE -H 'X-Store-Owner: <owner_token>' '{b}/<id>'\n```\n\n\
- Send it as the `X-Store-Owner` header or `owner=<token>`. A wrong one answers 401 `write_denied`.\n\
- `POST /<id>?ttl=<N>h|<N>d` (and `POST /d/<key>?ttl=…`) gives the object a new lifetime counted from now, shorter or longer, clamped as at upload (files [{fmin}, {fmax}], dirs [{dmin}, {dmax}]); it answers the record. Without the owner token: 401 `write_denied`. A retained object keeps its retention.\n\
- `protect=1` at upload (single files and bundles): DELETE, PUT, PATCH and tag changes then need the owner token (or the retain token). Without `protect=1`, anyone with the URL may change or delete a file, as always.\n\
- On a dir the owner token passes the write gate, as the write token does.\n\
- The owner token does not stand in for the retain token: a retained object needs the retain token to change.\n\
- To pass a link on: `GET /<id>?qr=1` (also `/d/<key>?qr=1`, `/pics/g/<gid>?qr=1`) is its QR code as SVG, `?qr=text` as text for a terminal; it never spends a download. The pages show the same code.\n\
- In a browser, the home page keeps \"Your uploads\" (with their owner tokens) in the browser's own storage, to copy, show as a QR code, give a new lifetime or delete.\n",
        fmin = duration(l.file_ttl_min_secs),
        fmax = duration(l.file_ttl_max_secs),
        dmin = duration(l.dir_ttl_min_secs),
        dmax = duration(l.dir_ttl_max_secs),
    )
}

fn retention_text(config: &AppConfig) -> String {
    let b = &config.base_url;
    format!(
        "Retained objects never expire and are never evicted from the pool. Retaining needs a retain token (this server has {state}).\n\n\
```sh\ncurl -H 'Authorization: Bearer <RETAIN_TOKEN>' --data-binary @a.pdf '{b}/?name=a.pdf'\ncurl -X POST -H 'Authorization: Bearer <RETAIN_TOKEN>' '{b}/<id>?retain=1'\ncurl -X POST -H 'Authorization: Bearer <RETAIN_TOKEN>' '{b}/d/<key>?retain=1'\n```\n\n\
- `expires_at` and `expires_in` become null and `persistence.retention` is `indefinite`.\n\
- Reads stay public; writes and deletes of a retained object need the token.\n\
- PUT or PATCH with the token retains implicitly.\n",
        state = if config.retain_tokens.is_enabled() {
            "one or more configured"
        } else {
            "none configured, so retaining answers 401"
        },
    )
}

fn import_text(b: &str, l: &Limits) -> String {
    format!(
        "Have the service fetch a public http(s) document and store it as a normal file.\n\n\
```sh\ncurl -X POST '{b}/?url=https://example.org/report.pdf'\ncurl -X POST '{b}/?url=https://example.org/&link=1&name=example-link'\n```\n\n\
- At most {max}; more answers 413.\n\
- Private, loopback and link-local hosts are refused, also after redirects; every refusal answers the same 400.\n\
- The name comes from Content-Disposition or the URL path; `name=` overrides it.\n\
- `link=1` stores the URL as a small redirect document: browsers are redirected, agents may PUT or PATCH it.\n\
- `tag=<t>` is repeatable, up to {tags}. Galleries import with `POST /pics/g/<gid>?url=` (up to {pmax}).\n",
        max = bytes(l.import_bytes_max),
        tags = l.tags_per_object_max,
        pmax = bytes(l.pics_import_bytes_max),
    )
}

fn browse_text(b: &str, l: &Limits) -> String {
    format!(
        "Tags make files findable. Only tagged, live files that are not burn-after-reading show.\n\n\
```sh\ncurl -X POST '{b}/<id>?tag=report&untag=draft'\ncurl '{b}/browse?tag=report&q=2026&sort=size&order=desc'\ncurl '{b}/d?q=notes&sort=updated'\n```\n\n\
- Up to {tags} tags per file or dir, each {tmin}-{tmax} characters. Changing tags never touches content or expiry.\n\
- `tag` filters are ANDed; `q` matches a substring of the name or a tag.\n\
- `sort=created|name|size|expires` (default created), `order=asc|desc` (default desc); at most {max} results.\n\
- `GET /d` lists dirs created with `listed=1`; filters `created_after`, `created_before`, `updated_after`, `updated_before`.\n",
        tags = l.tags_per_object_max,
        tmin = l.tag_chars_min,
        tmax = l.tag_chars_max,
        max = l.browse_results_max,
    )
}

fn galleries_text(b: &str, l: &Limits) -> String {
    format!(
        "A gallery collects images. Creating one answers an `admin_url` once: keep it, it is the only way to administer the gallery.\n\n\
```sh\ncurl -X POST '{b}/pics?create=1&name=summer-trip'\ncurl --data-binary @IMG_1.heic '{b}/pics/g/summer-trip?name=IMG_1.heic'\ncurl -F file=@a.jpg -F file=@b.png '{b}/pics/g/summer-trip'\ncurl -X POST '{b}/pics/i/<id>?like=1'\ncurl -X POST -H 'Content-Type: application/json' -d '{{\"name\":\"Ana\",\"text\":\"Lovely\"}}' '{b}/pics/g/summer-trip?comment=1'\n```\n\n\
- JPEG, PNG, WebP, GIF and HEIC, up to {up} each. Big images are downscaled to {px} px (about {target}); metadata is stripped, orientation kept.\n\
- `GET /pics/i/<id>?thumb=160|320|640` is a WebP preview fitting that box.\n\
- Images live {life} from upload; uploads slide the gallery's lifetime.\n\
- All galleries share a pool of {pool}; when it is full uploads answer 507 `pool_full` with Retry-After {retry} s. Nothing is evicted.\n\
- Comments: name up to {cname} characters, text up to {ctext}; one per visitor every {cool} s; at most {cmax} kept (oldest dropped).\n\
- Likes toggle, one per visitor. `?likes=1` answers the counters. `?stars=<id>,<id>` shows chosen images first.\n\
- Admin: `POST /pics/g/<gid>/<secret>` with `id` and `action` = hide, unhide, delete, up, down or cdel. The admin uploads at `POST /pics/g/<gid>/<secret>?upload=1` (and imports with `?url=`), the only way in when the server takes gallery images from admins only (`/api`: `gallery_uploads`).\n\
- `GET /pics/g/<gid>?zip=1` downloads every visible image in one zip; `?qr=1` is the gallery's QR code.\n",
        up = bytes(l.pics_upload_bytes_max),
        px = l.pics_downscale_px,
        target = bytes(l.pics_target_bytes),
        life = duration(l.pics_lifetime_secs),
        pool = bytes(l.pics_pool_bytes),
        retry = l.pool_full_retry_after_secs,
        cname = l.comment_name_chars_max,
        ctext = l.comment_text_chars_max,
        cool = l.comment_cooldown_secs,
        cmax = l.comments_per_gallery_max,
    )
}

fn auth_text(b: &str, l: &Limits, uploads_closed: bool) -> String {
    format!(
        "Reading is open; there is no login.\n\n\
| Token | Purpose | How to send it |\n|---|---|---|\n\
| retain token | retain objects; create show-dirs; write or delete retained objects | `Authorization: Bearer <token>` or `token=<token>` |\n\
| dir write token | write to a dir created with `write=1` | header `X-Store-Write: <token>` or `write=<token>` |\n\
| owner token | answered once by every upload that creates a file, bundle or dir: change its expiry (`?ttl=`), and write to it when it is protected (`protect=1`) | header `X-Store-Owner: <token>` or `owner=<token>` |\n\
| gallery admin token | administer one gallery | path segment `/pics/g/<gid>/<token>`, never a query |\n\
| superadmin token | administer any gallery | the same path segment; set by the operator |\n\
| upload token | create anything (files, bundles, dirs, galleries, gallery images) when the operator closed uploads ({closed}) | `Authorization: Bearer <token>`, `token=<token>`, or a form's `token` field before its files; a retain token works too |\n\n\
- A missing or wrong write, owner or retain token answers 401 `write_denied`; a wrong gallery secret answers 404.\n\
- Likes and the comment cooldown use a pseudonymous visitor fingerprint (IP and user agent, keyed per gallery).\n\
- Rate limit: {rate} requests per minute per client IP; over it, 429 with Retry-After.\n\n\
Example: `curl -X POST -H 'Authorization: Bearer <token>' '{b}/<id>?retain=1'`\n",
        rate = l.rate_limit_per_min,
        closed = if uploads_closed {
            "this server: closed"
        } else {
            "this server: open, no token needed"
        },
    )
}

fn operations_text(b: &str) -> String {
    format!(
        "Two probes, answered as JSON to everyone and never counted by the rate limit.\n\n\
```sh\ncurl '{b}/healthz'\ncurl '{b}/readyz'\n```\n\n\
- `GET /healthz` answers 200 `{{\"status\": \"ok\"}}` while the process serves: restart it when this fails.\n\
- `GET /readyz` answers the same when the records and the bytes can be reached, and 503 `unavailable` with Retry-After otherwise (a database or a disk that is out): send traffic elsewhere until it is 200 again. The cause is in the server log, never in the answer.\n\n\
Prometheus metrics are served only on a listener the operator opens with `--metrics-listen ADDR` (or `STORE_METRICS_LISTEN`), never here: `/metrics` on this address is 404. They count requests by route and status with their durations, the pools, the live objects by kind, the sweeper's removals and lag, refused imports, rate-limited requests, image jobs, and blob cache hits.\n"
    )
}

fn operators_text(b: &str, on: bool) -> String {
    let state = if on {
        "Moderation is on here."
    } else {
        "Moderation is off here: the operator has not set STORE_ADMIN_TOKEN, and `/admin` answers 404."
    };
    format!(
        "{state} With `STORE_ADMIN_TOKEN` set, whoever holds it sees, finds, deletes and blocks what this server stores. Every upload records the SHA-256 of its bytes as they arrive.\n\n\
```sh\ncurl -H 'Authorization: Bearer <admin token>' '{b}/admin?q=holiday'\n\
curl -H 'Authorization: Bearer <admin token>' -H 'Content-Type: application/json' \\\n\
  -d '{{\"sha256\": \"<64 hex>\", \"reason\": \"malware\"}}' '{b}/admin/block'\n\
curl -H 'Authorization: Bearer <admin token>' -X DELETE '{b}/<id>'\n```\n\n\
- `GET /admin` lists every live object of every kind, newest first, 50 a page (`limit=` up to 200, `after=` the `next` a page answered). `q=` finds objects by the words of their names, a content type (`image/png`), the SHA-256 of their bytes, or an id. A browser gets a page with search, delete (after a confirmation) and block; it carries the token as `token=`.\n\
- `POST /admin/block` with `sha256` and `reason` blocks those bytes: every upload or import of them answers 451 `blocked` and stores nothing, on every process, and every live object holding them is removed (a dir loses only those files).\n\
- `POST /admin/delete` with `key` removes any object `GET /admin` lists; `DELETE` of a file, bundle or dir by its usual URL works with the admin token too.\n\
- Visitors report an object with `POST <its URL>?report=1` and a `reason` (1 to 1000 characters, JSON or a form); every shared page has a Report form. `GET /admin?reports=1` is the queue, the oldest first, and `POST /admin/clear` with `id` takes a report out.\n\
- Without the admin token these answer 401 `write_denied`.\n\
- With `STORE_CLAMD` set, every upload is scanned by ClamAV before it is stored: a hit answers 422 `infected`, and while clamd is out of reach uploads answer 503 `unavailable`.\n\
- With `STORE_WEBHOOK_URL` and `STORE_WEBHOOK_SECRET` set, every event (`object.created`, `object.deleted`, `object.expired`, `object.reported`, `object.blocked`) is POSTed as JSON signed as the Standard Webhooks specification says, at least once and in order per object, retried after about 5 s, 30 s, then for 24 h.\n"
    )
}

fn about_text(b: &str) -> String {
    format!(
        "Everything here is generated from the server's own route table, limits and error codes, so it is what this server does.\n\n\
```sh\ncurl '{b}/api'\ncurl -o openapi.json '{b}/openapi.json'\n```\n\n\
- `GET /api` is the contract: limits, error codes and every endpoint with what it does.\n\
- `GET /openapi.json` is the same contract as an OpenAPI 3.1 document, with the JSON schema of every answer, for client generators and API testers.\n\
- `GET /help` lists these topics; `GET /help/<topic>` is one of them, JSON for agents and HTML for browsers.\n\
- `GET /write_for_agents` and `GET /copy_for_agents` are texts to paste into an agent's instructions.\n\
- `GET /releases` is the changelog.\n"
    )
}

/// The limits as a markdown table; every row is a field of [`Limits`].
/// Long because it is that table, one row per limit.
pub fn limits_text(l: &Limits) -> String {
    let rows: [(&str, String); 20] = [
        ("single file size", bytes(l.file_bytes_max)),
        ("import size", bytes(l.import_bytes_max)),
        (
            "single-file lifetime",
            format!(
                "default {}, ttl clamped to [{}, {}]",
                duration(l.file_ttl_default_secs),
                duration(l.file_ttl_min_secs),
                duration(l.file_ttl_max_secs)
            ),
        ),
        (
            "dir lifetime",
            format!(
                "default {}, ttl clamped to [{}, {}]",
                duration(l.dir_ttl_default_secs),
                duration(l.dir_ttl_min_secs),
                duration(l.dir_ttl_max_secs)
            ),
        ),
        ("dir sliding cap", duration(l.dir_sliding_cap_secs)),
        ("store pool", bytes(l.pool_bytes)),
        (
            "rate",
            if l.rate_limit_per_min == 0 {
                "off".to_string()
            } else {
                format!("{} requests per minute per IP", l.rate_limit_per_min)
            },
        ),
        (
            "tags",
            format!(
                "{} per file or dir; {}-{} characters",
                l.tags_per_object_max, l.tag_chars_min, l.tag_chars_max
            ),
        ),
        (
            "share, dir and gallery names",
            format!("{}-{} characters", l.name_chars_min, l.name_chars_max),
        ),
        ("file name", format!("{} bytes", l.file_name_bytes_max)),
        ("pics upload size", bytes(l.pics_upload_bytes_max)),
        ("pics import size", bytes(l.pics_import_bytes_max)),
        ("pics shared pool", bytes(l.pics_pool_bytes)),
        ("pics lifetime", duration(l.pics_lifetime_secs)),
        (
            "pics downscale",
            format!(
                "{} px, about {}",
                l.pics_downscale_px,
                bytes(l.pics_target_bytes)
            ),
        ),
        (
            "comments",
            format!(
                "name {} characters, text {}; cooldown {} s; {} per gallery",
                l.comment_name_chars_max,
                l.comment_text_chars_max,
                l.comment_cooldown_secs,
                l.comments_per_gallery_max
            ),
        ),
        (
            "Retry-After for 507",
            format!("{} s", l.pool_full_retry_after_secs),
        ),
        ("dir history", format!("{} entries", l.history_limit)),
        (
            "files per dir or bundle",
            l.files_per_container_max.to_string(),
        ),
        ("browse results", l.browse_results_max.to_string()),
    ];
    let mut out = String::from(
        "The limits of this server, as configured. `/api` carries the same values under `limits`.\n\n| Limit | Value |\n|---|---|\n",
    );
    for (name, value) in rows {
        let _ = writeln!(out, "| {name} | {value} |");
    }
    let _ = writeln!(
        out,
        "\nContent-Length is required on bodied requests (411 `missing_length`)."
    );
    out
}

/// Who may create on this server: the upload token and gallery uploads
/// (STORE_UPLOAD_TOKEN, STORE_PICS_UPLOADS), as `/api` reports them.
fn who_creates(config: &AppConfig) -> String {
    let uploads = if config.upload_token.is_required() {
        "Creating anything needs this server's upload token (`Authorization: Bearer <token>`); reading needs none."
    } else {
        "Anyone may upload; no token is needed to create."
    };
    let pics = match config.gallery_uploads {
        GalleryUploads::Open => "Anyone with a gallery's link may add images to it.",
        GalleryUploads::Admin => "Only a gallery's admin adds images to it: on the admin page, or `POST /pics/g/<gid>/<admin token>?upload=1` (with the upload token too, when one is set).",
    };
    format!("\n## Who may upload\n\n{uploads} {pics} (`/api`: `upload_token`, `gallery_uploads`)\n")
}

/// A topic's plain-text body, for the topics SPEC.md serves as text to
/// everyone (`/help/errors`); `None` for the rest, which are pages.
pub fn plain_text(topic: &Topic, limits: &Limits) -> Option<String> {
    (topic.slug == "errors").then(|| errors_text(limits))
}

/// `/help/errors`: plain text, one paragraph per code.
pub fn errors_text(limits: &Limits) -> String {
    let mut out = String::from(
        "Every error is JSON: {\"error\": \"<message>\", \"code\": \"<code>\"}, plus \"retry_after\" (seconds) and a Retry-After header on 429, 503 and 507.\n\
Only 429, 503 and 507 are worth retrying later; 500 is the server's fault; every other code means the request itself must change.\n\n",
    );
    for code in ErrorCode::ALL {
        let info = code.info(limits);
        let _ = writeln!(
            out,
            "{http} {code}\n  meaning: {meaning}\n  retry: {retry}\n",
            http = info.http,
            code = code.as_str(),
            meaning = info.meaning,
            retry = info.retry,
        );
    }
    let _ = writeln!(
        out,
        "429 rate_limited also answers a comment posted within {} s of the same visitor's last one.",
        limits.comment_cooldown_secs
    );
    out
}

/// `/write_for_agents`: how an agent stores and shares things here.
pub fn write_for_agents(config: &AppConfig) -> String {
    let b = &config.base_url;
    let l = &config.limits;
    format!(
        "# Writing to {name} at {b}\n\n\
You can store files here with curl and hand out the URL. Everything expires on its own unless retained. Answers are JSON; errors are `{{\"error\", \"code\"}}` (see {b}/help/errors).\n\n\
## Upload one file (default lifetime {def}, at most {max})\n\
```sh\ncurl --data-binary @report.md '{b}/?name=report.md'\ncurl --data-binary @report.md '{b}/?name=report.md&ttl=3d&tag=report'\ncurl --data-binary @secret.txt '{b}/?name=secret.txt&once=1'   # burn after reading\ncurl --data-binary @build.zip '{b}/?name=build.zip&max_downloads=5'   # gone after 5 downloads\n```\n\
The answer's `url` is the link to share; `expires_at` says when it goes.\n\n\
## A large file, resumable (tus 1.0.0: survives a broken connection)\n\
```sh\ncurl -i -X POST -H 'Tus-Resumable: 1.0.0' -H 'Upload-Length: 11' -H 'Upload-Metadata: filename bm90ZXMudHh0' '{b}/uploads'   # Location: the upload's URL\ncurl -X PATCH -H 'Tus-Resumable: 1.0.0' -H 'Upload-Offset: 0' -H 'Content-Type: application/offset+octet-stream' --data-binary @notes.txt '<Location>'\ncurl -I -H 'Tus-Resumable: 1.0.0' '<Location>'   # after a break: Upload-Offset says where to go on from\n```\n\
The metadata values are base64 (`filename` required; `ttl`, `once`, `max_downloads`, `protect`, `tags`, `encrypted` as for a plain upload). A tus client does it all: tuspy, tus-js-client, tusd's `tus-upload`. More at {b}/help/uploads.\n\n\
## A file the server cannot read (end-to-end encrypted, age format)\n\
Encrypt with the `age` tool before uploading; the server stores the ciphertext and never sees a key. Only someone with the identity can read it.\n\
```sh\nage-keygen -o key.txt                                   # once; its public key is the line 'age1...'\nage -r <age1 recipient> report.pdf | curl --data-binary @- '{b}/?encrypted=age&name=report.pdf.age'\ncurl -fsS '{b}/<id>' | age -d -i key.txt > report.pdf      # the recipient, with the identity\n```\n\
`age -p` encrypts with a passphrase instead. More at {b}/help/private.\n\n\
## A file only people with the password can read\n\
```sh\ncurl -H 'X-Store-Password: correct horse' --data-binary @plan.pdf '{b}/?name=plan.pdf'\ncurl -fsS -u ':correct horse' '{b}/<id>' -o plan.pdf          # the recipient (any user name)\n```\n\
Without the password (or your owner token) a read answers 401; a browser gets a password page. The 11th wrong password within 10 minutes answers 429. Bundles and dirs take `X-Store-Password` too.\n\n\
## Collect files from others (drop link)\n\
```sh\ncurl -X POST '{b}/?dir=1&drop=1'                            # keep owner_token and drop_url: both are shown once\ncurl -F file=@report.pdf '<drop_url>'                     # anyone with the link; answers only the names taken\ncurl -H 'X-Store-Owner: <owner_token>' '{b}/d/<key>'        # only you read what arrived\n```\n\n\
## Several files as one bundle\n\
```sh\ncurl -F file=@a.md -F file=@b.png '{b}/'\n```\n\n\
## A dir you keep editing (sliding lifetime, default {ddef}, capped at {cap})\n\
```sh\ncurl -X POST '{b}/?dir=1&name=agent-notes&write=1'          # keep the write_token it returns\ncurl -F file=@plan.md -H 'X-Store-Write: <write_token>' '{b}/d/agent-notes'\ncurl -X PATCH --data-binary 'one more line' -H 'X-Store-Write: <write_token>' '{b}/d/agent-notes/plan.md'\ncurl -X PUT --data-binary @plan.md -H 'X-Store-Write: <write_token>' '{b}/d/agent-notes/plan.md'\ncurl -X DELETE -H 'X-Store-Write: <write_token>' '{b}/d/agent-notes/old.md'\n```\n\n\
## Edit a single text file\n\
```sh\ncurl -X PUT --data-binary @notes.txt '{b}/<id>'\ncurl -X PATCH --data-binary 'appended' '{b}/<id>'\n```\n\n\
## Change or protect what you uploaded (owner token)\n\
Every upload that creates a file, bundle or dir answers an `owner_token` once (also the `X-Store-Owner` header): keep it.\n\
```sh\ncurl --data-binary @report.md '{b}/?name=report.md&protect=1'   # only the owner may change or delete it\ncurl -X POST -H 'X-Store-Owner: <owner_token>' '{b}/<id>?ttl=2d'     # a new expiry, counted from now\ncurl -X DELETE -H 'X-Store-Owner: <owner_token>' '{b}/<id>'\n```\n\n\
## Hand a link to a phone (QR code)\n\
```sh\ncurl '{b}/<id>?qr=text'   # a QR code a terminal shows; ?qr=1 is SVG; also /d/<key>?qr=1, /pics/g/<gid>?qr=1\n```\n\n\
## Import from a URL instead of uploading\n\
```sh\ncurl -X POST '{b}/?url=https://example.org/data.csv'\n```\n\n\
## Through MCP instead of curl\n\
Add this server to an MCP client (a desktop assistant, an IDE) by its URL; the tools upload, read, organise and retain as the commands here do. More at {b}/help/agents.\n\
```json\n{mcp}\n```\n\n\
## Keep something indefinitely (needs the operator's retain token)\n\
```sh\ncurl -X POST -H 'Authorization: Bearer <RETAIN_TOKEN>' '{b}/<id>?retain=1'\n```\n\n\
## Rules worth knowing\n\
- Send Content-Length on every bodied request (curl does).\n\
- {rate}.\n\
- {uploads}\n\
- 429 and 507: wait `retry_after` seconds, then retry unchanged. Any other error: change the request.\n\
- The whole contract is at {b}/api; topics at {b}/help.\n",
        name = api::SERVICE_NAME,
        def = duration(l.file_ttl_default_secs),
        max = bytes(l.file_bytes_max),
        ddef = duration(l.dir_ttl_default_secs),
        cap = duration(l.dir_sliding_cap_secs),
        rate = capitalised(&rate_rule(l)),
        mcp = crate::mcp::guide::client_snippet(config),
        uploads = if config.upload_token.is_required() {
            "This server takes uploads with its upload token only: add `-H 'Authorization: Bearer <UPLOAD_TOKEN>'` to every command that creates something; reading needs no token."
        } else {
            "Uploads need no token here."
        },
    )
}

/// The rate limit as a clause: "at most N requests per minute per IP".
fn rate_rule(l: &Limits) -> String {
    if l.rate_limit_per_min == 0 {
        "no rate limit is configured".to_string()
    } else {
        format!(
            "at most {} requests per minute per IP",
            l.rate_limit_per_min
        )
    }
}

/// `clause` as the start of a sentence.
fn capitalised(clause: &str) -> String {
    let mut chars = clause.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// `/llms.txt` (the llmstxt.org format): what the service is, the two
/// calls most agents need, this server's limits, and a link list made
/// from the same tables as `/help` (its topics, and the documents beside
/// them), so that it names what this server has.
pub fn llms_txt(config: &AppConfig) -> String {
    let b = &config.base_url;
    let l = &config.limits;
    let mut out = format!(
        "# {name} at {b}\n\n\
> An ephemeral file store over HTTP: upload bytes (or have it import a URL) and get a link back; everything expires on its own unless retained. Answers are JSON for agents and HTML for browsers.\n\n\
On this server: files up to {max}; a file lives {def} unless asked otherwise ({min} to {ttl_max}); {rate}; {uploads}\n\n\
```sh\n\
curl --data-binary @report.md '{b}/?name=report.md'   # answers JSON; its url is the link to share\n\
curl '{b}/<id>'                                     # the bytes\n\
curl '{b}/<id>?info=1'                              # the record, spending no download\n\
```\n\n\
Agents with MCP and no shell: the Model Context Protocol endpoint is {mcp} (Streamable HTTP, stateless; tools upload_file, read_file, create_dir and more, described at {b}/help/agents).\n\n\
## Docs\n\n",
        name = api::SERVICE_NAME,
        max = bytes(l.file_bytes_max),
        def = duration(l.file_ttl_default_secs),
        min = duration(l.file_ttl_min_secs),
        ttl_max = duration(l.file_ttl_max_secs),
        rate = rate_rule(l),
        mcp = url_for(b, RouteId::Mcp, &[]),
        uploads = if config.upload_token.is_required() {
            "creating anything needs the upload token (`Authorization: Bearer <UPLOAD_TOKEN>`); reading needs none."
        } else {
            "uploads need no token."
        },
    );
    for route in [
        RouteId::WriteForAgents,
        RouteId::CopyForAgents,
        RouteId::Api,
        RouteId::Openapi,
    ] {
        let r = route.route();
        out.push_str(&format!(
            "- [{}]({}): {}\n",
            r.path,
            url_for(b, route, &[]),
            r.does
        ));
    }
    out.push_str("\n## Help topics\n\n");
    for t in TOPICS {
        let entry = t.entry(b);
        out.push_str(&format!(
            "- [{}]({}): {}\n",
            entry.title, entry.url, entry.summary
        ));
    }
    let releases = RouteId::Releases.route();
    out.push_str(&format!(
        "\n## Optional\n\n- [{}]({}): {}\n",
        releases.path,
        url_for(b, RouteId::Releases, &[]),
        releases.does
    ));
    out
}

/// `/copy_for_agents`: how an agent copies files and dirs out.
pub fn copy_for_agents(config: &AppConfig) -> String {
    let b = &config.base_url;
    format!(
        "# Copying out of {name} at {b}\n\n\
## One file\n\
```sh\ncurl -fsSL -o report.md '{b}/<id>'\ncurl -fsSL -OJ '{b}/<id>?download=1'        # keeps the stored file name\ncurl -fsSI '{b}/<id>'                          # headers only; never burns a once=1 file\n```\n\n\
## A bundle\n\
```sh\ncurl -fsSL -o bundle.zip '{b}/<id>?download=1'\ncurl -fsSL -o a.md '{b}/<id>/a.md'\n```\n\n\
## A whole dir\n\
```sh\ncurl -fsSL '{b}/d/<key>'                        # JSON listing: files[].name, url, size\ncurl -fsSL -o dir.zip '{b}/d/<key>?zip=1' && unzip dir.zip -d dir\ncurl -fsSL '{b}/d/<key>' | jq -r '.files[].url' | xargs -n1 curl -fsSLOJ\n```\n\n\
## A gallery (every page; files keep their names)\n\
```sh\npages=$(curl -fsSL '{b}/pics/g/<gid>' | jq .pages)\nfor p in $(seq 1 \"$pages\"); do\n  curl -fsSL \"{b}/pics/g/<gid>?p=$p\" | jq -r '.images[].url' | xargs -n1 curl -fsSLOJ\ndone\n```\n\n\
## Found by tag\n\
```sh\ncurl -fsSL '{b}/browse?tag=<tag>' | jq -r '.[].url'\n```\n\n\
A 404 means the object expired, was deleted or burned; there is no way to bring it back.\n",
        name = api::SERVICE_NAME,
    )
}

/// The changelog, markdown, compiled in from `assets/releases.md`.
pub const RELEASES: &str = include_str!("../assets/releases.md");

/// Markdown to HTML. Raw HTML in the source is escaped rather than passed
/// through: the texts are ours, but keeping the renderer strict means a
/// future edit cannot slip markup past the page's escaping.
pub fn render_markdown(md: &str) -> String {
    use pulldown_cmark::{html, Event, Options, Parser};
    let parser = Parser::new_ext(md, Options::ENABLE_TABLES).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, parser);
    // A code block scrolls sideways on a phone: focusable, a keyboard
    // can scroll it too (axe's scrollable-region-focusable). The renderer
    // writes every block's tag so, and raw HTML never gets here unescaped.
    out.replace("<pre>", "<pre tabindex=\"0\">")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> AppConfig {
        AppConfig::new("http://h")
    }

    #[test]
    fn every_endpoint_names_a_topic_and_every_topic_has_text() {
        for r in crate::routes::ROUTES {
            assert!(
                topic(r.topic).is_some(),
                "{} names unknown topic {}",
                r.name,
                r.topic
            );
        }
        for t in TOPICS {
            assert!(!topic_text(t.slug, &config()).is_empty(), "{}", t.slug);
        }
    }

    #[test]
    fn texts_carry_the_configured_values() {
        let mut c = config();
        c.limits.file_bytes_max = 1234;
        c.limits.comment_cooldown_secs = 77;
        assert!(topic_text("files", &c).contains("1234 bytes"));
        assert!(topic_text("galleries", &c).contains("every 77 s"));
        assert!(limits_text(&c.limits).contains("| single file size | 1.2 KiB (1234 bytes) |"));
        assert!(write_for_agents(&c).contains("http://h/?name=report.md"));
    }

    #[test]
    fn errors_text_lists_every_code() {
        let text = errors_text(&Limits::DEFAULT);
        for code in ErrorCode::ALL {
            let line = format!("{} {}", code.info(&Limits::DEFAULT).http, code.as_str());
            assert!(text.contains(&line), "{line}");
        }
    }

    #[test]
    fn units() {
        assert_eq!(duration(14_400), "4h");
        assert_eq!(duration(1_209_600), "14d");
        assert_eq!(duration(90), "90s");
        assert_eq!(bytes(5_242_880), "5 MiB (5242880 bytes)");
        assert_eq!(bytes(1_048_576), "1 MiB (1048576 bytes)");
        assert_eq!(bytes(31_457_280), "30 MiB (31457280 bytes)");
        assert_eq!(bytes(512), "512 bytes");
        assert_eq!(binary_size(1234), "1.2 KiB");
        assert_eq!(binary_size(0), "0 B");
    }

    #[test]
    fn markdown_renders_and_escapes_raw_html() {
        let html = render_markdown(
            "# Title\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        );
        assert!(html.contains("<h1>Title</h1>"));
        assert!(html.contains("&lt;script&gt;"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("<table>"));
    }

    #[test]
    fn releases_cover_every_revision_newest_first() {
        let positions: Vec<usize> = ["1.54.1", "1.43.0", "1.38.1", "1.11.0"]
            .iter()
            .map(|v| {
                RELEASES
                    .find(&format!("## {v}"))
                    .unwrap_or_else(|| panic!("{v}"))
            })
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        assert!(RELEASES.contains(&format!("## {}", api::SPEC_VERSION)));
    }
}
