#!/usr/bin/env bash
# Renders the windowed examples headless (Xvfb + llvmpipe Vulkan): the two demos, the
# platformer, the 3D room and the tile map; saves a screenshot of each with the overlay,
# and checks them.
# Needs xvfb and mesa-vulkan-drivers (scripts/test.sh installs them when run as root).
# Output: target/screenshots/NAME.png and NAME.log
#
# A demo fails the check when it exits non-zero, when its output has an `ERROR` line or a
# panic, when it saves no image, or when the image looks blank, its overlay panel empty or
# its scene (the area outside the panel) empty (scripts/check_image.py).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/screenshots
mkdir -p "$out"
if ! command -v Xvfb >/dev/null 2>&1; then
    echo "error: Xvfb is not installed (apt-get install xvfb mesa-vulkan-drivers)" >&2
    exit 1
fi
# The checks of the images themselves, on made-up images.
python3 scripts/check_image.py --self-test >/dev/null

display=:${SCREENSHOT_DISPLAY:-97}
Xvfb "$display" -screen 0 1280x720x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 2
export DISPLAY=$display
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
frames=${SCREENSHOT_FRAMES:-150}
# Build first, so the demos' logs hold only what they print. All features: the build the
# test command's last test run made (the tile map needs `tilemap` beside `examples`).
demos=(demo_2d demo_3d platformer room_3d tilemap)
cargo build --quiet --all-features "${demos[@]/#/--example=}"
failed=0
for demo in "${demos[@]}"; do
    rm -f "$out/$demo.png"
    log="$out/$demo.log"
    status=0
    timeout 900 cargo run --quiet --all-features --example "$demo" -- \
        --screenshot "$out/$demo.png" --frames "$frames" >"$log" 2>&1 || status=$?
    grep -E "saved|ERROR|panicked" "$log" || true
    problems=()
    [ "$status" = 0 ] || problems+=("exited with status $status")
    if grep -qE "ERROR|panicked" "$log"; then
        problems+=("printed an ERROR line or a panic")
    fi
    [ -f "$out/$demo.png" ] || problems+=("saved no screenshot")
    if [ "${#problems[@]}" -gt 0 ]; then
        for p in "${problems[@]}"; do echo "error: $demo $p (output: $log)" >&2; done
        tail -n 20 "$log" >&2
        failed=1
    fi
done
[ "$failed" = 0 ] || exit 1
# The panel's top (checked area) and the scene area beside the panel, which runs down the
# whole window: on the left in 2D, on the right in 3D.
python3 scripts/check_image.py "$out/demo_2d.png" 20 20 260 240 300 10 1270 710
python3 scripts/check_image.py "$out/demo_3d.png" 1010 20 1250 240 10 10 970 710
# The gameplay examples have no panel: their first rectangle is a part of the level (the
# platformer's floor tiles along the bottom, the room's floor in the middle).
python3 scripts/check_image.py "$out/platformer.png" 40 580 1240 604 10 10 1270 710
python3 scripts/check_image.py "$out/room_3d.png" 500 400 900 560 10 10 1270 710
# The tile map: its stone rows along the bottom.
python3 scripts/check_image.py "$out/tilemap.png" 40 590 1240 630 10 10 1270 710
