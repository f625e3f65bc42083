#!/usr/bin/env bash
# Runs cargo-fuzz targets for SECONDS each (default 600), one after the
# other, under a memory limit, and appends a line per target to
# fuzz/results.log. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]; with no
# target, every one. A crash stops that target and leaves its input in
# fuzz/artifacts/<target>/; turn it into a regression test under cargo test.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-600}
shift || true
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
if ! cargo +nightly fuzz build -O; then
    echo "the fuzz targets do not build" >&2
    exit 1
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)
mkdir -p corpus
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    started=$(date +%s)
    log="/tmp/fuzz-$target.log"
    cargo +nightly fuzz run -O "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 >"$log" 2>&1
    status=$?
    elapsed=$(( $(date +%s) - started ))
    runs=$(sed -nE 's/^Done ([0-9]+) runs.*/\1/p' "$log" | tail -n 1)
    if [ $status -eq 0 ]; then
        verdict="no crash"
    elif [ -z "$runs" ] && ! grep -q "ERROR: libFuzzer" "$log"; then
        verdict="DID NOT RUN (exit $status, see $log)"
    else
        verdict="CRASH (exit $status, see $log and fuzz/artifacts/$target)"
    fi
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $target: ${elapsed}s, ${runs:-?} runs, $verdict" | tee -a results.log
done
