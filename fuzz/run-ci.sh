#!/usr/bin/env bash
# Runs every fuzz target for a short bounded time on the seed corpus drawn
# from tests/corpus/ (see README.md here). Installs cargo-fuzz when it is
# missing. cargo-fuzz needs a nightly compiler: RUSTC_BOOTSTRAP=1 lets the
# stable one accept the flags. Fails when a target finds a crash; the input
# is left in fuzz/artifacts/<target>/.
#
#   FUZZ_SECONDS=20 fuzz/run-ci.sh            # seconds per target
#   fuzz/run-ci.sh analysis lsp_server        # some targets only
set -euo pipefail
cd "$(dirname "$0")"
seconds="${FUZZ_SECONDS:-20}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(normalize_fixed directives analysis lsp_transport lsp_server)
fi
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi
./seed-corpus.sh
# No sanitizer: the targets are safe Rust, and cargo fuzz does not
# instrument tree-sitter's C code anyway; this halves the build. Debug
# assertions (and so overflow checks) stay on.
options=(--sanitizer none --debug-assertions --release)
# A short smoke run gains less from full optimisation than the build loses
# to it (14 min at opt-level 3 with debug info on a loaded 2-core machine):
# opt-level 1 and line tables unless the caller chose otherwise.
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-1}"
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
start=$(date +%s)
cargo fuzz build "${options[@]}"
echo "fuzz: built in $(( $(date +%s) - start )) s"
status=0
for target in "${targets[@]}"; do
    echo "fuzz: $target for ${seconds} s"
    log="$(mktemp)"
    code=0
    cargo fuzz run "${options[@]}" "$target" -- \
        -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 >"$log" 2>&1 || code=$?
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' "$log" || true
    if [ "$code" -ne 0 ]; then
        grep -E -A12 'panicked|^==[0-9]+==|SUMMARY' "$log" | head -60 || true
        echo "fuzz: $target FAILED (input in fuzz/artifacts/$target/)"
        status=1
    fi
    rm -f "$log"
done
echo "fuzz: done in $(( $(date +%s) - start )) s"
exit $status
