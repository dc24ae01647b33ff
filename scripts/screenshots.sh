#!/usr/bin/env bash
# Renders both demos headless (Xvfb + llvmpipe Vulkan), saves a screenshot of each with
# the overlay, and checks the images are not blank. Needs xvfb and mesa-vulkan-drivers
# (.ci/run installs them). Output: target/screenshots/demo_{2d,3d}.png
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/screenshots
mkdir -p "$out"
if ! command -v Xvfb >/dev/null 2>&1; then
    echo "error: Xvfb is not installed (apt-get install xvfb mesa-vulkan-drivers)" >&2
    exit 1
fi
display=:${SCREENSHOT_DISPLAY:-97}
Xvfb "$display" -screen 0 1280x720x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 2
export DISPLAY=$display
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
frames=${SCREENSHOT_FRAMES:-150}
for demo in demo_2d demo_3d; do
    rm -f "$out/$demo.png"
    timeout 900 cargo run --quiet --features examples --example "$demo" -- \
        --screenshot "$out/$demo.png" --frames "$frames" 2>&1 | grep -E "saved|ERROR|panicked" || true
    [ -f "$out/$demo.png" ] || { echo "error: $demo produced no screenshot" >&2; exit 1; }
done
# The 2D panel is at the top left, the 3D one at the top right.
python3 scripts/check_image.py "$out/demo_2d.png" 20 20 260 240
python3 scripts/check_image.py "$out/demo_3d.png" 1010 20 1250 240
