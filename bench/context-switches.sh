#!/usr/bin/env bash
# Context switches per GET of a 1 KiB file, storesrv on sled and on
# PostgreSQL (docs/PERFORMANCE.md, "Records in PostgreSQL"): wrk with 1 and
# 64 connections, and the voluntary and involuntary switches of storesrv's
# and PostgreSQL's threads around each run. Needs the release build, wrk
# and PostgreSQL (as bench/run.sh installs them); run as root.
set -e
cd "$(dirname "$0")/.."
d=$(mktemp -d)
trap 'scripts/pg-cluster stop $d/c' EXIT
PG_CLUSTER_DURABLE=1 scripts/pg-cluster start $d/c > $d/url
url=$(cat $d/url)
taskset -a -cp 0 $(head -1 $d/c/data/postmaster.pid) >/dev/null
psql "$url" -qc "create database prof"
dburl=${url%/postgres}/prof
csw() { local t=0; for p in "$@"; do for f in /proc/$p/task/*/status; do v=$(awk '/ctxt_switches/{s+=$2} END{print s}' $f 2>/dev/null || echo 0); t=$((t+v)); done; done; echo $t; }
pgpids() { pgrep -u postgres | tr '\n' ' '; }
for backend in sled pg; do
  env=""; [ $backend = pg ] && env="STORE_DATABASE_URL=$dburl"
  env STORE_RATE_LIMIT_PER_MIN=0 STORE_CONNECTIONS_PER_IP=0 STORE_REQUESTS_PER_IP=0 $env taskset -c 0 target/release/storesrv --listen 127.0.0.1:0 --data $d/$backend > $d/$backend.ready 2>/dev/null &
  pid=$!; sleep 1
  base=$(sed 's/storesrv listening on //' $d/$backend.ready)
  id=$(curl -s --data-binary @fixtures/notes-utf8.txt "$base/?name=a.txt" | python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])')
  for c in 1 64; do
    b=$(csw $pid $(pgpids))
    out=$(taskset -c 1 wrk -t1 -c$c -d5s "$base/$id")
    a=$(csw $pid $(pgpids))
    n=$(echo "$out" | awk '/requests in/{print $1}')
    lat=$(echo "$out" | awk '/Latency/{print $2}')
    echo "$backend c=$c: $n requests, avg latency $lat, context switches per request $(( (a-b)/n ))"
  done
  kill $pid; wait $pid 2>/dev/null || true
done
