use super::*;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().expect("arguments are an object").clone()
}

const BASE: &str = "http://h:1";

fn plan_at(tool: &str, v: Value, base_url: &str, limits: &Limits) -> Result<Call, StoreError> {
    let at = Setting {
        base_url,
        limits,
        nonce: 0xabc,
    };
    plan(find(tool).expect("a tool"), args(v), &at)
}

fn plan_of(tool: &str, v: Value) -> Result<Call, StoreError> {
    plan_at(tool, v, BASE, &Limits::default())
}

/// The test the issue asks for: a route's parameter missing from its
/// tool (not an argument, not set by the tool, not stated as omitted)
/// fails here, and so does an omission or a fixed value the route no
/// longer has.
#[test]
fn every_route_parameter_is_in_its_tools_schema() {
    let limits = Limits::default();
    for t in TOOLS {
        let schema = t.describe(&limits);
        let props = schema["inputSchema"]["properties"]
            .as_object()
            .expect("properties");
        for r in t.routes() {
            for p in r.route().params {
                let fixed = t.fixed.iter().any(|(k, _)| *k == p.name);
                let omitted = t.omitted.contains(&p.name);
                assert!(
                    props.contains_key(arg_name(p.name)) || fixed || omitted,
                    "{}: {}'s parameter {} is missing",
                    t.name,
                    r.route().name,
                    p.name
                );
            }
            assert!(
                schema["description"]
                    .as_str()
                    .unwrap()
                    .contains(&r.route().describe(&limits)),
                "{}: its description is not its route's",
                t.name
            );
        }
        let has = |name: &str| {
            t.routes()
                .any(|r| r.route().params.iter().any(|p| p.name == name))
        };
        for name in t.omitted.iter().chain(t.fixed.iter().map(|(k, _)| k)) {
            assert!(
                has(name),
                "{}: {name} is no parameter of its routes",
                t.name
            );
        }
    }
}

#[test]
fn the_contracts_tools_are_all_there() {
    for name in [
        "upload_file",
        "import_url",
        "read_file",
        "file_info",
        "delete_file",
        "set_lifetime",
        "create_dir",
        "add_to_dir",
        "list_dir",
        "browse",
        "create_bundle",
        "retain",
    ] {
        assert!(find(name).is_some(), "{name}");
    }
    let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "two tools of one name");
}

#[test]
fn an_upload_is_the_routes_request() {
    let call = plan_of(
        "upload_file",
        json!({ "name": "a.txt", "content": "hi", "protect": true, "tags": ["x", "y"], "max_downloads": 3 }),
    )
    .unwrap();
    assert!(matches!(call.endpoint, Endpoint::Upload { file: Ok(_) }));
    assert_eq!(call.method, http::Method::POST);
    assert_eq!(call.query.get("protect"), Some("1"));
    assert_eq!(call.query.all("tag"), ["x", "y"]);
    assert_eq!(call.query.get("max_downloads"), Some("3"));
    assert_eq!(
        call.body,
        Body::Raw {
            bytes: b"hi".to_vec(),
            content_type: None
        }
    );
    let b64 = plan_of("upload_file", json!({ "content_base64": "/wAB" })).unwrap();
    assert!(matches!(b64.body, Body::Raw { ref bytes, .. } if bytes == &[0xff, 0, 1]));
}

#[test]
fn wrong_arguments_are_refused_with_what_is_taken() {
    let cases = [
        (
            "upload_file",
            json!({ "content": "x", "colour": "red" }),
            "it takes: ",
        ),
        (
            "upload_file",
            json!({ "content": "x", "once": "yes" }),
            "once must be true or false",
        ),
        (
            "upload_file",
            json!({ "content": "x", "content_base64": "eA" }),
            "one of them",
        ),
        (
            "upload_file",
            json!({ "content_base64": "***" }),
            "not base64",
        ),
        (
            "upload_file",
            json!({ "content": "x", "max_downloads": -1 }),
            "a whole number",
        ),
        ("read_file", json!({}), "needs one of: id, url"),
        (
            "read_file",
            json!({ "url": "https://example.com/d/k" }),
            "is not the URL",
        ),
        (
            "list_dir",
            json!({ "id": "abc" }),
            "takes no argument \"id\"",
        ),
        ("list_dir", json!({}), "needs one of: key, url"),
        (
            "create_bundle",
            json!({ "files": [{ "content": "x" }] }),
            "files[0] needs a name",
        ),
        (
            "create_bundle",
            json!({ "files": [{ "name": "a", "content": "x" }] }),
            "two files or more",
        ),
        (
            "upload_file",
            json!({ "content": "x", "content_type": "text/plain\n" }),
            "not a media type",
        ),
    ];
    for (tool, a, says) in cases {
        let e = plan_of(tool, a.clone()).expect_err(&a.to_string());
        assert!(matches!(e, StoreError::BadRequest(_)), "{a}: {e:?}");
        assert!(e.to_string().contains(says), "{a}: {e}");
    }
}

