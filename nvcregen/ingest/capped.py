"""Reading an input of `nvcregen ingest` up to its cap, whatever the path is.

`ingest` reads what a user names: a saved log, but also a pipe (`<(kubectl logs ...)`),
`/dev/stdin` or a device. Only a regular file has a size to check before reading, so the
cap is kept while reading: at most one byte past it is read, from a file, a FIFO, a
character device or standard input alike, and then the input is refused. `/dev/zero`
costs the cap, never more.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_CHUNK = 1 << 20


class TooLargeError(Exception):
    """An input holds more than its cap; `size` is its size when `fstat` knew it (else None)."""

    def __init__(self, cap: int, size: int | None) -> None:
        self.cap = cap
        self.size = size
        super().__init__(f"more than {shown(cap)}")


def shown(cap: int) -> str:
    """A cap in words: `16 MiB`, `256 KiB`, `100 bytes`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if cap >= scale and cap % scale == 0:
            return f"{cap // scale} {unit}"
    return f"{cap} bytes"


def too_large(exc: TooLargeError, what: str) -> str:
    """The refusal in words: the cap, and the size where it was known before reading."""
    cap = shown(exc.cap)
    if exc.size is not None:
        return f"larger than {cap} ({exc.size} bytes): `ingest` reads at most {cap} of {what}"
    return f"larger than {cap}: `ingest` reads at most {cap} of {what}, and read no further"


def read_capped(path: Path, cap: int) -> bytes:
    """The bytes of `path`, at most `cap` of them.

    A regular file larger than the cap is refused before a byte is read; anything else
    (a FIFO, a device, a terminal) is read until its end or one byte past the cap.

    Raises:
        TooLargeError: The input holds more than `cap` bytes.
        OSError: It cannot be opened or read (missing, a folder, no permission).

    """
    with path.open("rb", buffering=0) as handle:
        status = os.fstat(handle.fileno())
        if stat.S_ISREG(status.st_mode) and status.st_size > cap:
            raise TooLargeError(cap, status.st_size)
        data = bytearray()
        while len(data) <= cap:
            part = handle.read(min(_CHUNK, cap + 1 - len(data)))
            if not part:
                return bytes(data)
            data += part
    raise TooLargeError(cap, None)
