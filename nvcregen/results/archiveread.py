"""Reading a run folder's files, bounded: an archive is untrusted, so nothing is read whole.

Each file is opened as a regular file only (`core/regular.py`), its size taken from the
open file with fstat, and at most its cap plus one byte read (`spec/bounded.read_limited`):
a file over its cap, sparse or not, costs no memory and is refused (NVC759). Until issue
#32 an 8 GiB sparse `SHA256SUMS` or `attestation.dsse.json` was read whole before any
cap: `verify` ended in a MemoryError, `report` took 8.4 GB.

    SHA256SUMS              64 MiB  (a line per file: a 1,024-node run's is a few MiB)
    attestation.dsse.json   64 MiB  (`results/dsse.MAX_ENVELOPE`)
    every other file       256 MiB  (summary.json, objects, logs; hashed in blocks too)
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

from nvcregen.core import codes
from nvcregen.core.regular import open_regular
from nvcregen.spec.bounded import read_limited

TOO_LARGE = codes.NVC759.code
MAX_SUMS = 64 * 1024 * 1024
MAX_FILE = 256 * 1024 * 1024
_BLOCK = 1 << 20


class ArchiveFileTooLargeError(OSError):
    """An archive's file over its cap: refused unread (NVC759)."""

    def __init__(self, path: Path, size: int, cap: int) -> None:
        super().__init__(errno.EFBIG, "larger than nvcregen reads", str(path))
        self.path = path
        self.size = size
        self.cap = cap

    def __str__(self) -> str:
        """The finding, as every reader of an archive prints it."""
        return (
            f"error[{TOO_LARGE}]: {self.path.name} holds {self.size:,} bytes, over the"
            f" {self.cap // (1 << 20)} MiB nvcregen reads of it: refused unread (no archive"
            " collect writes has one so large)"
        )


def read_capped(path: Path, cap: int = MAX_FILE) -> bytes:
    """The bytes of an archive's file of at most `cap` bytes.

    Raises:
        ArchiveFileTooLargeError: It holds more than `cap` bytes (NVC759).
        OSError: It cannot be opened or read, or is not a regular file.

    """
    raw = read_limited(path, cap)
    if raw is None:
        raise ArchiveFileTooLargeError(path, _size(path), cap)
    return raw


def sha256_capped(path: Path, cap: int = MAX_FILE) -> str:
    """The sha256 of an archive's file of at most `cap` bytes, read in 1 MiB blocks.

    Raises:
        ArchiveFileTooLargeError: It holds more than `cap` bytes (nothing hashed).
        OSError: It cannot be opened or read, or is not a regular file.

    """
    digest = hashlib.sha256()
    with open_regular(path) as handle:  # a FIFO is never opened
        size = os.fstat(handle.fileno()).st_size
        if size > cap:
            raise ArchiveFileTooLargeError(path, size, cap)
        left = cap + 1  # a file that grows meanwhile is read no further than this
        while left > 0 and (block := handle.read(min(_BLOCK, left))):
            digest.update(block)
            left -= len(block)
        if left <= 0:
            raise ArchiveFileTooLargeError(path, cap + 1, cap)
    return digest.hexdigest()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
