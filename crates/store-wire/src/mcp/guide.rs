//! How an agent host adds this server: the text of `/help/agents`, and the
//! client configuration snippet `/write_for_agents` and `/llms.txt` show,
//! with this server's URL and its tools' names from the tool table.

use store_app::AppConfig;

use super::tools::TOOLS;
use crate::router::{url_for, RouteId};

/// The JSON an MCP client's configuration takes (the `mcpServers` form
/// most hosts read), with the upload token's header where uploads need it.
pub fn client_snippet(config: &AppConfig) -> String {
    let url = url_for(&config.base_url, RouteId::Mcp, &[]);
    let headers = if config.upload_token.is_required() {
        ",\n      \"headers\": { \"Authorization\": \"Bearer <UPLOAD_TOKEN>\" }"
    } else {
        ""
    };
    format!(
        "{{\n  \"mcpServers\": {{\n    \"storesrv\": {{\n      \"type\": \"http\",\n      \"url\": \"{url}\"{headers}\n    }}\n  }}\n}}"
    )
}

/// `/help/agents`.
pub fn agents_text(config: &AppConfig) -> String {
    let b = &config.base_url;
    let url = url_for(b, RouteId::Mcp, &[]);
    let mut tools = String::new();
    for t in TOOLS {
        tools.push_str(&format!("- `{}`: {}\n", t.name, t.says));
    }
    format!(
        "An agent host that speaks the Model Context Protocol (a desktop assistant, an IDE, a hosted agent) can use this server without a shell: add it by its URL, `{url}`. The transport is Streamable HTTP, stateless: every message is one POST answered in JSON, no session is kept, and any process of a cluster answers. `GET {url}` answers 405: the server never sends anything unasked.\n\n\
## Add it to a client\n\n\
```json\n{snippet}\n```\n\n\
With Claude Code: `claude mcp add --transport http storesrv {url}`.\n\n\
## Tools\n\n\
Each tool calls one endpoint of {b}/api and answers the same JSON record; its arguments are that endpoint's parameters (`tags` for `tag=`, `owner_token` for `owner=`), its description the same text. `tools/list` has the schemas.\n\n\
{tools}\n\
## Rules\n\n\
- Text goes in `content`, other bytes in `content_base64`; `read_file` answers text as text and other bytes in base64. The same size limits apply as over plain HTTP.\n\
- A refused call is a tool error (`isError: true`) whose text starts with the HTTP status and the error code, as in `HTTP 404 not_found: ...`; {b}/help/errors lists them.\n\
- The rate limit counts each MCP request as one request. Where uploads need the upload token, send it as `Authorization: Bearer` on the MCP requests; owner and write tokens are tool arguments.\n\
- Without MCP, the same with curl: {b}/write_for_agents.\n",
        snippet = client_snippet(config),
    )
}
