"""Filesystem primitives of the writer: a lock per output tree and atomic folder swaps.

- `tree_lock(out_dir)`: an exclusive lock on `out_dir/.nvcregen-lock`, so two renders
  into one tree run one after the other. POSIX: `flock(2)`; Linux emulates it with POSIX
  record locks on NFS, which lock across clients where the server runs a lock manager
  (NFSv4, or NFSv3 with lockd); without one the lock only holds on one machine. Windows:
  `msvcrt.locking` on the file's first byte.
- `exchange(a, b)`: swap two folders in one step, so a reader of `b` sees the old
  folder or the new one and never nothing: `renameat2(RENAME_EXCHANGE)` on Linux (3.15+,
  ext4, xfs, btrfs, tmpfs and most local filesystems), `renamex_np(RENAME_SWAP)` on
  macOS. Where neither exists or the filesystem refuses (`EINVAL`, `ENOSYS`,
  `ENOTSUP`: some network and FUSE filesystems, Windows), it raises `ExchangeUnsupported`
  and the writer falls back to two renames (see `docs/design/0009-atomic-out.md`).
- `rename_noreplace(src, dst)`: a rename that never replaces an existing `dst`, not
  even an empty folder someone created meanwhile (`RENAME_NOREPLACE` where available).
- `sync_written(folder, files)`: make a staged tree durable before it is swapped in: one
  `syncfs(2)` on Linux, an fsync per file and folder elsewhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from nvcregen.core.atomicfile import sync_folder

LOCK_FILE = ".nvcregen-lock"  # out/.nvcregen-* is what a project git-ignores
LOCK_TIMEOUT = 120.0  # seconds a render waits for another render of the same tree
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_RENAME_SWAP = 2  # macOS renamex_np
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP})


class ExchangeUnsupported(Exception):  # noqa: N818  # a condition, not a failure
    """The platform or filesystem cannot swap two folders atomically."""


class LockTimeout(Exception):  # noqa: N818
    """Another process held the output tree's lock for longer than `LOCK_TIMEOUT`."""


def _libc_function(name: str) -> Callable[..., int] | None:
    if sys.platform == "win32":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None
    return getattr(libc, name, None)


_RENAMEAT2 = _libc_function("renameat2") if sys.platform.startswith("linux") else None
_RENAMEX_NP = _libc_function("renamex_np") if sys.platform == "darwin" else None
_SYNCFS = _libc_function("syncfs") if sys.platform.startswith("linux") else None


def _rename_flags(src: Path, dst: Path, flags: int) -> None:
    """renameat2 / renamex_np with `flags`; ExchangeUnsupported when neither can."""
    source, target = os.fsencode(src), os.fsencode(dst)
    if _RENAMEAT2 is not None:
        result = _RENAMEAT2(_AT_FDCWD, source, _AT_FDCWD, target, ctypes.c_uint(flags))
    elif _RENAMEX_NP is not None and flags == _RENAME_EXCHANGE:
        result = _RENAMEX_NP(source, target, ctypes.c_uint(_RENAME_SWAP))
    else:
        raise ExchangeUnsupported("no renameat2 or renamex_np here")
    if result != 0:
        code = ctypes.get_errno()
        if code in _UNSUPPORTED:
            raise ExchangeUnsupported(os.strerror(code))
        raise OSError(code, os.strerror(code), str(src), None, str(dst))


def exchange(a: Path, b: Path) -> None:
    """Swap folders `a` and `b` in one atomic step (both must exist).

    Raises:
        ExchangeUnsupported: The platform or filesystem cannot; nothing was changed.
        OSError: Any other failure; nothing was changed.

    """
    _rename_flags(a, b, _RENAME_EXCHANGE)


def rename_noreplace(src: Path, dst: Path) -> None:
    """Rename `src` to `dst`, failing with FileExistsError when `dst` exists."""
    try:
        _rename_flags(src, dst, _RENAME_NOREPLACE)
    except ExchangeUnsupported:
        if os.path.lexists(dst):  # a window remains here, only without RENAME_NOREPLACE
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst)) from None
        src.rename(dst)


@contextmanager
def tree_lock(out_dir: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the exclusive lock of an output tree (`out_dir` must exist).

    The lock file is removed while still locked, so none is left behind; a process that
    locked a file already removed sees that its inode is no longer the path's and tries
    again, so two processes never both hold the lock.

    Raises:
        LockTimeout: Another process held it for `timeout` (`LOCK_TIMEOUT`) seconds.
        OSError: The lock file cannot be created or locked (an unwritable `out_dir`).

    """
    path = out_dir / LOCK_FILE
    deadline = time.monotonic() + (LOCK_TIMEOUT if timeout is None else timeout)
    fd = _lock_path(path, deadline)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # Windows cannot remove an open file: harmless
            path.unlink()
        _release(fd)
        os.close(fd)


def _lock_path(path: Path, deadline: float) -> int:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _acquire(fd, deadline)
        except BaseException:
            os.close(fd)
            raise
        if _same_file(fd, path):
            return fd
        _release(fd)
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _acquire(fd: int, deadline: float) -> None:
    while True:
        try:
            _try_lock(fd)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout("it is still held") from None
            time.sleep(0.02)
        else:
            return


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> None:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            raise BlockingIOError(str(exc)) from exc

    def _release(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def sync_written(folder: Path, files: Iterable[Path]) -> None:
    """Make `files`, just written under `folder`, durable with the folders holding them.

    Linux: one `syncfs(2)` of the filesystem holding `folder`, which writes back every
    file and folder written there in one pass; an fsync per file costs a journal commit
    each, most of a large render's time. Elsewhere, or when syncfs fails, each file and
    each of their folders is fsynced.
    """
    if _SYNCFS is not None:
        fd = os.open(folder, os.O_RDONLY)
        try:
            if _SYNCFS(fd) == 0:
                return
        finally:
            os.close(fd)
    folders = {folder}
    for file in files:
        fd = os.open(file, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        folders.add(file.parent)
    for each in sorted(folders):
        fsync_dir(each)


fsync_dir = sync_folder  # one copy of the durability step: core/atomicfile.py
