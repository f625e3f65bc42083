//! Scenario 17 (issue 35): what MCP costs over plain HTTP, in one run on
//! one server: an `upload_file` of 1 KiB (base64 in a JSON-RPC message)
//! against `POST /?name=` of the same 1 KiB, and a `read_file` of a 1 KiB
//! text file against `GET /<id>`, 64 connections each, in turns. The
//! issue allows each MCP call at most 1.5x the plain request's cost: its
//! rate at least 1/1.5 of the plain one.

use base64::Engine as _;

use crate::scenarios::fresh_with;
use crate::tools::{self, median, Storesrv};
use crate::{Bench, Row};

const KIB: usize = 1024;
/// The most an MCP call may cost, as a multiple of the plain request.
const COST_MAX: f64 = 1.5;

/// Runs the scenario; answers its rows.
pub fn scenarios(bench: &Bench) -> Vec<Row> {
    let run = fresh_with(bench, "mcp", Storesrv::start);
    let (s, dir) = (&run.s, run.dir.0.clone());
    let text = "x".repeat(KIB);
    let path = s.upload("read.txt", text.as_bytes());
    let id = path.trim_start_matches('/');
    let b64 = base64::engine::general_purpose::STANDARD.encode(vec![b'y'; KIB]);
    let upload = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"upload_file","arguments":{{"name":"small.bin","content_base64":"{b64}"}}}}}}"#
    );
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"read_file","arguments":{{"id":"{id}"}}}}}}"#
    );
    let mcp = format!("{}/mcp", s.base);
    let (mut up, mut get) = (Vec::new(), Vec::new());
    for round in 0..bench.rounds {
        let plain_up = tools::wrk(
            &dir,
            &format!("{}/?name=small.bin", s.base),
            64,
            bench.secs,
            "POST",
            KIB,
        );
        let mcp_up = tools::wrk_json(&dir, &mcp, 64, bench.secs, "upload", &upload);
        let plain_get = tools::wrk(&dir, &format!("{}{path}", s.base), 64, bench.secs, "GET", 0);
        let mcp_get = tools::wrk_json(&dir, &mcp, 64, bench.secs, "read", &read);
        for r in [&plain_up, &mcp_up, &plain_get, &mcp_get] {
            assert_eq!(r.errors, 0.0, "storesrv refused requests in scenario 17");
        }
        println!(
            "  17 round {round}: upload plain {:.0}/s, MCP {:.0}/s; read plain {:.0}/s, MCP {:.0}/s",
            plain_up.rps(),
            mcp_up.rps(),
            plain_get.rps(),
            mcp_get.rps()
        );
        up.push((plain_up.rps(), mcp_up.rps()));
        get.push((plain_get.rps(), mcp_get.rps()));
    }
    vec![
        row("upload_file of 1 KiB / POST /?name=", &up),
        row("read_file of 1 KiB / GET /<id>", &get),
    ]
}

/// A row: the median of the per-round cost ratios (plain rate over MCP
/// rate: how many plain requests one MCP call costs).
fn row(what: &str, rounds: &[(f64, f64)]) -> Row {
    let cost = median(rounds.iter().map(|(plain, mcp)| plain / mcp).collect());
    let plain = median(rounds.iter().map(|r| r.0).collect());
    let mcp = median(rounds.iter().map(|r| r.1).collect());
    Row::new(
        "17",
        format!("MCP {what}, 64 connections: cost of one call in plain requests"),
        format!("{cost:.2}x ({mcp:.0} vs {plain:.0} req/s)"),
        "<= 1.5x",
        Some(cost <= COST_MAX),
    )
}
