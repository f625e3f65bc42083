#!/usr/bin/env bash
# Durable 1 KiB uploads on the cluster against their anchors (issue 37,
# docs/PERFORMANCE.md "Cluster uploads"): in one run, round by round, for
# each storesrv binary given (before and after a change),
#
#   - a fresh scripts/cluster (PostgreSQL and Garage durable, two storesrv
#     processes, nginx): wrk with 64 connections posting 1 KiB through
#     nginx, and the processor time each part of the cluster spent per
#     upload;
#   - on that cluster's PostgreSQL, pgbench with 64 clients running what
#     PostgreSQL is asked for one upload (bench/upload-statements.sql):
#     the ceiling PostgreSQL itself sets;
#   - on that cluster's Garage, wrk with 64 connections PUTting 1 KiB
#     objects under new keys, presigned (bench/presign.py): the ceiling
#     Garage itself sets;
#   - the same binary on its embedded default (sled and files), the same
#     uploads: what the issue measures the cluster against.
#
# wrk and pgbench run on core 1; everything else may use both cores, as
# the issue's first table was measured. Needs the release build (or the
# binaries named), wrk, pgbench, nginx and Garage, as bench/run.sh
# installs them.
#
#   bench/cluster-uploads.sh [ROUNDS] [SECS] [STORESRV...]
#
# Prints one line per measure and round, then the medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-10}
shift $(( $# < 2 ? $# : 2 ))
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/storesrv)
conns=64
# The benchmark settings storebench gives its servers: one load generator
# stands for many clients, and the pool never fills.
limits=(STORE_CONNECTIONS_PER_IP=0 STORE_REQUESTS_PER_IP=0 STORE_RATE_LIMIT_PER_MIN=0
    STORE_POOL_BYTES=1000000000000)

d=$(mktemp -d)
stop_all() {
    [ -n "${srv:-}" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
    [ -d "$d/c" ] && scripts/cluster stop "$d/c" >/dev/null 2>&1
    rm -rf "$d"
}
trap stop_all EXIT

cat >"$d/upload.lua" <<'EOF'
wrk.method = "POST"
wrk.body = string.rep("x", 1024)
wrk.path = "/?name=a.txt"
wrk.headers["Accept"] = "application/json"
EOF
# Each request PUTs the next presigned URL of $d/puts.txt.
cat >"$d/put.lua" <<EOF
local paths = {}
for url in io.lines("$d/puts.txt") do paths[#paths + 1] = url:match("^https?://[^/]+(/.*)$") end
local i = 0
request = function()
    i = i + 1
    return wrk.format("PUT", paths[(i % #paths) + 1], nil, string.rep("x", 1024))
end
EOF

# wrk's requests per second (2xx and 3xx only: wrk counts errors apart).
rate() {
    taskset -c 1 wrk -t1 -c$conns -d"${secs}s" "$@" | awk '
        /Non-2xx/ { bad = 1 } /Requests\/sec/ { r = $2 }
        END { if (bad) { print "wrk saw errors" > "/dev/stderr"; exit 1 } print r }'
}

# The processes of the cluster's part $1.
pids_of() {
    local c=$d/c master
    case $1 in
    postgres)
        master=$(head -1 "$c/postgres/data/postmaster.pid")
        echo "$master" $(pgrep -P "$master")
        ;;
    garage) pgrep -f "garage.*$c/garage" ;;
    storesrv) cat "$c"/storesrv-*.pid ;;
    nginx)
        master=$(pgrep -f "nginx.*$c/nginx" | head -1)
        echo "$master" $(pgrep -P "$master")
        ;;
    esac
}

# Processor ticks (1/100 s) of the cluster's part $1 so far.
ticks() {
    local t=0 p
    for p in $(pids_of "$1"); do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo $t
}

parts=("postgres" "garage" "storesrv" "nginx")
cluster_round() {
    local round=$1 i=$2 bin=$3
    STORESRV_BIN=$bin env "${limits[@]}" scripts/cluster start "$d/c" >"$d/url" 2>/dev/null
    local url before after n
    url=$(cat "$d/url")
    curl -sf -o /dev/null --data-binary x "$url/?name=warm.txt"
    before=$(for p in "${parts[@]}"; do ticks "$p"; done)
    n=$(rate -s "$d/upload.lua" "$url")
    after=$(for p in "${parts[@]}"; do ticks "$p"; done)
    echo "round $round $bin: cluster uploads $n/s"
    echo "cluster$i $n" >>"$results"
    paste <(echo "${parts[*]}" | tr ' ' '\n') <(echo "$before") <(echo "$after") |
        while read -r part b a; do
            us=$(python3 -c "print(round(($a - $b) * 10000 / ($n * $secs)))")
            echo "round $round $bin:   $part ${us} us of processor per upload"
            echo "cpu$i-$part $us" >>"$results"
        done
    n=$(taskset -c 1 pgbench -n -M prepared -c $conns -j 1 -T "$secs" \
        -f bench/upload-statements.sql "$(cat "$d/c/database.url")" 2>/dev/null |
        awk '/^tps/{print int($3)}')
    echo "round $round: pgbench, an upload's statements: $n/s"
    echo "pgbench$i $n" >>"$results"
    (
        . "$d/c/s3.env"
        python3 bench/presign.py "$STORE_S3_ENDPOINT" "$STORE_S3_REGION" \
            "$STORE_S3_ACCESS_KEY_ID" "$STORE_S3_SECRET_ACCESS_KEY" \
            "/$STORE_S3_BUCKET/anchor-$round" PUT 100000 >"$d/puts.txt"
        echo "$STORE_S3_ENDPOINT" >"$d/s3.url"
    )
    n=$(rate -s "$d/put.lua" "$(cat "$d/s3.url")")
    echo "round $round: presigned PUTs of 1 KiB to Garage: $n/s"
    echo "garage $n" >>"$results"
    scripts/cluster stop "$d/c" >/dev/null 2>&1
}

sled_round() {
    local round=$1 i=$2 bin=$3 port n
    port=$(scripts/free-port)
    env "${limits[@]}" "$bin" --listen "127.0.0.1:$port" --data "$d/sled-$round-$i" \
        >"$d/sled.log" 2>&1 &
    srv=$!
    for _ in $(seq 100); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break
        sleep 0.1
    done
    n=$(rate -s "$d/upload.lua" "http://127.0.0.1:$port")
    echo "round $round $bin: sled + files uploads $n/s"
    echo "sled$i $n" >>"$results"
    kill "$srv" && wait "$srv" 2>/dev/null || true
    srv=
}

results=$d/results
: >"$results"
for round in $(seq 1 "$rounds"); do
    i=0
    for bin in "${bins[@]}"; do
        i=$((i + 1))
        cluster_round "$round" "$i" "$bin"
        sled_round "$round" "$i" "$bin"
    done
done

python3 - "$results" "${bins[@]}" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def of(name):
    return [float(v) for k, v in rows if k == name]
med = statistics.median
print(f"presigned PUTs of 1 KiB to Garage, 64 connections: median {med(of('garage')):.0f}/s")
for i, b in enumerate(sys.argv[2:], 1):
    print(f"{b}: pgbench, an upload's statements on its schema, 64 clients: "
          f"median {med(of(f'pgbench{i}')):.0f}/s")
    c, s = of(f"cluster{i}"), of(f"sled{i}")
    ratios = [x / y for x, y in zip(c, s)]
    print(f"{b}: cluster {med(c):.0f}/s, sled + files {med(s):.0f}/s, median ratio "
          f"{med(ratios):.2f}x (rounds {', '.join(f'{r:.2f}' for r in ratios)})")
    cpu = {p: med(of(f"cpu{i}-{p}")) for p in ("postgres", "garage", "storesrv", "nginx")}
    print(f"{b}: processor per upload, median us: " +
          ", ".join(f"{p} {v:.0f}" for p, v in cpu.items()) + f"; sum {sum(cpu.values()):.0f}")
EOF
