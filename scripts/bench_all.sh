#!/usr/bin/env bash
# Runs every benchmark of BENCHMARKS.md, one after the other, and saves the raw outputs in
# docs/bench/ (RUNS runs of each, default 3), then redraws the plot.
# Run it on an idle machine: the ratios are measured in one process, but absolute times
# and the parallel figures move with the load. Stops at the first comparison that finds
# the two sides disagreeing (a pair, a ray or a query).
# Usage: scripts/bench_all.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
out=docs/bench
mkdir -p "$out"
target="${CARGO_TARGET_DIR:-target}"
pkg=(-p bevy_aabb_tree_bench)
cargo build --release "${pkg[@]}" --bin bench_compare
# The plugin's parallel walk needs a compute pool of several threads: Bevy's
# `multi_threaded` feature. That build of `stress` is kept under another name.
cargo build --release "${pkg[@]}" --features multi_threaded --bin stress
cp "$target/release/stress" "$target/release/stress_multi_threaded"
cargo build --release "${pkg[@]}" --features plugin --bin stress
cargo build --release "${pkg[@]}" --features ecs --bin bench_ecs
bc="$target/release/bench_compare"
st="$target/release/stress"
mt="$target/release/stress_multi_threaded"
ecs="$target/release/bench_ecs"
for r in $(seq 1 "$runs"); do
    "$bc" uniform | tee "$out/uniform_run$r.txt"
    "$bc" rays | tee "$out/rays_run$r.txt"
    "$bc" queries | tee "$out/queries_run$r.txt"
    "$bc" static | tee "$out/static_run$r.txt"
    "$bc" parallel | tee "$out/parallel_run$r.txt"
    "$st" 10000 | tee "$out/stress_run$r.txt"
    "$st" 10000 --idle-fraction 0.9 | tee "$out/stress_idle_run$r.txt"
    for n in 10000 100000; do
        for t in 1 2; do
            "$mt" "$n" --threads "$t" | tee "$out/stress_mt_${n}_threads${t}_run$r.txt"
        done
    done
    "$ecs" 2d | tee "$out/ecs_2d_run$r.txt"
    "$ecs" 3d | tee "$out/ecs_3d_run$r.txt"
done
python3 scripts/plot_benchmarks.py
