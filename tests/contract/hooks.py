"""schemathesis hooks for storesrv's contract run (scripts/contract).

A resumable upload's bytes (tus) travel as application/offset+octet-stream,
a media type schemathesis has no generator for: it gets short binary
bodies, as application/octet-stream does.
"""

from hypothesis import strategies as st
import schemathesis

schemathesis.openapi.media_type(
    "application/offset+octet-stream", st.binary(max_size=64)
)
