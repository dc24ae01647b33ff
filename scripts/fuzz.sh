#!/usr/bin/env bash
# Fuzzes the dynamic tree: random sequences of tree operations (fuzz/fuzz_targets/tree_ops.rs)
# against a brute-force oracle, for SECONDS seconds (default 300).
#
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
#
# It builds the target with libFuzzer's coverage instrumentation itself (the flags
# cargo-fuzz passes), so it needs no `cargo install`. The sanitizer flag is a nightly one;
# on a stable toolchain it is unlocked with RUSTC_BOOTSTRAP=1. Set FUZZ_SANITIZER=none to
# build without the address sanitizer (faster, still catches panics). The corpus lives in
# fuzz/corpus/tree_ops and crashes in fuzz/artifacts/tree_ops (both git-ignored); a crash
# replays with the same binary:
#   fuzz/target/<host>/release/tree_ops fuzz/artifacts/tree_ops/crash-...
# (`cargo fuzz tmin tree_ops <file>` shrinks one, where cargo-fuzz is installed).
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${1:-300}"
shift || true

export RUSTC_BOOTSTRAP=1
sanitizer="${FUZZ_SANITIZER:-address}"
host="$(rustc -vV | sed -n 's/^host: //p')"
flags="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
flags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions"
[ "$sanitizer" = none ] || flags+=" -Zsanitizer=$sanitizer"

echo "== building tree_ops with coverage instrumentation (sanitizer: ${sanitizer})"
# --target keeps the flags off build scripts and proc macros (as cargo-fuzz does).
RUSTFLAGS="$flags" cargo build --quiet --manifest-path fuzz/Cargo.toml --release \
    --target "$host" --bin tree_ops

mkdir -p fuzz/corpus/tree_ops fuzz/artifacts/tree_ops
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

echo "== fuzzing tree_ops for ${seconds} s"
status=0
"fuzz/target/$host/release/tree_ops" -artifact_prefix=fuzz/artifacts/tree_ops/ \
    -max_total_time="$seconds" -print_final_stats=1 "$@" fuzz/corpus/tree_ops 2>&1 |
    tee "$log" || status=$?

echo "== summary"
grep -E '^(Done|stat::|#[0-9]+ +DONE)' "$log" || true
echo "corpus: $(find fuzz/corpus/tree_ops -type f | wc -l) inputs"
if [ -n "$(ls -A fuzz/artifacts/tree_ops 2>/dev/null)" ]; then
    echo "artifacts (crashes):"
    ls -l fuzz/artifacts/tree_ops
fi
exit "$status"
