#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 600), one after the
# other, under a memory limit, and appends a line per target to
# fuzz/results.log. A crash stops that target and leaves its input in
# fuzz/artifacts/<target>/; turn it into a regression test under cargo test.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-600}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo +nightly fuzz build -O
mkdir -p corpus
for target in $(cargo +nightly fuzz list); do
    mkdir -p "corpus/$target"
    started=$(date +%s)
    log="/tmp/fuzz-$target.log"
    cargo +nightly fuzz run -O "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 >"$log" 2>&1
    status=$?
    elapsed=$(( $(date +%s) - started ))
    runs=$(grep -oE '#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    verdict=$([ $status -eq 0 ] && echo "no crash" || echo "CRASH (exit $status, see $log and fuzz/artifacts/$target)")
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $target: ${elapsed}s, ${runs:-?} runs, $verdict" | tee -a results.log
done
