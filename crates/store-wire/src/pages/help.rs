//! `/help` and the markdown documents, for browsers.

use maud::{html, Markup, PreEscaped};

use super::*;

/// `/help` for browsers.
pub fn help_index(site: Site<'_>, index: &crate::help::Index) -> Markup {
    page(
        site,
        "Help",
        html! {
            h1 { "Help" }
            p { "storesrv keeps files for a while and hands out links. Pick a topic:" }
            ul class="topics" {
                @for t in &index.topics {
                    li { a href=(site.link(RouteId::HelpTopic, &[t.topic])) { (t.title) } " — " (t.summary) }
                }
            }
            p { "Also: " @for (i, url) in index.also.iter().enumerate() { @if i > 0 { ", " } a href=(local(url)) { (url) } } }
        },
    )
}

/// `/help/<topic>`, `/write_for_agents`, `/copy_for_agents` and
/// `/releases` for browsers: markdown we wrote, rendered.
pub fn markdown(
    site: Site<'_>,
    title: &str,
    endpoints: &[crate::help::EndpointLine],
    md: &str,
) -> Markup {
    page(
        site,
        title,
        html! {
            p { a href=(site.href(RouteId::Help)) { "← All topics" } }
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
