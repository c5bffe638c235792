"""Previous versions of generated files, read from a Git revision without touching the tree."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from nvcregen.spec.fast import parse_fast


class BaseError(Exception):
    """The base revision cannot be read."""


def old_objects(root: Path, ref: str, paths: list[str]) -> dict[str, Any]:
    """Return `{path: object}` for the files that exist at `ref`, read in one git process.

    Args:
        root: A folder inside the Git work tree; `paths` are relative to it.
        ref: Any revision Git understands (`HEAD`, `origin/main`, a commit).
        paths: Files to look up, '/'-separated, relative to `root`.

    Raises:
        BaseError: `root` is not in a Git work tree or `ref` does not name a commit.

    """
    prefix = _git(root, "rev-parse", "--show-prefix").strip()
    _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    batch = "".join(f"{ref}:{prefix}{path}\n" for path in paths)
    output = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input=batch.encode(),
        capture_output=True,
        check=True,
    ).stdout
    return {path: obj for path, obj in zip(paths, _split(output), strict=True) if obj is not None}


def _split(output: bytes) -> list[Any]:
    """Parse `git cat-file --batch` output: a header line, then that many bytes, per object."""
    objects: list[Any] = []
    offset = 0
    while offset < len(output):
        end = output.index(b"\n", offset)
        header = output[offset:end].split()
        offset = end + 1
        if header[-1] == b"missing":
            objects.append(None)
            continue
        size = int(header[2])
        try:
            objects.append(parse_fast(output[offset : offset + size]))
        except yaml.YAMLError:
            objects.append(None)
        offset += size + 1
    return objects


def _git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BaseError(f"git {' '.join(args)}: {result.stderr.strip() or 'failed'}")
    return result.stdout
