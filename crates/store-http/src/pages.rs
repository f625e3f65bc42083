//! The HTML pages for people. maud escapes every interpolated string, so
//! user-chosen names, tags and comments always show as text. Pages load one
//! stylesheet and one script from `/static/` (see [`crate::assets`]) and
//! carry no inline script or style, so their Content-Security-Policy can
//! forbid both. Every page works without the script: forms post and the
//! server redirects; the script adds progress bars, drag and drop, copy
//! buttons, local times and likes without a reload.

use crate::views::{
    BrowseEntry, BundleView, DirView, FileView, GalleryCreated, GalleryEntry, GalleryLimits,
    GalleryView, HistoryView,
};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use store_core::{Limits, Timestamp};

use crate::assets;
use crate::router::{url_for, RouteId};

/// The navigation every app page shares.
const NAV: &[(RouteId, &str)] = &[
    (RouteId::Home, "Upload"),
    (RouteId::Browse, "Browse"),
    (RouteId::ListDirs, "Dirs"),
    (RouteId::PicsIndex, "Galleries"),
    (RouteId::Help, "Help"),
];

/// A page's link to a route without captures: a path from the route table.
fn href(id: RouteId) -> String {
    url_for("", id, &[])
}

/// The `<head>` of every page: the stylesheet always, the script unless
/// the page is meant to run none (the embed view).
/// The preview size a link preview's image is asked in: the largest
/// `thumb=` box, big enough for a chat app's card.
const PREVIEW_THUMB_PX: u32 = store_core::gallery::THUMB_SIZES[2];

/// What a chat app or a social site shows for a pasted link (OpenGraph):
/// the page's title and a line about it, and for galleries and images a
/// preview image. Never an image that would spend a counted download.
pub struct Og<'a> {
    pub title: &'a str,
    pub description: String,
    /// The page's absolute URL.
    pub url: &'a str,
    /// An absolute URL of a preview image.
    pub image: Option<String>,
}

fn head(title: &str, script: bool, og: Option<&Og<'_>>) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) }
            @if let Some(og) = og {
                meta property="og:site_name" content="storesrv";
                meta property="og:type" content="website";
                meta property="og:title" content=(og.title);
                meta property="og:description" content=(og.description);
                meta property="og:url" content=(og.url);
                @if let Some(image) = &og.image {
                    meta property="og:image" content=(image);
                    meta name="twitter:card" content="summary_large_image";
                } @else {
                    meta name="twitter:card" content="summary";
                }
            }
            link rel="stylesheet" href=(assets::url("app.css"));
            @if script { script src=(assets::url("app.js")) defer {} }
        }
    }
}

fn page(title: &str, body: Markup) -> Markup {
    shared_page(title, None, body)
}

/// A page meant to be shared: with OpenGraph tags for link previews.
fn shared_page(title: &str, og: Option<&Og<'_>>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(&format!("{title} · storesrv"), true, og))
            body {
                header class="top" {
                    a class="brand" href="/" { "storesrv" }
                    nav aria-label="Main" {
                        @for (id, label) in NAV { a href=(href(*id)) { (label) } }
                    }
                }
                main { (body) }
                footer class="bottom" {
                    "Files expire on their own. "
                    a href=(href(RouteId::Help)) { "Help" } " · " a href=(href(RouteId::Api)) { "API" } " · "
                    a href=(href(RouteId::WriteForAgents)) { "For agents" } " · " a href=(href(RouteId::Releases)) { "Releases" }
                }
            }
        }
    }
}

/// A time the script rewrites into the reader's zone (and, with
/// `relative`, as "in 4 hours"); without the script it reads as UTC.
fn time(at: &str, relative: bool) -> Markup {
    html! {
        @if relative { time datetime=(at) data-rel="" { (at) } } @else { time datetime=(at) { (at) } }
    }
}

fn expiry(at: Option<&str>) -> Markup {
    html! {
        @match at {
            Some(at) => { "expires " (time(at, true)) },
            None => { "retained: never expires" },
        }
    }
}

fn unix_time(ts: f64) -> String {
    Timestamp::from_millis((ts * 1000.0) as i64).to_string()
}

/// `1.2 MiB`: sizes as people read them; the exact count is in the title.
pub fn size(n: u64) -> Markup {
    let shown = crate::help::binary_size(n);
    html! { span title={ (n) " bytes" } { (shown) } }
}

