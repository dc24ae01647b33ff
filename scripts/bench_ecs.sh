#!/usr/bin/env bash
# The "ECS tick" comparison: this crate's plugin against avian2d 0.7 (detection only) on the
# "uniform boxes" 2D scene, in one process. Usage: scripts/bench_ecs.sh [N] [fast|slow]
# (default 10000 fast). bench-ecs/ is a separate cargo project (its own workspace and
# target/), so the root `cargo test` never builds avian.
set -euo pipefail
cd "$(dirname "$0")/../bench-ecs"
exec cargo run --release --bin bench-ecs -- "${@:-10000}"
