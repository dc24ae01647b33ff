#!/usr/bin/env bash
# Profiles our tree step on the output-bound scenes (bench_compare clustered) under
# callgrind, with branch and L1d simulation, collecting only the timed step (moves and
# update_pairs, after the build), and writes docs/bench/clustered_profile.txt: per reported
# pair, the instructions, conditional branches, mispredicted branches and L1d read misses,
# then the functions (by source file) with the largest shares of the instructions.
# Needs valgrind (apt-get install valgrind). Takes a few minutes.
# Usage: scripts/profile_clustered.sh [STEPS]   (default 20 steps of each 20k scene)
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-20}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -p bevy_aabb_tree_bench --bin profile_step
bin="$target/release/profile_step"
out=docs/bench/clustered_profile.txt
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

{
    echo "# Profile of our step on the output-bound scenes (bench_compare clustered):"
    echo "# $(valgrind --version) callgrind with branch and L1d simulation, collecting only"
    echo "# OursBroadPhase::step_timed (moves + update_pairs, after the build), $steps steps of"
    echo "# each 20k scene. The last-level cache simulation would take the host's L3, so only"
    echo "# L1d misses are given. $(date -u +%Y-%m-%d), scripts/profile_clustered.sh."
    echo "#"
    echo "# valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --D1=49152,12,64 \\"
    echo "#   --collect-atstart=no --toggle-collect='*step_timed*' profile_step DIM 20000 SCENE 1 $steps"
} > "$out"

for scene in clustered streams; do
    for dim in 2d 3d; do
        file="$work/$dim-$scene.out"
        log="$work/$dim-$scene.log"
        valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --D1=49152,12,64 \
            --collect-atstart=no --toggle-collect='*step_timed*' \
            --callgrind-out-file="$file" "$bin" "$dim" 20000 "$scene" 1 "$steps" \
            >"$log" 2>&1
        callgrind_annotate --inclusive=no --auto=no --show=Ir,Bc,Bcm,D1mr "$file" \
            >"$work/$dim-$scene.txt" 2>/dev/null
        python3 - "$work/$dim-$scene.txt" "$log" "$dim" "$scene" "$steps" >>"$out" <<'EOF'
import re, sys

annotated, log, dim, scene, steps = sys.argv[1:]
steps = int(steps)
text = open(annotated).read()
pairs = float(re.search(r"pairs found (\d+)", open(log).read()).group(1))


def number(s):
    return 0.0 if s == "." else float(s.replace(",", ""))


# The totals line, then one line per function: four counts and "file:function".
total = None
rows = []
for line in text.splitlines():
    # A count is digits with commas, or "." for none.
    m = re.match(r"\s*([\d,]+|\.)(?: \([^)]*\))?\s+([\d,]+|\.)(?: \([^)]*\))?\s+"
                 r"([\d,]+|\.)(?: \([^)]*\))?\s+([\d,]+|\.)(?: \([^)]*\))?\s+(.*)$", line)
    if not m:
        continue
    counts = [number(m.group(k)) for k in range(1, 5)]
    what = m.group(5).strip()
    if "PROGRAM TOTALS" in what:
        total = counts
    elif total is not None and re.match(r"[^\s:]+:[^:]", what):
        rows.append((counts, what))
if total is None:
    sys.exit(f"no totals in {annotated}")
reported = pairs * steps
print()
print(f"== {dim} 20k {scene}: {pairs:.0f} pairs per step")
print(
    f"per reported pair: instructions {total[0] / reported:.0f}, conditional branches "
    f"{total[1] / reported:.1f}, mispredicted {total[2] / reported:.2f}, "
    f"L1d read misses {total[3] / reported:.2f}"
)
print("instructions, mispredicted branches and L1d read misses by function and source file"
      " (share of the step):")
for counts, what in sorted(rows, key=lambda r: -r[0][0])[:6]:
    path, _, function = what.partition(":")
    function = re.sub(r"<[^<>]*>", "", function)
    while "<" in function:
        function = re.sub(r"<[^<>]*>", "", function)
    function = function.split("::")[-1].split(" ")[0]
    print(
        f"  {100 * counts[0] / total[0]:6.2f}% Ir  {100 * counts[2] / max(total[2], 1):6.2f}% "
        f"mispredicted  {100 * counts[3] / max(total[3], 1):6.2f}% D1mr  {function} "
        f"({path.rsplit('/', 1)[-1]})"
    )
EOF
    done
done
echo "wrote $out"
