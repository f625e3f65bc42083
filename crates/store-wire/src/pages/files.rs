//! The pages of single files and bundles: the upload form, a file's
//! page, the page before a counted download, browse, and a bundle's page.

use maud::{html, Markup};
use store_core::Limits;

use super::*;
use crate::params::BrowseFilter;
use store_app::TextPreview;

use crate::views::{BrowseEntry, BundleView, FileView};

/// The home page: the upload form and what it accepts.
pub fn home(site: Site<'_>, base_url: &str, limits: &Limits, token_required: bool) -> Markup {
    page(
        site,
        "Upload",
        html! {
            h1 { "Share a file" }
            p { "Upload a file and get a link. It expires on its own; nothing to clean up." }
            form method="post" action=(site.href(RouteId::Home)) enctype="multipart/form-data" data-upload="home" data-max=(limits.file_bytes_max) data-max-label=(store_core::limits::binary_size(limits.file_bytes_max)) {
                (upload_token_field(token_required))
                (file_picker("files", None))
                // The choice between links, a bundle and a folder matters
                // only for two files or more: the script shows it then.
                fieldset class="js-only hidden-js" data-several="" hidden {
                    legend { "Several files" }
                    label class="inline" { input type="radio" name="mode" value="files" checked; " Separate links" }
                    label class="inline" { input type="radio" name="mode" value="bundle"; " One bundle (zip)" }
                    label class="inline" { input type="radio" name="mode" value="dir"; " A folder" }
                    div data-folder="" hidden {
                        label { "Folder name (optional, " (limits.name_chars_min) "–" (limits.name_chars_max) " of a-z, 0-9, -) "
                            // Browsers compile a pattern in the `v` mode,
                            // where a bare hyphen in a class is an error
                            // (and the check silently off): it is escaped.
                            input type="text" name="dirname" pattern="[a-z0-9\\-]*" maxlength=(limits.name_chars_max); }
                        // Protected by default, as the files are: only
                        // this browser (by the owner token) and holders of
                        // the write token may change the folder.
                        label class="inline" { input type="checkbox" name="write" value="1" checked; " Only you and whoever you give its write token may change it" }
                        label class="inline" { input type="checkbox" name="listed" value="1"; " List the folder publicly under Folders" }
                    }
                }
                label class="inline" { "Lifetime "
                    select name="ttl" {
                        option value="" selected { "Default (files " (crate::help::duration(limits.file_ttl_default_secs)) ", folders " (crate::help::duration(limits.dir_ttl_default_secs)) ")" }
                        @for (value, label) in ttl_choices(limits) { option value=(value) { (label) } }
                    }
                }
                label class="inline" { input type="checkbox" name="once" value="1" data-single=""; " Burn after reading" }
                // Without the script nothing can disable the two download
                // limits for several files, which go as one bundle: the
                // reason is said before the upload instead of after it.
                noscript { p class="muted" data-noscript-single="" { "Burn after reading and Downloads allowed apply to one file: several files go as one zip bundle, which has neither." } }
                (more_options(limits))
                p class="muted js-only hidden-js" data-mode-note="" aria-live="polite" hidden {}
                p { button type="submit" { "Upload" } }
                (sizes(site, limits))
            }
            ul class="results" aria-live="polite" {}
            (collect_form(site, limits, token_required))
            section id="your-uploads" class="js-only hidden-js" aria-labelledby="your-uploads-title" {
                h2 id="your-uploads-title" { "Your uploads" }
                p class="muted" { "Kept in this browser only, with their owner tokens, until they expire or you forget them." }
                ul class="uploads" {}
                p class="empty muted" { "Nothing yet: what you upload here is listed here." }
            }
            h2 { "From a terminal or an agent" }
            // Focusable, so that a keyboard can scroll it (axe's
            // scrollable-region-focusable), like every block that scrolls.
            pre tabindex="0" { code { "curl --data-binary @notes.txt '" (base_url) "/?name=notes.txt'" } }
            p { "Everything else: " a href=(site.href(RouteId::Help)) { "help" } ", " a href=(site.href(RouteId::WriteForAgents)) { "instructions for agents" } ", " a href=(site.href(RouteId::Api)) { "the API contract" } "." }
        },
    )
}

