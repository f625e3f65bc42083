//! `GET /openapi.json`: the contract as an OpenAPI 3.1 document, generated
//! from the route table (`routes.rs`) and the view types' JSON Schemas
//! (schemars), so that it cannot say anything the router and the views do
//! not. Routes of one path and method (told apart by a keyword, as
//! `POST /?url=` and `POST /?dir=1`) are one OpenAPI operation, which the
//! format requires: its parameters are theirs together, and its answer any
//! of theirs.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};
use store_app::AppConfig;
use store_core::Limits;

use crate::api;
use crate::router::{url_for, RouteId};
use crate::routes::{Answer, Param, Route, Shape, Takes, View, GLOBAL_PARAMS, ROUTES};
use crate::views;

/// The OpenAPI 3.1 document of `GET /openapi.json`, for `config`.
pub fn document(config: &AppConfig) -> Value {
    let mut gen = SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "/components/schemas".into())
        .into_generator();
    let mut paths = Map::new();
    let all = operations();
    for group in &all {
        let route = group[0];
        let entry = paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}));
        entry[route.verb.as_str().to_ascii_lowercase()] =
            operation(&mut gen, group, &all, &config.limits);
    }
    // Every error answer refers to it (`responses`).
    schema::<views::ErrorBody<'_>>(&mut gen);
    let schemas = gen.take_definitions(true);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": api::SERVICE_NAME,
            "version": api::SPEC_VERSION,
            "description": format!(
                "An ephemeral file store. Generated from the server's route table; the same \
                 contract in the service's own words is at {}.",
                url_for(&config.base_url, RouteId::Api, &[])
            ),
        },
        "servers": [{ "url": config.base_url }],
        "paths": paths,
        "components": { "schemas": schemas },
    })
}

