//! The self-description (`/help`, `/write_for_agents`, `/copy_for_agents`,
//! `/releases`) and the pages' static files.

use http::StatusCode;
use store_core::StoreError;

use super::Ctx;
use crate::respond::{self, json, Res};
use store_wire::{assets, help, pages};

const MARKDOWN: &str = "text/markdown; charset=utf-8";
const PLAIN: &str = "text/plain; charset=utf-8";

pub(super) fn help_index(ctx: &Ctx) -> Res {
    let index = help::index(ctx.app.config());
    if ctx.html {
        return respond::html(StatusCode::OK, pages::help_index(ctx.site(), &index));
    }
    json(StatusCode::OK, &index)
}

pub(super) fn help_topic(ctx: &Ctx, slug: &str) -> Result<Res, StoreError> {
    let topic = help::topic(slug).ok_or_else(StoreError::not_found)?;
    let config = ctx.app.config();
    if let Some(text) = help::plain_text(topic, &config.limits) {
        return Ok(respond::text(StatusCode::OK, PLAIN, text));
    }
    let page = help::topic_page(topic, config);
    if ctx.html {
        return Ok(respond::html(
            StatusCode::OK,
            pages::markdown(ctx.site(), page.entry.title, &page.endpoints, &page.text),
        ));
    }
    Ok(json(StatusCode::OK, &page))
}

/// A markdown document: raw for agents, rendered for browsers.
fn markdown(ctx: &Ctx, title: &str, md: impl Into<bytes::Bytes> + AsRef<str>) -> Res {
    if ctx.html {
        return respond::html(
            StatusCode::OK,
            pages::markdown(ctx.site(), title, &[], md.as_ref()),
        );
    }
    respond::text(StatusCode::OK, MARKDOWN, md)
}

pub(super) fn write_for_agents(ctx: &Ctx) -> Res {
    markdown(
        ctx,
        "Writing, for agents",
        help::write_for_agents(ctx.app.config()),
    )
}

pub(super) fn copy_for_agents(ctx: &Ctx) -> Res {
    markdown(
        ctx,
        "Copying out, for agents",
        help::copy_for_agents(ctx.app.config()),
    )
}

pub(super) fn releases(ctx: &Ctx) -> Res {
    markdown(ctx, "Releases", help::RELEASES)
}

/// `GET /healthz`: the process serves, whatever its store does.
pub(super) fn healthz() -> Res {
    no_store(json(
        StatusCode::OK,
        &store_wire::views::Status { status: "ok" },
    ))
}

/// `GET /readyz`: 200 while the records and the bytes answer, 503 with
/// the error JSON otherwise. The cause goes to the log only: it may name
/// hosts and paths, and the probe is public.
pub(super) async fn readyz(ctx: &Ctx) -> Res {
    // Both back ends at once, each bounded: CONTRACT.md wants 503 when
    // either does not answer within 2 s, and the probe's answer within 3 s.
    let records = super::blocking(ctx, |app| app.records_ready());
    let bytes = super::blocking(ctx, |app| app.bytes_ready());
    let fault = match tokio::time::timeout(READY_WAIT, async { tokio::join!(records, bytes) }).await
    {
        Ok((Ok(()), Ok(()))) => return healthz(),
        Ok((Err(e), _) | (_, Err(e))) => e.to_string(),
        Err(_) => format!(
            "the records or the bytes did not answer within {} ms",
            READY_WAIT.as_millis()
        ),
    };
    tracing::warn!(error = %fault, "not ready");
    no_store(respond::unavailable())
}

/// How long `/readyz` waits for the records and the bytes (CONTRACT.md,
/// "Faults in a cluster"); a ping still running then goes on alone, and
/// is bounded by its adapter's own deadlines.
const READY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

fn no_store(mut res: Res) -> Res {
    store_wire::headers::no_store(res.headers_mut());
    res
}

/// Crawlers have nothing to index: every object is temporary.
/// `/llms.txt`: markdown for every client, as llmstxt.org has it.
pub(super) fn llms_txt(ctx: &Ctx) -> Res {
    respond::text(
        StatusCode::OK,
        "text/markdown; charset=utf-8",
        help::llms_txt(ctx.app.config()),
    )
}

pub(super) fn robots() -> Res {
    respond::text(StatusCode::OK, PLAIN, "User-agent: *\nDisallow: /\n")
}

pub(super) fn static_file(name: &str) -> Result<Res, StoreError> {
    let (content_type, body) = assets::get(name).ok_or_else(StoreError::not_found)?;
    // hyper leaves the body out of a HEAD answer by itself.
    let mut res = respond::text(StatusCode::OK, content_type, body);
    store_wire::headers::immutable(res.headers_mut());
    Ok(res)
}
