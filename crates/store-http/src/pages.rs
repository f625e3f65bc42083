//! The plain HTML pages of this build: an upload form and the browse
//! table. maud escapes every interpolated string, so user-chosen names and
//! tags always show as text.

use maud::{html, Markup, DOCTYPE};
use store_core::views::{BrowseEntry, FileView};

fn page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · storesrv" }
                style { (maud::PreEscaped(STYLE)) }
            }
            body { main { (body) } }
        }
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ccc;padding:.3rem;text-align:left}\
label{display:block;margin:.5rem 0}code{background:#f3f3f3;padding:.1rem .3rem}";

pub fn home(base_url: &str) -> Markup {
    page(
        "Upload",
        html! {
            h1 { "storesrv" }
            p { "A temporary file store. Upload a file and get a URL; it expires on its own." }
            form method="post" action="/" enctype="multipart/form-data" {
                label { "File " input type="file" name="file" required; }
                label { "Lifetime "
                    select name="ttl" {
                        option value="4h" { "4 hours" }
                        option value="1d" { "1 day" }
                        option value="7d" { "7 days" }
                        option value="14d" { "14 days" }
                    }
                }
                label { input type="checkbox" name="once" value="1"; " Burn after reading" }
                button type="submit" { "Upload" }
            }
            p { "Agents: see " a href="/api" { "/api" } ", or upload with "
                code { "curl --data-binary @file '" (base_url) "/?name=file'" } }
        },
    )
}

pub fn uploaded(view: &FileView) -> Markup {
    page(
        "Uploaded",
        html! {
            h1 { "Uploaded" }
            p { a href=(view.url) { (view.url) } }
            p { (view.name) " · " (view.size) " bytes · " (view.content_type) }
            @if let Some(at) = &view.expires_at {
                p { "Expires at " time datetime=(at) { (at) } }
            } @else {
                p { "Retained: never expires." }
            }
        },
    )
}

pub fn browse(entries: &[BrowseEntry]) -> Markup {
    page(
        "Browse",
        html! {
            h1 { "Browse" }
            form method="get" action="/browse" {
                label { "Search " input type="search" name="q"; }
                button type="submit" { "Search" }
            }
            @if entries.is_empty() {
                p { "Nothing matches." }
            } @else {
                table {
                    thead { tr { th { "Name" } th { "Type" } th { "Size" } th { "Tags" } th { "Expires" } } }
                    tbody {
                        @for e in entries {
                            tr {
                                td { a href=(e.url) { (e.name) } }
                                td { (e.content_type) }
                                td { (e.size) }
                                td { (e.tags.join(", ")) }
                                td { (e.expires_at.as_deref().unwrap_or("never")) }
                            }
                        }
                    }
                }
            }
        },
    )
}

pub fn bundle(view: &store_core::views::BundleView) -> Markup {
    page(
        "Bundle",
        html! {
            h1 { "Bundle " code { (view.id) } }
            p { a href={ (view.url) "?download=1" } { "Download all as zip" } }
            table {
                thead { tr { th { "File" } th { "Type" } th { "Size" } } }
                tbody {
                    @for f in &view.files {
                        tr { td { a href=(f.url) { (f.name) } } td { (f.content_type) } td { (f.size) } }
                    }
                }
            }
            p { "Expires: " (view.expires_at.as_deref().unwrap_or("never")) }
        },
    )
}

pub fn dir(
    view: &store_core::views::DirView,
    history: &[store_core::views::HistoryView],
) -> Markup {
    let title = view.name.clone().unwrap_or_else(|| view.id.clone());
    page(
        &title,
        html! {
            h1 { "Dir " code { (title) } @if view.open { " (show-dir)" } }
            @if let Some(token) = &view.write_token {
                p { strong { "Write token (shown once): " } code { (token) } }
            }
            p {
                a href={ (view.url) "?zip=1" } { "Download all as zip" }
                " · " a href={ (view.url) "/history" } { "History" }
            }
            @if view.files.is_empty() {
                p { "No files yet." }
            } @else {
                table {
                    thead { tr { th { "File" } th { "Type" } th { "Size" } th { "Updated" } } }
                    tbody {
                        @for f in &view.files {
                            tr {
                                td { a href=(f.url) { (f.name) } }
                                td { (f.content_type) }
                                td { (f.size) }
                                td { (f.updated_at) }
                            }
                        }
                    }
                }
            }
            form method="post" action=(view.url) enctype="multipart/form-data" {
                label { "Add files " input type="file" name="file" multiple required; }
                button type="submit" { "Upload" }
            }
            p { "Expires: " (view.expires_at.as_deref().unwrap_or("never")) }
            @if !history.is_empty() {
                h2 { "Recent activity" }
                ul {
                    @for h in history {
                        li { (format!("{:?}", h.action).to_lowercase()) " " (h.file) " (" (h.bytes) " bytes)" }
                    }
                }
            }
        },
    )
}

pub fn dir_index(dirs: &[store_core::views::DirView]) -> Markup {
    page(
        "Dirs",
        html! {
            h1 { "Listed dirs" }
            @if dirs.is_empty() {
                p { "No listed dirs." }
            } @else {
                table {
                    thead { tr { th { "Dir" } th { "Files" } th { "Tags" } th { "Updated" } } }
                    tbody {
                        @for d in dirs {
                            tr {
                                td { a href=(d.url) { (d.name.as_deref().unwrap_or(&d.id)) } }
                                td { (d.file_count) }
                                td { (d.tags.join(", ")) }
                                td { (d.updated_at) }
                            }
                        }
                    }
                }
            }
        },
    )
}
