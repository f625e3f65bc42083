//! The route table, query parsing and each route's typed parameters take
//! any method, path and query without panicking, and never route a path
//! with an empty id.
#![no_main]
use libfuzzer_sys::fuzz_target;
use store_wire::query::Query;
use store_wire::router::{route, Endpoint};

fuzz_target!(|data: (&[u8], &str, &str)| {
    let (method, path, query) = data;
    let Ok(method) = http::Method::from_bytes(method) else { return };
    let Ok(q) = Query::parse(query) else { return };
    let _ = q.flag("once");
    let _ = q.all("tag");
    match route(&method, path, &q, &store_core::Limits::DEFAULT) {
        Endpoint::GetFile { id, .. } | Endpoint::DeleteFile { id } | Endpoint::ReplaceFile { id } => assert!(!id.is_empty()),
        Endpoint::GetDirFile { key, file, .. } => assert!(!key.is_empty() && !file.is_empty()),
        _ => {}
    }
});
