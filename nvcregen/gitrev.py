"""Files of a Git revision, read without touching the working tree or the index.

One set of Git plumbing for both commands that read a base revision:

- `check --base REF`: `old_objects`, the previous versions of generated files, for the
  CEL transition rules;
- `nvcregen diff GIT-REF`: `export_sites`, the revision's sites and the chart archives
  they name, written to a scratch folder to be compiled there.

Only commands that read the object database run (`rev-parse`, `ls-tree`, `cat-file
--batch`), so both work in a dirty checkout, in CI, or while an editor holds files open,
and never change what `git status` shows.

Errors are `GitError`, one subclass per cause a user can fix: `GitMissingError` (no
`git` to run), `NotARepositoryError` (the folder is not inside a Git work tree),
`UnknownRevisionError` (the revision names no commit). Their messages carry git's own
first line. Paths are '/'-separated and relative to the folder given; one that leaves
the repository (absolute, or `..` above its top) is never in a revision. File names go
to and come from git as UTF-8 with `surrogateescape`, so any name round-trips.
"""

from __future__ import annotations

import posixpath
import subprocess
from pathlib import Path
from typing import Any

import yaml

from nvcregen.spec.fast import parse_fast

SITES_DIR = "sites"
SITE_SUFFIXES = (".yaml", ".yml")
GIT_TIMEOUT_S = 120
_SYMLINK_MODE = "120000"
_ENCODING = ("utf-8", "surrogateescape")


class GitError(Exception):
    """Git could not answer: not a repository, an unknown revision, git missing."""


class GitMissingError(GitError):
    """There is no `git` program to run."""


class NotARepositoryError(GitError):
    """The folder is not inside a Git work tree."""


class UnknownRevisionError(GitError):
    """The revision names no commit."""


class GitCommandError(GitError):
    """Git ran and refused; the message is git's first line."""


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run one read-only git command in `cwd`; return its standard output.

    Raises:
        GitMissingError: There is no git to run.
        NotARepositoryError: `cwd` is not a folder.
        GitCommandError: The command failed; the message is git's first line.
        GitError: It did not finish in time, or could not be started.

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
        if not cwd.is_dir():
            raise NotARepositoryError(f"cannot read the base from Git: no folder {cwd}") from exc
        raise GitMissingError("git is not installed (nvcregen reads the base from Git)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} did not finish in {GIT_TIMEOUT_S} s") from exc
    except OSError as exc:
        raise GitError(f"git {args[0]} could not run: {exc}") from exc
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitCommandError(lines[0] if lines else f"git {args[0]} failed")
    return done.stdout


def project_prefix(cwd: Path) -> str:
    """Where `cwd` is inside its repository: `''` at the top, else `sub/dir/`.

    Raises:
        NotARepositoryError: `cwd` is not inside a Git work tree.

    """
    try:
        out = git(cwd, "rev-parse", "--show-prefix")
    except GitCommandError as exc:
        raise NotARepositoryError(f"cannot read the base from Git: {exc}") from exc
    return out.decode(*_ENCODING).removesuffix("\n")


def repository_prefix(project: Path) -> str:
    """Where a project is in its Git repository: `''` at its top or outside Git, else `sub/`."""
    try:
        return project_prefix(project)
    except GitError:
        return ""


def in_repository(prefix: str, inside: str) -> str:
    """A folder inside a project as its Git repository names it, which GitOps reads.

    `prefix` is the project's `repository_prefix`: a project kept in a subfolder of its
    repository (`platform/gpu/`) has its `out` applied from `platform/gpu/out`.
    """
    return (prefix.rstrip("/") or ".") if inside in {"", "."} else f"{prefix}{inside}"


def resolve_commit(cwd: Path, ref: str) -> str:
    """The commit a revision names (`HEAD~1`, a tag, a branch).

    Raises:
        UnknownRevisionError: `ref` names no commit here (or looks like an option).

    """
    if ref.startswith("-") or not ref or "\n" in ref:
        raise UnknownRevisionError(f"'{ref}' is not a revision")
    try:
        out = git(cwd, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    except GitCommandError as exc:
        raise UnknownRevisionError(f"'{ref}' does not name a commit here: {exc}") from exc
    return out.decode().strip()


def read_blobs(cwd: Path, names: list[str]) -> list[bytes | None]:
    """Read objects by name (a blob id or `commit:path`) in one `cat-file --batch`.

    Returns:
        Each object's bytes, in order; None for a name that does not exist or is not a file.

    Raises:
        GitError: A name holds a line break, or git failed.

    """
    if not names:
        return []
    if any("\n" in name for name in names):
        raise GitError("an object name holds a line break")
    batch = "".join(f"{n}\n" for n in names).encode(*_ENCODING)
    out = git(cwd, "cat-file", "--batch", stdin=batch)
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


def repo_path(prefix: str, path: str) -> str | None:
    """`path` (relative to the folder at `prefix`) from the repository's top; None outside it."""
    if not path or "\n" in path or posixpath.isabs(path):
        return None
    name = posixpath.normpath(prefix + path)
    return None if name == ".." or name.startswith("../") else name


def old_objects(root: Path, ref: str, paths: list[str]) -> dict[str, Any]:
    """Return `{path: object}` for the files that exist at `ref`, read in one git process.

    Args:
        root: A folder inside the Git work tree; `paths` are relative to it.
        ref: Any revision Git understands (`HEAD`, `origin/main`, a commit).
        paths: Files to look up, '/'-separated, relative to `root`.

    Returns:
        The parsed YAML of each file `ref` has; a file it lacks, one outside the
        repository, and one that is not YAML are left out.

    Raises:
        GitError: `root` is not in a Git work tree, `ref` names no commit, or git is
            missing (see the subclasses).

    """
    prefix = project_prefix(root)
    commit = resolve_commit(root, ref)
    inside = {path: name for path in paths if (name := repo_path(prefix, path)) is not None}
    blobs = read_blobs(root, [f"{commit}:{name}" for name in inside.values()])
    found: dict[str, Any] = {}
    for path, raw in zip(inside, blobs, strict=True):
        obj = _parse(raw)
        if obj is not None:
            found[path] = obj
    return found


def _parse(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return parse_fast(raw)
    except yaml.YAMLError:
        return None


def list_sites(cwd: Path, commit: str) -> dict[str, str]:
    """Map each site file of `commit` (`sites/x.yaml`, relative to `cwd`) to its blob id.

    Like the working tree's discovery: files directly under `sites/` ending in `.yaml`
    or `.yml`. Symbolic links are left out: their blob is a path, not a site.
    """
    out = git(cwd, "ls-tree", "-z", commit, "--", f"{SITES_DIR}/")
    sites: dict[str, str] = {}
    for entry in out.decode(*_ENCODING).split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, oid = meta.split()
        folder, name = posixpath.split(path)
        site_file = folder == SITES_DIR and name.endswith(SITE_SUFFIXES)
        if site_file and kind == "blob" and mode != _SYMLINK_MODE:
            sites[path] = oid
    return dict(sorted(sites.items()))


def export_sites(cwd: Path, ref: str, target: Path) -> str:
    """Write the site files of `ref`, and the chart archives they name, under `target`.

    `cwd` is the project folder (it may be below the repository's top); `target` gets
    the same layout (`target/sites/x.yaml`), so the sites compile there as they did at
    `ref`. Returns the commit `ref` names.

    Raises:
        GitError: `cwd` is not in a Git work tree, `ref` names no commit, or git is
            missing (see the subclasses).

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
