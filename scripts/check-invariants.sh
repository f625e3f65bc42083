#!/usr/bin/env bash
# Checks mechanically the invariants of docs/ARCHITECTURE.md that name it
# as their check: which crate may depend on what, no blocking-pool thread
# waiting for a client, route paths and parameter names only in the wire,
# URLs and JSON only in store-wire, no import circles, short functions, and
# the rest below. Exits non-zero on the first breach.
set -euo pipefail
cd "$(dirname "$0")/.."

# deps CRATE: the crate's normal (non-dev) dependency closure, one name a line.
deps() {
    cargo tree -p "$1" -e normal --prefix none --format '{p}' | awk '{print $1}' | sort -u
}

forbid() {
    local crate=$1; shift
    local closure
    closure=$(deps "$crate")
    for banned in "$@"; do
        if grep -qx "$banned" <<<"$closure"; then
            echo "invariant broken: $crate depends on $banned (cargo tree -p $crate -e normal -i $banned)" >&2
            exit 1
        fi
    done
}

# The core is pure: no runtime, no HTTP, no database, no image codecs, no OS randomness.
forbid store-core tokio hyper sled image getrandom ureq
# The use cases know the ports, not the adapters or the web. They may use
# store-media, which is pure computation over bytes.
forbid store-app tokio hyper sled ureq store-sled store-http store-wire store-fetch store-pg store-s3 store-clamd
# The test kit is as pure as the core it serves.
forbid store-testkit tokio hyper sled image
# The persistence adapter knows nothing of HTTP or the use cases.
forbid store-sled tokio hyper store-app store-http store-wire
# The PostgreSQL adapter, like sled's, knows the domain only.
forbid store-pg hyper sled store-app store-http store-wire store-sled store-fetch store-s3
# So does the S3 adapter (its HTTP client is its own, to the bucket).
forbid store-s3 sled store-app store-http store-wire store-sled store-fetch store-pg
# The runtime bridge serves adapters and knows none of them.
forbid store-bridge hyper sled store-app store-http store-wire store-sled store-pg store-s3 store-fetch
# The fetcher is a blocking adapter of one port: no runtime, no storage, no web server.
forbid store-fetch tokio hyper sled store-app store-http store-wire store-sled
# The virus scanner is a blocking adapter of one port, over a socket.
forbid store-clamd tokio hyper sled ureq store-app store-http store-wire store-sled store-fetch store-pg store-s3
# The media pipeline is pure computation over bytes.
forbid store-media tokio hyper sled ureq store-core store-app store-http store-wire store-sled store-fetch
# The wire contract is pure (issue 32): no runtime, no server, no storage,
# no client; the server depends on it, never the other way round.
forbid store-wire tokio hyper hyper-util sled ureq store-http store-sled store-pg store-s3 store-fetch store-bridge
# The HTTP shell reaches storage only through the ports.
forbid store-http sled store-sled store-pg store-s3 ureq store-fetch store-clamd
# No thread of the blocking pool waits for a client (issue 19): nothing in
# the HTTP shell blocks on a channel, and blocking work is handed to the
# pool only through a lane (lanes.rs), or by the server loop (server.rs).
if grep -rn --include='*.rs' -e 'blocking_send' -e 'blocking_recv' crates/store-http/src >&2; then
    echo "invariant broken: store-http blocks a thread on a channel (see above)" >&2
    exit 1
fi
strays=$(grep -rln --include='*.rs' 'spawn_blocking' crates/store-http/src | grep -v -e 'src/lanes.rs$' -e 'src/server.rs$' || true)
if [ -n "$strays" ]; then
    echo "invariant broken: spawn_blocking outside a lane in: $strays" >&2
    exit 1
fi
# The route table is the only writer of a path (issue 16): outside
# routes.rs and router.rs (store-wire), no production code of the wire or
# the server spells a route's path; it calls router::url_for. (Test
# modules may, and so may the help topics, whose prose shows paths as a
# reader types them.)
route_words='api|help|browse|d|pics|releases|write_for_agents|copy_for_agents|static|robots\.txt|healthz|readyz|openapi\.json'
spelled=$(for f in $(find crates/store-http/src crates/store-wire/src -name '*.rs' ! -name routes.rs ! -name router.rs ! -name help.rs); do
    awk -v f="$f" -v re="\"/($route_words)([/?\"])|\"\\{[^}]*\\}/($route_words)([/?\"])" \
        '/#\[cfg\(test\)\]/ { exit } $0 ~ re { print f ":" FNR ": " $0 }' "$f"
done)
if [ -n "$spelled" ]; then
    echo "invariant broken: a route path spelled outside the route table (use router::url_for):" >&2
    echo "$spelled" >&2
    exit 1
