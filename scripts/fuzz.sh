#!/usr/bin/env bash
# Fuzzes the dynamic tree: random sequences of tree operations (fuzz/fuzz_targets/tree_ops.rs)
# against a brute-force oracle, for SECONDS seconds (default 300).
#
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
#
# cargo-fuzz needs nightly flags (-Zsanitizer=address, ...); on a stable toolchain they
# are unlocked with RUSTC_BOOTSTRAP=1. Set FUZZ_SANITIZER=none to build without the
# address sanitizer (faster, still catches panics). The corpus lives in fuzz/corpus/tree_ops
# and crashes in fuzz/artifacts/tree_ops (both git-ignored); reproduce one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run tree_ops fuzz/artifacts/tree_ops/crash-...
# and shrink it with `cargo fuzz tmin tree_ops <file>`.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${1:-300}"
shift || true

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz
fi

export RUSTC_BOOTSTRAP=1
sanitizer="${FUZZ_SANITIZER:-address}"
mkdir -p fuzz/corpus/tree_ops
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

echo "== fuzzing tree_ops for ${seconds} s (sanitizer: ${sanitizer})"
status=0
(cd fuzz && cargo fuzz run --sanitizer "$sanitizer" tree_ops -- \
    -max_total_time="$seconds" -print_final_stats=1 "$@") 2>&1 | tee "$log" || status=$?

echo "== summary"
grep -E '^(Done|stat::|#[0-9]+ +DONE)' "$log" || true
echo "corpus: $(find fuzz/corpus/tree_ops -type f | wc -l) inputs"
if [ -d fuzz/artifacts/tree_ops ] && [ -n "$(ls -A fuzz/artifacts/tree_ops 2>/dev/null)" ]; then
    echo "artifacts (crashes):"
    ls -l fuzz/artifacts/tree_ops
fi
exit "$status"
