"""Derive each generated object's file path from the object itself."""

from __future__ import annotations

from nvcregen.core.manifest import Manifest

INDEX_FILE = "index.json"
IMAGES_FILE = "images.txt"
# Files nvcregen writes besides the objects the index lists.
EXTRA_FILES = frozenset({INDEX_FILE, IMAGES_FILE})


def manifest_path(manifest: Manifest) -> str:
    """Return `<component>/[<folder>/]<kind>-<name>.yaml`, relative to `out/<site>/`."""
    folder = f"{manifest.component}/{manifest.folder}" if manifest.folder else manifest.component
    return f"{folder}/{manifest.kind.lower()}-{manifest.name}.yaml"