/// The routes grouped by path and method, in table order.
fn operations() -> Vec<Vec<&'static Route>> {
    let mut groups: Vec<Vec<&'static Route>> = Vec::new();
    for r in ROUTES {
        match groups
            .iter_mut()
            .find(|g| g[0].path == r.path && g[0].verb == r.verb)
        {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
}

/// One operation: `group` is its routes, `all` every operation's (the
/// targets of its links).
fn operation(
    gen: &mut SchemaGenerator,
    group: &[&'static Route],
    all: &[Vec<&'static Route>],
    limits: &Limits,
) -> Value {
    let first = group[0];
    let description: Vec<String> = group
        .iter()
        .map(|r| format!("- `{}`: {}", r.usage(), r.describe(limits)))
        .collect();
    let mut op = json!({
        "operationId": operation_id(group),
        "tags": [first.topic],
        "summary": first.describe(limits),
        "description": description.join("\n"),
        "parameters": parameters(group),
        "responses": responses(gen, group),
    });
    if let Some(body) = request_body(group) {
        op["requestBody"] = body;
    }
    if let Some(links) = links(group, all) {
        op["responses"]["2XX"]["links"] = links;
    }
    op
}

/// The body the operation reads: the first of its routes that reads one.
fn request_body(group: &[&'static Route]) -> Option<Value> {
    let binary = json!({ "schema": { "type": "string", "format": "binary" } });
    let text = json!({ "schema": { "type": "string" } });
    let content = match group
        .iter()
        .map(|r| r.takes)
        .find(|t| *t != Takes::Nothing)?
    {
        Takes::Nothing => return None,
        Takes::Bytes => json!({
            "application/octet-stream": binary,
            "multipart/form-data": { "schema": {
                "type": "object",
                "properties": { "file": { "type": "string", "format": "binary" } },
            } },
        }),
        Takes::Text => json!({ "text/plain": text }),
        Takes::Comment => {
            let fields = json!({
                "type": "object",
                "properties": { "name": { "type": "string" }, "text": { "type": "string" } },
                "required": ["text"],
            });
            json!({
                "application/json": { "schema": fields },
                "application/x-www-form-urlencoded": { "schema": fields },
            })
        }
        Takes::Offset => json!({ crate::tus::OFFSET_TYPE: binary }),
        Takes::JsonRpc => json!({ "application/json": { "schema": jsonrpc_message() } }),
        Takes::Password => json!({ "application/x-www-form-urlencoded": { "schema": {
            "type": "object",
            "properties": { "password": { "type": "string" } },
            "required": ["password"],
        } } }),
        Takes::Block => fields_body(&["sha256", "reason"]),
        Takes::Key => fields_body(&["key"]),
        Takes::Report => fields_body(&["reason"]),
        Takes::Id => fields_body(&["id"]),
        Takes::Form => json!({ "application/x-www-form-urlencoded": { "schema": {
            "type": "object",
            "properties": { "id": { "type": "string" }, "action": { "type": "string" } },
            "required": ["id", "action"],
        } } }),
    };
    Some(json!({ "required": false, "content": content }))
}

/// A body of text fields, all required, as JSON or a form.
fn fields_body(names: &[&str]) -> Value {
    let properties: Map<String, Value> = names
        .iter()
        .map(|n| (n.to_string(), json!({ "type": "string" })))
        .collect();
    let fields = json!({ "type": "object", "properties": properties, "required": names });
    json!({
        "application/json": { "schema": fields },
        "application/x-www-form-urlencoded": { "schema": fields },
    })
}

/// OpenAPI links from an operation that makes an object to the operations
/// on that object: the made record's `id` fills their first capture, so a
/// client (or schemathesis's stateful phase) can follow them.
fn links(group: &[&'static Route], all: &[Vec<&'static Route>]) -> Option<Value> {
    let (prefix, capture) = group.iter().find_map(|r| made_object(r.answers))?;
    let mut out = Map::new();
    for target in all {
        let t = target[0];
        let itself = t.path == group[0].path && t.verb == group[0].verb;
        if t.path.starts_with(prefix) && !itself {
            let key = format!("{}_{}", t.verb.as_str().to_ascii_lowercase(), t.name);
            let mut params = Map::new();
            params.insert(capture.into(), json!("$response.body#/id"));
            out.insert(
                key,
                json!({ "operationId": operation_id(target), "parameters": params }),
            );
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

fn operation_id(group: &[&'static Route]) -> String {
    let names: Vec<&str> = group.iter().map(|r| r.name).collect();
    names.join("_or_")
}

/// The path and capture of the object a view is the record of: the
/// first capture of that route is the record's `id`.
fn made_object(answers: Answer) -> Option<(&'static str, &'static str)> {
    let id = match answers {
        Answer::Json(View::FileRecord | View::Upload) => RouteId::GetFile,
        Answer::Json(View::DirRecord) => RouteId::GetDir,
        Answer::Json(View::Gallery) => RouteId::Gallery,
        Answer::Json(View::Image) => RouteId::Image,
        _ => return None,
    };
    Some((id.route().path, id.fields()[0]))
}

fn parameters(group: &[&'static Route]) -> Vec<Value> {
    let mut out: Vec<Value> = captures(group[0])
        .map(|name| {
            json!({
                "name": name, "in": "path", "required": true,
                "schema": { "type": "string", "minLength": 1 },
            })
        })
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    let pages = group
        .iter()
        .any(|r| matches!(r.answers, Answer::Page(_) | Answer::PageOrText(..)));
    let globals = GLOBAL_PARAMS.iter().filter(|_| pages);
    for p in group.iter().flat_map(|r| r.params.iter()).chain(globals) {
        if seen.contains(&p.name) {
            continue;
        }
        seen.push(p.name);
        // A keyword is required only by its own route, not by the others
        // of the operation.
        let required = p.required && group.len() == 1;
        out.push(query_param(p, required));
    }
    out
}

fn captures(route: &Route) -> impl Iterator<Item = &'static str> {
    route
        .path
        .split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
}

fn query_param(p: &Param, required: bool) -> Value {
    let schema = match p.shape {
        Shape::Flag => json!({ "type": "string", "enum": ["1", "0", "true", "false"] }),
        Shape::Text => json!({ "type": "string", "minLength": 1 }),
        Shape::Integer => json!({ "type": "integer", "minimum": 1 }),
        Shape::Choice(words) => json!({ "type": "string", "enum": words }),
        Shape::List => json!({ "type": "array", "items": { "type": "string", "minLength": 1 } }),
    };
    json!({
        "name": p.name, "in": "query", "required": required,
        "description": format!("{}={}", p.name, p.shown),
        "schema": schema,
    })
}

/// What the operation answers: any of its routes' views on success, the
/// error body otherwise.
fn responses(gen: &mut SchemaGenerator, group: &[&'static Route]) -> Value {
    let mut json_views: Vec<Value> = Vec::new();
    let mut media: Map<String, Value> = Map::new();
    for r in group {
        // `zip=1` answers the whole dir or gallery as one archive.
        if r.params.iter().any(|p| p.name == "zip") {
            media.insert("application/zip".into(), json!({}));
        }
        match r.answers {
            Answer::Json(view) | Answer::Page(view) | Answer::PageOrText(view, _) => {
                let s = view_schema(gen, view);
                if !json_views.contains(&s) {
                    json_views.push(s);
                }
                if !matches!(r.answers, Answer::Json(_)) {
                    media.insert(
                        "text/html".into(),
                        json!({ "schema": { "type": "string" } }),
                    );
                }
                if let Answer::PageOrText(_, text) = r.answers {
                    media.insert(text.into(), json!({ "schema": { "type": "string" } }));
                }
            }
            Answer::Bytes => {
                media.insert("*/*".into(), json!({}));
            }
            Answer::Text(content_type) => {
                media.insert(
                    content_type.into(),
                    json!({ "schema": { "type": "string" } }),
                );
            }
            // Status and headers say it all (tus).
            Answer::Empty => {}
            Answer::JsonRpc => {
                media.insert(
                    "application/json".into(),
                    json!({ "schema": jsonrpc_message() }),
                );
            }
            Answer::Qr => {
                for content_type in ["image/svg+xml", "text/plain"] {
                    media.insert(
                        content_type.into(),
                        json!({ "schema": { "type": "string" } }),
                    );
                }
            }
        }
    }
    if !json_views.is_empty() {
        let schema = match json_views.len() {
            1 => json_views.remove(0),
            _ => json!({ "anyOf": json_views }),
        };
        media.insert("application/json".into(), json!({ "schema": schema }));
    }
    let mut error_schema = json!({ "$ref": "#/components/schemas/ErrorBody" });
    // A message the MCP endpoint cannot read is answered 400 with a
    // JSON-RPC error; a refusal at the door is the service's error body.
    if group.iter().any(|r| r.answers == Answer::JsonRpc) {
        error_schema = json!({ "anyOf": [error_schema, jsonrpc_message()] });
    }
    let error = json!({
        "description": "an error: its code says what happened and whether to retry",
        "content": { "application/json": { "schema": error_schema } },
    });
    let mut answers = json!({
        "2XX": { "description": "success", "content": media },
        "3XX": { "description": "a redirect (browsers), or 304 Not Modified for a download" },
        "4XX": error,
        "5XX": error,
    });
    if group.iter().any(|r| r.answers == Answer::JsonRpc) {
        answers["202"] = json!({ "description": "a notification, or a client's answer: accepted, with no body" });
    }
    answers
}

/// A JSON-RPC 2.0 message, as MCP sends them: a request, a
/// notification, a result or an error.
fn jsonrpc_message() -> Value {
    json!({
        "type": "object",
        "required": ["jsonrpc"],
        "properties": {
            "jsonrpc": { "const": "2.0" },
            "id": { "type": ["string", "integer", "null"] },
            "method": { "type": "string" },
            "params": { "type": "object" },
            "result": { "type": "object" },
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": { "code": { "type": "integer" }, "message": { "type": "string" } },
            },
        },
    })
}

fn schema<T: JsonSchema + ?Sized>(gen: &mut SchemaGenerator) -> Value {
    gen.subschema_for::<T>().to_value()
}

/// The schema of a view the route table names.
fn view_schema(gen: &mut SchemaGenerator, view: View) -> Value {
    match view {
        View::FileRecord => schema::<views::FileView>(gen),
        View::OwnedRecord => json!({ "anyOf": [
            schema::<views::FileView>(gen),
            schema::<views::BundleView>(gen),
        ] }),
        View::DirRecord => schema::<views::DirView>(gen),
        View::Upload => json!({ "anyOf": [
            schema::<views::FileView>(gen),
            schema::<views::BundleView>(gen),
            schema::<views::DirView>(gen),
        ] }),
        View::RetainResponse => schema::<views::RetainView>(gen),
        View::BrowseList => schema::<Vec<views::BrowseEntry>>(gen),
        View::DirList => schema::<Vec<views::DirView>>(gen),
        View::History => schema::<Vec<views::HistoryView>>(gen),
        View::Deleted => schema::<views::Deleted<'_>>(gen),
        View::Home => schema::<views::Pointer>(gen),
        View::Status => schema::<views::Status>(gen),
        View::HelpIndex => schema::<crate::help::Index>(gen),
        View::HelpTopic => schema::<crate::help::TopicPage>(gen),
        View::GalleryList => schema::<Vec<views::GalleryEntry>>(gen),
        View::Gallery => json!({ "anyOf": [
            schema::<views::GalleryView>(gen),
            schema::<views::GalleryCreated>(gen),
            schema::<views::Counters>(gen),
        ] }),
        View::Image => schema::<views::ImageView>(gen),
        View::ImageUpload => json!({ "anyOf": [
            schema::<views::ImageView>(gen),
            schema::<views::ImageBatch>(gen),
        ] }),
        View::Comment => schema::<views::CommentView>(gen),
        View::Like => schema::<views::LikeView>(gen),
        View::DropRoom => schema::<views::DropRoomView>(gen),
        View::AdminList => schema::<views::AdminListView>(gen),
        View::Blocked => schema::<views::BlockedView>(gen),
        View::Reported => schema::<views::ReportedView>(gen),
        View::Reports => schema::<views::ReportsView>(gen),
        View::Dropped => schema::<views::DroppedView>(gen),
        View::AdminResult => json!({ "anyOf": [
            schema::<views::Done>(gen),
            schema::<views::GalleryView>(gen),
        ] }),
        // `/api` and this document: JSON objects whose fields SPEC.md and
        // OpenAPI define.
        View::Contract | View::Openapi => json!({ "type": "object" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        document(&AppConfig::new("http://h"))
    }

    #[test]
    fn every_route_is_an_operation_of_its_path() {
        let d = doc();
        for r in ROUTES {
            let op = &d["paths"][r.path][r.verb.as_str().to_ascii_lowercase()];
            let id = op["operationId"].as_str().unwrap_or_default();
            assert!(
                id.split("_or_").any(|n| n == r.name),
                "{} not in {id}",
                r.name
            );
            for p in r.params {
                let params = op["parameters"].as_array().unwrap();
                assert!(
                    params.iter().any(|q| q["name"] == p.name),
                    "{} {}",
                    r.name,
                    p.name
                );
            }
        }
    }

    #[test]
    fn every_reference_resolves() {
        let d = doc();
        let text = d.to_string();
        let schemas = d["components"]["schemas"].as_object().unwrap();
        for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = &part[..part.find('"').unwrap()];
            assert!(schemas.contains_key(name), "{name}");
        }
        assert!(schemas.contains_key("FileView"));
        assert_eq!(d["openapi"], "3.1.0");
    }

    #[test]
    fn the_error_schema_lists_every_code() {
        let d = doc();
        let body = &d["components"]["schemas"]["ErrorBody"];
        let listed: Vec<&str> = body["properties"]["code"]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("no enum of codes: {body}"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let all: Vec<&str> = store_core::ErrorCode::ALL
            .iter()
            .map(|c| c.as_str())
            .collect();
        assert_eq!(listed, all);
    }

    #[test]
    fn a_keyword_is_required_only_alone() {
        let d = doc();
        let required = |path: &str, name: &str| {
            let params = d["paths"][path]["post"]["parameters"].as_array().unwrap();
            let param = params.iter().find(|p| p["name"] == name);
            param.unwrap_or_else(|| panic!("{path} {name}"))["required"].clone()
        };
        assert_eq!(required("/", "url"), false);
        assert_eq!(required("/pics", "create"), true);
        assert_eq!(required("/pics/i/{id}", "like"), false, "like or report");
        assert!(crate::routes::Verb::Get.admits(&http::Method::HEAD));
    }
}
