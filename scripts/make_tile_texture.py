#!/usr/bin/env python3
"""Writes assets/tilemap_tiles.png, the tile-map example's texture: three 16 x 16 tiles
side by side (0 stone, 1 grass-topped earth, 2 brick), standard library only."""
import struct
import zlib

T = 16


def tile_pixel(kind, x, y):
    # y = 0 is the top row of the image.
    edge = x in (0, T - 1) or y in (0, T - 1)
    if kind == 0:  # stone: slate blue with a darker rim and a speckle
        if edge:
            return (52, 60, 84)
        return (92, 104, 138) if (x * 7 + y * 13) % 11 else (110, 122, 158)
    if kind == 1:  # earth with a grass top
        if y < 4:
            return (84, 170, 72) if (x + y) % 5 else (64, 140, 56)
        return (126, 88, 56) if (x * 3 + y * 5) % 7 else (104, 72, 44)
    # brick: orange courses with mortar lines
    mortar = y % 8 == 0 or (x + (4 if (y // 8) % 2 else 0)) % 8 == 0
    return (196, 190, 180) if mortar else (190, 96, 52)


def main():
    width, height = 3 * T, T
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            raw.extend(tile_pixel(x // T, x % T, y))
    def chunk(kind, body):
        data = kind + body
        return struct.pack(">I", len(body)) + data + struct.pack(">I", zlib.crc32(data))
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    png += chunk(b"IEND", b"")
    with open("assets/tilemap_tiles.png", "wb") as f:
        f.write(png)


if __name__ == "__main__":
    main()
