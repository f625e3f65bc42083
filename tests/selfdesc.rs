//! The self-description over HTTP: `/help`, its topics, `/help/errors`,
//! `/write_for_agents`, `/copy_for_agents` and `/releases`, checked against
//! `/api` so the two can never disagree.

use crate::common::{assert_error, header, json, repo, text, Server};
use serde_json::Value;

const BROWSER: (&str, &str) = ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8");

#[test]
fn help_lists_every_topic_and_each_answers() {
    let s = Server::start();
    let index = json(&mut s.get("/help"));
    let topics = index["topics"].as_array().expect("topics");
    let slugs: Vec<&str> = topics
        .iter()
        .map(|t| t["topic"].as_str().unwrap())
        .collect();
    for want in [
        "files",
        "bundles",
        "dirs",
        "show-dirs",
        "retention",
        "import",
        "browse",
        "galleries",
        "auth",
        "limits",
        "errors",
    ] {
        assert!(slugs.contains(&want), "{want} missing from {slugs:?}");
    }
    for t in topics {
        assert!(!t["summary"].as_str().unwrap().is_empty());
        let url = t["url"].as_str().unwrap();
        let path = url
            .strip_prefix(&s.base)
            .expect("topic URLs use the base URL");
        let mut res = s.get(path);
        assert_eq!(res.status(), 200, "{path}");
        if t["topic"] == "errors" {
            assert!(header(&res, "content-type").starts_with("text/plain"));
        } else {
            let page = json(&mut res);
            assert_eq!(page["topic"], t["topic"]);
            assert!(!page["text"].as_str().unwrap().is_empty());
        }
    }
    assert_error(&mut s.get("/help/no-such-topic"), 404, "not_found");
}

#[test]
fn every_api_endpoint_is_explained_by_a_help_topic() {
    let s = Server::start();
    let api = json(&mut s.get("/api"));
    let endpoints = api["endpoints"].as_object().unwrap();
    let index = json(&mut s.get("/help"));
    let mut explained = Vec::new();
    for t in index["topics"].as_array().unwrap() {
        if t["topic"] == "errors" {
            continue;
        }
        let page = json(&mut s.get(&format!("/help/{}", t["topic"].as_str().unwrap())));
        for e in page["endpoints"].as_array().unwrap() {
            let route = e["endpoint"].as_str().unwrap().to_string();
            assert_eq!(
                endpoints.get(&route).and_then(Value::as_str),
                e["does"].as_str(),
                "{route}"
            );
            explained.push(route);
        }
    }
    for route in endpoints.keys() {
        let self_description = [
            "GET /api",
            "GET /help",
            "GET /write_for_agents",
            "GET /copy_for_agents",
            "GET /releases",
        ]
        .iter()
        .any(|p| route.starts_with(p));
        assert!(
            self_description || explained.contains(route),
            "{route} is in /api but in no /help topic"
        );
    }
    assert!(endpoints.keys().any(|k| k == "GET /help/<topic>"));
}

#[test]
fn errors_and_limits_in_help_match_the_contract() {
    // A configured limit must show as configured, not as the default.
    let s = Server::with_env(&[("STORE_POOL_BYTES", "7340032")]);
    let api = json(&mut s.get("/api"));
    let mut res = s.get("/help/errors");
    assert_eq!(res.status(), 200);
    let errors = text(&mut res);
    for (code, info) in api["errors"].as_object().unwrap() {
        let line = format!("{} {code}", info["http"]);
        assert!(errors.contains(&line), "{line} missing from /help/errors");
        assert!(errors.contains(info["meaning"].as_str().unwrap()), "{code}");
    }
    let limits = json(&mut s.get("/help/limits"))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(api["limits"]["pool_bytes"], 7_340_032);
    assert!(
        limits.contains("| store pool | 7 MiB (7340032 bytes) |"),
        "{limits}"
    );
    for key in [
        "file_bytes_max",
        "import_bytes_max",
        "pics_upload_bytes_max",
        "pics_pool_bytes",
        "pics_target_bytes",
    ] {
        let n = api["limits"][key].as_u64().unwrap();
        assert!(limits.contains(&format!("({n} bytes)")), "{key}={n}");
    }
    for key in [
        "comment_name_chars_max",
        "comment_text_chars_max",
        "comments_per_gallery_max",
        "history_limit",
        "pics_downscale_px",
        "files_per_container_max",
        "browse_results_max",
    ] {
        let n = api["limits"][key].as_u64().unwrap().to_string();
        assert!(limits.contains(&n), "{key}={n}");
    }
    let files = json(&mut s.get("/help/files"))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(files.contains(&format!("({} bytes)", api["max_file_bytes"])));
    assert!(files.contains("4h"), "the default ttl");
}

