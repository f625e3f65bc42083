//! The MCP endpoint (CONTRACT.md, "Agents: MCP"): the transport's rules,
//! every tool against what its HTTP route answers, refusals as tool errors,
//! the same door as plain HTTP (upload token, rate limit, import guard),
//! and the official MCP Python SDK as a client no one here wrote. Under
//! `STORE_TEST_BACKEND=cluster` the requests alternate between the two
//! processes, and no call carries a session: the endpoint is stateless.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::*;

const JSON_TYPE: (&str, &str) = ("Content-Type", "application/json");

/// Posts one JSON-RPC message; answers the HTTP answer.
fn post(s: &Server, message: &Value, headers: &[(&str, &str)]) -> Response<Body> {
    let mut all = vec![JSON_TYPE];
    all.extend_from_slice(headers);
    s.post_with("/mcp", &all, message.to_string().as_bytes())
}

/// A request's result (or JSON-RPC error), from a fresh message each time.
fn rpc(s: &Server, method: &str, params: Value) -> Value {
    let mut res = post(
        s,
        &json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }),
        &[],
    );
    assert_eq!(res.status(), 200);
    assert!(
        res.headers().get("mcp-session-id").is_none(),
        "a stateless server issues no session"
    );
    json(&mut res)
}

/// A tool call's result.
fn call(s: &Server, tool: &str, args: Value) -> Value {
    let answer = rpc(s, "tools/call", json!({ "name": tool, "arguments": args }));
    assert!(answer["error"].is_null(), "{tool}: {answer}");
    answer["result"].clone()
}

/// A tool call's record, which must have succeeded.
fn ok(s: &Server, tool: &str, args: Value) -> Value {
    let result = call(s, tool, args.clone());
    assert_eq!(result["isError"], false, "{tool} {args}: {result}");
    result["structuredContent"].clone()
}

/// The text `read_file` answers, which must be text.
fn read_text(s: &Server, args: Value) -> String {
    let result = call(s, "read_file", args.clone());
    assert_eq!(result["isError"], false, "{args}: {result}");
    assert_eq!(result["content"][0]["type"], "text");
    assert!(result["structuredContent"]["content_type"]
        .as_str()
        .unwrap()
        .starts_with("text/"));
    result["content"][0]["text"].as_str().unwrap().to_string()
}

/// A tool call that must be refused with this status and code.
fn refused(s: &Server, tool: &str, args: Value, status: u16, code: &str) -> Value {
    let result = call(s, tool, args.clone());
    assert_eq!(result["isError"], true, "{tool} {args}: {result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("HTTP {status} {code}: ")),
        "{tool} {args}: {text}"
    );
    assert_eq!(result["structuredContent"]["code"], code);
    result
}

#[test]
fn the_transport_is_stateless_json_over_post() {
    let s = Server::start();
    let init = rpc(
        &s,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    let api = json(&mut s.get("/api"));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "storesrv");
    assert_eq!(init["result"]["serverInfo"]["version"], api["version"]);
    // No initialize needed first, on any process: every message stands alone.
    let tools = rpc(&s, "tools/list", json!({}));
    assert!(tools["result"]["tools"].as_array().unwrap().len() >= 12);
    assert_eq!(rpc(&s, "ping", json!({}))["result"], json!({}));
    let nope = rpc(&s, "resources/list", json!({}));
    assert_eq!(nope["error"]["code"], -32601);
    let no_tool = rpc(&s, "tools/call", json!({ "name": "format_disk" }));
    assert_eq!(no_tool["error"]["code"], -32602);
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let res = post(&s, &note, &[]);
    assert_eq!(res.status(), 202);
    let mut res = s.post_with("/mcp", &[JSON_TYPE], b"{not json");
    assert_eq!(res.status(), 400);
    assert_eq!(json(&mut res)["error"]["code"], -32700);
    for mut res in [s.get("/mcp"), s.delete("/mcp", &[])] {
        assert_eq!(header(&res, "allow"), "POST");
        assert_error(&mut res, 405, "method_not_allowed");
    }
    let ping = json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" });
    let mut res = post(&s, &ping, &[("MCP-Protocol-Version", "1999-01-01")]);
    assert_error(&mut res, 400, "bad_request");
    let res = post(&s, &ping, &[("MCP-Protocol-Version", "2025-06-18")]);
    assert_eq!(res.status(), 200);
    // A page of another site may not drive it through a browser.
    let mut res = post(&s, &ping, &[("Origin", "http://evil.example")]);
    assert_error(&mut res, 403, "forbidden");
    assert_eq!(post(&s, &ping, &[("Origin", &s.base)]).status(), 200);
}

