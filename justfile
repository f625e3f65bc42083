# Recipes for working on storesrv. `just` is optional: each recipe is one
# plain cargo command you can also type yourself (cargo install just).

# Run the server on its embedded default store in ./data.
run:
    cargo run --release -p storesrv

# The whole test suite: unit, property and integration tests, with what
# they need installed first (the README's test command).
test *args:
    scripts/test {{args}}

# Formatting, lints with warnings as errors, the docs as docs.rs would
# build them (warnings as errors), and the architecture invariants.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
    scripts/check-invariants.sh

# Crash safety: 100 rounds of concurrent writes, SIGKILL and restart,
# checking every acknowledged write (docs/RELIABILITY.md keeps the tally).
crash runs="100":
    CRASH_RUNS={{runs}} cargo test --release -p storesrv --test integration crash:: -- --nocapture

# Fuzz every cargo-fuzz target for the given seconds each (nightly).
fuzz seconds="600":
    scripts/fuzz.sh {{seconds}}

# What CI runs.
ci:
    bash .ci/run

# Benchmarks (issue 8): storesrv against nginx on the same bytes, wrk and
# oha pinned to the other core, media against libvips, expiry over 1M
# records. Installs nginx, wrk, libvips-tools and oha if missing. Extra
# arguments go to storebench, e.g. `just bench --only 1,3`.
bench *args:
    bench/run.sh {{args}}

# Two storesrv processes on PostgreSQL and Garage behind nginx, on this one
# machine (issue 14): prints the URL. `just cluster-stop` stops it all.
cluster dir="target/cluster":
    scripts/cluster start {{dir}}

cluster-stop dir="target/cluster":
    scripts/cluster stop {{dir}}
