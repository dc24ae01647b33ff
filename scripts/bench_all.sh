#!/usr/bin/env bash
# Runs every benchmark of BENCHMARKS.md, one after the other, and saves the raw outputs in
# docs/bench/ (RUNS runs of the tree scenarios, default 3), then redraws the plot.
# Run it on an idle machine: the ratios are measured in one process, but absolute times
# and the parallel figures move with the load.
# Usage: scripts/bench_all.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
out=docs/bench
mkdir -p "$out"
cargo build --release --no-default-features --example bench_compare
# The plugin's parallel walk needs a compute pool of several threads: Bevy's
# `multi_threaded` feature. That build of `stress` is kept under another name.
cargo build --release --example stress --features bevy/multi_threaded
cp target/release/examples/stress target/release/examples/stress_multi_threaded
cargo build --release --example stress
bc=target/release/examples/bench_compare
mt=target/release/examples/stress_multi_threaded
for r in $(seq 1 "$runs"); do
    "$bc" uniform | tee "$out/uniform_run$r.txt"
    "$bc" rays | tee "$out/rays_run$r.txt"
    "$bc" queries | tee "$out/queries_run$r.txt"
    "$bc" static | tee "$out/static_run$r.txt"
    "$bc" parallel | tee "$out/parallel_run$r.txt"
    target/release/examples/stress 10000 | tee "$out/stress_run$r.txt"
    target/release/examples/stress 10000 --idle-fraction 0.9 | tee "$out/stress_idle_run$r.txt"
    for n in 10000 100000; do
        for t in 1 2; do
            "$mt" "$n" --threads "$t" | tee "$out/stress_mt_${n}_threads${t}_run$r.txt"
        done
    done
    scripts/bench_ecs.sh | tee "$out/ecs_2d_run$r.txt"
    scripts/bench_ecs.sh 3d | tee "$out/ecs_3d_run$r.txt"
done
python3 scripts/plot_benchmarks.py
