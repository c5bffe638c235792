"""A rendered site folder read back: every object at its path in the folder.

The files are nvcregen's own output, read with the bounded, alias-free loader every other
rendered file is read with (`spec/fast.py`); `preview/` is never applied, so never read.
"""

from __future__ import annotations

from pathlib import Path

from nvcregen.replay.model import TreeObject
from nvcregen.spec.fast import parse_fast

PREVIEW = "preview"


def read_tree(folder: Path) -> list[TreeObject]:
    """The objects of a rendered site folder, by path (`readiness/01-x/y.yaml`), sorted."""
    found = []
    for path in sorted(folder.rglob("*.yaml")):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith(f"{PREVIEW}/") or not path.is_file():
            continue
        data = parse_fast(path.read_bytes())
        if isinstance(data, dict) and "kind" in data:
            found.append(TreeObject(relative, relative, data))
    return found
