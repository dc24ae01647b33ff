#!/usr/bin/env bash
# Soak test of the plugin (tests/soak.rs): a long random life of a few hundred colliders in
# 2D and 3D, checking the event stream and the tree after every tick.
#
#   scripts/soak.sh [TICKS] [extra test-harness args...]
#
# TICKS defaults to $SOAK_TICKS, else 100000 (a few minutes in release). The tests are
# #[ignore]d, so a plain `cargo test --all-features` only compiles them. The test needs only
# the `plugin` feature: SOAK_FEATURES="--features plugin" skips building the debug overlay
# and the examples' rendering stack (default: --all-features).
set -euo pipefail

cd "$(dirname "$0")/.."
export SOAK_TICKS="${1:-${SOAK_TICKS:-100000}}"
shift || true

echo "== soak: ${SOAK_TICKS} ticks per dimension (release)"
time cargo test --release ${SOAK_FEATURES:---all-features} --test soak -- --ignored --nocapture --test-threads 1 "$@"
