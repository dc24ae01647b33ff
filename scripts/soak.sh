#!/usr/bin/env bash
# Soak test of the plugin (tests/plugin/soak.rs): a long random life of a few hundred colliders in
# 2D and 3D, checking the event stream and the tree after every tick, and the contacts
# against a brute-force oracle every $SOAK_CHECK_EVERY ticks (default 10). Then the random
# static level of tests/plugin/static_levels.rs over many seeds (random_static_scene_many_seeds).
#
#   scripts/soak.sh [TICKS] [extra test-harness args for the soak test...]
#
# TICKS defaults to $SOAK_TICKS, else 100000 (a few minutes in release). These long runs
# are #[ignore]d; every `cargo test` runs the short ones (soak_2d_short, soak_3d_short,
# random_static_scene over a few seeds). The tests need only the `plugin` feature:
# SOAK_FEATURES="--features plugin" skips building the debug overlay and the examples'
# rendering stack (default: --all-features).
set -euo pipefail

cd "$(dirname "$0")/.."
export SOAK_TICKS="${1:-${SOAK_TICKS:-100000}}"
shift || true
export SOAK_CHECK_EVERY="${SOAK_CHECK_EVERY:-10}"

echo "== soak: ${SOAK_TICKS} ticks per dimension, brute-force check every ${SOAK_CHECK_EVERY} (release)"
time cargo test --release ${SOAK_FEATURES:---all-features} --test plugin -- --ignored --nocapture --test-threads 1 soak:: "$@"

echo "== static levels: the random scene over many seeds (release)"
time cargo test --release ${SOAK_FEATURES:---all-features} --test plugin -- --ignored --exact static_levels::random_static_scene_many_seeds
