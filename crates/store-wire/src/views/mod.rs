//! Every JSON answer of the service, in one place, each with its JSON
//! Schema for `/openapi.json`: the records' views (`records`, `galleries`),
//! built from store-app's records and outcomes, and the answers the HTTP
//! layer makes itself (below).
//!
//! A view's fields are the JSON fields SPEC.md names. They carry no doc
//! comments on purpose: schemars would copy them into `/openapi.json` as
//! descriptions, and the wire's documentation is SPEC.md and `/api`.
#![allow(missing_docs)]

use schemars::JsonSchema;
use serde::Serialize;

use crate::router::{url_for, with_query, RouteId};

mod admin;
mod drops;
mod galleries;
mod records;

pub use admin::{
    AdminListView, AdminObjectView, BlockView, BlockedView, ReportView, ReportedView, ReportsView,
};
pub use drops::{DropRoomView, DroppedFile, DroppedView};
pub use galleries::{
    CommentView, Counters, GalleryCreated, GalleryEntry, GalleryLimits, GalleryView, ImageView,
    LikeView,
};
pub use records::{BrowseEntry, BundleView, DirView, FileView, HistoryView, RetainView};

/// `GET /` for agents: where the contract and the help are.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Pointer {
    pub service: &'static str,
    pub version: &'static str,
    pub api: String,
    pub help: String,
    pub openapi: String,
    pub write_for_agents: String,
    /// A curl command that uploads a file.
    pub upload: String,
}

impl Pointer {
    /// The pointer of a service at `base`.
    pub fn new(base: &str) -> Self {
        let upload = with_query(
            &url_for(base, RouteId::Upload, &[]),
            crate::routes::NAME.name,
            "notes.txt",
        );
        Self {
            service: crate::api::SERVICE_NAME,
            version: crate::api::SPEC_VERSION,
            api: url_for(base, RouteId::Api, &[]),
            help: url_for(base, RouteId::Help, &[]),
            openapi: url_for(base, RouteId::Openapi, &[]),
            write_for_agents: url_for(base, RouteId::WriteForAgents, &[]),
            upload: format!("curl --data-binary @notes.txt '{upload}'"),
        }
    }
}

/// The answer to a successful delete.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Deleted<'a> {
    pub id: &'a str,
    pub deleted: bool,
}

/// The answer to a multipart gallery upload: every image stored.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ImageBatch {
    pub images: Vec<ImageView>,
}

/// The answer to a gallery admin action.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Done {
    pub ok: bool,
}

/// `/healthz` and `/readyz` when they succeed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Status {
    /// Always `ok`.
    pub status: &'static str,
}

/// The JSON body of every error (SPEC.md "Errors", CONTRACT.md).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody<'a> {
    pub error: String,
    /// One of `ErrorCode::ALL`, which the schema lists as an enum.
    #[schemars(schema_with = "error_code_schema")]
    pub code: &'a str,
    /// Seconds to wait, on the codes retried later (429, 503, 507).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

/// The schema of an error's `code`: a string, one of the codes the service
/// answers (`ErrorCode::ALL`, the list `/api` and `/help/errors` show).
fn error_code_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let codes: Vec<&str> = store_core::ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    schemars::json_schema!({ "type": "string", "enum": codes })
}