/// "Collect files": a drop link made in one click. Its answer is the new
/// folder's page, which shows the link to send and the owner's own link.
fn collect_form(site: Site<'_>, limits: &Limits, token_required: bool) -> Markup {
    let home = site.href(RouteId::Home);
    let action = with_query(
        &with_query(&home, routes::DIR.name, "1"),
        routes::DROP.name,
        "1",
    );
    html! {
        section aria-labelledby="collect-title" {
            h2 id="collect-title" { "Collect files (drop link)" }
            p class="muted" { "Make a link through which others send you files. Only you see what arrives; no sender sees another's files." }
            form method="post" action=(action) enctype="multipart/form-data" data-collect="" {
                (upload_token_field(token_required))
                label { "Files it takes "
                    input type="number" name=(routes::DROP_FILES.name) min="1" max=(store_core::drops::DROP_FILES_MAX) value=(store_core::drops::DROP_FILES_DEFAULT) inputmode="numeric"; }
                label { "Lifetime "
                    select name="ttl" {
                        option value="" selected { "Default (" (crate::help::duration(limits.dir_ttl_default_secs)) ")" }
                        @for (value, label) in ttl_choices(limits) { option value=(value) { (label) } }
                    }
                }
                p { button type="submit" class="secondary" { "Make a drop link" } }
            }
        }
    }
}

/// The home form's less common options, folded: the Upload button stays
/// in sight on a phone.
fn more_options(limits: &Limits) -> Markup {
    html! {
        details class="more" {
            summary { "More options" }
            label class="inline" { "Downloads allowed "
                input type="number" name="max_downloads" min="1" max=(limits.downloads_max) placeholder="no limit" inputmode="numeric" data-single=""; }
            // Protected unless the person opts out (CONTRACT.md, owner
            // tokens): a link holder must not replace or delete what
            // is shared with them. The API's default stays open.
            fieldset data-protect="" {
                legend { "Who may change or delete it" }
                label class="inline" { input type="radio" name="protect" value="1" checked; " Only you (this browser keeps the owner token)" }
                label class="inline" { input type="radio" name="protect" value="0"; " Anyone with the link (they can edit a text file, or delete it)" }
            }
            // Sent as a form field without the script, and by the script
            // in X-Store-Password (or a resumable upload's metadata).
            label class="inline" { "Password "
                input type="password" name="password" autocomplete="new-password"
                    minlength=(store_core::password::PASSWORD_CHARS_MIN)
                    maxlength=(store_core::password::PASSWORD_CHARS_MAX) placeholder="none"; }
            p class="muted" { "Whoever opens the link must type it (or use curl -u :password). Send it apart from the link." }
            // No name: the choice is the script's (it encrypts before
            // sending), and a form sent without the script must not
            // claim it.
            div class="js-only hidden-js" {
                label class="inline" { input type="checkbox" data-encrypt=""; " Encrypt in this browser" }
                p class="muted" { "The server gets only ciphertext and no file name; the link carries the key after #, so only those you give it can open the file." }
            }
        }
    }
}

/// What the home form takes, and from which size a file goes as a
/// resumable upload (only where the server takes files that large), with
/// the client library the page's script sends those with.
fn sizes(site: Site<'_>, limits: &Limits) -> Markup {
    let from = crate::tus::PAGE_FROM_BYTES;
    html! {
        p class="muted" { "Up to " (size(limits.file_bytes_max)) " per file." }
        @if limits.file_bytes_max >= from {
            p class="muted js-only hidden-js" data-resumable-from=(from) data-resumable-lease=(limits.upload_lease_secs) { "A file of " (size(from)) " or more goes in a way that resumes: after a lost connection on its own, after a reload when you pick it again." }
            // tus-js-client (app.js runs it only at submit, after every
            // deferred script has run).
            script src=(site.asset("tus.js")) defer {}
        }
        // The age library (typage): "Encrypt in this browser".
        script src=(site.asset("age.js")) defer {}
    }
}

