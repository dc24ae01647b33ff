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
# This crate's builds carry no debug info either (the dependencies never do, Cargo.toml):
# a failed assertion still names its file and line, and the test binaries and examples
# compile and link faster. A debugger session is a plain `cargo test` or `cargo run`.
export CARGO_PROFILE_DEV_DEBUG=false
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

# The library and the examples: documenting an example brings in the dev-dependencies, so
# the dependencies' features resolve as in the lints above and their metadata is reused
# rather than checked again with other features.
step "cargo doc (every public item documented, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --lib --examples
drop_checked_metadata

# The test binaries that need the plugin say so with `required-features` in Cargo.toml
# (tests/plugin, tests/features); the others (tests/geometry, tests/tree) build without
# Bevy. The pure layers' code depends on two features only, `parallel` (rayon) and
# `enhanced-determinism` (libm), so their binaries run twice in the first step, without
# and with those two, and the plugin's feature sets run the library, the plugin's binaries
# and the doc tests.
# A `[[test]]` table's keys come in any order, so each table is judged when it ends.
mapfile -t plugin_tests < <(awk '
    function flush() { if (in_test && needs && name != "") print name; in_test = 0 }
    /^\[/ { flush() }
    /^\[\[test\]\]/ { in_test = 1; needs = 0; name = ""; next }
    in_test && /^name *=/ { name = $0; sub(/^name *= *"/, "", name); sub(/".*/, "", name) }
    in_test && /^required-features *=/ { needs = 1 }
    END { flush() }
' Cargo.toml)
if [ "${#plugin_tests[@]}" = 0 ]; then
    echo "error: no [[test]] in Cargo.toml has required-features: the plugin's tests would not run" >&2
    exit 1
fi
plugin_test_args=("${plugin_tests[@]/#/--test=}")

step "the pure layers build and test without bevy (then with parallel and enhanced-determinism)"
# The first line is this crate itself (bevy_aabb_tree), so it is skipped.
if cargo tree --no-default-features -e normal --prefix none | tail -n +2 | grep -Eq '^bevy(_[a-z0-9_]+)? v'; then
    echo "error: a bevy crate is a normal dependency without default features" >&2
    exit 1
fi
# These binaries spend their time in the crate's own code (property tests, brute-force
# oracles), so the crate is optimised a little here: overflow checks and debug assertions
# stay on.
pure_opt=(--config 'profile.dev.package.bevy_aabb_tree.opt-level=1')
for features in "" "parallel,enhanced-determinism"; do
    cargo test "${pure_opt[@]}" --no-default-features --features "$features" 2>&1 |
        tee target/tmp/bevy_free_tests.log
    # A binary without `required-features` runs only here: it must hold tests that run
    # without Bevy, not compile to nothing behind `cfg(feature = "plugin")`.
    empty=$(awk '/Running tests\// { bin = $2 } /^running 0 tests/ && bin != "" { print bin } /^running/ { bin = "" }' \
        target/tmp/bevy_free_tests.log)
    if [ -n "$empty" ]; then
        echo "error: $empty ran no test without Bevy: give it required-features = [\"plugin\"] in Cargo.toml" >&2
        exit 1
    fi
done
prune_binaries

step "default features (the plugin without multi_threaded: the one-thread path): lib, ${plugin_tests[*]}, doc tests"
cargo test --lib "${plugin_test_args[@]}"
cargo test --doc
prune_binaries

step "everything (plugin, debug overlay, doc tests, the short soak runs; the examples built)"
cargo test --all-features --lib "${plugin_test_args[@]}"
cargo test --all-features --doc
cargo build --all-features --examples

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
