//! The HTML pages for people. maud escapes every interpolated string, so
//! user-chosen names, tags and comments always show as text. Pages load one
//! stylesheet and one script from `static/` under the service's path (see
//! [`crate::assets`] and [`Site`]) and
//! carry no inline script or style, so their Content-Security-Policy can
//! forbid both. Every page works without the script: forms post and the
//! server redirects; the script adds progress bars, drag and drop, copy
//! buttons, local times and likes without a reload.

use maud::{html, Markup, DOCTYPE};
use store_core::{Limits, Timestamp};

use crate::assets;
use crate::router::{url_for, with_keyword, with_query, RouteId};
use crate::routes;

mod admin;
mod dirs;
mod files;
mod help;
mod locked;
mod pics;

pub use self::admin::*;
pub use self::dirs::*;
pub use self::files::*;
pub use self::help::*;
pub use self::locked::*;
pub use self::pics::*;

/// The navigation every app page shares.
const NAV: &[(RouteId, &str)] = &[
    (RouteId::Home, "Upload"),
    (RouteId::Browse, "Browse"),
    (RouteId::ListDirs, "Folders"),
    (RouteId::PicsIndex, "Galleries"),
    (RouteId::Help, "Help"),
];

/// Where a page's links lead: under the path of the service's base URL,
/// so that a service mounted at `/files` (or served there by a proxy)
/// links within it. Page links are paths, not absolute URLs, so a page
/// works under whatever host name reached it.
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    /// The base URL's path without a trailing slash: empty at the root.
    root: &'a str,
    /// Whether shared pages carry a Report form: only when the server has
    /// an admin to read the reports (STORE_ADMIN_TOKEN).
    reports: bool,
}

impl<'a> Site<'a> {
    /// The site of a service whose URLs begin with `base_url`.
    pub fn new(base_url: &'a str) -> Self {
        Self {
            root: local(base_url).trim_end_matches('/'),
            reports: false,
        }
    }

    /// The same site, with a Report form on its shared pages when
    /// `on` (the server has an admin to read reports).
    pub fn reporting(self, on: bool) -> Self {
        Self {
            reports: on,
            ..self
        }
    }

    /// A link to a route without captures.
    fn href(self, id: RouteId) -> String {
        self.link(id, &[])
    }

    /// A link to a route, its captures filled from `args`.
    fn link(self, id: RouteId, args: &[&str]) -> String {
        url_for(self.root, id, args)
    }

    /// The versioned path of a static asset.
    fn asset(self, name: &str) -> String {
        assets::url(self.root, name)
    }
}

/// The preview size a link preview's image is asked in: the largest
/// `thumb=` box, big enough for a chat app's card.
const PREVIEW_THUMB_PX: u32 = store_core::gallery::THUMB_SIZES[2];

/// What a chat app or a social site shows for a pasted link (OpenGraph):
/// the page's title and a line about it, and for galleries and images a
/// preview image. Never an image that would spend a counted download.
#[derive(Debug)]
pub struct Og<'a> {
    /// The page's title, as the preview card's heading.
    pub title: &'a str,
    /// A line about the page, under the heading.
    pub description: String,
    /// The page's absolute URL.
    pub url: &'a str,
    /// An absolute URL of a preview image.
    pub image: Option<String>,
}

/// The `<head>` of every page: the stylesheet always, the script unless
/// the page is meant to run none (the embed view).
fn head(site: Site<'_>, title: &str, script: bool, og: Option<&Og<'_>>) -> Markup {
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
            link rel="stylesheet" href=(site.asset("app.css"));
            @if script { script src=(site.asset("app.js")) defer {} }
        }
    }
}

fn page(site: Site<'_>, title: &str, body: Markup) -> Markup {
    shared_page(site, title, None, body)
}

/// A page meant to be shared: with OpenGraph tags for link previews.
fn shared_page(site: Site<'_>, title: &str, og: Option<&Og<'_>>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(site, &format!("{title} · storesrv"), true, og))
            body {
                // The first stop of the keyboard: past the navigation.
                a class="skip" href="#main" { "Skip to content" }
                header class="top" {
                    a class="brand" href=(site.href(RouteId::Home)) { "storesrv" }
                    nav aria-label="Main" {
                        @for (id, label) in NAV { a href=(site.href(*id)) { (label) } }
                    }
                }
                main id="main" tabindex="-1" { (body) }
                @if let Some(og) = og.filter(|_| site.reports) { (report_form(og.url)) }
                footer class="bottom" {
                    "Files expire on their own. "
                    a href=(site.href(RouteId::Help)) { "Help" } " · " a href=(site.href(RouteId::Api)) { "API" } " · "
                    a href=(site.href(RouteId::WriteForAgents)) { "For agents" } " · " a href=(site.href(RouteId::Releases)) { "Releases" }
                }
            }
        }
    }
}

