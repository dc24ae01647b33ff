#!/usr/bin/env bash
# The "ECS tick" comparison: this crate's plugin against avian 0.7 (detection only) on the
# "uniform boxes" scene, in one process.
# Usage: scripts/bench_ecs.sh [3d] [N] [fast|slow]   (default: 2D, 10000, fast; 3d: avian3d)
# bench-ecs/ is a separate cargo project (its own workspace and target/), so the root
# `cargo test` never builds avian.
set -euo pipefail
cd "$(dirname "$0")/../bench-ecs"
bin=bench-ecs
if [[ "${1:-}" == "3d" ]]; then
    bin=bench-ecs-3d
    shift
fi
exec cargo run --release --bin "$bin" -- "$@"
