"""The only code that writes `out/`: locked, atomic per-site replacement, and drift.

One render at a time holds `out/.nvcregen-lock` (`emit/swap.py`). Under it, each site's
new tree is written into its own staging folder (`.nvcregen-<site>.<pid>-<hex>.new`),
then swapped with `out/<site>` in one atomic exchange, so a reader sees the old tree or
the new one and `out/<site>` is never missing; the old tree, now in the staging folder,
is checked once more for anything someone added meanwhile (then the swap is undone and
the render refused) and deleted. Where the filesystem cannot exchange, two renames do it
and a crash between them is repaired by the next render. Leftovers of a crashed render
are removed by the next one, but only when they hold nothing but nvcregen's own files.
See `docs/design/0009-atomic-out.md`.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import secrets
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, NvcregenError, Severity, Span
from nvcregen.core.regular import NotRegularFileError, read_regular
from nvcregen.emit import swap
from nvcregen.emit.faults import leaked_path, os_error, refused, symlinked_site
from nvcregen.emit.ownership import (
    DISCARD_MARK,
    STAGING_MARK,
    foreign,
    is_leftover_of_ours,
    walk,
)
from nvcregen.emit.tree import Tree

_TMP_PREFIX = ".nvcregen-"

# Fault injection: called with the name of each step of a replacement (tests kill the
# process there); does nothing otherwise.
STEPS = ("staged", "moved-aside", "swapped", "checked", "cleaned")
on_step: Callable[[str], None] = lambda step: None  # noqa: E731


class WriteError(NvcregenError):
    """A site folder was not replaced; the diagnostics say why (nothing of it changed)."""


@dataclass(frozen=True)
class Drift:
    """One file whose committed content differs from what the sites compile to."""

    path: str
    change: Literal["added", "removed", "changed"]
    diff: str = ""


@dataclass(frozen=True)
class WriteResult:
    """The sites whose folders were replaced, and why the others were not."""

    written: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def read_tree(site_dir: Path) -> Tree:
    """Read every file under a site folder into a tree (paths relative, '/'-separated).

    Bytes are decoded without newline translation, and bytes that are not UTF-8 become
    U+FFFD, so a CRLF line ending or a binary file shows as a difference instead of being
    hidden or failing the run. Links, FIFOs and the like are never followed or opened:
    they read as `<symbolic link>`, `<FIFO>`, ... so they show as differences too.
    """
    if not site_dir.is_dir() or site_dir.is_symlink():
        return {}
    return {
        entry.path: _text(site_dir / entry.path) if entry.kind == "file" else f"<{entry.kind}>"
        for entry in walk(site_dir)
        if entry.kind != "empty folder"
    }


def _text(file: Path) -> str:
    """A regular file's text as `read_tree` shows it; `<FIFO>` (...) if it became one."""
    try:
        return read_regular(file).decode("utf-8", "replace")
    except NotRegularFileError as exc:
        return f"<{exc.kind}>"


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


def check_ownership(out_dir: Path, site: str, tree: Tree | None = None) -> list[Diagnostic]:
    """Refuse to replace a site folder holding anything nvcregen did not write."""
    site_dir = out_dir / site
    if site_dir.is_symlink() or (site_dir.exists() and not site_dir.is_dir()):
        return [symlinked_site(out_dir, site)]
    if not site_dir.exists():
        return []
    return [refused(out_dir, site, entry) for entry in foreign(site_dir)]


def write_trees(out_dir: Path, trees: Mapping[str, Tree]) -> WriteResult:
    """Replace every site's folder under one lock of `out_dir`, or refuse them all.

    Every folder is checked first (nothing nvcregen did not write, no symlinked site);
    a failure after that (a full disk) stops at the site it hit, leaving that site's
    folder as it was. Never raises for a filesystem problem: it becomes a diagnostic.
    """
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with swap.tree_lock(out_dir):
            return _write_locked(out_dir, trees)
    except swap.LockTimeout as exc:
        return WriteResult([], [os_error(out_dir, None, None, lock=str(exc))])
    except OSError as exc:
        return WriteResult([], [os_error(out_dir, None, exc)])


def _write_locked(out_dir: Path, trees: Mapping[str, Tree]) -> WriteResult:
    diags = [d for site in trees for d in recover(out_dir, site)]
    refusals = host_paths(out_dir, trees)
    refusals += [d for site in trees for d in check_ownership(out_dir, site)]
    if refusals:
        return WriteResult([], diags + refusals)
    written: list[str] = []
    for site, tree in trees.items():
        try:
            if _replace(out_dir, site, tree):
                written.append(site)
        except WriteError as exc:
            return WriteResult(written, diags + exc.diagnostics)
        except OSError as exc:
            return WriteResult(written, [*diags, os_error(out_dir, site, exc)])
    return WriteResult(written, diags)


def host_paths(out_dir: Path, trees: Mapping[str, Tree]) -> list[Diagnostic]:
    """NVC510 for a file that would hold an absolute path of this machine.

    Output must be the same wherever it is rendered: the working directory and the
    output folder (when at least three levels deep, so `/tmp` or `/opt` alone, which
    container paths share, are no evidence) must appear in no generated file.
    """
    places = {str(p) for p in (Path.cwd().resolve(), out_dir.resolve()) if len(p.parts) > 3}
    return [
        leaked_path(out_dir, site, path)
        for site, tree in trees.items()
        for path, text in sorted(tree.items())
        if any(place in text for place in places)
    ]


