"""Reading only regular files: a FIFO, socket or device found where a file was expected.

Opening a FIFO for reading blocks until something writes to it, and opening a device
can do anything the device does, so nvcregen opens a path only once `stat` says it is a
regular file (links followed, as `open` follows them), opens it without blocking, and
checks the opened descriptor again, so a path swapped between the two is refused too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegularFileError(OSError):
    """A path that is a FIFO, socket, device or folder where a regular file was expected.

    Attributes:
        kind: What it is (`describe`): "FIFO", "socket", "device" or "folder".

    """

    def __init__(self, path: str | Path, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file but a {kind}", str(path))
        self.kind = kind


def describe(mode: int) -> str:
    """A word for a file type, from `stat` or `lstat`."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISDIR(mode):
        return "folder"
    return "device"


def not_regular(path: str | Path) -> str | None:
    """What `path` is when it is not a regular file (links followed); None when it is one.

    Raises OSError when it cannot be looked at (missing, no permission).
    """
    mode = os.stat(path).st_mode  # noqa: PTH116  # a Path built per file costs more than the stat
    return None if stat.S_ISREG(mode) else describe(mode)


def open_regular(path: str | Path) -> BinaryIO:
    """`path` opened for reading in binary; NotRegularFileError unless it is a regular file."""
    return os.fdopen(_open_fd(path)[0], "rb")


def read_regular(path: str | Path) -> bytes:
    """The bytes of a regular file; NotRegularFileError for anything else (never opened).

    Read with `os.read` straight from the descriptor: `render --check` and `check` read
    every file of a tree, and a buffered file object per file costs more than the reads.
    """
    fd, size = _open_fd(path)
    try:
        parts = []
        while part := os.read(fd, max(size + 1, _CHUNK)):  # the file may grow meanwhile
            parts.append(part)
        return b"".join(parts)
    finally:
        os.close(fd)


_CHUNK = 1 << 16


def _open_fd(path: str | Path) -> tuple[int, int]:
    """A descriptor of `path` opened for reading, and the size `fstat` gives it."""
    kind = not_regular(path)
    if kind is not None:
        raise NotRegularFileError(path, kind)
    fd = os.open(path, _FLAGS)
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):  # swapped since the stat above
        os.close(fd)
        raise NotRegularFileError(path, describe(status.st_mode))
    return fd, status.st_size
