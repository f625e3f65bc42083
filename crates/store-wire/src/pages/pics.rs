//! The pages of galleries: the index, a new gallery, the grid with its
//! guestbook, the embed view and the admin page.

use maud::{html, Markup, DOCTYPE};

use super::*;
use crate::qr;
use crate::views::{GalleryCreated, GalleryEntry, GalleryLimits, GalleryView};

/// The id of a gallery page's guestbook, which a comment's answer links to.
const COMMENTS_ID: &str = "comments";

/// Where on a gallery's page (at `gallery_url`) its guestbook is.
pub fn comments_anchor(gallery_url: &str) -> String {
    format!("{gallery_url}#{COMMENTS_ID}")
}

/// Where on a gallery's page (at `gallery_url`) one of its images is: the
/// page gives each image's figure the image's id.
pub fn image_anchor(gallery_url: &str, image_id: &str) -> String {
    format!("{gallery_url}#{image_id}")
}

/// `/pics`: the public galleries, and the form that makes one.
pub fn pics_index(site: Site<'_>, list: &[GalleryEntry], token_required: bool) -> Markup {
    page(
        site,
        "Galleries",
        html! {
            h1 { "Galleries" }
            form method="post" action=(with_keyword(&site.href(RouteId::CreateGallery), RouteId::CreateGallery, "1")) {
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

/// The page after a gallery is made: its links, the admin one shown once.
pub fn gallery_created(site: Site<'_>, v: &GalleryCreated) -> Markup {
    page(
        site,
        "Gallery",
        html! {
            h1 { "Gallery " (v.name.as_deref().unwrap_or(&v.id)) }
            p { "Share: " a href=(local(&v.url)) { (v.url) } " " (copy(&v.url)) }
            (qr::inline(&v.url))
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
        section id=(COMMENTS_ID) {
            h2 { "Guestbook" }
            div id="comment-list" {
                @for c in &view.comments {
                    article class="comment" id={ "c-" (c.id) } {
                        div {
                            strong { (c.name) } " · " (time(&unix_time(c.ts), false)) " "
                            form class="inline" method="post" action=(with_keyword(local(&view.url), RouteId::LikeComment, &c.id)) data-like="" {
                                button type="submit" class="secondary small" {
                                    "♥ " span data-likes="" { (c.likes) } span class="sr-only" { " likes; like this comment" }
                                }
                            }
                        }
                        p { (c.text) }
                    }
                }
            }
            form method="post" action=(with_keyword(local(&view.url), RouteId::Comment, "1")) data-comment="" data-cooldown=(cooldown) {
                label { "Name (optional) " input type="text" name="name" maxlength=(limits.comment_name_chars_max); }
                label { "Comment " textarea name="text" maxlength=(limits.comment_text_chars_max) required {} }
                button type="submit" { "Post" }
                " " span class="status muted" role="status" { "One comment per " (cooldown) " s." }
            }
        }
    }
}

/// What a gallery page's upload form depends on: whether the server needs
/// its upload token, and whether visitors may upload at all
/// (STORE_PICS_UPLOADS).
#[derive(Debug, Clone, Copy)]
pub struct UploadForm {
    /// The server asks for its upload token.
    pub token_required: bool,
    /// Visitors may upload (not only the gallery's admin).
    pub open: bool,
}

/// The form that adds images, posting to `action`.
fn image_form(action: &str, max_bytes: u64, token_required: bool) -> Markup {
    html! {
        form method="post" action=(action) enctype="multipart/form-data" data-upload="gallery" data-max=(max_bytes) data-max-label=(store_core::limits::binary_size(max_bytes)) {
            (upload_token_field(token_required))
            (file_picker("images", Some("image/*,.heic,.heif")))
            button type="submit" { "Upload" }
            p class="muted" { "JPEG, PNG, WebP, GIF or HEIC. Large photos are downscaled; location data is removed." }
        }
        ul class="results" aria-live="polite" {}
    }
}

/// A gallery's page: its images, likes and comments, and the upload form.
pub fn gallery(site: Site<'_>, view: &GalleryView, embed: bool, form: &UploadForm) -> Markup {
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
                            form class="inline" method="post" action=(with_keyword(local(&i.url), RouteId::LikeImage, "1")) data-like="" {
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
        return embed_page(site, &title, grid);
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
        site,
        &title,
        Some(&og),
        html! {
            h1 { (title) }
            p {
                (view.images.len()) @if view.images.len() == 1 { " image on this page · " } @else { " images on this page · " } (expiry(view.expires_at.as_deref()))
                @if !view.images.is_empty() { " · " a href=(with_query(local(&view.url), routes::ZIP.name, "1")) download="" { "Download all (zip)" } } }
            (grid)
            h2 { "Add photos" }
            @if form.open {
                (image_form(local(&view.url), view.limits.upload_bytes_max, form.token_required))
            } @else {
                p class="muted" { "Only this gallery's admin adds photos here." }
            }
            (comments(view, &view.limits))
            (share(&view.url, false))
        },
    )
}

/// A gallery page link that keeps the embed view and the starred images.
fn page_link(view: &GalleryView, p: usize, embed: bool) -> String {
    let mut link = with_query(local(&view.url), routes::PAGE.name, &p.to_string());
    if embed {
        link = with_query(&link, routes::EMBED.name, "1");
    }
    if !view.selected.is_empty() {
        link = with_query(&link, routes::STARS.name, &view.selected.join(","));
    }
    link
}

/// The embeddable grid: no navigation, no forms, meant for an iframe.
fn embed_page(site: Site<'_>, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(site, title, false, None))
            // The heading names the gallery for a screen reader; the
            // frame's host shows its own title, so it is not drawn.
            body { main { h1 class="sr-only" { (title) } (body) } }
        }
    }
}

/// A gallery's admin page: every image with its actions.
pub fn gallery_admin(
    site: Site<'_>,
    view: &GalleryView,
    secret: &str,
    form: &UploadForm,
) -> Markup {
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
    // Deleting cannot be undone: the button that does it is behind a
    // second click, which works without the script too.
    let confirm_delete = |id: &str, action: &str, what: &str| {
        html! {
            details class="confirm" {
                summary class="small" { "Delete…" }
                (button(id, action, "Delete for good", what))
            }
        }
    };
    page(
        site,
        "Gallery admin",
        html! {
            h1 data-gallery-admin="" data-url=(view.url) data-name=(view.name.as_deref().unwrap_or(&view.id)) { "Admin: " (view.name.as_deref().unwrap_or(&view.id)) }
            p class="notice secret" {
                "This page's address is the gallery's admin key: keep it, and do not share it. "
                span class="js-only hidden-js" { "This browser keeps it under Your uploads, on the Upload page." }
            }
            p { a href=(local(&view.url)) { "Public view" } }
            h2 { "Add photos" }
            (image_form(&with_keyword(&admin_url, RouteId::AdminUploadImage, "1"), view.limits.upload_bytes_max, form.token_required))
            h2 { "Images" }
            table class="wide" {
                thead { tr { th { "Image" } th { "State" } th class="num" { "Likes" } th { "Actions" } } }
                tbody {
                    @for i in &view.images {
                        tr {
                            td data-label="Image" {
                                // Hidden images answer 404 to everyone, so
                                // there is no thumbnail to show for them.
                                @if !i.hidden { img class="thumb" src=(local(&i.thumb_url)) alt="" width="80" height="80"; " " }
                                (i.name)
                            }
                            td data-label="State" { @if i.hidden { "hidden" } @else { "visible" } }
                            td class="num" data-label="Likes" { (i.likes) }
                            td data-label="Actions" {
                                @if i.hidden { (button(&i.id, "unhide", "Unhide", &i.name)) } @else { (button(&i.id, "hide", "Hide", &i.name)) }
                                " " (button(&i.id, "up", "↑ Up", &i.name)) " " (button(&i.id, "down", "↓ Down", &i.name)) " " (confirm_delete(&i.id, "delete", &i.name))
                            }
                        }
                    }
                }
            }
            @if view.pages > 1 {
                nav class="pages" aria-label="Pages" {
                    @for p in 1..=view.pages {
                        @if p == view.page { strong aria-current="page" { (p) } } @else { a href=(with_query(&admin_url, routes::PAGE.name, &p.to_string())) { (p) } }
                    }
                }
            }
            h2 { "Comments" }
            @if view.comments.is_empty() { p { "No comments." } }
            @for c in &view.comments {
                article class="comment" {
                    strong { (c.name) } " · " (time(&unix_time(c.ts), false)) " " (confirm_delete(&c.id, "cdel", &format!("the comment by {}", c.name)))
                    p { (c.text) }
                }
            }
        },
    )
}
