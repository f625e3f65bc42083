"""Interop: the official MCP Python SDK (a client no one here wrote) talks
to a running storesrv. It connects by URL, lists the tools, uploads a text
file and a binary one, reads both back, and gets a tool error for a call
the server refuses. Prints one JSON line of what it saw; tests/mcp.rs
checks it.

    python mcp_client.py <base URL>
"""

import asyncio
import base64
import json
import sys

from mcp import Client


async def main(base: str) -> None:
    seen = {}
    async with Client(f"{base}/mcp") as client:
        seen["server"] = client.server_info.name if client.server_info else None
        seen["protocol"] = client.protocol_version
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        made = await client.call_tool(
            "upload_file", {"name": "hello.txt", "content": "hello from python", "tags": ["interop"]}
        )
        seen["upload_error"] = made.is_error
        record = made.structured_content or {}
        seen["upload_url"] = record.get("url")
        got = await client.call_tool("read_file", {"url": record.get("url", "")})
        seen["read_text"] = got.content[0].text if got.content else None
        raw = bytes(range(256))
        made = await client.call_tool(
            "upload_file",
            {"name": "all.bin", "content_base64": base64.b64encode(raw).decode()},
        )
        got = await client.call_tool("read_file", {"id": (made.structured_content or {}).get("id", "")})
        b64 = (got.structured_content or {}).get("content_base64", "")
        seen["binary_round_trip"] = base64.b64decode(b64) == raw
        refused = await client.call_tool("file_info", {"id": "nosuchfile00"})
        seen["refused_error"] = refused.is_error
        seen["refused_text"] = refused.content[0].text if refused.content else None
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