#[test]
fn a_target_is_an_id_a_key_or_a_url() {
    let read = plan_of(
        "read_file",
        json!({ "url": "http://h:1/d/k/notes.txt?x=1" }),
    )
    .unwrap();
    assert_eq!(
        read.endpoint.captures(),
        ["k", "notes.txt"],
        "{:?}",
        read.endpoint
    );
    assert!(read.reads_bytes);
    assert_eq!(read.query.get("download"), Some("1"));
    let info = plan_of("file_info", json!({ "url": "/abc" })).unwrap();
    assert!(matches!(info.endpoint, Endpoint::GetFile { ref id, .. } if id == "abc"));
    assert!(!info.reads_bytes);
    let ttl = json!({ "ttl": "2h", "owner_token": "o" });
    for (a, dir) in [
        (json!({ "id": "abc" }), false),
        (json!({ "key": "k" }), true),
        (json!({ "url": "https://x/d/k" }), true),
        (json!({ "url": "https://x/abc" }), false),
    ] {
        let mut a = a;
        a.as_object_mut().unwrap().extend(args(ttl.clone()));
        let call = plan_of("set_lifetime", a.clone()).unwrap();
        let id = call.endpoint.id().unwrap();
        let want = if dir {
            RouteId::SetDirTtl
        } else {
            RouteId::SetFileTtl
        };
        assert_eq!(id, want, "{a:?}");
        assert_eq!(call.query.get("owner"), Some("o"));
    }
}

#[test]
fn a_bundle_is_one_multipart_body() {
    let call = plan_of(
        "create_bundle",
        json!({ "files": [
            { "name": "a \"q\".txt", "content": "--storesrv-mcp-0000" },
            { "name": "b.bin", "content_base64": "AAE=" },
        ] }),
    )
    .unwrap();
    let Body::Multipart { bytes, boundary } = call.body else {
        panic!("not multipart: {:?}", call.body);
    };
    assert_eq!(boundary, format!("storesrv-mcp-{:032x}", 0xabc));
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(text.matches("Content-Disposition: form-data").count(), 2);
    assert!(text.contains("filename*=UTF-8''a%20%22q%22.txt"), "{text}");
    assert!(text.contains("filename=\"b.bin\"; filename*=UTF-8''b.bin\r\n\r\n\u{0}\u{1}\r\n"));
    assert!(text.ends_with(&format!("--{boundary}--\r\n")));
    // A file that holds the boundary cannot be framed by it.
    let clash = format!("x--storesrv-mcp-{:032x}y", 0xabc);
    let e = plan_of(
        "create_bundle",
        json!({ "files": [{ "name": "a", "content": clash }, { "name": "b", "content": "" }] }),
    )
    .expect_err("a clash");
    assert!(e.to_string().contains("send the call again"), "{e}");
}

#[test]
fn a_url_is_read_under_a_mounted_base_and_the_query_is_bounded() {
    let limits = Limits::default();
    let mounted = "https://h/files";
    let call = plan_at(
        "file_info",
        json!({ "url": "https://h/files/abc" }),
        mounted,
        &limits,
    )
    .unwrap();
    assert!(matches!(call.endpoint, Endpoint::GetFile { ref id, .. } if id == "abc"));
    let call = plan_at(
        "list_dir",
        json!({ "url": "https://h/files/d/k" }),
        mounted,
        &limits,
    )
    .unwrap();
    assert_eq!(call.endpoint.captures(), ["k"]);
    let mut small = Limits::default();
    small.server.uri_bytes_max = 100;
    let e = plan_at("browse", json!({ "q": "x".repeat(200) }), BASE, &small).expect_err("too long");
    assert!(matches!(e, StoreError::UriTooLong { .. }), "{e:?}");
}
