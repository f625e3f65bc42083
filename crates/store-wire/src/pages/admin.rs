//! The admin's page (issue 36): search every live object, delete one
//! after ticking a confirmation, and block bytes by their SHA-256. It
//! works without the script; the token travels in the page's own links
//! and forms (`token=`), since a browser sends no bearer header.

use maud::{html, Markup};

use super::*;
use crate::views::{AdminListView, AdminObjectView, ReportsView};

/// The page of `view`, searched with `q`, for the holder of `token`.
pub fn admin_page(site: Site<'_>, view: &AdminListView, q: &str, token: &str) -> Markup {
    page(
        site,
        "Admin",
        html! {
            h1 { "Admin" }
            p { a href=(local(&with_query(&with_query(&site.href(RouteId::AdminList), "reports", "1"), "token", token))) { "Reports" } }
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
                table class="wide admin-objects" {
                    caption { "Live objects, newest first" }
                    thead { tr {
                        th scope="col" { "Kind" } th scope="col" { "Object" } th scope="col" class="num" { "Size" }
                        th scope="col" { "Created" } th scope="col" { "Expires" } th scope="col" { "SHA-256" }
                        th scope="col" { "Delete" }
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

/// One object's row, with its delete form.
fn object_row(site: Site<'_>, o: &AdminObjectView, token: &str) -> Markup {
    let label = o.name.clone().unwrap_or_else(|| o.key.clone());
    html! {
        tr data-key=(o.key) {
            td data-label="Kind" { (o.kind) }
            td data-label="Object" {
                a href=(local(&with_query(&o.url, "token", token))) { (label) }
                @if let Some(t) = &o.content_type { br; span class="muted" { (t) } }
                br; span class="muted" { (o.key) }
            }
            td class="num" data-label="Size" { (size(o.size)) }
            td data-label="Created" { (time(&o.created_at, true)) }
            td data-label="Expires" { (expiry(o.expires_at.as_deref())) }
            td data-label="SHA-256" { @for d in &o.sha256 { code title=(d) { (&d[..12]) "…" } br; } }
            td { (delete_form(site, &o.key, token)) }
        }
    }
}

/// The delete form of the object under `key`: a box to tick first,
/// which the browser requires before it sends the form.
fn delete_form(site: Site<'_>, key: &str, token: &str) -> Markup {
    html! {
        form method="post" action=(site.href(RouteId::AdminDelete)) class="admin-delete" {
            input type="hidden" name="token" value=(token);
            input type="hidden" name="key" value=(key);
            label { input type="checkbox" name="confirm" value="1" required; " Sure" }
            button type="submit" { "Delete" }
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

/// The admin's report queue: each report with its object (if it is still
/// live), a button to clear it, and one to delete the object.
pub fn reports_page(site: Site<'_>, view: &ReportsView, token: &str) -> Markup {
    page(
        site,
        "Reports",
        html! {
            h1 { "Reports" }
            p { a href=(local(&with_query(&site.href(RouteId::AdminList), "token", token))) { "Every object" } }
            @if view.reports.is_empty() {
                p class="muted" { "No reports." }
            }
            @for r in &view.reports {
                article class="admin-report" data-report=(r.id) {
                    h2 { (time(&r.reported_at, true)) }
                    blockquote { (r.reason) }
                    @match &r.object {
                        Some(o) => {
                            p {
                                (o.kind) ": "
                                a href=(local(&with_query(&o.url, "token", token))) { (o.name.clone().unwrap_or_else(|| o.key.clone())) }
                            }
                            (delete_form(site, &o.key, token))
                        }
                        None => { p class="muted" { "The object is gone (" (r.key) ")." } }
                    }
                    form method="post" action=(site.href(RouteId::AdminClear)) class="admin-clear" {
                        input type="hidden" name="token" value=(token);
                        input type="hidden" name="id" value=(r.id);
                        button type="submit" { "Clear the report" }
                    }
                }
            }
        },
    )
}

/// What a visitor sees after reporting.
pub fn reported_page(site: Site<'_>) -> Markup {
    page(
        site,
        "Reported",
        html! {
            h1 { "Thank you" }
            p { "Your report went to this server's admin." }
        },
    )
}
