#!/usr/bin/env bash
# The benchmark suite (issue 8): installs what a fresh machine lacks, builds
# the release server and the harness, and runs every scenario. Arguments go
# to storebench (e.g. --only 1,3 --rounds 5 --secs 20 --objects 100000).
# The report is printed and written to bench/results/latest.md; then the
# criterion micro benchmarks run.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v vips >/dev/null 2>&1 || missing+=(libvips-tools)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v oha >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/oha" ]; then
    echo "== installing oha (cargo install; a few minutes, once)"
    # Default features: oha 1.16 does not build without them (its TLS
    # code is not gated), so the issue's --no-default-features cannot be
    # used. The version is pinned so every machine measures with the same
    # load generator.
    cargo install oha --locked --version 1.16.0
fi
if [ "$(nproc)" -lt 2 ]; then
    echo "the suite pins the server and the load generator to different cores: it needs 2" >&2
    exit 1
fi

echo "== building (release)"
cargo build --release -p storesrv -p storebench

mkdir -p bench/results
target/release/storebench --out bench/results/latest.md "$@"

# Criterion micro benchmarks of store-core and store-media (reports in
# target/criterion/). BENCH_MICRO=0 skips them.
if [ "${BENCH_MICRO:-1}" != 0 ]; then
    echo "== micro benchmarks (criterion)"
    cargo bench -p store-core -p store-media --bench core --bench media
fi
