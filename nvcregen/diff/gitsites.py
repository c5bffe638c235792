"""Read the sites of a Git revision without touching the working tree or the index.

Only plumbing that reads the object database is used (`rev-parse`, `ls-tree`,
`cat-file --batch`), so a diff can run in a dirty checkout, in CI, or while an editor
holds files open, and never changes what `git status` shows.
"""

from __future__ import annotations

import posixpath
import subprocess
from pathlib import Path

import yaml

from nvcregen.spec.fast import parse_fast

SITES_DIR = "sites"
SITE_SUFFIXES = (".yaml", ".yml")
_SYMLINK_MODE = "120000"
GIT_TIMEOUT_S = 120


class GitError(Exception):
    """Git could not answer: not a repository, an unknown revision, git missing."""


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run one read-only git command in `cwd`; return its standard output.

    Raises:
        GitError: git is missing or the command failed; the message is git's own.

    """
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            check=False,
            timeout=GIT_TIMEOUT_S,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (nvcregen diff reads the base from Git)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} did not finish in {GIT_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(lines[0] if lines else f"git {args[0]} failed")
    return done.stdout


def project_prefix(cwd: Path) -> str:
    """Where `cwd` is inside its repository: `''` at the top, else `sub/dir/`."""
    try:
        return git(cwd, "rev-parse", "--show-prefix").decode().strip()
    except GitError as exc:
        raise GitError(f"cannot read the base from Git: {exc}") from exc


def resolve_commit(cwd: Path, ref: str) -> str:
    """The commit a revision names (`HEAD~1`, a tag, a branch); GitError when none."""
    if ref.startswith("-"):
        raise GitError(f"'{ref}' is not a revision")
    try:
        out = git(cwd, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    except GitError as exc:
        raise GitError(f"'{ref}' does not name a commit here: {exc}") from exc
    return out.decode().strip()


def list_sites(cwd: Path, commit: str) -> dict[str, str]:
    """Map each site file of `commit` (`sites/x.yaml`, relative to `cwd`) to its blob id.

    Like the working tree's discovery: files directly under `sites/` ending in `.yaml`
    or `.yml`. Symbolic links are left out: their blob is a path, not a site.
    """
    out = git(cwd, "ls-tree", "-z", commit, "--", f"{SITES_DIR}/")
    sites: dict[str, str] = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, oid = meta.split()
        folder, name = posixpath.split(path)
        site_file = folder == SITES_DIR and name.endswith(SITE_SUFFIXES)
        if site_file and kind == "blob" and mode != _SYMLINK_MODE:
            sites[path] = oid
    return dict(sorted(sites.items()))


def read_blobs(cwd: Path, names: list[str]) -> list[bytes | None]:
    """Read objects by name (a blob id or `commit:path`) in one `cat-file --batch`.

    Returns:
        Each object's bytes, in order; None for a name that does not exist or is not a file.

    """
    if not names:
        return []
    if any("\n" in name for name in names):
        raise GitError("an object name holds a line break")
    out = git(cwd, "cat-file", "--batch", stdin="".join(f"{n}\n" for n in names).encode())
    blobs: list[bytes | None] = []
    at = 0
    for _ in names:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3:  # "<name> missing" or "<name> ambiguous"
            blobs.append(None)
            continue
        size = int(header[2])
        blobs.append(out[at : at + size] if header[1] == b"blob" else None)
        at += size + 1  # the content is followed by a line feed
    return blobs


def export_sites(cwd: Path, ref: str, target: Path) -> str:
    """Write the site files of `ref`, and the chart archives they name, under `target`.

    `cwd` is the project folder (it may be below the repository's top); `target` gets
    the same layout (`target/sites/x.yaml`), so the sites compile there as they did at
    `ref`. Returns the commit `ref` names.
    """
    prefix = project_prefix(cwd)
    commit = resolve_commit(cwd, ref)
    sites = list_sites(cwd, commit)
    for path, raw in zip(sites, read_blobs(cwd, list(sites.values())), strict=True):
        if raw is not None:
            _write(target / path, raw)
    archives = sorted({a for p in sites if (a := _chart_archive(target / p)) is not None})
    names = [f"{commit}:{posixpath.normpath(prefix + a)}" for a in archives]
    for archive, raw in zip(archives, read_blobs(cwd, names), strict=True):
        if raw is not None:
            _write(target / archive, raw)
    return commit


def _chart_archive(site_file: Path) -> str | None:
    """The chart archive a site names, when it stays inside the project folder."""
    try:
        data = parse_fast(site_file.read_bytes())
    except (OSError, yaml.YAMLError):
        return None
    for key in ("spec", "nvcre", "chart", "archive"):
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, str) or posixpath.isabs(data):
        return None
    archive = posixpath.normpath(data)
    return None if archive == ".." or archive.startswith("../") else archive


def _write(file: Path, raw: bytes) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(raw)
