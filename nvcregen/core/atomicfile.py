"""Every file nvcregen writes outside out/: whole or not at all, never through a link.

`inventory -o`, `export metrics --out`, `report --out`, `init` and `retest` write here
(out/ has its own writer, `emit/writer.py`, and an archive its folder, `results/archive.py`):

    check   -> a symbolic link, folder, FIFO or device at the target is refused (NVC758),
               never followed or replaced
    stage   -> `.<name>.<8 hex>.tmp` beside the target, created with O_EXCL|O_NOFOLLOW,
               written with `os.write` and made durable with `os.fsync`
    place   -> renamed over the target (a rename replaces a link, never writes through
               it), or, for a file that must not exist yet, hard-linked to its name (which
               fails on anything already there), the folder fsynced after

Any failure (no space, a read-only folder, no permission) removes the temporary file and
leaves the old file as it was, and is raised as `FileWriteError` (NVC758) with a hint:
commands print it and exit 2, never 70.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from nvcregen.core import codes
from nvcregen.core.regular import describe

WRITE_REFUSED = codes.NVC758.code
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL
_FLAGS = _NEW | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_LOCKED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


class FileWriteError(Exception):
    """A file nvcregen was asked to write could not be written safely (NVC758).

    Attributes:
        path: The file asked for.
        code: The diagnostic code, NVC758.
        hint: What to do about it.

    """

    def __init__(self, path: Path, message: str, hint: str) -> None:
        self.path = path
        self.code = WRITE_REFUSED
        self.message = message
        self.hint = hint
        super().__init__(f"error[{WRITE_REFUSED}]: {path}: {message} (hint: {hint})")


def write_file(path: Path, data: str | bytes, *, replace: bool = True) -> Path:
    """Write `data` (text as UTF-8) to `path` whole or not at all; return `path`.

    With `replace=False` an existing file (or anything else at the name) is never
    replaced: FileExistsError, nothing written.

    Raises:
        FileWriteError: A link, folder, FIFO or device at `path`, or the file cannot be
            written (no space, read-only, no permission); the old file is unchanged.
        FileExistsError: `replace` is False and something is at `path`.

    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    _check_target(path, replace=replace)
    folder = path.parent
    tmp = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, _FLAGS, 0o666)  # the umask applies, as to any new file
        try:
            _write_all(fd, raw)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            tmp.replace(path)  # a link put at `path` meanwhile is replaced, not followed
        else:
            os.link(tmp, path)  # fails on anything at `path`, a link included
            tmp.unlink()
        sync_folder(folder)
    except FileExistsError:
        _remove(tmp)
        if not replace and path.is_symlink():
            raise _linked(path) from None
        raise
    except OSError as exc:
        _remove(tmp)
        raise _failed(path, exc, replace=replace) from exc
    except BaseException:
        _remove(tmp)
        raise
    return path


def _remove(tmp: Path) -> None:
    """Remove the temporary file, if it was made (on a read-only filesystem it was not)."""
    with contextlib.suppress(OSError):  # never made, or renamed already: nothing is left
        tmp.unlink()


def refuse_links_below(base: Path, path: Path) -> None:
    """Refuse a symbolic link at `path` or at any folder between `base` and it.

    `base` itself (the folder the user named) may be a link; what nvcregen writes below it
    stays below it. Missing parts are fine: they are made as real folders.

    Raises:
        FileWriteError: The first link found, named (NVC758).
        ValueError: `path` is not below `base`.

    """
    part = base
    for name in path.relative_to(base).parts:
        part = part / name
        try:
            if stat.S_ISLNK(part.lstat().st_mode):
                raise FileWriteError(
                    part,
                    f"this is a symbolic link below {base}: nvcregen writes only into real"
                    " folders there, never where a link points; nothing written",
                    "remove the link (or name its target as the folder to write to), then"
                    " run again",
                )
        except FileNotFoundError:
            return


def _check_target(path: Path, *, replace: bool) -> None:
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:  # a file where a folder is needed, or no permission to look
        raise _failed(path, exc, replace=replace) from exc
    if stat.S_ISLNK(mode):
        raise _linked(path)
    if not replace:
        raise FileExistsError(errno.EEXIST, "File exists", str(path))
    if not stat.S_ISREG(mode):
        raise FileWriteError(
            path,
            f"this is a {describe(mode)}, not a regular file; nothing written",
            "name a file to write, or move this out of the way",
        )


def _linked(path: Path) -> FileWriteError:
    return FileWriteError(
        path,
        "this is a symbolic link: nvcregen does not write through one (it could point"
        " anywhere); nothing written",
        "name the real file, or remove the link, then run again",
    )


def _write_all(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        done = os.write(fd, view)
        view = view[done:]


def sync_folder(folder: Path) -> None:
    """Make a folder's entries (renames into it) durable, where the platform allows.

    A folder that cannot be opened (Windows) or fsynced (some filesystems) is left as
    is: the rename is atomic either way. `emit/swap.py` uses this too.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # some filesystems cannot; the rename is atomic
            os.fsync(fd)
    finally:
        os.close(fd)


def _failed(path: Path, exc: OSError, *, replace: bool) -> FileWriteError:
    reason = exc.strerror or str(exc)
    name = errno.errorcode.get(exc.errno or 0, "")
    kept = "the old file is unchanged" if replace and path.exists() else "nothing was written"
    what = f"cannot be written: {reason}{f' ({name})' if name else ''}; {kept}"
    if exc.errno in _FULL:
        return FileWriteError(path, what, "free space (or raise the quota), then run again")
    if exc.errno in _LOCKED:
        return FileWriteError(path, what, "write to a folder you may write to, then run again")
    return FileWriteError(path, what, "fix the filesystem problem, then run again")
