#!/usr/bin/env bash
# GETs on PostgreSQL + Garage against their anchors (issue 37,
# docs/PERFORMANCE.md "Cluster reads"): in one run, round by round,
#
#   - `pgbench -S -M prepared -c 64`: primary-key lookups straight from
#     PostgreSQL, what one GET of an immutable object needs;
#   - wrk with 8 connections on a presigned GET of a 5 MiB object straight
#     from Garage (bench/presign.py);
#   - for each storesrv binary given (before and after a change), one
#     storesrv process with its records in that PostgreSQL and its bytes
#     in Garage: wrk with 64 connections on `GET /<id>` of a 1 KiB file,
#     and with 8 on a 5 MiB file (read once before, so that a disk cache
#     holds it: STORE_DISK_CACHE_BYTES);
#   - the last binary on its embedded default (sled and files), the same
#     5 MiB GET: what the disk cache is measured against;
#
# and the context switches of storesrv's and PostgreSQL's threads per GET.
# PostgreSQL (durable), Garage (durable) and storesrv run on core 0, the
# load generators on core 1; PG_CORES=0,1 lets PostgreSQL run on both
# cores instead (as the issue's first table was measured).
# RATE_LIMIT_PER_MIN sets storesrv's rate limit (0, off, unless given; a
# limit far above what wrk sends measures the check each request makes in
# PostgreSQL, as the default settings do). Needs the
# release build (or the binaries named), wrk, PostgreSQL and Garage, as
# bench/run.sh installs them.
#
#   bench/cluster-reads.sh [ROUNDS] [SECS] [STORESRV...]
#
# Prints one line per measure and round, then the medians and each
# binary's median ratio to pgbench.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-10}
shift $(( $# < 2 ? $# : 2 ))
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/storesrv)
conns=64

d=$(mktemp -d)
stop_all() {
    [ -n "${srv:-}" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
    scripts/garage stop "$d/garage" >/dev/null 2>&1 || true
    scripts/pg-cluster stop "$d/pg" >/dev/null 2>&1 || true
    rm -rf "$d"
}
trap stop_all EXIT

url=$(PG_CLUSTER_DURABLE=1 scripts/pg-cluster start "$d/pg")
taskset -a -cp "${PG_CORES:-0}" "$(head -1 "$d/pg/data/postmaster.pid")" >/dev/null
eval "$(GARAGE_DURABLE=1 scripts/garage start "$d/garage")"
for p in $(pgrep -f "garage.*$d/garage"); do taskset -a -cp 0 "$p" >/dev/null; done
psql "$url" -qc "create database anchor"
anchor=${url%/postgres}/anchor
pgbench -q -i -s 1 "$anchor" >/dev/null 2>&1
head -c $((5 * 1024 * 1024)) /dev/urandom >"$d/5m.bin"
curl -sf -o /dev/null -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    --aws-sigv4 "aws:amz:$STORE_S3_REGION:s3" \
    --user "$STORE_S3_ACCESS_KEY_ID:$STORE_S3_SECRET_ACCESS_KEY" \
    -T "$d/5m.bin" "$STORE_S3_ENDPOINT/$STORE_S3_BUCKET/anchor-5m"
presigned=$(python3 bench/presign.py "$STORE_S3_ENDPOINT" "$STORE_S3_REGION" \
    "$STORE_S3_ACCESS_KEY_ID" "$STORE_S3_SECRET_ACCESS_KEY" "/$STORE_S3_BUCKET/anchor-5m")

csw() {
    local t=0 v f p
    for p in "$@"; do
        for f in /proc/"$p"/task/*/status; do
            v=$(awk '/ctxt_switches/{s+=$2} END{print s+0}' "$f" 2>/dev/null || echo 0)
            t=$((t + v))
        done
    done
    echo "$t"
}
pgpids() { pgrep -u postgres | tr '\n' ' '; }

# start_server BIN DATA [VAR=VALUE...]: storesrv on core 0, with the
# benchmarks' settings and VARs; its pid in srv, its URL in base.
start_server() {
    local bin=$1 data=$2
    shift 2
    env STORE_RATE_LIMIT_PER_MIN="${RATE_LIMIT_PER_MIN:-0}" STORE_CONNECTIONS_PER_IP=0 STORE_REQUESTS_PER_IP=0 "$@" \
        taskset -c 0 "$bin" --listen 127.0.0.1:0 --data "$data" >"$d/out" 2>"$d/log" &
    srv=$!
    until grep -q listening "$d/out" 2>/dev/null; do
        kill -0 "$srv" 2>/dev/null || { tail "$d/log"; exit 1; }
        sleep 0.1
    done
    base=$(sed 's/.*listening on //' "$d/out")
}

stop_server() {
    kill "$srv"
    wait "$srv" 2>/dev/null || true
    srv=
}

# upload FILE NAME: its id.
upload() {
    curl -sf --data-binary @"$1" "$base/?name=$2" |
        python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])'
}

# GET 5 MiB of URL, 8 connections, after one whole read: requests/s.
get_large() {
    curl -sf -o /dev/null "$1"
    taskset -c 1 wrk -t1 -c8 -d"${secs}s" "$1" | awk '/Requests\/sec/{print $2}'
}

results=$d/results
: >"$results"
for round in $(seq 1 "$rounds"); do
    tps=$(taskset -c 1 pgbench -S -M prepared -c $conns -j 1 -T "$secs" "$anchor" 2>/dev/null |
        awk '/^tps/{print int($3)}')
    echo "round $round pgbench $tps"
    echo "pgbench $tps" >>"$results"
    large=$(taskset -c 1 wrk -t1 -c8 -d"${secs}s" "$presigned" | awk '/Requests\/sec/{print $2}')
    echo "round $round presigned GET 5 MiB from Garage: $large/s"
    echo "presigned $large" >>"$results"
    i=0
    for bin in "${bins[@]}"; do
        i=$((i + 1))
        # Each binary gets a fresh database, bucket prefix and data
        # directory.
        psql "$url" -qc "create database store_${round}_$i"
        start_server "$bin" "$d/data-$round-$i" \
            STORE_DATABASE_URL="${url%/postgres}/store_${round}_$i" STORE_S3_PREFIX="r$round-b$i"
        head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$d/1k.txt"
        id=$(upload "$d/1k.txt" a.txt)
        taskset -c 1 wrk -t1 -c$conns -d2s "$base/$id" >/dev/null
        before=$(csw "$srv" $(pgpids))
        out=$(taskset -c 1 wrk -t1 -c$conns -d"${secs}s" "$base/$id")
        after=$(csw "$srv" $(pgpids))
        n=$(echo "$out" | awk '/requests in/{print $1}')
        rps=$(echo "$out" | awk '/Requests\/sec/{print int($2)}')
        non2xx=$(echo "$out" | awk '/Non-2xx/{print $NF}')
        p=$(echo "$out" | awk '/Latency/{print $2}')
        echo "round $round $bin: $rps GET/s, avg $p, $(( (after - before) / n )) switches per GET${non2xx:+, $non2xx non-2xx}"
        echo "bin$i $rps" >>"$results"
        large=$(get_large "$base/$(upload "$d/5m.bin" b.bin)")
        echo "round $round $bin: GET 5 MiB $large/s"
        echo "large$i $large" >>"$results"
        stop_server
    done
    start_server "$bin" "$d/sled-$round"
    large=$(get_large "$base/$(upload "$d/5m.bin" b.bin)")
    echo "round $round sled + files: GET 5 MiB $large/s"
    echo "sled $large" >>"$results"
    stop_server
done

python3 - "$results" "${bins[@]}" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def of(name):
    return [float(v) for k, v in rows if k == name]
def line(what, got, anchor, unit):
    ratios = [x / y for x, y in zip(got, anchor)]
    print(f"{what}: median {statistics.median(got):.0f} {unit}, median ratio "
          f"{statistics.median(ratios):.2f}x (rounds {', '.join(f'{r:.2f}' for r in ratios)})")
pg, presigned = of("pgbench"), of("presigned")
print(f"pgbench -S -M prepared -c 64: median {statistics.median(pg):.0f} tps")
print(f"presigned GET 5 MiB from Garage, 8 connections: median {statistics.median(presigned):.1f}/s")
for i, b in enumerate(sys.argv[2:], 1):
    line(f"{b} GET 1 KiB / pgbench", of(f"bin{i}"), pg, "GET/s")
    line(f"{b} GET 5 MiB / presigned", of(f"large{i}"), presigned, "GET/s")
    line(f"{b} GET 5 MiB / sled + files", of(f"large{i}"), of("sled"), "GET/s")
EOF
