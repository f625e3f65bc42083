#!/usr/bin/env bash
# GET 1 KiB on PostgreSQL + Garage against its anchor (issue 37,
# docs/PERFORMANCE.md "Cluster reads"): in one run, round by round,
#
#   - `pgbench -S -M prepared -c 64`: primary-key lookups straight from
#     PostgreSQL, what one GET of an immutable object needs;
#   - wrk with 64 connections on `GET /<id>` of a 1 KiB file, from one
#     storesrv process with its records in that PostgreSQL and its bytes in
#     Garage, for each storesrv binary given (before and after a change);
#
# and the context switches of storesrv's and PostgreSQL's threads per GET.
# PostgreSQL (durable), Garage (durable) and storesrv run on core 0, the
# load generators on core 1. Needs the release build (or the binaries
# named), wrk, PostgreSQL and Garage, as bench/run.sh installs them.
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
taskset -a -cp 0 "$(head -1 "$d/pg/data/postmaster.pid")" >/dev/null
eval "$(GARAGE_DURABLE=1 scripts/garage start "$d/garage")"
for p in $(pgrep -f "garage.*$d/garage"); do taskset -a -cp 0 "$p" >/dev/null; done
psql "$url" -qc "create database anchor"
anchor=${url%/postgres}/anchor
pgbench -q -i -s 1 "$anchor" >/dev/null 2>&1

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

results=$d/results
: >"$results"
for round in $(seq 1 "$rounds"); do
    tps=$(taskset -c 1 pgbench -S -M prepared -c $conns -j 1 -T "$secs" "$anchor" 2>/dev/null |
        awk '/^tps/{print int($3)}')
    echo "round $round pgbench $tps"
    echo "pgbench $tps" >>"$results"
    i=0
    for bin in "${bins[@]}"; do
        i=$((i + 1))
        # Each binary gets a fresh database, bucket prefix and data
        # directory.
        psql "$url" -qc "create database store_${round}_$i"
        env STORE_DATABASE_URL="${url%/postgres}/store_${round}_$i" STORE_S3_PREFIX="r$round-b$i" \
            STORE_RATE_LIMIT_PER_MIN=0 STORE_CONNECTIONS_PER_IP=0 STORE_REQUESTS_PER_IP=0 \
            taskset -c 0 "$bin" --listen 127.0.0.1:0 --data "$d/data-$round-$i" \
            >"$d/out" 2>"$d/log" &
        srv=$!
        until grep -q listening "$d/out" 2>/dev/null; do
            kill -0 "$srv" 2>/dev/null || { tail "$d/log"; exit 1; }
            sleep 0.1
        done
        base=$(sed 's/.*listening on //' "$d/out")
        id=$(head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 |
            curl -sf --data-binary @- "$base/?name=a.txt" |
            python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])')
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
        kill "$srv"
        wait "$srv" 2>/dev/null || true
        srv=
    done
done

python3 - "$results" "${bins[@]}" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
pg = [int(v) for k, v in rows if k == "pgbench"]
print(f"pgbench -S -M prepared -c 64: median {statistics.median(pg):.0f} tps")
for i, b in enumerate(sys.argv[2:], 1):
    g = [int(v) for k, v in rows if k == f"bin{i}"]
    ratios = [x / y for x, y in zip(g, pg)]
    print(f"{b}: median {statistics.median(g):.0f} GET/s, "
          f"median ratio to pgbench {statistics.median(ratios):.2f}x "
          f"(rounds {', '.join(f'{r:.2f}' for r in ratios)})")
EOF
