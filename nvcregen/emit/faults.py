"""Diagnostics for what stops the writer: things it did not write, and filesystem faults.

NVC502  something in out/<site>/ nvcregen did not write (file, link, FIFO, folder)
NVC504  the output folder cannot be written (permissions, read-only, not a folder)
NVC505  no space left (or the quota is spent) while writing
NVC506  any other filesystem failure while writing
NVC507  another render holds the output tree's lock for too long
NVC508  out/<site> is a symbolic link or a file, not a folder
NVC511  a FIFO, socket or device in out/<site>/: never opened, the folder not replaced
"""

from __future__ import annotations

import errno
from pathlib import Path

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.emit.ownership import Entry

_UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST})
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_KEPT = "nothing in the site's folder was changed"


NOT_REGULAR = frozenset({"FIFO", "socket", "device"})


def not_regular_file(shown: str, kind: str, action: str) -> Diagnostic:
    """NVC511: a FIFO, socket or device where nvcregen keeps regular files, never opened."""
    return Diagnostic(
        Span(shown),
        Severity.ERROR,
        codes.NVC511.code,
        f"this is a {kind}, not a regular file: nvcregen never opens one (reading a FIFO waits "
        f"for a writer forever); {action}",
        hint="remove it or move it out of the output folder (nvcregen writes only regular "
        "files there), then run again",
    )


def refused(out_dir: Path, site: str, entry: Entry) -> Diagnostic:
    """NVC502 (NVC511 for a FIFO, socket or device): an entry nvcregen did not write."""
    shown = f"{out_dir.as_posix()}/{site}/{entry.path}"
    if entry.kind in NOT_REGULAR:
        return not_regular_file(shown, entry.kind, "refusing to replace the folder")
    what = {
        "file": "this file was not written by nvcregen",
        "empty folder": "this empty folder was not made by nvcregen (it writes none)",
    }.get(entry.kind, f"this {entry.kind} was not made by nvcregen")
    return Diagnostic(
        Span(shown),
        Severity.ERROR,
        codes.NVC502.code,
        f"{what}; refusing to replace the folder",
        hint="move it out of out/ (generated folders are replaced whole), then render again",
    )


def symlinked_site(out_dir: Path, site: str) -> Diagnostic:
    """NVC508: `out/<site>` is a link or a file, which a render would have to replace."""
    return Diagnostic(
        Span(f"{out_dir.as_posix()}/{site}"),
        Severity.ERROR,
        codes.NVC508.code,
        "the site's output is a symbolic link or a file, not a folder; refusing to replace it",
        hint="render into the real folder (--out), or remove the link, then render again",
    )


def os_error(out_dir: Path, site: str | None, exc: OSError | None, *, lock: str = "") -> Diagnostic:
    """NVC504-NVC507: a filesystem fault while writing, as a user error."""
    where = f"{out_dir.as_posix()}/{site}" if site else out_dir.as_posix()
    if exc is None:
        return Diagnostic(
            Span(f"{out_dir.as_posix()}/.nvcregen-lock"),
            Severity.ERROR,
            codes.NVC507.code,
            f"another nvcregen render of {out_dir.as_posix()}/ holds its lock: {lock}",
            hint="wait for it to finish, or stop it, then render again",
        )
    reason = exc.strerror or str(exc)
    named = f" ({exc.filename})" if exc.filename else ""
    if exc.errno in _FULL:
        code, msg = codes.NVC505.code, f"no space left while writing {where}: {reason}{named}"
        hint = f"free space or raise the quota, then render again; {_KEPT}"
    elif exc.errno in _UNWRITABLE:
        code, msg = codes.NVC504.code, f"cannot write to {out_dir.as_posix()}/: {reason}{named}"
        hint = "give --out a folder you may write to"
    else:
        code, msg = codes.NVC506.code, f"cannot write {where}: {reason}{named}"
        hint = f"fix the filesystem problem, then render again; {_KEPT}"
    return Diagnostic(Span(where), Severity.ERROR, code, msg, hint=hint)


def leaked_path(out_dir: Path, site: str, path: str) -> Diagnostic:
    """NVC510: a generated file holds this machine's working or output folder."""
    return Diagnostic(
        Span(f"{out_dir.as_posix()}/{site}/{path}"),
        Severity.ERROR,
        codes.NVC510.code,
        "this file would hold an absolute path of this machine; output must not depend"
        " on where it is rendered",
        hint="this is a bug in nvcregen: report it, with the site",
    )