#[test]
fn files_are_uploaded_read_described_and_deleted_as_over_http() {
    let s = Server::start();
    let made = ok(
        &s,
        "upload_file",
        json!({ "name": "notes.txt", "content": "hello, agent", "tags": ["mcp-test"], "protect": true }),
    );
    let plain = s.upload("plain.txt", b"hello, agent");
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&made),
        keys(&plain),
        "the same record as a plain upload"
    );
    assert_eq!(made["tags"], json!(["mcp-test"]));
    let id = made["id"].as_str().unwrap();
    assert_eq!(read_text(&s, json!({ "id": id })), "hello, agent");
    let by_url = call(&s, "read_file", json!({ "url": made["url"] }));
    assert_eq!(by_url["content"][0]["text"], "hello, agent");
    let info = ok(&s, "file_info", json!({ "id": id }));
    assert_eq!(info["name"], "notes.txt");
    assert_eq!(info["size"], 12);
    let found = ok(&s, "browse", json!({ "tags": ["mcp-test"] }));
    assert!(found.to_string().contains(id), "{found}");
    let owner = made["owner_token"].as_str().unwrap();
    let longer = ok(
        &s,
        "set_lifetime",
        json!({ "id": id, "ttl": "1d", "owner_token": owner }),
    );
    assert_eq!(longer["expires_in"], 24 * 3600);
    // Protected: only the owner token deletes it.
    refused(&s, "delete_file", json!({ "id": id }), 401, "write_denied");
    ok(&s, "delete_file", json!({ "id": id, "owner_token": owner }));
    assert_eq!(s.get_with(&format!("/{id}"), &[]).status(), 404);
    refused(&s, "file_info", json!({ "id": id }), 404, "not_found");
}

