"""Derive each generated object's file path from the object itself, and name folders."""

from __future__ import annotations

import os
from pathlib import Path

from nvcregen.core.manifest import Manifest

INDEX_FILE = "index.json"
IMAGES_FILE = "images.txt"
# Files nvcregen writes besides the objects the index lists.
EXTRA_FILES = frozenset({INDEX_FILE, IMAGES_FILE})


def manifest_path(manifest: Manifest) -> str:
    """Return `<component>/[<folder>/]<kind>-<name>.yaml`, relative to `out/<site>/`."""
    folder = f"{manifest.component}/{manifest.folder}" if manifest.folder else manifest.component
    return f"{folder}/{manifest.kind.lower()}-{manifest.name}.yaml"


def project_path(folder: Path, project: Path) -> str | None:
    """A folder as a '/'-separated path inside the project (`out`, `deploy/out`); None outside.

    `folder` is as the user gave it (relative to the working directory, or absolute).
    Links are not followed first: an `out` inside the project that links elsewhere is
    still `out` in the repository.
    """
    for inside, base in ((_plain(folder), _plain(project)), (folder.resolve(), project.resolve())):
        try:
            return inside.relative_to(base).as_posix()
        except ValueError:
            continue
    return None


def _plain(path: Path) -> Path:
    """An absolute path with `..` and `.` folded away, links left as they are."""
    return Path(os.path.normpath(path.absolute()))
