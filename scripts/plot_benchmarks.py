#!/usr/bin/env python3
"""Plot the "uniform boxes" step times saved from `bench_compare` (the benchmark package).

Usage: scripts/plot_benchmarks.py [INPUT ...] [-o OUTPUT]

Reads the raw output of `cargo run --release -p bevy_aabb_tree_bench --bin bench_compare --
uniform [FILTER]` or `... all` (default inputs: every `docs/bench/uniform*.txt` and
`docs/bench/all*.txt`), takes for each case
(`uniform 2d n=10000 fast`, ...) the median over all the lines found for it (a case re-run
with the filter argument therefore counts once per run), and writes an SVG (default
`docs/bench/step_time.svg`): step time in ms (log scale) against N (log scale), one line per
(dimension, speed) case for ours (solid) and parry's `Bvh` (dashed), with the ratio
ours/parry (median of the per-run ratios) written next to each of our points.

Python 3 standard library only; the SVG is written by hand.
"""

import argparse
import glob
import math
import os
import re
import statistics
import sys
from xml.sax.saxutils import escape

LINE = re.compile(
    r"^uniform (?P<dim>[23]d) n=(?P<n>\d+) (?P<speed>fast|slow) "
    r"ours=(?P<ours>[0-9.]+)ms parry=(?P<parry>[0-9.]+)ms"
)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# One colour per (dimension, speed) case.
COLOURS = {
    ("2d", "fast"): "#1f77b4",
    ("2d", "slow"): "#2ca02c",
    ("3d", "fast"): "#d62728",
    ("3d", "slow"): "#9467bd",
}


def parse(paths):
    """Returns {(dim, speed, n): (median ours ms, median parry ms, runs, median ratio)}.

    The ratio is the median of each run's ours/parry (both sides of one line were measured
    in the same run, so the per-run ratio moves much less than the times themselves)."""
    runs = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = LINE.match(line.strip())
                if m:
                    key = (m["dim"], m["speed"], int(m["n"]))
                    runs.setdefault(key, []).append((float(m["ours"]), float(m["parry"])))
    out = {}
    for key, values in runs.items():
        out[key] = (
            statistics.median(v[0] for v in values),
            statistics.median(v[1] for v in values),
            len(values),
            statistics.median(v[0] / v[1] for v in values),
        )
    return out


def nice_ticks(lo, hi):
    """Decade ticks 1, 2, 5 × 10^k covering [lo, hi]."""
    ticks = []
    k = math.floor(math.log10(lo))
    while True:
        for m in (1, 2, 5):
            v = m * 10.0**k
            if v > hi * 1.0001:
                return ticks
            if v >= lo * 0.9999:
                ticks.append(v)
        k += 1


def fmt_ms(v):
    if v >= 1:
        return f"{v:g}"
    return f"{v:.2g}"