/// The page for one single file: after a form upload, and at `?info=1`.
pub fn file(site: Site<'_>, view: &FileView, preview: Option<&TextPreview>) -> Markup {
    // A raster image that is not counted previews as its own thumbnail.
    let image = (view.downloads_left.is_none() && is_image(&view.content_type))
        .then(|| with_query(&view.url, routes::THUMB.name, &PREVIEW_THUMB_PX.to_string()));
    let og = Og {
        title: &view.name,
        description: format!(
            "{}, {}",
            store_core::limits::binary_size(view.size),
            view.content_type
        ),
        url: &view.url,
        image,
    };
    shared_page(
        site,
        &view.name,
        Some(&og),
        html! {
            // A recipient comes first: what it is and its download; the
            // sender's tools (the link to copy, the QR code) are folded.
            h1 { (view.name) }
            (owner_notice(site, view.owner_token.as_deref()))
            p {
                a class="button" href=(with_query(local(&view.url), routes::DOWNLOAD.name, "1")) rel="nofollow" {
                    @if view.once { "Download (this deletes it)" } @else if view.downloads_left.is_some() { "Download (counts as one of its downloads)" } @else { "Download" }
                }
            }
            // A preview would fetch the bytes: a counted file's page has none.
            @if view.downloads_left.is_none() {
                @if is_image(&view.content_type) {
                    div class="preview" { img src=(local(&view.url)) alt=(view.name); }
                } @else if let Some(p) = preview {
                    div class="preview" {
                        pre tabindex="0" { code { (p.text) } }
                        @if !p.whole { p class="muted" { "The start of the file; download it for the rest." } }
                    }
                }
            }
            dl class="facts" {
                dt { "Size" } dd { (size(view.size)) }
                dt { "Type" } dd { (view.content_type) }
                dt { "Uploaded" } dd { (time(&view.created_at, false)) }
                dt { "Lifetime" } dd { (expiry(view.expires_at.as_deref())) }
                @if view.once { dt { "Burn after reading" } dd { "the first download deletes it" } }
                @else if let Some(n) = view.downloads_left { dt { "Downloads left" } dd { (n) " (then it is deleted)" } }
                @if !view.tags.is_empty() {
                    dt { "Tags" } dd { @for t in &view.tags { a href=(with_query(&site.href(RouteId::Browse), routes::TAG.name, t)) { (t) } " " } }
                }
            }
            (share(&view.url, view.owner_token.is_some()))
        },
    )
}

/// The largest burn-after-reading text shown on its page instead of
/// downloaded: a message or a snippet, not a log.
const ONCE_TEXT_SHOWN_BYTES_MAX: u64 = 64 * 1024;

/// What a browser sees first at a burn-after-reading file's URL: the
/// file's name and size, and the one link that downloads (and deletes)
/// it. Nothing on the page fetches the bytes until the reader asks (the
/// download link, or the script's "Show it here" for a short text).
pub fn once_file(site: Site<'_>, view: &FileView) -> Markup {
    let og = Og {
        title: &view.name,
        description: "A file that is deleted when it is downloaded: open the link to download it."
            .to_string(),
        url: &view.url,
        image: None,
    };
    shared_page(
        site,
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
            @let download = with_query(local(&view.url), routes::DOWNLOAD.name, "1");
            @let left = view.downloads_left.unwrap_or(1);
            p class="once-actions" {
                a class="button" href=(download) rel="nofollow" data-burn="" data-left=(left) {
                    @if left > 1 { "Download" } @else { "Download and delete" }
                }
                // A short text reads on the page itself (the script
                // fetches it, which is the download that deletes it).
                @if left == 1 && store_core::content::is_text_type(&view.content_type) && view.size <= ONCE_TEXT_SHOWN_BYTES_MAX {
                    " "
                    button type="button" class="secondary js-only hidden-js" data-reveal=(download) { "Show it here and delete it" }
                }
            }
            p class="notice js-only hidden-js" role="status" data-burnt="" hidden {}
            pre tabindex="0" class="revealed" data-revealed="" hidden {}
        },
    )
}

