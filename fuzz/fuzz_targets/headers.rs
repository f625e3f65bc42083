//! Content-Disposition building always yields a valid header value, the
//! reverse parse never panics, and link documents round-trip safely.
#![no_main]
use libfuzzer_sys::fuzz_target;
use store_core::import;

fuzz_target!(|s: &str| {
    for kind in ["inline", "attachment"] {
        let v = store_http::content_disposition(kind, s);
        assert!(http::HeaderValue::from_str(&v).is_ok(), "{v:?}");
        if let Some(name) = import::name_from_content_disposition(&v) {
            assert!(store_core::names::file_name_shape_problem(&name).is_none());
        }
    }
    let _ = import::name_from_content_disposition(s);
    let _ = import::name_from_url(s);
    let doc = import::link_document(s);
    if let Some(target) = import::link_target(&doc) {
        assert_eq!(target, s);
    }
    assert!(!doc.contains("<script"));
});