def write_tree(out_dir: Path, site: str, tree: Tree) -> bool:
    """Replace `out/<site>/` with `tree` atomically; return False when nothing changed.

    Raises:
        WriteError: The folder holds something nvcregen did not write, or it cannot be
            written (permissions, a full disk); the folder is as it was.

    """
    result = write_trees(out_dir, {site: tree})
    if result.diagnostics and any(d.is_error for d in result.diagnostics):
        raise WriteError(result.diagnostics)
    return bool(result.written)


def recover(out_dir: Path, site: str) -> list[Diagnostic]:
    """Repair what a crashed render of `site` left (call with the lock held).

    A site folder moved aside by the two-rename fallback is moved back when the site
    folder is missing; staging and old folders are deleted when they hold only what
    nvcregen wrote, and kept with a warning otherwise.
    """
    site_dir = out_dir / site
    leftovers = sorted(
        (p for p in out_dir.glob(f"{_TMP_PREFIX}{site}.*") if p.is_dir() and not p.is_symlink()),
        key=lambda p: p.stat().st_mtime_ns,
    )
    if not os.path.lexists(site_dir):
        aside = [p for p in leftovers if p.name.endswith(".old")]
        if aside:
            aside[-1].rename(site_dir)  # a crash between the two renames of the fallback
            leftovers.remove(aside[-1])
    legacy = {f"{_TMP_PREFIX}{site}.new", f"{_TMP_PREFIX}{site}.old"}  # earlier versions
    kept = []
    for folder in leftovers:
        if is_leftover_of_ours(folder, legacy=folder.name in legacy):
            _discard(folder)
        else:
            kept.append(_kept(out_dir, folder))
    return kept


def _kept(out_dir: Path, folder: Path) -> Diagnostic:
    return Diagnostic(
        Span(f"{out_dir.as_posix()}/{folder.name}"),
        Severity.WARNING,
        codes.NVC509.code,
        "a folder left by an interrupted render holds files nvcregen did not write; kept",
        hint="move what you need out of it, then delete the folder",
    )


def _replace(out_dir: Path, site: str, tree: Tree) -> bool:
    site_dir = out_dir / site
    if site_dir.is_dir() and read_tree(site_dir) == tree:
        return False
    stage = _stage(out_dir, site, tree)
    try:
        if not os.path.lexists(site_dir):
            swap.rename_noreplace(stage, site_dir)
            on_step("swapped")
            swap.fsync_dir(out_dir)
            return True
        _swap_in(stage, site_dir, out_dir)
    except BaseException:
        with contextlib.suppress(OSError):
            _discard(stage)  # still the new tree: nothing was swapped
        raise
    # `stage` now holds the old tree; a failure from here on leaves it for `recover`.
    strangers = foreign(stage)  # did someone add something while this render ran?
    on_step("checked")
    if strangers:
        _swap_in(stage, site_dir, out_dir)  # put the old tree (and their files) back
        _discard(stage)
        raise WriteError([refused(out_dir, site, entry) for entry in strangers])
    _discard(stage)
    on_step("cleaned")
    return True


def _discard(folder: Path) -> None:
    """Delete a folder of nvcregen's, marked first (`DISCARD_MARK`) and unmarked last.

    A render killed midway leaves the folder marked, so the next render (`recover`)
    proves it is nvcregen's and finishes the deletion, instead of finding a folder with
    no index (an empty `gitops/`, say) and warning about it (NVC509) on every render.
    """
    mark = folder / DISCARD_MARK
    mark.write_text(f"{os.getpid()}\n", encoding="utf-8")
    on_step("discarding")
    for entry in sorted(folder.iterdir()):
        if entry.name == DISCARD_MARK:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
        on_step("discarded-one")
    mark.unlink()
    folder.rmdir()


def _stage(out_dir: Path, site: str, tree: Tree) -> Path:
    """Write `tree` into a new staging folder of this run only; return the folder."""
    stage = out_dir / f"{_TMP_PREFIX}{site}.{os.getpid()}-{secrets.token_hex(4)}.new"
    stage.mkdir()
    try:
        _write_file(stage / STAGING_MARK, "")
        written = [stage / STAGING_MARK]
        for path, text in sorted(tree.items()):
            written.append(stage / path)
            _write_file(written[-1], text)
        swap.sync_written(stage, written)  # every file durable before the marker goes
        (stage / STAGING_MARK).unlink()
        swap.fsync_dir(stage)
    except BaseException:
        with contextlib.suppress(OSError):
            _discard(stage)
        raise
    on_step("staged")
    return stage


def _swap_in(stage: Path, site_dir: Path, out_dir: Path) -> None:
    """Exchange `stage` and `site_dir`; two renames where the filesystem cannot."""
    try:
        swap.exchange(stage, site_dir)
    except swap.ExchangeUnsupported:
        aside = stage.with_name(stage.name.removesuffix(".new") + ".old")
        site_dir.rename(aside)
        on_step("moved-aside")
        try:
            stage.rename(site_dir)
        except OSError:
            aside.rename(site_dir)
            raise
        aside.rename(stage)
    on_step("swapped")
    swap.fsync_dir(out_dir)


def _write_file(file: Path, text: str) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("x", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
