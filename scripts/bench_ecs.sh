#!/usr/bin/env bash
# The "ECS tick" comparison: this crate's plugin against avian 0.7 (detection only) on the
# "uniform boxes" scene, in one process. Exits non-zero when the two apps' touching pairs
# differ.
# Usage: scripts/bench_ecs.sh [2d|3d] [N] [fast|slow]   (default: 2d, 10000, fast)
# The comparison lives in the benchmark package (bench/, feature `ecs`): avian is a
# dependency of that package only, and a plain `cargo build` or `cargo test` of the crate
# never builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release -p bevy_aabb_tree_bench --features ecs --bin bench_ecs -- "$@"