#[test]
fn bytes_travel_as_base64_and_a_once_file_burns_on_read() {
    let s = Server::start();
    let raw: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&raw);
    let made = ok(
        &s,
        "upload_file",
        json!({ "name": "all.bin", "content_base64": b64, "once": true }),
    );
    let id = made["id"].as_str().unwrap().to_string();
    // The record spends nothing; the read spends the one download.
    assert_eq!(ok(&s, "file_info", json!({ "id": id }))["once"], true);
    let read = ok(&s, "read_file", json!({ "id": id }));
    let back = base64::engine::general_purpose::STANDARD
        .decode(read["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(back, raw);
    refused(&s, "read_file", json!({ "id": id }), 404, "not_found");
    // An image comes back as an image a model can look at.
    let png = std::fs::read(repo("fixtures/media/alpha-2400x1600.png")).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let made = ok(
        &s,
        "upload_file",
        json!({ "name": "p.png", "content_base64": b64 }),
    );
    let read = call(&s, "read_file", json!({ "id": made["id"] }));
    assert_eq!(read["content"][0]["type"], "image");
    assert_eq!(read["content"][0]["mimeType"], "image/png");
}

#[test]
fn dirs_and_bundles_are_organised_by_tools() {
    let s = Server::start();
    let dir = ok(
        &s,
        "create_dir",
        json!({ "name": "mcp-notes", "write": "1" }),
    );
    let key = dir["id"].as_str().unwrap();
    let write = dir["write_token"]
        .as_str()
        .expect("a write token")
        .to_string();
    refused(
        &s,
        "add_to_dir",
        json!({ "key": key, "name": "plan.md", "content": "x" }),
        401,
        "write_denied",
    );
    let added = ok(
        &s,
        "add_to_dir",
        json!({ "url": dir["url"], "name": "plan.md", "content": "# Plan\n", "write": write }),
    );
    assert!(added.to_string().contains("plan.md"), "{added}");
    let listed = ok(&s, "list_dir", json!({ "key": key }));
    let file_url = listed["files"][0]["url"].as_str().unwrap().to_string();
    assert_eq!(read_text(&s, json!({ "url": file_url })), "# Plan\n");
    let owner = dir["owner_token"].as_str().unwrap();
    let kept = ok(
        &s,
        "set_lifetime",
        json!({ "key": key, "ttl": "2d", "owner_token": owner }),
    );
    assert_eq!(kept["id"], key);
    let retained = ok(&s, "retain", json!({ "key": key, "token": RETAIN_TOKEN }));
    assert!(retained.to_string().contains(key), "{retained}");

    let bundle = ok(
        &s,
        "create_bundle",
        json!({ "files": [
            { "name": "a.md", "content": "# A" },
            { "name": "b.bin", "content_base64": "AAEC" },
        ] }),
    );
    let id = bundle["id"].as_str().unwrap();
    let mut member = s.get(&format!("/{id}/a.md"));
    assert_eq!(text(&mut member), "# A");
    let member = ok(
        &s,
        "read_file",
        json!({ "url": s.url(&format!("/{id}/b.bin")) }),
    );
    assert_eq!(member["content_base64"], "AAEC");
    refused(
        &s,
        "retain",
        json!({ "id": id, "token": "wrong" }),
        401,
        "write_denied",
    );
    let retained = call(&s, "retain", json!({ "id": id, "token": RETAIN_TOKEN }));
    assert_eq!(retained["isError"], false, "{retained}");
}

#[test]
fn a_refused_call_is_a_tool_error_with_its_http_code() {
    let s = Server::with_env(&[("STORE_MAX_FILE_BYTES", "1000")]);
    refused(
        &s,
        "upload_file",
        json!({ "name": "big.txt", "content": "x".repeat(1001) }),
        413,
        "too_large",
    );
    refused(
        &s,
        "upload_file",
        json!({ "content": "x", "colour": "red" }),
        400,
        "bad_request",
    );
    refused(
        &s,
        "upload_file",
        json!({ "name": "a/b", "content": "x" }),
        400,
        "bad_request",
    );
    refused(
        &s,
        "upload_file",
        json!({ "content": "x", "ttl": "99y" }),
        400,
        "bad_request",
    );
    refused(
        &s,
        "list_dir",
        json!({ "key": "no-such-dir" }),
        404,
        "not_found",
    );
    // The private address guard of imports holds for the tool too.
    let r = refused(
        &s,
        "import_url",
        json!({ "url": "http://127.0.0.1:9/secret" }),
        400,
        "bad_request",
    );
    assert!(r.to_string().contains("not allowed"), "{r}");
}

#[test]
fn the_upload_token_and_the_rate_limit_hold_as_at_the_door() {
    let s = Server::with_env(&[
        ("STORE_UPLOAD_TOKEN", "up-token"),
        ("STORE_RATE_LIMIT_PER_MIN", "6"),
        ("STORE_RETAIN_TOKEN", RETAIN_TOKEN),
    ]);
    let upload = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "upload_file", "arguments": { "name": "a.txt", "content": "a" } } });
    let mut res = post(&s, &upload, &[]);
    let answer = json(&mut res);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["status"], 401);
    let mut res = post(&s, &upload, &[("Authorization", "Bearer up-token")]);
    let made = json(&mut res)["result"]["structuredContent"].clone();
    let id = made["id"]
        .as_str()
        .expect("made with the token")
        .to_string();
    // The upload token in the header, and the retain token as the call's
    // own: each reaches what reads it.
    let retained = json(&mut post(
        &s,
        &json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": { "name": "retain", "arguments": { "id": id, "token": RETAIN_TOKEN } } }),
        &[("Authorization", "Bearer up-token")],
    ));
    assert_eq!(retained["result"]["isError"], false, "{retained}");
    // Reading needs no token.
    let read = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "read_file", "arguments": { "id": id } } });
    let mut last = Value::Null;
    for _ in 0..12 {
        last = json(&mut post(&s, &read, &[]));
        if last["result"]["isError"] == true {
            break;
        }
        assert_eq!(last["result"]["content"][0]["text"], "a");
    }
    let refusal = &last["result"];
    assert_eq!(
        refusal["structuredContent"]["code"], "rate_limited",
        "{last}"
    );
    assert!(
        refusal["structuredContent"]["retry_after"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Any other message over the limit is the door's 429.
    let mut res = post(
        &s,
        &json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }),
        &[],
    );
    assert_error(&mut res, 429, "rate_limited");
    assert!(s.log().contains("route=\"mcp_read_file\""));
}

#[test]
fn imports_run_through_the_tool_where_the_guard_allows_them() {
    let origin = store_testkit::origin::Origin::start(std::sync::Arc::new(|path| match path {
        "/notes.md" => store_testkit::origin::ok(b"# Notes\n", "Content-Type: text/markdown\r\n"),
        _ => store_testkit::origin::not_found(),
    }));
    let s = Server::with_env(&[("STORE_IMPORT_ALLOW_PRIVATE", "1")]);
    let made = ok(
        &s,
        "import_url",
        json!({ "url": origin.url("/notes.md"), "tags": ["imported"] }),
    );
    assert_eq!(read_text(&s, json!({ "id": made["id"] })), "# Notes\n");
}

/// The official MCP Python SDK (`mcp` from PyPI, pinned in
/// tests/interop/requirements.txt) connects by URL, lists the tools,
/// uploads, reads, and gets a tool error for a refused call
/// (tests/interop/mcp_client.py).
#[test]
fn the_official_python_sdk_uses_the_tools() {
    let s = Server::start();
    let (stdout, _) = run_interop("mcp_client.py", std::slice::from_ref(&s.base));
    let seen: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(seen["server"], "storesrv");
    for tool in [
        "upload_file",
        "read_file",
        "create_dir",
        "retain",
        "import_url",
    ] {
        assert!(
            seen["tools"].as_array().unwrap().contains(&json!(tool)),
            "{seen}"
        );
    }
    assert_eq!(seen["upload_error"], false);
    assert_eq!(seen["read_text"], "hello from python");
    assert_eq!(seen["binary_round_trip"], true);
    assert_eq!(seen["refused_error"], true);
    assert!(seen["refused_text"]
        .as_str()
        .unwrap()
        .starts_with("HTTP 404 not_found"));
}

