#!/usr/bin/env bash
# The project's test command (README.md; .ci/run calls it too): formatting and lints of
# every crate in the repository, the tests with each feature set (pure core without Bevy,
# the default plugin, everything), the demos' screenshot check, then a minute of fuzzing.
#
# Needs only the Rust toolchain. Run as root, it installs what the screenshot check needs
# (xvfb and mesa with apt-get); otherwise it says in one line what is missing and skips
# only that check. It exits non-zero only when a check fails; run as root where apt-get
# is, a screenshot check that still lacks what it needs (the install failed) fails too,
# rather than being skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# Doc tests link one binary each in the temporary folder; keep them beside the build, not
# in a /tmp that may be a small tmpfs.
export TMPDIR="$PWD/target/tmp"
mkdir -p "$TMPDIR"
# The checks build each feature set once: incremental caches would only take disk.
export CARGO_INCREMENTAL=0
disk() { df -h . | tail -n 1 | awk '{print "disk: " $4 " free, build directory " d}' d="$(du -sh target 2>/dev/null | cut -f1)"; }
step() {
    echo "== [$(date -u +%H:%M:%S)] $*"
    disk
}
# Each test binary, example and doc test links its own copy of Bevy (a few hundred MB in
# a debug build). Once a feature set's tests have run, its linked binaries go, so the build
# directory holds one feature set's binaries at a time; the libraries stay for the next.
prune_binaries() {
    disk
    echo "removing the linked test binaries and examples"
    find target/debug/deps target/debug/examples -maxdepth 1 -type f -perm -u+x \
        ! -name '*.so' -delete 2>/dev/null || true
}
# With less than this much disk free (GB; SMALL_DISK_GB, default 20), clippy's and
# rustdoc's metadata go once they are used (the tests build libraries of their own); on a
# larger disk they stay, so that the next run's lints do not start from scratch.
small_disk_gb=${SMALL_DISK_GB:-20}
drop_checked_metadata() {
    local free_gb
    free_gb=$(df -BG --output=avail . | tail -n 1 | tr -dc 0-9)
    if [ "${free_gb:-0}" -lt "$small_disk_gb" ]; then
        echo "less than ${small_disk_gb}G free: removing the lints' metadata"
        for meta in target/debug/deps/*.rmeta; do
            [ -e "${meta%.rmeta}.rlib" ] || rm -f "$meta"
        done
    fi
}

# What the screenshot check needs: Xvfb, and Vulkan on the CPU (mesa's lavapipe).
rendering_missing() {
    local missing=()
    command -v Xvfb >/dev/null 2>&1 || missing+=("Xvfb (apt-get install xvfb)")
    ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 ||
        missing+=("mesa's Vulkan driver (apt-get install mesa-vulkan-drivers)")
    local IFS=,
    echo "${missing[*]:-}" | sed 's/,/ and /g'
}
# Whether this run installs them itself (as root, with apt-get): the check must run then.
installs_rendering=
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    installs_rendering=1
fi
if [ -n "$(rendering_missing)" ] && [ -n "$installs_rendering" ]; then
    step "installing xvfb and mesa for the screenshot check"
    (
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq &&
            apt-get install -y -qq xvfb mesa-vulkan-drivers libvulkan1 libxkbcommon-x11-0 \
                libxcursor1 libxrandr2 libxi6 >/dev/null
    ) || echo "warning: apt-get could not install xvfb and mesa: the screenshot check will fail" >&2
fi

# The crates beside the root one (the fuzz target, the benchmarks, ...): every other
# Cargo.toml in the repository, whether a member of the root's workspace or a project of
# its own.
mapfile -t side < <(find . -name Cargo.toml -not -path ./Cargo.toml \
    -not -path '*/target/*' -not -path './.git/*' | sort)

step "cargo fmt --check (root and ${#side[@]} side crates)"
cargo fmt --all --check
for manifest in "${side[@]}"; do
    cargo fmt --manifest-path "$manifest" --all --check
done

# The workspace's members (this crate and bench/) are linted in one call with all
# features, so Bevy's metadata is built once for both; side crates with a workspace of
# their own (fuzz/) get a call each.
step "cargo clippy --all-targets: the workspace with all features, then default and no default features"
cargo clippy --workspace --all-targets --all-features -- -D warnings
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --no-default-features -- -D warnings

for manifest in "${side[@]}"; do
    grep -q '^\[workspace\]' "$manifest" || continue
    step "cargo clippy --all-targets --all-features for $manifest"
    cargo clippy --manifest-path "$manifest" --all-targets --all-features -- -D warnings
done

step "cargo doc (every public item documented, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features
drop_checked_metadata

step "the pure layers build and test without bevy"
# The first line is this crate itself (bevy_aabb_tree), so it is skipped.
if cargo tree --no-default-features -e normal --prefix none | tail -n +2 | grep -Eq '^bevy(_[a-z0-9_]+)? v'; then
    echo "error: a bevy crate is a normal dependency without default features" >&2
    exit 1
fi
cargo test --no-default-features
prune_binaries

step "default features (the plugin without multi_threaded: the one-thread path)"
cargo test
prune_binaries

step "everything (plugin, debug overlay, examples, doc tests; the short soak runs)"
cargo test --all-features

# The demos run from the examples the step above built (the screenshot script builds with
# all features too), so Bevy's rendering is compiled once.
step "demos rendered headless"
missing=$(rendering_missing)
if [ -n "$missing" ] && [ -n "$installs_rendering" ]; then
    echo "error: the screenshot check needs $missing, and installing them with apt-get as root failed" >&2
    exit 1
elif [ -n "$missing" ]; then
    echo "skipped: the screenshot check needs $missing (run as root to install them)"
else
    bash scripts/screenshots.sh
fi
prune_binaries

if [ -d fuzz ]; then
    step "fuzzing the tree for 60 s (no sanitizer)"
    FUZZ_SANITIZER=none bash scripts/fuzz.sh 60
fi

step "all checks passed"
