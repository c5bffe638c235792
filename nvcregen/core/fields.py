"""An object's fields as a tree may hold them: the mapping or list expected, or nothing (pure).

A rendered tree is input: a user may edit `out/<site>/` before GitOps syncs it, leaving a
`spec` that is a list, a string, a number or null. The schema check reports such a field
(NVC602); every other reader of a tree's objects (cross-object checks, policies, the
replay) reads through these, skipping what is not there in the shape it expects instead of
failing on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def mapping_at(value: object, *path: str) -> Mapping[str, Any] | None:
    """The mapping at `path` below `value`, each step a key of a mapping.

    None when a step is missing or not a mapping, or the field there is not a mapping:
    `mapping_at(obj, "spec", "template")` is None for a `spec` that is a list.
    """
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value if isinstance(value, Mapping) else None


def list_at(value: object, *path: str) -> list[Any]:
    """The list at `path` below `value`; empty when a step or the field is not what it should be."""
    for key in path:
        if not isinstance(value, Mapping):
            return []
        value = value.get(key)
    return value if isinstance(value, list) else []
