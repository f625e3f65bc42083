#!/usr/bin/env bash
# Where a cluster upload's p99 goes at the rate of scenario 14's mix
# (issue 37, docs/PERFORMANCE.md "a second day"): on one fresh
# scripts/cluster, round by round, each part alone at that rate, so that
# the tail of the whole can be set beside the tails of its parts:
#
#   - storesrv uploads of 1 KiB through nginx, 111/s (oha, 8 connections);
#   - the mix's GETs of 1 KiB, 1,000/s (oha, 16 connections);
#   - presigned PUTs of 1 KiB straight to Garage, 111/s (bench/presign.py);
#   - pgbench running what PostgreSQL is asked for one upload
#     (bench/upload-statements.sql), 111/s, each transaction's time logged.
#
# oha and pgbench run on core 1; the cluster floats on both, as in
# scenario 14. Needs the release build (or STORESRV_BIN), oha, pgbench,
# nginx and Garage, as bench/run.sh installs them.
#
#   bench/upload-tail.sh [ROUNDS] [SECS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-10}
bin=${STORESRV_BIN:-target/release/storesrv}
oha=$(command -v oha || echo "$HOME/.cargo/bin/oha")
limits=(STORE_CONNECTIONS_PER_IP=0 STORE_REQUESTS_PER_IP=0 STORE_RATE_LIMIT_PER_MIN=0
    STORE_POOL_BYTES=1000000000000)

d=$(mktemp -d)
trap 'scripts/cluster stop "$d/c" >/dev/null 2>&1; rm -rf "$d"' EXIT
STORESRV_BIN=$bin env "${limits[@]}" scripts/cluster start "$d/c" >"$d/url" 2>/dev/null
url=$(cat "$d/url")
head -c 1024 /dev/zero | tr '\0' x >"$d/body"

# oha's JSON summary as "p50 ..., p99 ..., rate ...".
tails() {
    python3 -c '
import json, sys
j = json.load(sys.stdin)
p = j["latencyPercentiles"]
print("p50 %.2f ms, p99 %.2f ms, %.0f/s" % (p["p50"] * 1000, p["p99"] * 1000, j["summary"]["requestsPerSec"]))'
}
load() { taskset -c 1 "$oha" --no-tui --output-format json -z "${secs}s" "$@" | tails; }

id=$(curl -sf --data-binary @"$d/body" "$url/?name=g.txt" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
put=$(
    . "$d/c/s3.env"
    python3 bench/presign.py "$STORE_S3_ENDPOINT" "$STORE_S3_REGION" \
        "$STORE_S3_ACCESS_KEY_ID" "$STORE_S3_SECRET_ACCESS_KEY" \
        "/$STORE_S3_BUCKET/tail-probe" PUT
)
for round in $(seq "$rounds"); do
    echo "round $round: storesrv uploads through nginx, 111/s: $(load -q 111 -c 8 -m POST -D "$d/body" "$url/?name=a.txt")"
    echo "round $round: GETs of 1 KiB through nginx, 1000/s: $(load -q 1000 -c 16 "$url/$id")"
    echo "round $round: presigned PUTs to Garage, 111/s: $(load -q 111 -c 8 -m PUT -D "$d/body" "$put")"
    (
        cd "$d"
        taskset -c 1 pgbench -n -M prepared -c 8 -j 1 -R 111 -T "$secs" -l \
            -f "$OLDPWD/bench/upload-statements.sql" "$(cat c/database.url)" >/dev/null 2>&1
        # The third field of pgbench's log is each transaction's time, in us.
        awk '{print $3 / 1000}' pgbench_log.* | sort -n | awk '{a[NR] = $1}
            END {printf "round '"$round"': an upload'"'"'s statements on PostgreSQL, 111/s: p50 %.2f ms, p99 %.2f ms, %d transactions\n",
                a[int(NR * 0.5)], a[int(NR * 0.99)], NR}'
        rm -f pgbench_log.*
    )
done
