"""The object diff of two compiled trees: objects added, removed and changed, field by field.

Objects are matched by kind, namespace and name. Certification and WorkloadRun names end
in a hash of their immutable spec, so for those two kinds the name without its hash is
what matches: a changed spec shows as one object recreated under a new name, with the
fields that made it new, instead of an unrelated removal and addition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from nvcregen.spec.fast import parse_fast

IMMUTABLE_KINDS = frozenset({"Certification", "WorkloadRun"})
_NAME_HASH = re.compile(r"-[0-9a-f]{8}$")

Tree = dict[str, str]
Key = tuple[str, str, str]  # kind, namespace, name (without the hash of an immutable kind)


@dataclass(frozen=True)
class ObjectRef:
    """One generated object: what it is and where it is written."""

    kind: str
    namespace: str
    name: str
    path: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@dataclass(frozen=True)
class FieldChange:
    """One field that differs, at a JSON pointer into the object."""

    path: str
    change: Literal["added", "removed", "changed"]
    old: Any = None
    new: Any = None


@dataclass(frozen=True)
class ObjectChange:
    """An object present on both sides with different content."""

    old: ObjectRef
    new: ObjectRef
    fields: tuple[FieldChange, ...]

    @property
    def recreated(self) -> bool:
        """Its spec is immutable and changed: applying it creates a new object."""
        return self.old.kind in IMMUTABLE_KINDS and self.old.name != self.new.name


@dataclass(frozen=True)
class ObjectDiff:
    """Every object-level difference between two trees, each list in path order."""

    added: tuple[ObjectRef, ...] = ()
    removed: tuple[ObjectRef, ...] = ()
    changed: tuple[ObjectChange, ...] = ()

    @property
    def recreated(self) -> tuple[ObjectChange, ...]:
        """The changed objects that must be recreated under a new name."""
        return tuple(c for c in self.changed if c.recreated)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def diff_trees(old: Tree, new: Tree) -> ObjectDiff:
    """Compare the objects of two site trees (`index.json` and `images.txt` are not objects)."""
    before, after = tree_objects(old), tree_objects(new)
    changed = []
    for key in sorted(before.keys() & after.keys(), key=lambda k: after[k][0].path):
        (old_ref, old_obj), (new_ref, new_obj) = before[key], after[key]
        if old_obj != new_obj:
            fields = tuple(field_changes(old_obj, new_obj))
            changed.append(ObjectChange(old_ref, new_ref, fields))
    return ObjectDiff(
        added=tuple(sorted((after[k][0] for k in after.keys() - before.keys()), key=_path)),
        removed=tuple(sorted((before[k][0] for k in before.keys() - after.keys()), key=_path)),
        changed=tuple(changed),
    )


def _path(ref: ObjectRef) -> str:
    return ref.path


def tree_objects(tree: Tree) -> dict[Key, tuple[ObjectRef, dict[str, Any]]]:
    """Every object of a tree, by its matching key."""
    found: dict[Key, tuple[ObjectRef, dict[str, Any]]] = {}
    for path, text in sorted(tree.items()):
        obj = _load(text) if path.endswith(".yaml") else None
        if obj is None:
            continue
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        ref = ObjectRef(
            str(obj.get("kind", "")),
            str(meta.get("namespace", "")),
            str(meta.get("name", "")),
            path,
        )
        key = match_key(ref)
        found[key if key not in found else (ref.kind, ref.namespace, ref.name)] = (ref, obj)
    return found


def match_key(ref: ObjectRef) -> Key:
    """Kind, namespace and name; for an immutable kind, the name without its hash."""
    name = _NAME_HASH.sub("", ref.name) if ref.kind in IMMUTABLE_KINDS else ref.name
    return ref.kind, ref.namespace, name


def _load(text: str) -> dict[str, Any] | None:
    try:
        obj = parse_fast(text.encode())
    except yaml.YAMLError:
        return None
    return obj if isinstance(obj, dict) else None


def field_changes(old: Any, new: Any, path: str = "") -> list[FieldChange]:
    """Every leaf difference between two JSON-like values, with its JSON pointer.

    Mappings are compared key by key and lists item by item (a longer list shows its
    extra items as added or removed); anything else is compared as a whole.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[FieldChange] = []
        for key in sorted(old.keys() | new.keys(), key=str):
            at = f"{path}/{_escape(str(key))}"
            if key not in new:
                changes.append(FieldChange(at, "removed", old=old[key]))
            elif key not in old:
                changes.append(FieldChange(at, "added", new=new[key]))
            else:
                changes += field_changes(old[key], new[key], at)
        return changes
    if isinstance(old, list) and isinstance(new, list):
        changes = []
        for index in range(max(len(old), len(new))):
            at = f"{path}/{index}"
            if index >= len(new):
                changes.append(FieldChange(at, "removed", old=old[index]))
            elif index >= len(old):
                changes.append(FieldChange(at, "added", new=new[index]))
            else:
                changes += field_changes(old[index], new[index], at)
        return changes
    same = old == new and type(old) is type(new)
    return [] if same else [FieldChange(path or "/", "changed", old=old, new=new)]


def _escape(key: str) -> str:
    """One JSON pointer token (RFC 6901): `~` is `~0`, `/` is `~1`."""
    return key.replace("~", "~0").replace("/", "~1")
