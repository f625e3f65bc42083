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

pub fn pics_index(list: &[store_app::GalleryEntry]) -> Markup {
    page(
        "Galleries",
        html! {
            h1 { "Galleries" }
            form method="post" action="/pics?create=1" {
                label { "New gallery name " input type="text" name="name" maxlength="100"; }
                button type="submit" formaction="/pics?create=1" { "Create" }
            }
            @if list.is_empty() {
                p { "No listed galleries." }
            } @else {
                ul {
                    @for g in list {
                        li { a href=(g.url) { (g.name.as_deref().unwrap_or(&g.id)) } " · " (g.images) " images" }
                    }
                }
            }
        },
    )
}

pub fn gallery_created(v: &store_app::GalleryCreated) -> Markup {
    page(
        "Gallery",
        html! {
            h1 { "Gallery " (v.name.as_deref().unwrap_or(&v.id)) }
            p { "Share: " a href=(v.url) { (v.url) } }
            @if let Some(admin) = &v.admin_url {
                p { strong { "Admin link (shown once, keep it secret): " } a href=(admin) { (admin) } }
            } @else {
                p { "This gallery already existed; its admin link was shown when it was created." }
            }
        },
    )
}

fn comments(view: &store_app::GalleryView) -> Markup {
    html! {
        section id="comments" {
            h2 { "Guestbook" }
            @for c in &view.comments {
                article {
                    strong { (c.name) } " · " (c.likes) " likes "
                    form method="post" action={ (view.url) "?clike=" (c.id) } style="display:inline" { button type="submit" { "Like" } }
                    p { (c.text) }
                }
            }
            form method="post" action={ (view.url) "?comment=1" } {
                label { "Name " input type="text" name="name" maxlength="40" placeholder="Gast"; }
                label { "Comment " textarea name="text" maxlength="500" required {} }
                button type="submit" { "Post" }
            }
        }
    }
}

pub fn gallery(view: &store_app::GalleryView, embed: bool) -> Markup {
    let title = view.name.clone().unwrap_or_else(|| view.id.clone());
    let body = html! {
        @if !embed { h1 { (title) } }
        div class="grid" {
            @for i in &view.images {
                figure id=(i.id) {
                    a href=(i.url) { img src=(i.thumb_url) alt=(i.name) loading="lazy" width="160"; }
                    figcaption { (i.likes) " ♥ "
                        form method="post" action={ (i.url) "?like=1" } style="display:inline" { button type="submit" { "Like" } }
                    }
                }
            }
        }
        @if view.pages > 1 {
            nav {
                @for p in 1..=view.pages {
                    @if p == view.page { strong { (p) } " " } @else { a href={ "?p=" (p) } { (p) } " " }
                }
            }
        }
        @if !embed {
            form method="post" action=(view.url) enctype="multipart/form-data" {
                label { "Add photos " input type="file" name="file" accept="image/*" multiple required; }
                button type="submit" { "Upload" }
            }
            (comments(view))
        }
    };
    page(&title, body)
}

pub fn gallery_admin(view: &store_app::GalleryView, secret: &str) -> Markup {
    let admin_url = format!("{}/{secret}", view.url);
    let button = |id: &str, action: &str| {
        html! {
            form method="post" action=(admin_url) style="display:inline" {
                input type="hidden" name="id" value=(id);
                input type="hidden" name="action" value=(action);
                button type="submit" { (action) }
            }
        }
    };
    page(
        "Gallery admin",
        html! {
            h1 { "Admin: " (view.name.as_deref().unwrap_or(&view.id)) }
            p { a href=(view.url) { "Public view" } }
            table {
                thead { tr { th { "Image" } th { "State" } th { "Likes" } th { "Actions" } } }
                tbody {
                    @for i in &view.images {
                        tr {
                            td { img src=(i.thumb_url) alt=(i.name) width="80"; " " (i.name) }
                            td { @if i.hidden { "hidden" } @else { "visible" } }
                            td { (i.likes) }
                            td {
                                @if i.hidden { (button(&i.id, "unhide")) } @else { (button(&i.id, "hide")) }
                                (button(&i.id, "up")) (button(&i.id, "down")) (button(&i.id, "delete"))
                            }
                        }
                    }
                }
            }
            h2 { "Comments" }
            @for c in &view.comments {
                p { strong { (c.name) } ": " (c.text) " " (button(&c.id, "cdel")) }
            }
        },
    )
}
