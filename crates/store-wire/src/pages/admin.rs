//! The admin's page (issue 36): search every live object, delete one
//! after ticking a confirmation, and block bytes by their SHA-256. It
//! works without the script; the token travels in the page's own links
//! and forms (`token=`), since a browser sends no bearer header.

use maud::{html, Markup};

use super::*;
use crate::views::{AdminListView, AdminObjectView};

/// The page of `view`, searched with `q`, for the holder of `token`.
pub fn admin_page(site: Site<'_>, view: &AdminListView, q: &str, token: &str) -> Markup {
    page(
        site,
        "Admin",
        html! {
            h1 { "Admin" }
            form method="get" action=(site.href(RouteId::AdminList)) class="admin-search" role="search" {
                input type="hidden" name="token" value=(token);
                label for="q" { "Find objects" }
                input id="q" name="q" type="search" value=(q)
                    placeholder="words of a name, a type, a SHA-256 or an id";
                button type="submit" { "Search" }
            }
            @if view.objects.is_empty() {
                p class="muted" { "Nothing live matches." }
            } @else {
                table class="admin-objects" {
                    caption { "Live objects, newest first" }
                    thead { tr {
                        th scope="col" { "Kind" } th scope="col" { "Object" } th scope="col" { "Size" }
                        th scope="col" { "Created" } th scope="col" { "Expires" } th scope="col" { "SHA-256" }
                        th scope="col" { span class="visually-hidden" { "Delete" } }
                    } }
                    tbody { @for o in &view.objects { (object_row(site, o, token)) } }
                }
            }
            @if let Some(next) = &view.next {
                p { a href=(local(&with_query(next, "token", token))) rel="next" { "Next page" } }
            }
            (block_form(site, token))
            @if !view.blocked.is_empty() {
                h2 { "Blocked" }
                ul class="admin-blocked" {
                    @for b in &view.blocked {
                        li { code { (b.sha256) } " — " (b.reason) " (" (time(&b.blocked_at, false)) ")" }
                    }
                }
            }
        },
    )
}

/// One object's row, with its delete form: a box to tick first, which
/// the browser requires before it sends the form.
fn object_row(site: Site<'_>, o: &AdminObjectView, token: &str) -> Markup {
    let label = o.name.clone().unwrap_or_else(|| o.key.clone());
    html! {
        tr data-key=(o.key) {
            td { (o.kind) }
            td {
                a href=(local(&with_query(&o.url, "token", token))) { (label) }
                @if let Some(t) = &o.content_type { br; span class="muted" { (t) } }
                br; span class="muted" { (o.key) }
            }
            td { (size(o.size)) }
            td { (time(&o.created_at, true)) }
            td { (expiry(o.expires_at.as_deref())) }
            td { @for d in &o.sha256 { code title=(d) { (&d[..12]) "…" } br; } }
            td {
                form method="post" action=(site.href(RouteId::AdminDelete)) class="admin-delete" {
                    input type="hidden" name="token" value=(token);
                    input type="hidden" name="key" value=(o.key);
                    label { input type="checkbox" name="confirm" value="1" required; " Sure" }
                    button type="submit" { "Delete" }
                }
            }
        }
    }
}

/// The form that blocks bytes by their digest.
fn block_form(site: Site<'_>, token: &str) -> Markup {
    html! {
        h2 { "Block bytes" }
        p { "Uploads of these bytes are refused from now on, and every live copy is removed." }
        form method="post" action=(site.href(RouteId::AdminBlock)) class="admin-block" {
            input type="hidden" name="token" value=(token);
            label for="sha256" { "SHA-256" }
            input id="sha256" name="sha256" required pattern="[0-9a-fA-F]{64}"
                autocomplete="off" spellcheck="false";
            label for="reason" { "Reason" }
            input id="reason" name="reason" required
                maxlength=(store_core::moderation::REASON_CHARS_MAX);
            button type="submit" { "Block" }
        }
    }
}