#[test]
fn agent_instructions_carry_this_servers_base_url() {
    let s = Server::start();
    for path in ["/write_for_agents", "/copy_for_agents"] {
        let mut res = s.get(path);
        assert_eq!(res.status(), 200);
        assert!(header(&res, "content-type").starts_with("text/markdown"));
        let body = text(&mut res);
        assert!(body.contains(&format!("'{}/", s.base)), "{path}: {body}");
        assert!(body.contains("curl "), "{path}");
    }
    // The upload example in /write_for_agents works as written.
    let doc = text(&mut s.get("/write_for_agents"));
    assert!(doc.contains(&format!(
        "curl --data-binary @report.md '{}/?name=report.md'",
        s.base
    )));
    let made = s.upload("report.md", b"# hi\n");
    assert!(made["url"].as_str().unwrap().starts_with(&s.base));
}

#[test]
fn releases_are_markdown_for_agents_and_html_for_browsers() {
    let s = Server::start();
    let version = json(&mut s.get("/api"))["version"]
        .as_str()
        .unwrap()
        .to_string();
    let mut res = s.get("/releases");
    assert_eq!(res.status(), 200);
    assert!(header(&res, "content-type").starts_with("text/markdown"));
    let md = text(&mut res);
    let first = md
        .lines()
        .find_map(|l| l.strip_prefix("## "))
        .expect("a release heading");
    assert_eq!(first, version, "the newest release is the /api version");
    for v in ["1.11.0", "1.38.1", "1.43.0", "1.54.1"] {
        assert!(md.contains(&format!("## {v}")), "{v}");
    }
    let mut res = s.get_with("/releases", &[BROWSER]);
    assert!(header(&res, "content-type").starts_with("text/html"));
    let html = text(&mut res);
    assert!(
        html.contains(&format!("<h2>{version}</h2>")),
        "rendered markdown"
    );
    let mut res = s.get_with("/help", &[BROWSER]);
    assert!(text(&mut res).contains("href=\"/help/galleries\""));
}

#[test]
fn agents_at_home_get_a_pointer_to_api_and_help() {
    let s = Server::start();
    let home = json(&mut s.get("/"));
    assert_eq!(home["api"], format!("{}/api", s.base));
    assert_eq!(home["help"], format!("{}/help", s.base));
    assert!(home["upload"].as_str().unwrap().starts_with("curl "));
}

#[test]
fn every_route_is_in_api_openapi_and_a_help_topic() {
    // The route table is the one source; each of the three views of it
    // must show every route (issue 16).
    let s = Server::start();
    let api = json(&mut s.get("/api"));
    let openapi = json(&mut s.get("/openapi.json"));
    assert_eq!(openapi["openapi"], "3.1.0");
    assert_eq!(openapi["servers"][0]["url"], s.base.as_str());
    let mut explained: Vec<String> = Vec::new();
    for t in json(&mut s.get("/help"))["topics"].as_array().unwrap() {
        if t["topic"] == "errors" {
            continue;
        }
        let page = json(&mut s.get(&format!("/help/{}", t["topic"].as_str().unwrap())));
        for e in page["endpoints"].as_array().unwrap() {
            explained.push(e["endpoint"].as_str().unwrap().to_string());
        }
    }
    for r in store_wire::routes::ROUTES {
        let usage = r.usage();
        let does = r.describe(&store_core::Limits::default());
        assert_eq!(api["endpoints"][&usage], does.as_str(), "{usage} in /api");
        let op = &openapi["paths"][r.path][r.verb.as_str().to_ascii_lowercase()];
        let id = op["operationId"].as_str().unwrap_or_default();
        assert!(
            id.split("_or_").any(|n| n == r.name),
            "{usage} in /openapi.json"
        );
        assert!(explained.contains(&usage), "{usage} in no /help topic");
    }
}

