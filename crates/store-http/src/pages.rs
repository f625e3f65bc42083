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