/// The three views of the route table agree: each tool calls an endpoint
/// `/api` lists, says what `/api` says of it, and takes every parameter
/// its usage line names; `/openapi.json` has the endpoint itself; and the
/// agents' texts point to it.
#[test]
fn tools_api_and_openapi_say_the_same() {
    let s = Server::start();
    let api = json(&mut s.get("/api"));
    let tools = rpc(&s, "tools/list", json!({}))["result"]["tools"].clone();
    for tool in tools.as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let description = tool["description"].as_str().unwrap();
        let props = tool["inputSchema"]["properties"].as_object().unwrap();
        let called: Vec<&String> = api["endpoints"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(usage, does)| {
                description.contains(&format!("{usage}: {}", does.as_str().unwrap()))
            })
            .map(|(usage, _)| usage)
            .collect();
        assert!(
            !called.is_empty(),
            "{name} names no endpoint of /api: {description}"
        );
        for usage in called {
            for pair in usage
                .split(['?', '&', '[', ']'])
                .filter(|p| p.contains('='))
            {
                let param = pair.split('=').next().unwrap();
                let arg = match param {
                    "tag" => "tags",
                    "owner" => "owner_token",
                    other => other,
                };
                let set_by_tool =
                    matches!((name, param), (_, "retain" | "dir" | "download" | "info"));
                let left_out = matches!(
                    (name, param),
                    ("file_info", "thumb")
                        | ("list_dir", "zip")
                        | ("create_bundle", "name" | "share")
                );
                assert!(
                    props.contains_key(arg) || set_by_tool || left_out,
                    "{name}: {usage} takes {param}, the tool's schema does not"
                );
            }
        }
    }
    let openapi = json(&mut s.get("/openapi.json"));
    assert!(openapi["paths"]["/mcp"]["post"].is_object());
    let help = text(&mut s.get_with("/help/agents", &[("Accept", "text/plain")]));
    for tool in tools.as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert!(
            help.contains(&format!("`{name}`")),
            "/help/agents lacks {name}"
        );
    }
    let mcp_url = s.url("/mcp");
    for path in ["/write_for_agents", "/llms.txt", "/help/agents"] {
        let body = text(&mut s.get(path));
        assert!(body.contains(&mcp_url), "{path} does not name {mcp_url}");
    }
}

/// Tool calls are counted by their tool, as requests are by their route.
#[test]
fn tool_calls_are_counted_by_tool() {
    let s = Server::with_env(&[("STORE_METRICS_LISTEN", "127.0.0.1:0")]);
    let urls = s.metrics_urls();
    ok(
        &s,
        "upload_file",
        json!({ "name": "m.txt", "content": "m" }),
    );
    refused(
        &s,
        "file_info",
        json!({ "id": "nosuchfile00" }),
        404,
        "not_found",
    );
    let (after, _) = crate::server::scrape(&urls);
    // With the status the route answered: 201 for the upload, 404 for the
    // record of a file that is not there.
    for (tool, status) in [("mcp_upload_file", 201), ("mcp_file_info", 404)] {
        let series =
            format!("storesrv_http_requests_total{{route=\"{tool}\",status=\"{status}\"}}");
        assert_eq!(crate::server::sample(&after, &series), 1.0, "{series}");
    }
}

/// Each message on a connection of its own, with no session id and no
/// `initialize` first: what one call made, the next reads. (The other
/// tests of this module alternate between the two processes in the
/// cluster suite.)
#[test]
fn calls_on_fresh_connections_need_no_session() {
    let s = Server::start();
    let send = |message: &Value| {
        let body = message.to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let answer = s.raw_answer(&[head.as_bytes(), body.as_bytes()].concat());
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            !answer.to_ascii_lowercase().contains("mcp-session-id"),
            "{answer}"
        );
        let (_, body) = answer.split_once("\r\n\r\n").unwrap();
        serde_json::from_str::<Value>(body).unwrap()["result"].clone()
    };
    let call = |tool: &str, args: Value| {
        send(
            &json!({ "jsonrpc": "2.0", "id": "c", "method": "tools/call",
            "params": { "name": tool, "arguments": args } }),
        )
    };
    let made = call(
        "upload_file",
        json!({ "name": "f.txt", "content": "fresh" }),
    );
    let id = made["structuredContent"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for _ in 0..3 {
        let read = call("read_file", json!({ "id": id }));
        assert_eq!(read["content"][0]["text"], "fresh", "{read}");
    }
}