#[test]
fn conflicting_keywords_are_refused_and_do_nothing() {
    // `?retain=1&tag=a` once retained and dropped the tag in silence.
    let s = Server::start();
    let r = s.upload("a.txt", b"a");
    let id = r["id"].as_str().unwrap();
    let mut res = s.post(&format!("/{id}?retain=1&tag=a"), b"");
    assert_error(&mut res, 400, "bad_request");
    let info = json(&mut s.get(&format!("/{id}?info=1")));
    assert_eq!(info["tags"], serde_json::json!([]));
    assert_error(
        &mut s.post("/?dir=1&url=http://example.com/", b""),
        400,
        "bad_request",
    );
    assert_error(&mut s.post(&format!("/{id}"), b""), 400, "bad_request");
}

/// The self-description's bytes, pinned before the wire contract moves
/// into a crate of its own (issue 32): `/api` and `/openapi.json` must come
/// out the same, byte for byte, with the base URL written as
/// `http://BASE`. A change meant to alter them rewrites the copies with
/// scripts/golden (`STORE_UPDATE_GOLDEN=1`), and the diff shows in review.
#[test]
fn api_and_openapi_match_their_golden_copies() {
    let s = Server::start();
    let dir = repo("fixtures/golden");
    let update = std::env::var_os("STORE_UPDATE_GOLDEN").is_some_and(|v| v == "1");
    for (path, file) in [("/api", "api.json"), ("/openapi.json", "openapi.json")] {
        let body = text(&mut s.get(path)).replace(&s.base, "http://BASE");
        let golden = dir.join(file);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&golden, &body).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden).expect("fixtures/golden (scripts/golden)");
        let first = body
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map(|i| format!("line {}: {:?}", i + 1, body.lines().nth(i)));
        assert!(
            body == want,
            "{path} differs from fixtures/golden/{file} ({}); if the change is meant, run scripts/golden",
            first.unwrap_or_else(|| "in length".into())
        );
    }
}

/// `/llms.txt` (issue 35, llmstxt.org): a title, a one-line summary in a
/// blockquote, this server's own limits and token rule, and link lists
/// whose every link answers here.
#[test]
fn llms_txt_summarises_this_server_and_every_link_answers() {
    let s = Server::with_env(&[
        ("STORE_MAX_FILE_BYTES", "7340032"),
        ("STORE_UPLOAD_TOKEN", "a-token"),
    ]);
    let mut res = s.get("/llms.txt");
    assert_eq!(res.status(), 200);
    assert!(header(&res, "content-type").starts_with("text/markdown"));
    let body = text(&mut res);
    let mut lines = body.lines();
    assert_eq!(
        lines.next(),
        Some(format!("# storesrv at {}", s.base).as_str())
    );
    assert_eq!(lines.next(), Some(""));
    assert!(lines.next().unwrap().starts_with("> "), "{body}");
    assert!(
        body.contains("files up to 7 MiB"),
        "this server's limit: {body}"
    );
    assert!(
        body.contains("Authorization: Bearer"),
        "its token rule: {body}"
    );
    for section in ["## Docs", "## Help topics", "## Optional"] {
        assert!(body.contains(section), "{section} in {body}");
    }
    let links: Vec<&str> = body
        .split("](")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap())
        .collect();
    assert!(links.len() > 10, "{links:?}");
    for link in links {
        let path = link.strip_prefix(&s.base).expect("links use the base URL");
        assert_eq!(s.get(path).status(), 200, "{link}");
    }
}
