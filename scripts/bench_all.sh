#!/usr/bin/env bash
# Runs every benchmark of BENCHMARKS.md, one after the other, and saves the raw outputs in
# docs/bench/ (RUNS runs of each, default 3), each file headed by the date and the load,
# then redraws the plot.
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
# The tile map runs with Bevy's `multi_threaded` feature, as games do (see its docs).
cargo build --release "${pkg[@]}" --features multi_threaded --bin tilemap
cargo build --release "${pkg[@]}" --features plugin --bin stress
cargo build --release "${pkg[@]}" --features ecs --bin bench_ecs
bin="$target/release"

# Runs a command into a file of docs/bench/, after a header line.
record() {
    local file="$out/$1"
    shift
    {
        echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
        "$@"
    } | tee "$file"
}

for r in $(seq 1 "$runs"); do
    record "all_run$r.txt" "$bin/bench_compare" all
    record "stress_run$r.txt" "$bin/stress" 10000
    for d in 2d 3d; do
        record "ecs_${d}_run$r.txt" "$bin/bench_ecs" "$d"
        record "tilemap_${d}_run$r.txt" "$bin/tilemap" "$d"
        record "tilemap_ecs_${d}_run$r.txt" "$bin/bench_ecs" "$d" --tilemap 316
    done
done
python3 scripts/plot_benchmarks.py