fi
# Handlers read no parameter by name (issue 32): store-wire's params.rs
# reads each endpoint's parameters, typed, and store-http's production
# code names none (no `.get("name")`, `.flag(..)`, `.text(..)`, `.all(..)`,
# `.has(..)` with a literal, and no form field compared by name).
named=$(for f in $(find crates/store-http/src -name '*.rs'); do
    awk -v f="$f" '/#\[cfg\(test\)\]/ { exit }
        /\.(get|has|flag|text|all)\("[a-z_]+"/ || /k == "[a-z_]+"/ { print f ":" FNR ": " $0 }' "$f"
done)
if [ -n "$named" ]; then
    echo "invariant broken: a handler reads a parameter by name (add it to store-wire's params.rs):" >&2
    echo "$named" >&2
    exit 1
fi
# Handlers take their route's parameters from the endpoint (issue 32):
# the router reads them once, typed, as the route table says. Only the
# context (credentials, which any route may carry) and admission read the
# query; a handler hands it on only to merge a form's fields in
# (`params::with_form`), which the router cannot see.
reread=$(grep -rn --include='*.rs' -e 'ctx\.query' crates/store-http/src/handlers \
    | grep -v -e '/ctx\.rs:' -e '/admit\.rs:' -e 'with_form(&ctx\.query' || true)
if [ -n "$reread" ]; then
    echo "invariant broken: a handler reads the query (take the parameters from the endpoint's variant):" >&2
    echo "$reread" >&2
    exit 1
fi
# Only the wire crate knows the wire (issue 16): store-core and store-app
# answer records and outcomes, and store-wire's `views` turn them into
# URLs and JSON. So neither may build a URL from the base URL, nor depend
# on a JSON or JSON Schema crate (store-core's schemars is for the error
# list's and a history action's schema only; store-app has neither).
wire=$(grep -rn --include='*.rs' -e 'base_url' -e 'serde_json' -e 'JsonSchema' crates/store-app/src \
    | grep -v -e '/tests/' -e '/shared_tests\.rs:' -e 'src/lib.rs:' || true)
wire_core=$(grep -rn --include='*.rs' -e 'base_url' crates/store-core/src || true)
if [ -n "$wire$wire_core" ] || grep -q -e '^serde_json' -e '^schemars' crates/store-app/Cargo.toml; then
    echo "invariant broken: URLs or JSON views outside store-wire (return a record or an outcome):" >&2
    echo "$wire$wire_core" >&2
    exit 1
fi
# Fenced writes (issue 31): a use case writes a record only at the
# revision it read (Repository::replace, remove_at). The blind put and
# remove are for tools and tests; in store-app's code (its tests and
# migrate's copying of records aside) neither may appear.
blind=$(grep -rn --include='*.rs' -E '\.(put|remove)\(' crates/store-app/src \
    | grep -E 'repo(\(\))?\s*\.(put|remove)\(|repo\.(put|remove)\(' \
    | grep -v -e '/tests/' -e '/shared_tests\.rs:' -e '/migrate/tests\.rs:' || true)
blind_split=$(grep -rn --include='*.rs' -B1 -E '^\s*\.(put|remove)\(' crates/store-app/src \
    | grep -A1 -E '\.repo$' | grep -E '\.(put|remove)\(' \
    | grep -v -e '/tests/' -e '/shared_tests\.rs' -e '/migrate/tests\.rs' || true)
if [ -n "$blind$blind_split" ]; then
    echo "invariant broken: a blind record write in store-app (load the record, then replace or remove_at at its revision):" >&2
    printf '%s\n%s\n' "$blind" "$blind_split" >&2
    exit 1
fi
# Library crates log through tracing, never to stderr directly: the binary
# orders, formats and batches what reaches the log (tests, and examples,
# which are programs of their own, may print).
printed=$(grep -rn --include='*.rs' 'eprintln!' crates/ | grep -v -e '/tests\.rs:' -e '/tests/' -e '/examples/' || true)
if [ -n "$printed" ]; then
    echo "invariant broken: eprintln! in a library crate (use tracing):" >&2
    echo "$printed" >&2
    exit 1
fi
# No import circles between the modules of a crate (issue 32): a set of
# modules that each reach the others cannot be read, tested or moved one
# at a time (scripts/import-cycles.py names each circle it finds).
if ! circles=$(python3 scripts/import-cycles.py); then
    echo "invariant broken: modules that import each other:" >&2
    echo "$circles" >&2
    exit 1
fi
# The server stays a server (issue 32): store-http holds connections,
# lanes, streams, deadlines and handlers as thin glue, and every wire rule
# lives in store-wire. Its source, tests included, stays under 6,000
# lines; a change that crosses it moves a rule to store-wire first.
http_lines=$(find crates/store-http/src -name '*.rs' -exec cat {} + | wc -l)
if [ "$http_lines" -ge 6000 ]; then
    echo "invariant broken: crates/store-http/src is $http_lines lines, 6000 at most (move wire rules to store-wire)" >&2
    exit 1
fi
# Functions stay short (about 70 lines), unless their doc comment says
# why not ("Long because": a table read best whole).
if ! long=$(python3 scripts/fn-lengths.py); then
    echo "invariant broken: production functions over 80 lines without a \"Long because\" reason:" >&2
    echo "$long" >&2
    exit 1
fi
echo "architecture invariants hold"
