#!/usr/bin/env python3
"""Checks that a screenshot is not blank: many distinct colours, and the overlay panel's
area differs from the background. Standard library only (a small PNG reader).

usage: check_image.py IMAGE.png PANEL_X0 PANEL_Y0 PANEL_X1 PANEL_Y1
"""
import struct
import sys
import zlib


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


def main():
    path = sys.argv[1]
    x0, y0, x1, y1 = map(int, sys.argv[2:6])
    w, h, ch, rows = read_png(path)
    pixel = lambda x, y: tuple(rows[y][x * ch:x * ch + 3])
    colours = {pixel(x, y) for y in range(0, h, 2) for x in range(0, w, 2)}
    # A bottom corner on the side away from the panel: a tall panel may reach the bottom
    # of the window on its own side.
    background = pixel(2, h - 2) if x0 > w // 2 else pixel(w - 2, h - 2)
    panel = [pixel(x, y) for y in range(y0, y1, 2) for x in range(x0, x1, 2)]
    differ = sum(1 for p in panel if max(abs(a - b) for a, b in zip(p, background)) > 4) / len(panel)
    print(f"{path}: {w}x{h}, {len(colours)} distinct colours, panel area {differ:.0%} unlike the background {background}")
    if len(colours) < 40:
        raise SystemExit(f"{path}: looks blank ({len(colours)} colours)")
    if differ < 0.5:
        raise SystemExit(f"{path}: the panel area looks empty")


main()
