//! The pages of dirs: a dir with its files and upload form, its history,
//! and the list of listed dirs.

use maud::{html, Markup};
use store_core::Limits;

use super::*;
use crate::views::{DirView, HistoryView};

/// A new dir's write token, shown once, with what it is for.
fn write_token_notice(site: Site<'_>, token: Option<&str>) -> Markup {
    let what = html! {
        "Whoever has it may add, change and delete this folder's files (the "
        code { "X-Store-Write" } " header, or the form's write token field); without it the folder is read-only. "
    };
    token_notice(
        site,
        "Write token",
        token,
        what,
        ("dirs", "About folders (dirs)"),
    )
}

/// A dir's page: its files, its history and, for writers, its forms.
pub fn dir(site: Site<'_>, view: &DirView, history: &[HistoryView], limits: &Limits) -> Markup {
    let title = view.name.clone().unwrap_or_else(|| view.id.clone());
    let og = Og {
        title: &title,
        description: format!(
            "A shared folder: {} files, {}",
            view.file_count,
            store_core::limits::binary_size(view.bytes)
        ),
        url: &view.url,
        image: None,
    };
    shared_page(
        site,
        &title,
        Some(&og),
        html! {
            h1 { "Folder " code { (title) } @if view.open { " (open: anyone may add and change files)" } }
            (write_token_notice(site, view.write_token.as_deref()))
            (owner_notice(site, view.owner_token.as_deref()))
            (drop_notice(view))
            p {
                (view.file_count) @if view.file_count == 1 { " file, " } @else { " files, " } (size(view.bytes)) " · " (expiry(view.expires_at.as_deref()))
                " · " a href=(with_query(local(&view.url), routes::ZIP.name, "1")) { "Download all as zip" }
                " · " a href=(with_query_of(&site.link(RouteId::DirHistory, &[&view.id]), &view.url)) { "History" }
            }
            @if view.files.is_empty() {
                p { "No files yet." }
            } @else {
                table class="wide" {
                    thead { tr { th { "File" } th { "Type" } th class="num" { "Size" } th { "Updated" } th class="js-only hidden-js" { "Change" } } }
                    tbody {
                        @for f in &view.files {
                            // The script adds delete (and, for text, edit)
                            // for whoever may write: the owner, a write
                            // token's holder, anyone in an open dir.
                            tr data-file-url=(local(&f.url)) data-file-name=(f.name) data-type=(f.content_type) data-size=(f.size) data-editable[f.editable] {
                                td data-label="File" { a href=(local(&f.url)) { (f.name) } }
                                td data-label="Type" { (f.content_type) }
                                td class="num" data-label="Size" { (size(f.size)) }
                                td data-label="Updated" { (time(&f.updated_at, false)) }
                                td class="js-only hidden-js" data-label="Change" data-file-actions="" {}
                            }
                        }
                    }
                }
            }
            (add_files(view, limits))
            (share(&view.url, view.owner_token.is_some() || view.write_token.is_some()))
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

/// A dir's history page: who changed what, newest first.
pub fn dir_history(site: Site<'_>, view_url: &str, title: &str, history: &[HistoryView]) -> Markup {
    page(
        site,
        "History",
        html! {
            h1 { "History of " a href=(local(view_url)) { (title) } }
            @if history.is_empty() { p { "Nothing happened yet." } }
            table class="wide" {
                thead { tr { th { "When" } th { "Action" } th { "File" } th class="num" { "Size" } } }
                tbody {
                    @for h in history {
                        tr {
                            td data-label="When" { (time(&unix_time(h.ts), false)) }
                            td data-label="Action" { (format!("{:?}", h.action).to_lowercase()) }
                            td data-label="File" { (h.file) }
                            td class="num" data-label="Size" { (size(h.bytes)) }
                        }
                    }
                }
            }
        },
    )
}

/// `/d`: the public show-dirs, filtered by `q`.
pub fn dir_index(site: Site<'_>, dirs: &[DirView], q: &str) -> Markup {
    page(
        site,
        "Folders",
        html! {
            h1 { "Listed folders" }
            form method="get" action=(site.href(RouteId::ListDirs)) {
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
                p { "No listed folders." }
            } @else {
                table class="wide" {
                    thead { tr { th { "Folder" } th class="num" { "Files" } th { "Tags" } th { "Updated" } } }
                    tbody {
                        @for d in dirs {
                            tr {
                                td data-label="Folder" { a href=(local(&d.url)) { (d.name.as_deref().unwrap_or(&d.id)) } }
                                td class="num" data-label="Files" { (d.file_count) }
                                td data-label="Tags" { (d.tags.join(", ")) }
                                td data-label="Updated" { (time(&d.updated_at, false)) }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// What a drop dir's page says of its link: the link itself in the answer
/// to its creation (shown once), with this folder's own link for its
/// owner; afterwards whether it still takes files.
fn drop_notice(view: &DirView) -> Markup {
    html! {
        @if let (Some(drop_url), Some(owner)) = (&view.drop_url, &view.owner_token) {
            // The script keeps both links under Your uploads, with the
            // owner token, so that the folder is not lost with the tab.
            div class="notice" data-drop-url=(drop_url) data-url=(view.url) data-owner=(owner) data-created=(view.created_at) data-expires=[view.expires_at.as_deref()] {
                p { strong { "Drop link: " } a href=(drop_url) { (drop_url) } " " (copy(drop_url)) }
                p {
                    "Send it to the people who should send you files: they get an upload page and see nothing else. "
                    "Only you can open this folder, by "
                    a href=(with_query(local(&view.url), routes::OWNER.name, owner)) data-owner-link="" { "its owner link" }
                    " (keep that one to yourself)."
                }
            }
        } @else if let Some(drop) = &view.drop {
            p class="muted" data-drop-state="" {
                @if drop.open { "This folder collects files through its drop link." }
                @else { "Its drop link is closed." }
            }
        }
    }
}

/// A dir's "Add files" form. A drop dir has none: it takes files through
/// its drop link, and its owner sends there too.
fn add_files(view: &DirView, limits: &Limits) -> Markup {
    html! {
        @if view.drop.is_none() {
            h2 { "Add files" }
            form method="post" action=(local(&view.url)) enctype="multipart/form-data" data-upload="dir" data-created=(view.created_at) data-max=(limits.file_bytes_max) data-max-label=(store_core::limits::binary_size(limits.file_bytes_max)) {
                // The token field comes before the files: a form sends its
                // fields in this order, and the server checks the token
                // before it stores the first file.
                @if view.write_protected {
                    label data-write-field="" { "Write token " input type="password" name="write" autocomplete="off"; }
                }
                p class="notice js-only hidden-js" data-owner-note="" hidden {
                    "You made this folder: this browser's owner token lets you add, change and delete its files."
                }
                (file_picker("files", None))
                button type="submit" { "Upload" }
            }
            ul class="results" aria-live="polite" {}
        }
    }
}

/// `link` with the query of `url`, if it has one: a drop folder's page
/// opened by its owner link (`?owner=`) passes the token on to the pages
/// beside it, since a browser sends no header.
fn with_query_of(link: &str, url: &str) -> String {
    match local(url).split_once('?') {
        Some((_, query)) => format!("{link}?{query}"),
        None => link.to_string(),
    }
}