/// The path of one of our own absolute URLs. Pages link, post and load
/// images by path, so they keep working when the browser reaches the
/// server by another host name than the configured base URL (the CSP's
/// `'self'` is the browser's origin, not the base URL).
fn local(url: &str) -> &str {
    match url.find("://") {
        Some(i) => url[i + 3..].find('/').map_or("/", |j| &url[i + 3 + j..]),
        None => url,
    }
}

fn copy(url: &str) -> Markup {
    html! { button type="button" class="secondary small" data-copy=(url) { "Copy" } }
}

fn is_image(content_type: &str) -> bool {
    matches!(
        content_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/avif" | "image/bmp"
    )
}

fn is_text(content_type: &str) -> bool {
    content_type.starts_with("text/")
        || matches!(content_type, "application/json" | "application/xml")
}

fn ttl_choices(l: &Limits) -> Vec<(String, String)> {
    // Offer the common lifetimes that fall inside this server's clamp.
    [
        (4, "4 hours"),
        (24, "1 day"),
        (72, "3 days"),
        (168, "7 days"),
        (336, "14 days"),
    ]
    .into_iter()
    .filter(|(h, _)| {
        let secs = h * 3600;
        secs >= l.file_ttl_min_secs && secs <= l.file_ttl_max_secs
    })
    .map(|(h, label)| {
        let value = if h % 24 == 0 {
            format!("{}d", h / 24)
        } else {
            format!("{h}h")
        };
        (value, label.to_string())
    })
    .collect()
}

/// The upload token field of a creating form, on a server closed to
/// anonymous uploads (STORE_UPLOAD_TOKEN). It comes before the files, so
/// that the server checks it before it writes any.
fn upload_token_field(required: bool) -> Markup {
    html! {
        @if required {
            label { "Upload token (this server takes uploads with it only) "
                input type="password" name="token" autocomplete="off" required; }
        }
    }
}

pub fn home(base_url: &str, limits: &Limits, token_required: bool) -> Markup {
    page(
        "Upload",
        html! {
            h1 { "Share a file" }
            p { "Upload a file and get a link. It expires on its own; nothing to clean up." }
            form method="post" action="/" enctype="multipart/form-data" data-upload="home" data-max=(limits.file_bytes_max) {
                (upload_token_field(token_required))
                div class="drop" {
                    label { "Choose files " input type="file" name="file" multiple required; }
                    p class="picked muted js-only hidden-js" { "…or drop them here." }
                }
                label class="inline" { "Lifetime "
                    select name="ttl" {
                        option value="" selected { "Default (files " (crate::help::duration(limits.file_ttl_default_secs)) ", dirs " (crate::help::duration(limits.dir_ttl_default_secs)) ")" }
                        @for (value, label) in ttl_choices(limits) { option value=(value) { (label) } }
                    }
                }
                label class="inline" { input type="checkbox" name="once" value="1"; " Burn after reading" }
                fieldset class="js-only hidden-js" {
                    legend { "Several files" }
                    label class="inline" { input type="radio" name="mode" value="files" checked; " Separate links" }
                    label class="inline" { input type="radio" name="mode" value="bundle"; " One bundle (zip)" }
                    label class="inline" { input type="radio" name="mode" value="dir"; " A dir" }
                    label { "Dir name (optional, " (limits.name_chars_min) "–" (limits.name_chars_max) " of a-z, 0-9, -) "
                        input type="text" name="dirname" pattern="[a-z0-9-]*" maxlength=(limits.name_chars_max); }
                    label class="inline" { input type="checkbox" name="protect" value="1"; " Protect the dir with a write token" }
                }
                p { button type="submit" { "Upload" } }
                p class="muted" { "Up to " (size(limits.file_bytes_max)) " per file." }
            }
            h2 { "Your links" }
            ul class="results" aria-live="polite" {}
            h2 { "From a terminal or an agent" }
            pre { code { "curl --data-binary @notes.txt '" (base_url) "/?name=notes.txt'" } }
            p { "Everything else: " a href=(href(RouteId::Help)) { "help" } ", " a href=(href(RouteId::WriteForAgents)) { "instructions for agents" } ", " a href=(href(RouteId::Api)) { "the API contract" } "." }
        },
    )
}