/// The Report link of a shared page: a folded form that sends the
/// visitor's reason to the admin (`?report=1` on the object's URL).
fn report_form(url: &str) -> Markup {
    html! {
        details class="report" {
            summary { "Report" }
            form method="post" action=(local(&with_query(url, "report", "1"))) {
                label for="report-reason" { "What is wrong with it?" }
                textarea id="report-reason" name="reason" required
                    maxlength=(store_core::moderation::REASON_CHARS_MAX) rows="3" {}
                button type="submit" { "Send to the admin" }
            }
        }
    }
}

/// The link to copy and its QR code under "Share": the sender's tools,
/// after what the page is for. Folded for a recipient; open for the
/// uploader who just made it (`made`: the answer carries its token),
/// who came for the link. `made` also marks the link as the upload's
/// result, for the script.
pub(super) fn share(url: &str, made: bool) -> Markup {
    html! {
        details class="share" open[made] {
            summary { "Share" }
            p {
                @if made { a href=(local(url)) data-result-url="" { (url) } } @else { a href=(local(url)) { (url) } }
                " " (copy(url))
            }
            (crate::qr::inline(url))
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
    let shown = store_core::limits::binary_size(n);
    html! { span title={ (n) " bytes" } { (shown) } }
}

// Pages link, post and load images by path, so they keep working when
// the browser reaches the server by another host name than the
// configured base URL (the CSP's `'self'` is the browser's origin, not
// the base URL).
use crate::router::local_path as local;

/// The drop zone of an upload form: a file chooser for `what` (files,
/// images), of the types `accept` names, and the lines the page script
/// fills with what was picked or dropped anywhere on the page.
fn file_picker(what: &str, accept: Option<&str>) -> Markup {
    html! {
        div class="drop" {
            label { "Choose " (what) " " input type="file" name="file" accept=[accept] multiple required; }
            p class="picked muted js-only hidden-js" aria-live="polite" { "…or drop them anywhere on this page." }
            ul class="picked-files js-only hidden-js" {}
        }
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

/// A token shown once (nothing when there is none): the token with a copy
/// button, one line on what it is for, and the help topic that says more.
fn token_notice(
    site: Site<'_>,
    label: &str,
    token: Option<&str>,
    what: Markup,
    (topic, about): (&str, &str),
) -> Markup {
    html! {
        @if let Some(token) = token {
            p class="notice secret" {
                strong { (label) ", shown once: " } code { (token) } " " (copy(token))
                br;
                (what)
                a href=(site.link(RouteId::HelpTopic, &[topic])) { (about) }
            }
        }
    }
}

/// The owner token of what was just made: without it the uploader can
/// neither change the expiry nor, when the object is protected, change or
/// delete it.
fn owner_notice(site: Site<'_>, token: Option<&str>) -> Markup {
    let what = html! {
        "Keep it to change the expiry (" code { "POST …?ttl=2d" } " with header " code { "X-Store-Owner" } ") or, if protected, to edit or delete. "
    };
    token_notice(
        site,
        "Owner token",
        token,
        what,
        ("owners", "About owner tokens"),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn sites_link_under_the_base_urls_path() {
        let root = super::Site::new("http://h.example:8080");
        assert_eq!(root.href(super::RouteId::Home), "/");
        assert_eq!(root.href(super::RouteId::Browse), "/browse");
        let mounted = super::Site::new("https://h.example/files/");
        assert_eq!(mounted.href(super::RouteId::Home), "/files/");
        assert_eq!(
            mounted.link(super::RouteId::DirHistory, &["a b"]),
            "/files/d/a%20b/history"
        );
        assert!(mounted
            .asset("app.js")
            .starts_with("/files/static/app.js?v="));
    }

    #[test]
    fn local_paths() {
        assert_eq!(super::local("http://0.0.0.0:8080/d/x?zip=1"), "/d/x?zip=1");
        assert_eq!(super::local("https://h.example"), "/");
        assert_eq!(super::local("/already"), "/already");
    }
}
