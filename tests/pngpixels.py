"""A small PNG reader for tests: 8-bit RGB or RGBA, non-interlaced (what Chromium writes).

Only the standard library: no image package is a test dependency. Decoding is plain
Python, so tests read a band of rows rather than a whole tall screenshot.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"
Pixel = tuple[int, int, int]


@dataclass(frozen=True)
class Png:
    """The header and the still-filtered image data of a PNG file."""

    width: int
    height: int
    channels: int
    data: bytes

    def rows(self, stop: int | None = None) -> Iterator[list[Pixel]]:
        """The RGB pixels of rows 0 .. stop-1, top to bottom."""
        stride = self.width * self.channels
        previous = bytearray(stride)
        for y in range(min(stop or self.height, self.height)):
            start = y * (stride + 1)
            kind, line = self.data[start], bytearray(self.data[start + 1 : start + 1 + stride])
            _unfilter(kind, line, previous, self.channels)
            c = self.channels
            yield [(line[i], line[i + 1], line[i + 2]) for i in range(0, stride, c)]
            previous = line


def read_png(path: Path) -> Png:
    """Parse a PNG's chunks; refuse what this reader does not handle."""
    raw = path.read_bytes()
    assert raw[:8] == SIGNATURE, f"{path} is not a PNG"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(raw):
        (length,) = struct.unpack(">I", raw[pos : pos + 4])
        kind, body = raw[pos + 4 : pos + 8], raw[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color in (2, 6) and interlace == 0, "8-bit RGB(A) only"
    return Png(width, height, 3 if color == 2 else 4, zlib.decompress(bytes(idat)))


def _unfilter(kind: int, line: bytearray, above: bytearray, bpp: int) -> None:
    if kind == 1:
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:
        line[:] = bytes((a + b) & 0xFF for a, b in zip(line, above, strict=True))
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + above[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(len(line)):
            a = line[i - bpp] if i >= bpp else 0
            b, c = above[i], above[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pred) & 0xFF