/// The page for one single file: after a form upload, and at `?info=1`.
pub fn file(view: &FileView) -> Markup {
    // A raster image that is not counted previews as its own thumbnail.
    let image = (view.downloads_left.is_none() && is_image(&view.content_type))
        .then(|| format!("{}?thumb={PREVIEW_THUMB_PX}", view.url));
    let og = Og {
        title: &view.name,
        description: format!(
            "{}, {}",
            crate::help::binary_size(view.size),
            view.content_type
        ),
        url: &view.url,
        image,
    };
    shared_page(
        &view.name,
        Some(&og),
        html! {
            h1 { (view.name) }
            p { a href=(local(&view.url)) data-result-url="" { (view.url) } " " (copy(&view.url)) }
            (owner_notice(view.owner_token.as_deref()))
            dl class="facts" {
                dt { "Size" } dd { (size(view.size)) }
                dt { "Type" } dd { (view.content_type) }
                dt { "Uploaded" } dd { (time(&view.created_at, false)) }
                dt { "Lifetime" } dd { (expiry(view.expires_at.as_deref())) }
                @if view.once { dt { "Burn after reading" } dd { "the first download deletes it" } }
                @else if let Some(n) = view.downloads_left { dt { "Downloads left" } dd { (n) " (then it is deleted)" } }
                @if !view.tags.is_empty() {
                    dt { "Tags" } dd { @for t in &view.tags { a href={ (href(RouteId::Browse)) "?tag=" (t) } { (t) } " " } }
                }
            }
            p {
                a href={ (local(&view.url)) "?download=1" } rel="nofollow" {
                    @if view.once { "Download (this deletes it)" } @else if view.downloads_left.is_some() { "Download (counts as one of its downloads)" } @else { "Download" }
                }
            }
            // A preview would fetch the bytes: a counted file's page has none.
            @if view.downloads_left.is_none() {
                @if is_image(&view.content_type) {
                    div class="preview" { img src=(local(&view.url)) alt=(view.name); }
                } @else if is_text(&view.content_type) {
                    div class="preview" { iframe src=(local(&view.url)) title={ "Preview of " (view.name) } sandbox="" width="100%" height="320" {} }
                }
            }
        },
    )
}

/// What a browser sees first at a burn-after-reading file's URL: the
/// file's name and size, and the one link that downloads (and deletes)
/// it. Nothing on the page fetches the bytes.
pub fn once_file(view: &FileView) -> Markup {
    let og = Og {
        title: &view.name,
        description: "A file that is deleted when it is downloaded: open the link to download it."
            .to_string(),
        url: &view.url,
        image: None,
    };
    shared_page(
        &view.name,
        Some(&og),
        html! {
            h1 { (view.name) }
            p class="notice" {
                @match view.downloads_left {
                    Some(n) if n > 1 => {
                        strong { "This file is deleted after " (n) " more downloads." }
                        " Each download counts; after the last the link answers 404."
                    }
                    _ => {
                        strong { "This file is deleted when it is downloaded." }
                        " It can be downloaded once; after that the link answers 404."
                    }
                }
            }
            dl class="facts" {
                dt { "Size" } dd { (size(view.size)) }
                dt { "Type" } dd { (view.content_type) }
                dt { "Lifetime" } dd { (expiry(view.expires_at.as_deref())) }
            }
            p { a class="button" href={ (local(&view.url)) "?download=1" } rel="nofollow" data-burn="" {
                @if view.downloads_left.is_some_and(|n| n > 1) { "Download" } @else { "Download and delete" }
            } }
        },
    )
}

pub struct BrowseFilter {
    pub q: String,
    pub tags: Vec<String>,
    pub sort: String,
    pub order: String,
}