def fmt_n(n):
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def svg(data, title):
    width, height = 760, 500
    left, right, top, bottom = 80, 230, 62, 64
    pw, ph = width - left - right, height - top - bottom

    ns = sorted({k[2] for k in data})
    values = [v for k, (o, p, _, _) in data.items() for v in (o, p)]
    # The y range: from the 1-2-5 step at or below the smallest time to the one at or above
    # the largest.
    steps = [m * 10.0**k for k in range(-4, 6) for m in (1, 2, 5)]
    ylo = max(t for t in steps if t <= min(values) * 1.0001)
    yhi = min(t for t in steps if t >= max(values) * 0.9999)
    # Pad the N axis by a fraction of a decade on each side.
    xlo, xhi = math.log10(min(ns)) - 0.25, math.log10(max(ns)) + 0.25

    def x(n):
        return left + (math.log10(n) - xlo) / (xhi - xlo) * pw

    def y(ms):
        return top + ph - (math.log10(ms) - math.log10(ylo)) / (
            math.log10(yhi) - math.log10(ylo)
        ) * ph

    e = []
    e.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">'
    )
    e.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>')
    e.append(
        f'<text x="{left + pw / 2}" y="28" text-anchor="middle" font-size="16" '
        f'font-weight="bold">{escape(title)}</text>'
    )
    runs = sorted({r for (_, _, r, _) in data.values()})
    runs_text = f"{runs[0]}" if len(runs) == 1 else f"{runs[0]} to {runs[-1]}"
    e.append(
        f'<text x="{left + pw / 2}" y="46" text-anchor="middle" font-size="12" fill="#555">'
        f"median of {runs_text} runs per case, each the median of 300 steps</text>"
    )
    # Grid and y ticks.
    for t in nice_ticks(ylo, yhi):
        ty = y(t)
        major = abs(math.log10(t) - round(math.log10(t))) < 1e-9
        e.append(
            f'<line x1="{left}" y1="{ty:.1f}" x2="{left + pw}" y2="{ty:.1f}" '
            f'stroke="{"#bbb" if major else "#e4e4e4"}" stroke-width="1"/>'
        )
        e.append(
            f'<text x="{left - 8}" y="{ty + 4:.1f}" text-anchor="end">{fmt_ms(t)}</text>'
        )
    # X ticks.
    for n in ns:
        tx = x(n)
        e.append(
            f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{top + ph}" '
            f'stroke="#e4e4e4" stroke-width="1"/>'
        )
        e.append(
            f'<text x="{tx:.1f}" y="{top + ph + 20}" text-anchor="middle">{fmt_n(n)}</text>'
        )
    # Frame and axis labels.
    e.append(
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
        f'stroke="#333" stroke-width="1"/>'
    )
    e.append(
        f'<text x="{left + pw / 2}" y="{height - 18}" text-anchor="middle">'
        f"N (boxes, log scale)</text>"
    )
    e.append(
        f'<text transform="translate(22 {top + ph / 2}) rotate(-90)" text-anchor="middle">'
        f"step time, ms (median, log scale)</text>"
    )

    cases = [c for c in COLOURS if any((c[0], c[1], n) in data for n in ns)]
    labels = {}
    for dim, speed in cases:
        colour = COLOURS[(dim, speed)]
        points = [(n, data[(dim, speed, n)]) for n in ns if (dim, speed, n) in data]
        for which, dash in ((1, "6 4"), (0, None)):  # parry under ours
            pts = " ".join(f"{x(n):.1f},{y(v[which]):.1f}" for n, v in points)
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            e.append(
                f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                f'stroke-width="2"{dash_attr}/>'
            )
            for n, v in points:
                cx, cy = x(n), y(v[which])
                if which == 0:
                    e.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{colour}"/>')
                else:
                    e.append(
                        f'<rect x="{cx - 3.5:.1f}" y="{cy - 3.5:.1f}" width="7" height="7" '
                        f'fill="white" stroke="{colour}" stroke-width="2"/>'
                    )
        # Ratio labels next to our points (left of the first N, right of the others).
        for i, (n, v) in enumerate(points):
            labels.setdefault(n, []).append((y(v[0]), i == 0, colour, v[3]))

    # Ratio labels, spread apart vertically where points are close.
    for n, items in labels.items():
        items.sort()
        placed = []
        for ly, first, colour, ratio in items:
            if placed and ly < placed[-1] + 13:
                ly = placed[-1] + 13
            placed.append(ly)
            anchor, dx = ("end", -9) if first else ("start", 9)
            e.append(
                f'<text x="{x(n) + dx:.1f}" y="{ly + 4:.1f}" text-anchor="{anchor}" '
                f'font-size="11" fill="{colour}">×{ratio:.3f}</text>'
            )

    # Legend.
    lx, ly = left + pw + 20, top + 6
    e.append(f'<text x="{lx}" y="{ly + 4}" font-weight="bold">case</text>')
    ly += 22
    for dim, speed in cases:
        colour = COLOURS[(dim, speed)]
        e.append(
            f'<line x1="{lx}" y1="{ly}" x2="{lx + 28}" y2="{ly}" stroke="{colour}" '
            f'stroke-width="3"/>'
        )
        e.append(f'<text x="{lx + 36}" y="{ly + 4}">{dim.upper()} {speed}</text>')
        ly += 20
    ly += 14
    e.append(f'<text x="{lx}" y="{ly + 4}" font-weight="bold">tree</text>')
    ly += 22
    e.append(
        f'<line x1="{lx}" y1="{ly}" x2="{lx + 28}" y2="{ly}" stroke="#333" stroke-width="2"/>'
    )
    e.append(f'<circle cx="{lx + 14}" cy="{ly}" r="4" fill="#333"/>')
    e.append(f'<text x="{lx + 36}" y="{ly + 4}">ours (bevy_aabb_tree)</text>')
    ly += 20
    e.append(
        f'<line x1="{lx}" y1="{ly}" x2="{lx + 28}" y2="{ly}" stroke="#333" stroke-width="2" '
        f'stroke-dasharray="6 4"/>'
    )
    e.append(
        f'<rect x="{lx + 10.5}" y="{ly - 3.5}" width="7" height="7" fill="white" '
        f'stroke="#333" stroke-width="2"/>'
    )
    e.append(f'<text x="{lx + 36}" y="{ly + 4}">parry 0.31 Bvh</text>')
    ly += 28
    for line in ("×r: ours / parry", "lower is faster"):
        e.append(f'<text x="{lx}" y="{ly + 4}" font-size="12" fill="#555">{escape(line)}</text>')
        ly += 18
    e.append("</svg>")
    return "\n".join(e) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="*", help="bench_compare output files")
    ap.add_argument(
        "-o",
        "--output",
        default=os.path.join(ROOT, "docs", "bench", "step_time.svg"),
        help="SVG to write",
    )
    args = ap.parse_args()
    bench = os.path.join(ROOT, "docs", "bench")
    inputs = args.inputs or sorted(
        glob.glob(os.path.join(bench, "uniform*.txt")) + glob.glob(os.path.join(bench, "all*.txt"))
    )
    if not inputs:
        sys.exit("no input: run bench_compare -- uniform and save its output first")
    data = parse(inputs)
    if not data:
        sys.exit(f"no 'uniform ...' lines in {', '.join(inputs)}")
    title = "Uniform boxes: one step (move, update, all pairs)"
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(svg(data, title))
    for key in sorted(data):
        o, p, runs, r = data[key]
        print(
            f"uniform {key[0]} n={key[2]} {key[1]}: ours {o:.3} ms, parry {p:.3} ms, "
            f"ratio {r:.3f} (median of {runs} run{'s' if runs > 1 else ''})"
        )
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
