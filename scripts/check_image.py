#!/usr/bin/env python3
"""Checks that a demo's screenshot shows something: many distinct colours, the overlay
panel's area differs from the background, and so does part of the scene area (a rectangle
clear of the panel). The background is the most common colour of the scene area.
Standard library only (a small PNG reader and writer).

usage: check_image.py IMAGE.png PANEL_X0 PANEL_Y0 PANEL_X1 PANEL_Y1 SCENE_X0 SCENE_Y0 SCENE_X1 SCENE_Y1
       check_image.py --self-test    (the checks on made-up images: each must fail or pass
                                      as expected)
"""
import os
import struct
import sys
import tempfile
import zlib

# A pixel differs from the background when one channel differs by more than this.
TOLERANCE = 4
# The whole image needs this many distinct colours.
MIN_COLOURS = 40
# This share of the panel's pixels must differ from the background.
MIN_PANEL_SHARE = 0.5
# This share of the scene area's pixels must differ from the background,
# in this many distinct colours: a few shapes on a clear background pass, a clear
# background with a stray line or two does not.
MIN_SCENE_SHARE = 0.01
MIN_SCENE_COLOURS = 8


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit(f"{path}: unsupported PNG (depth {depth}, type {ctype})")
            channels = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


def write_png(path, width, height, pixel):
    """An RGB PNG whose pixel (x, y) is `pixel(x, y)` (for the self-test)."""
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            raw.extend(pixel(x, y))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF
        )

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(bytes(raw))))
        f.write(chunk(b"IEND", b""))


def check(path, panel, scene):
    """The failures found in the image (an empty list when it passes). `panel` and `scene`
    are rectangles (x0, y0, x1, y1), corners included and excluded."""
    w, h, ch, rows = read_png(path)
    pixel = lambda x, y: tuple(rows[y][x * ch:x * ch + 3])
    # Every other pixel on both axes is plenty for these measures.
    def area(x0, y0, x1, y1):
        return [pixel(x, y) for y in range(y0, min(y1, h), 2) for x in range(x0, min(x1, w), 2)]

    everything = area(0, 0, w, h)
    colours = set(everything)
    panel_pixels, scene_pixels = area(*panel), area(*scene)
    counts = {}
    for p in scene_pixels or everything:
        counts[p] = counts.get(p, 0) + 1
    background = max(counts, key=counts.get)
    differs = lambda p: max(abs(a - b) for a, b in zip(p, background)) > TOLERANCE
    panel_share = sum(map(differs, panel_pixels)) / max(len(panel_pixels), 1)
    scene_share = sum(map(differs, scene_pixels)) / max(len(scene_pixels), 1)
    scene_colours = len({p for p in scene_pixels if differs(p)})
    print(
        f"{path}: {w}x{h}, {len(colours)} distinct colours; panel area {panel_share:.0%} "
        f"unlike the background {background}; scene area {scene_share:.1%} unlike it, in "
        f"{scene_colours} colours"
    )
    failures = []
    if len(colours) < MIN_COLOURS:
        failures.append(f"{path}: looks blank ({len(colours)} colours)")
    if panel_share < MIN_PANEL_SHARE:
        failures.append(f"{path}: the panel area looks empty")
    if scene_share < MIN_SCENE_SHARE or scene_colours < MIN_SCENE_COLOURS:
        failures.append(
            f"{path}: the scene area looks empty: {scene_share:.2%} of it "
            f"unlike the background, in {scene_colours} colours"
        )
    return failures


def self_test():
    """Made-up 320x200 images with a panel down the left side (its checked area (10, 10)-
    (110, 90)) and the scene area (130, 10)-(310, 190): blank, a panel but no scene, a
    scene but no panel, and both. Only the last one may pass."""
    w, h = 320, 200
    panel, scene = (10, 10, 110, 90), (130, 10, 310, 190)
    bg = (30, 30, 40)

    def in_panel(x, y):
        # The whole strip, below the checked area too (a tall panel).
        return x < 120

    def panel_pixel(x, y):
        # Text-like noise in many colours.
        return ((x * 7 + y * 3) % 200 + 40, (x * 5) % 180 + 60, (y * 11) % 170 + 70)

    def scene_pixel(x, y):
        # Some filled squares of a few colours on the background.
        if (x // 20 + y // 20) % 5 == 0 and x % 20 > 4 and y % 20 > 4:
            return (200, (x * 3) % 250, (y * 5) % 250)
        return bg

    cases = {
        "blank": (lambda x, y: bg, ["looks blank", "panel area", "scene area"]),
        "panel only": (lambda x, y: panel_pixel(x, y) if in_panel(x, y) else bg, ["scene area"]),
        "scene only": (lambda x, y: bg if in_panel(x, y) else scene_pixel(x, y), ["panel area"]),
        "panel and scene": (
            lambda x, y: panel_pixel(x, y) if in_panel(x, y) else scene_pixel(x, y),
            [],
        ),
    }
    wrong = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (pixel, expected) in cases.items():
            path = os.path.join(tmp, name.replace(" ", "_") + ".png")
            write_png(path, w, h, pixel)
            failures = check(path, panel, scene)
            for f in failures:
                print(f"  fails as it should: {f}" if expected else f"  WRONG: {f}")
            found = all(any(e in f for f in failures) for e in expected)
            if not found or len(failures) != len(expected):
                print(f"self-test: {name}: expected failures {expected}, got {failures}")
                wrong += 1
    if wrong:
        raise SystemExit(f"self-test: {wrong} case(s) wrong")
    print("self-test: every case as expected")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    if len(sys.argv) != 10:
        raise SystemExit(__doc__)
    numbers = list(map(int, sys.argv[2:10]))
    failures = check(sys.argv[1], numbers[:4], numbers[4:])
    if failures:
        raise SystemExit("\n".join(failures))


if __name__ == "__main__":
    main()
