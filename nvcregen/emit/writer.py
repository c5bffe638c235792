"""The only code that writes `out/`: atomic per-site replacement, and drift for --check."""

from __future__ import annotations

import difflib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.emit.naming import EXTRA_FILES, INDEX_FILE
from nvcregen.emit.tree import Tree

_TMP_PREFIX = ".nvcregen-"


@dataclass(frozen=True)
class Drift:
    """One file whose committed content differs from what the sites compile to."""

    path: str
    change: Literal["added", "removed", "changed"]
    diff: str = ""


def read_tree(site_dir: Path) -> Tree:
    """Read every file under a site folder into a tree (paths relative, '/'-separated).

    Bytes are decoded without newline translation, and bytes that are not UTF-8 become
    U+FFFD, so a CRLF line ending or a binary file shows as a difference instead of being
    hidden or failing the run.
    """
    if not site_dir.is_dir():
        return {}
    return {
        file.relative_to(site_dir).as_posix(): file.read_bytes().decode("utf-8", "replace")
        for file in sorted(site_dir.rglob("*"))
        if file.is_file()
    }


def owned_files(site_dir: Path) -> set[str] | None:
    """Files nvcregen wrote into a site folder, per its index; None when there is no index."""
    index = site_dir / INDEX_FILE
    if not index.is_file():
        return None
    try:
        files = json.loads(index.read_text(encoding="utf-8")).get("files", {})
    except (ValueError, AttributeError):
        return None
    return {*files, *EXTRA_FILES} if isinstance(files, dict) else None


def diff_tree(out_dir: Path, site: str, tree: Tree) -> list[Drift]:
    """Compare a compiled tree with `out/<site>/` on disk; write nothing."""
    current = read_tree(out_dir / site)
    drifts: list[Drift] = []
    for path in sorted(set(tree) | set(current)):
        shown = f"{out_dir.as_posix()}/{site}/{path}"
        if path not in current:
            drifts.append(Drift(shown, "added"))
        elif path not in tree:
            drifts.append(Drift(shown, "removed"))
        elif current[path] != tree[path]:
            lines = difflib.unified_diff(
                current[path].splitlines(keepends=True),
                tree[path].splitlines(keepends=True),
                fromfile=f"a/{shown}",
                tofile=f"b/{shown}",
            )
            drifts.append(Drift(shown, "changed", "".join(lines)))
    return drifts


def check_ownership(out_dir: Path, site: str, tree: Tree) -> list[Diagnostic]:
    """Refuse to replace a site folder holding files nvcregen did not write."""
    site_dir = out_dir / site
    present = set(read_tree(site_dir))
    if not present:
        return []
    owned = owned_files(site_dir) or set()
    return [
        Diagnostic(
            Span(f"{out_dir.as_posix()}/{site}/{path}"),
            Severity.ERROR,
            "NVC502",
            "this file was not written by nvcregen; refusing to replace the folder",
            hint="move it out of out/ (generated folders are replaced whole), then render again",
        )
        for path in sorted(present - owned)
    ]


def write_tree(out_dir: Path, site: str, tree: Tree) -> bool:
    """Replace `out/<site>/` with `tree` atomically; return False when nothing changed.

    The new folder is written beside the old one and swapped in by two renames, so a
    reader sees the old tree or the new one, never a mix. A crash between the renames
    leaves the old tree in `.nvcregen-<site>.old`; the next run puts it back first.
    """
    site_dir = out_dir / site
    tmp = out_dir / f"{_TMP_PREFIX}{site}.new"
    old = out_dir / f"{_TMP_PREFIX}{site}.old"
    if old.is_dir() and not site_dir.exists():
        old.rename(site_dir)  # recover from a crash between the two renames
    for leftover in (tmp, old):  # from a run that crashed, even when nothing else changed
        shutil.rmtree(leftover, ignore_errors=True)
    if read_tree(site_dir) == tree:
        return False
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, text in sorted(tree.items()):
        _write_file(tmp / path, text)
    if site_dir.exists():
        site_dir.rename(old)
    tmp.rename(site_dir)
    shutil.rmtree(old, ignore_errors=True)
    return True


def _write_file(file: Path, text: str) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