/// The page a browser gets for a file its client encrypted
/// (`encrypted=age`) instead of its bytes: the script fetches them,
/// decrypts them here with the key in the link's fragment (which never
/// reaches the server) and saves the file under the name it carries.
/// Never a counted download by itself: only the fetch is.
pub fn encrypted_file(site: Site<'_>, view: &FileView) -> Markup {
    let og = Og {
        title: "An encrypted file",
        description: "A file encrypted before it was shared: open the whole link to decrypt it in your browser."
            .to_string(),
        url: &view.url,
        image: None,
    };
    let download = with_query(local(&view.url), routes::DOWNLOAD.name, "1");
    shared_page(
        site,
        "An encrypted file",
        Some(&og),
        html! {
            h1 { "An encrypted file" }
            p { "It was encrypted before it was uploaded: the server holds ciphertext it cannot read. The key is the part of the link after #, which your browser never sends; this page decrypts the file here." }
            @if let Some(n) = view.downloads_left {
                p class="notice" { strong { "Opening it counts as a download" } " (" (n) " left): with a wrong key, it is still counted." }
            }
            dl class="facts" {
                dt { "Size" } dd { (size(view.size)) " encrypted" }
                dt { "Lifetime" } dd { (expiry(view.expires_at.as_deref())) }
            }
            div class="js-only hidden-js" data-key-box="" hidden {
                label { "Key (AGE-SECRET-KEY-1…) " input type="text" data-age-key="" autocomplete="off" spellcheck="false"; }
            }
            p class="js-only hidden-js" {
                // A counted file waits for the click (a link preview that
                // runs scripts must not spend it); any other opens at once.
                button type="button" data-decrypt=(download) data-name=(view.name) data-counted[view.downloads_left.is_some()] { "Decrypt and save" }
            }
            p role="status" class="notice" data-decrypted="" hidden {}
            noscript { p class="notice" { "Decrypting needs this page's script; or use a terminal, below." } }
            h2 { "In a terminal" }
            pre tabindex="0" { code { "curl -fsS '" (view.url) "' | age -d -i key.txt > file" } }
            p class="muted" { "key.txt holds the key: the part of the link after #." }
            script src=(site.asset("age.js")) defer {}
        },
    )
}

/// `/browse`: the files found, and the filter that found them.
pub fn browse(site: Site<'_>, entries: &[BrowseEntry], f: &BrowseFilter) -> Markup {
    page(
        site,
        "Browse",
        html! {
            h1 { "Browse tagged files" }
            form method="get" action=(site.href(RouteId::Browse)) {
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
                p { "Tags: " @for t in &f.tags { code { (t) } " " } a href=(site.href(RouteId::Browse)) { "clear" } }
            }
            @if entries.is_empty() {
                p { "Nothing matches. Files show here once they carry a tag." }
            } @else {
                table class="wide" {
                    thead { tr { th { "Name" } th { "Type" } th class="num" { "Size" } th { "Tags" } th { "Expires" } } }
                    tbody {
                        @for e in entries {
                            tr {
                                td data-label="Name" { a href=(with_query(local(&e.url), routes::INFO.name, "1")) { (e.name) } " " a class="muted" href=(local(&e.url)) aria-label={ "Open " (e.name) } { "open" } }
                                td data-label="Type" { (e.content_type) }
                                td class="num" data-label="Size" { (size(e.size)) }
                                td data-label="Tags" { @for t in &e.tags { a href=(with_query(&site.href(RouteId::Browse), routes::TAG.name, t)) { (t) } " " } }
                                td data-label="Expires" { (expiry(e.expires_at.as_deref())) }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// A bundle's page: its members, each a link.
pub fn bundle(site: Site<'_>, view: &BundleView) -> Markup {
    let title = bundle_title(view);
    let og = Og {
        title: &title,
        description: format!("{} files, downloadable as one zip", view.files.len()),
        url: &view.url,
        image: None,
    };
    shared_page(
        site,
        &title,
        Some(&og),
        html! {
            h1 { (title) }
            (owner_notice(site, view.owner_token.as_deref()))
            p { a class="button" href=(with_query(local(&view.url), routes::DOWNLOAD.name, "1")) { "Download all as zip" } " " (expiry(view.expires_at.as_deref())) }
            table class="wide" {
                thead { tr { th { "File" } th { "Type" } th class="num" { "Size" } } }
                tbody {
                    @for f in &view.files {
                        tr { td data-label="File" { a href=(local(&f.url)) { (f.name) } } td data-label="Type" { (f.content_type) } td class="num" data-label="Size" { (size(f.size)) } }
                    }
                }
            }
            (share(&view.url, view.owner_token.is_some()))
        },
    )
}

/// A bundle is titled by its files, as a person knows it: "notes.txt and
/// photo.jpg", "notes.txt, photo.jpg and 3 more".
fn bundle_title(view: &BundleView) -> String {
    let names: Vec<&str> = view.files.iter().map(|f| f.name.as_str()).collect();
    match names.as_slice() {
        [] => format!("Bundle {}", view.id),
        [one] => (*one).to_string(),
        [a, b] => format!("{a} and {b}"),
        [a, b, rest @ ..] => format!("{a}, {b} and {} more", rest.len()),
    }
}