pub fn browse(entries: &[BrowseEntry], f: &BrowseFilter) -> Markup {
    page(
        "Browse",
        html! {
            h1 { "Browse tagged files" }
            form method="get" action=(href(RouteId::Browse)) {
                @for t in &f.tags { input type="hidden" name="tag" value=(t); }
                label class="inline" { "Search " input type="search" name="q" value=(f.q); }
                label class="inline" { "Sort "
                    select name="sort" {
                        @for s in ["created", "name", "size", "expires"] {
                            option value=(s) selected[f.sort == s] { (s) }
                        }
                    }
                }
                label class="inline" { "Order "
                    select name="order" {
                        option value="desc" selected[f.order == "desc"] { "descending" }
                        option value="asc" selected[f.order == "asc"] { "ascending" }
                    }
                }
                button type="submit" { "Go" }
            }
            @if !f.tags.is_empty() {
                p { "Tags: " @for t in &f.tags { code { (t) } " " } a href=(href(RouteId::Browse)) { "clear" } }
            }
            @if entries.is_empty() {
                p { "Nothing matches. Files show here once they carry a tag." }
            } @else {
                table class="wide" {
                    thead { tr { th { "Name" } th { "Type" } th class="num" { "Size" } th { "Tags" } th { "Expires" } } }
                    tbody {
                        @for e in entries {
                            tr {
                                td { a href=(local(&e.url)) { (e.name) } }
                                td { (e.content_type) }
                                td class="num" { (size(e.size)) }
                                td { @for t in &e.tags { a href={ (href(RouteId::Browse)) "?tag=" (t) } { (t) } " " } }
                                td { (expiry(e.expires_at.as_deref())) }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// The owner token of what was just made, shown once, with what it is
/// for: without it the uploader can neither change the expiry nor, when
/// the object is protected, change or delete it.
fn owner_notice(token: Option<&str>) -> Markup {
    html! {
        @if let Some(token) = token {
            p class="notice secret" {
                strong { "Owner token, shown once: " } code { (token) } " " (copy(token))
                br;
                "Keep it to change the expiry (" code { "POST …?ttl=2d" } " with header " code { "X-Store-Owner" } ") or, if protected, to edit or delete. "
                a href=(url_for("", RouteId::HelpTopic, &["owners"])) { "About owner tokens" }
            }
        }
    }
}

pub fn bundle(view: &BundleView) -> Markup {
    let og = Og {
        title: "Bundle",
        description: format!("{} files, downloadable as one zip", view.files.len()),
        url: &view.url,
        image: None,
    };
    shared_page(
        "Bundle",
        Some(&og),
        html! {
            h1 { "Bundle " code { (view.id) } }
            p { a href=(local(&view.url)) { (view.url) } " " (copy(&view.url)) }
            (owner_notice(view.owner_token.as_deref()))
            p { a href={ (local(&view.url)) "?download=1" } { "Download all as zip" } " · " (expiry(view.expires_at.as_deref())) }
            table class="wide" {
                thead { tr { th { "File" } th { "Type" } th class="num" { "Size" } } }
                tbody {
                    @for f in &view.files {
                        tr { td { a href=(local(&f.url)) { (f.name) } } td { (f.content_type) } td class="num" { (size(f.size)) } }
                    }
                }
            }
        },
    )
}

pub fn dir(view: &DirView, history: &[HistoryView], limits: &Limits) -> Markup {
    let title = view.name.clone().unwrap_or_else(|| view.id.clone());
    let og = Og {
        title: &title,
        description: format!(
            "A shared folder: {} files, {}",
            view.file_count,
            crate::help::binary_size(view.bytes)
        ),
        url: &view.url,
        image: None,
    };
    shared_page(
        &title,
        Some(&og),
        html! {
            h1 { "Dir " code { (title) } @if view.open { " (show-dir: anyone may write)" } }
            @if let Some(token) = &view.write_token {
                p class="notice secret" { strong { "Write token, shown once: " } code { (token) } " " (copy(token)) }
            }
            (owner_notice(view.owner_token.as_deref()))
            p { a href=(local(&view.url)) { (view.url) } " " (copy(&view.url)) }
            p {
                (view.file_count) @if view.file_count == 1 { " file, " } @else { " files, " } (size(view.bytes)) " · " (expiry(view.expires_at.as_deref()))
                " · " a href={ (local(&view.url)) "?zip=1" } { "Download all as zip" }
                " · " a href=(url_for("", RouteId::DirHistory, &[&view.id])) { "History" }
            }
            @if view.files.is_empty() {
                p { "No files yet." }
            } @else {
                table class="wide" {
                    thead { tr { th { "File" } th { "Type" } th class="num" { "Size" } th { "Updated" } } }
                    tbody {
                        @for f in &view.files {
                            tr {
                                td { a href=(local(&f.url)) { (f.name) } }
                                td { (f.content_type) }
                                td class="num" { (size(f.size)) }
                                td { (time(&f.updated_at, false)) }
                            }
                        }
                    }
                }
            }
            h2 { "Add files" }
            form method="post" action=(local(&view.url)) enctype="multipart/form-data" data-upload="dir" data-max=(limits.file_bytes_max) {
                // The token field comes before the files: a form sends its
                // fields in this order, and the server checks the token
                // before it stores the first file.
                @if !view.open {
                    label { "Write token (if the dir has one) " input type="password" name="write" autocomplete="off"; }
                }
                div class="drop" {
                    label { "Choose files " input type="file" name="file" multiple required; }
                    p class="picked muted js-only hidden-js" { "…or drop them here." }
                }
                button type="submit" { "Upload" }
            }
            ul class="results" aria-live="polite" {}
            @if !history.is_empty() {
                h2 { "Recent activity" }
                ul {
                    @for h in history {
                        li { (time(&unix_time(h.ts), false)) " · " (format!("{:?}", h.action).to_lowercase()) " " (h.file) " (" (size(h.bytes)) ")" }
                    }
                }
            }
        },
    )
}

pub fn dir_history(view_url: &str, title: &str, history: &[HistoryView]) -> Markup {
    page(
        "History",
        html! {
            h1 { "History of " a href=(local(view_url)) { (title) } }
            @if history.is_empty() { p { "Nothing happened yet." } }
            table class="wide" {
                thead { tr { th { "When" } th { "Action" } th { "File" } th class="num" { "Size" } } }
                tbody {
                    @for h in history {
                        tr {
                            td { (time(&unix_time(h.ts), false)) }
                            td { (format!("{:?}", h.action).to_lowercase()) }
                            td { (h.file) }
                            td class="num" { (size(h.bytes)) }
                        }
                    }
                }
            }
        },
    )
}

pub fn dir_index(dirs: &[DirView], q: &str) -> Markup {
    page(
        "Dirs",
        html! {
            h1 { "Listed dirs" }
            form method="get" action=(href(RouteId::ListDirs)) {
                label class="inline" { "Search " input type="search" name="q" value=(q); }
                label class="inline" { "Sort "
                    select name="sort" {
                        option value="created" { "created" }
                        option value="updated" { "updated" }
                        option value="name" { "name" }
                    }
                }
                button type="submit" { "Go" }
            }
            @if dirs.is_empty() {
                p { "No listed dirs." }
            } @else {
                table class="wide" {
                    thead { tr { th { "Dir" } th class="num" { "Files" } th { "Tags" } th { "Updated" } } }
                    tbody {
                        @for d in dirs {
                            tr {
                                td { a href=(local(&d.url)) { (d.name.as_deref().unwrap_or(&d.id)) } }
                                td class="num" { (d.file_count) }
                                td { (d.tags.join(", ")) }
                                td { (time(&d.updated_at, false)) }
                            }
                        }
                    }
                }
            }
        },
    )
}

pub fn pics_index(list: &[GalleryEntry], token_required: bool) -> Markup {
    page(
        "Galleries",
        html! {
            h1 { "Galleries" }
            form method="post" action={ (href(RouteId::CreateGallery)) "?create=1" } {
                (upload_token_field(token_required))
                label class="inline" { "New gallery name (optional) " input type="text" name="name" maxlength=(store_core::gallery::GALLERY_DISPLAY_NAME_CHARS_MAX); }
                label class="inline" { input type="checkbox" name="listed" value="1"; " List it here" }
                button type="submit" { "Create" }
            }
            @if list.is_empty() {
                p { "No listed galleries." }
            } @else {
                ul {
                    @for g in list {
                        li { a href=(local(&g.url)) { (g.name.as_deref().unwrap_or(&g.id)) } " · " (g.images) " images · updated " (time(&g.updated_at, false)) }
                    }
                }
            }
        },
    )
}

pub fn gallery_created(v: &GalleryCreated) -> Markup {
    page(
        "Gallery",
        html! {
            h1 { "Gallery " (v.name.as_deref().unwrap_or(&v.id)) }
            p { "Share: " a href=(local(&v.url)) { (v.url) } " " (copy(&v.url)) }
            @if let Some(admin) = &v.admin_url {
                p class="notice secret" { strong { "Admin link, shown once: keep it secret. " } a href=(local(admin)) { (admin) } " " (copy(admin)) }
            } @else {
                p { "This gallery already existed; its admin link was shown when it was created." }
            }
        },
    )
}

fn comments(view: &GalleryView, limits: &GalleryLimits) -> Markup {
    let cooldown = limits.comment_cooldown_secs;
    html! {
        section id="comments" {
            h2 { "Guestbook" }
            div id="comment-list" {
                @for c in &view.comments {
                    article class="comment" id={ "c-" (c.id) } {
                        div {
                            strong { (c.name) } " · " (time(&unix_time(c.ts), false)) " "
                            form class="inline" method="post" action={ (local(&view.url)) "?clike=" (c.id) } data-like="" {
                                button type="submit" class="secondary small" {
                                    "♥ " span data-likes="" { (c.likes) } span class="sr-only" { " likes; like this comment" }
                                }
                            }
                        }
                        p { (c.text) }
                    }
                }
            }
            form method="post" action={ (local(&view.url)) "?comment=1" } data-comment="" data-cooldown=(cooldown) {
                label { "Name (optional) " input type="text" name="name" maxlength=(limits.comment_name_chars_max); }
                label { "Comment " textarea name="text" maxlength=(limits.comment_text_chars_max) required {} }
                button type="submit" { "Post" }
                " " span class="status muted" role="status" { "One comment per " (cooldown) " s." }
            }
        }
    }
}

pub fn gallery(view: &GalleryView, embed: bool, token_required: bool) -> Markup {
    let title = view.name.clone().unwrap_or_else(|| view.id.clone());
    let grid = html! {
        div class="grid" {
            @for i in &view.images {
                figure id=(i.id) class=[view.selected.contains(&i.id).then_some("starred")] {
                    a href=(local(&i.url)) data-lightbox="" data-name=(i.name) {
                        img src=(local(&i.thumb_url)) alt=(i.name) loading="lazy" width="160" height="160";
                    }
                    figcaption {
                        span class="name" title=(i.name) { (i.name) }
                        @if !embed {
                            form class="inline" method="post" action={ (local(&i.url)) "?like=1" } data-like="" {
                                button type="submit" class="secondary small" {
                                    "♥ " span data-likes="" { (i.likes) } span class="sr-only" { " likes; like " (i.name) }
                                }
                            }
                        } @else {
                            span { "♥ " (i.likes) }
                        }
                    }
                }
            }
        }
        @if view.images.is_empty() { p { "No images yet." } }
        @if view.pages > 1 {
            nav class="pages" aria-label="Pages" {
                @for p in 1..=view.pages {
                    @if p == view.page { strong aria-current="page" { (p) } } @else { a href=(page_link(view, p, embed)) { (p) } }
                }
            }
        }
    };
    if embed {
        return embed_page(&title, grid);
    }
    let og = Og {
        title: &title,
        description: format!("A photo gallery, {} images on this page", view.images.len()),
        url: &view.url,
        // The first image's mid-size preview: what a chat app shows.
        image: view
            .images
            .first()
            .map(|i| i.thumb_url.replace("thumb=320", "thumb=640")),
    };
    shared_page(
        &title,
        Some(&og),
        html! {
            h1 { (title) }
            p { a href=(local(&view.url)) { (view.url) } " " (copy(&view.url)) " · "
                (view.images.len()) " images on this page · " (expiry(view.expires_at.as_deref())) }
            (grid)
            h2 { "Add photos" }
            form method="post" action=(local(&view.url)) enctype="multipart/form-data" data-upload="gallery" data-max=(view.limits.upload_bytes_max) {
                (upload_token_field(token_required))
                div class="drop" {
                    label { "Choose images " input type="file" name="file" accept="image/*,.heic,.heif" multiple required; }
                    p class="picked muted js-only hidden-js" { "…or drop them here." }
                }
                button type="submit" { "Upload" }
                p class="muted" { "JPEG, PNG, WebP, GIF or HEIC. Large photos are downscaled; location data is removed." }
            }
            ul class="results" aria-live="polite" {}
            (comments(view, &view.limits))
        },
    )
}

/// A gallery page link that keeps the embed view and the starred images.
fn page_link(view: &GalleryView, p: usize, embed: bool) -> String {
    let mut link = format!("{}?p={p}", local(&view.url));
    if embed {
        link.push_str("&embed=1");
    }
    if !view.selected.is_empty() {
        link.push_str("&stars=");
        link.push_str(&view.selected.join(","));
    }
    link
}

/// The embeddable grid: no navigation, no forms, meant for an iframe.
fn embed_page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title, false, None))
            body { main { (body) } }
        }
    }
}

pub fn gallery_admin(view: &GalleryView, secret: &str) -> Markup {
    let admin_url = format!("{}/{secret}", local(&view.url));
    let button = |id: &str, action: &str, label: &str, what: &str| {
        html! {
            form class="inline" method="post" action=(admin_url) {
                input type="hidden" name="id" value=(id);
                input type="hidden" name="action" value=(action);
                button type="submit" class="secondary small" aria-label={ (label) " " (what) } { (label) }
            }
        }
    };
    page(
        "Gallery admin",
        html! {
            h1 { "Admin: " (view.name.as_deref().unwrap_or(&view.id)) }
            p class="notice secret" { "This page's address is the gallery's admin key. Do not share it." }
            p { a href=(local(&view.url)) { "Public view" } }
            table class="wide" {
                thead { tr { th { "Image" } th { "State" } th class="num" { "Likes" } th { "Actions" } } }
                tbody {
                    @for i in &view.images {
                        tr {
                            td {
                                // Hidden images answer 404 to everyone, so
                                // there is no thumbnail to show for them.
                                @if !i.hidden { img src=(local(&i.thumb_url)) alt="" width="80" height="80"; " " }
                                (i.name)
                            }
                            td { @if i.hidden { "hidden" } @else { "visible" } }
                            td class="num" { (i.likes) }
                            td {
                                @if i.hidden { (button(&i.id, "unhide", "Unhide", &i.name)) } @else { (button(&i.id, "hide", "Hide", &i.name)) }
                                " " (button(&i.id, "up", "↑ Up", &i.name)) " " (button(&i.id, "down", "↓ Down", &i.name)) " " (button(&i.id, "delete", "Delete", &i.name))
                            }
                        }
                    }
                }
            }
            @if view.pages > 1 {
                nav class="pages" aria-label="Pages" {
                    @for p in 1..=view.pages {
                        @if p == view.page { strong aria-current="page" { (p) } } @else { a href={ (admin_url) "?p=" (p) } { (p) } }
                    }
                }
            }
            h2 { "Comments" }
            @if view.comments.is_empty() { p { "No comments." } }
            @for c in &view.comments {
                article class="comment" {
                    strong { (c.name) } " · " (time(&unix_time(c.ts), false)) " " (button(&c.id, "cdel", "Delete", &format!("the comment by {}", c.name)))
                    p { (c.text) }
                }
            }
        },
    )
}

/// `/help` for browsers.
pub fn help_index(index: &crate::help::Index) -> Markup {
    page(
        "Help",
        html! {
            h1 { "Help" }
            p { "storesrv keeps files for a while and hands out links. Pick a topic:" }
            ul class="topics" {
                @for t in &index.topics {
                    li { a href=(url_for("", RouteId::HelpTopic, &[t.topic])) { (t.title) } " — " (t.summary) }
                }
            }
            p { "Also: " @for (i, url) in index.also.iter().enumerate() { @if i > 0 { ", " } a href=(url) { (url) } } }
        },
    )
}

/// `/help/<topic>`, `/write_for_agents`, `/copy_for_agents` and
/// `/releases` for browsers: markdown we wrote, rendered.
pub fn markdown(title: &str, endpoints: &[crate::help::EndpointLine], md: &str) -> Markup {
    page(
        title,
        html! {
            p { a href=(href(RouteId::Help)) { "← All topics" } }
            @if !md.starts_with("# ") {
                h1 { (title) }
            }
            (PreEscaped(crate::help::render_markdown(md)))
            @if !endpoints.is_empty() {
                h2 { "Endpoints" }
                table class="wide" {
                    tbody {
                        @for e in endpoints { tr { td { code { (e.endpoint) } } td { (e.does) } } }
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn local_paths() {
        assert_eq!(super::local("http://0.0.0.0:8080/d/x?zip=1"), "/d/x?zip=1");
        assert_eq!(super::local("https://h.example"), "/");
        assert_eq!(super::local("/already"), "/already");
    }
}
