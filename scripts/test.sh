#!/usr/bin/env bash
# The project's test command: formatting, lints, the pure core without Bevy, everything
# with every feature (which also builds the examples), then the demos' screenshot check.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# Doc tests link one binary each in the temporary folder; keep them beside the build, not
# in a /tmp that may be a small tmpfs.
export TMPDIR="$PWD/target/tmp"
mkdir -p "$TMPDIR"
df -h . "$TMPDIR" | sed 's/^/disk: /'

echo "== cargo fmt --check"
cargo fmt --all --check

echo "== cargo clippy --all-targets --all-features"
cargo clippy --all-targets --all-features -- -D warnings

echo "== the pure layers build and test without bevy"
# The first line is this crate itself (bevy_aabb_tree), so it is skipped.
if cargo tree --no-default-features -e normal --prefix none | tail -n +2 | grep -Eq '^bevy(_[a-z0-9_]+)? v'; then
    echo "error: a bevy crate is a normal dependency without default features" >&2
    exit 1
fi
cargo test --no-default-features

echo "== everything (plugin, debug overlay, examples, doc tests)"
cargo test --all-features

if [ -f scripts/screenshots.sh ]; then
    echo "== demos rendered headless"
    bash scripts/screenshots.sh
fi
