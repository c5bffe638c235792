"""`collect --from DIR`: objects exported from a cluster into a folder of YAML or JSON.

Every `.yaml`, `.yml` and `.json` file under the folder is read: single objects,
multi-document YAML, and lists (`kubectl get ... -o yaml` writes `kind: List`; the API
writes `kind: <Kind>List`, whose items may leave out their apiVersion and kind). YAML is
read as Kubernetes reads it (YAML 1.1), except that timestamps stay the strings they
are, so an object is archived exactly as exported. Exports are not trusted: aliases are
refused (`spec/fast.py`), and every object's kind, namespace and name must be valid
Kubernetes names before any of them becomes a path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from nvcregen.core.kube import name_problem
from nvcregen.results.liveobjects import Obj, ObjectKey, Snapshot, key_of
from nvcregen.spec.fast import LOADER

SUFFIXES = frozenset({".yaml", ".yml", ".json"})
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class SourceError(Exception):
    """The folder cannot be read as exported objects; `problems` says why, one per line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class _KubeLoader(LOADER):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """nvcregen's alias-free safe loader (libyaml) that leaves timestamps as strings."""


_KubeLoader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != _TIMESTAMP]
    for first, resolvers in LOADER.yaml_implicit_resolvers.items()
}


def read_folder(folder: Path) -> Snapshot:
    """Read every exported object under `folder`.

    Raises:
        SourceError: When the folder holds no such files, a file does not parse, a
            document is not a Kubernetes object, or one object appears twice with
            different content.

    """
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    if not files:
        raise SourceError([f"{folder}: no .yaml, .yml or .json files to read"])
    found: dict[ObjectKey, tuple[Obj, str]] = {}
    problems: list[str] = []
    for file in files:
        shown = file.relative_to(folder).as_posix()
        try:
            documents = list(_documents(file))
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
            problems.append(f"{shown}: cannot be read: {_first_line(exc)}")
            continue
        for index, doc in enumerate(documents, 1):
            for obj in _expand(doc):
                problems += _add(found, obj, f"{shown} (document {index})")
    if problems:
        raise SourceError(problems)
    return Snapshot(tuple(obj for obj, _ in found.values()), f"folder {folder.name}")


def _documents(file: Path) -> Iterator[Any]:
    text = file.read_bytes().decode("utf-8")
    if file.suffix == ".json":
        yield json.loads(text)
        return
    yield from (doc for doc in yaml.load_all(text, Loader=_KubeLoader) if doc is not None)


def _expand(doc: Any) -> Iterator[Any]:
    """The objects of one document: itself, or the items of a list."""
    if not isinstance(doc, dict) or not str(doc.get("kind", "")).endswith("List"):
        yield doc
        return
    kind = str(doc["kind"]).removesuffix("List")
    for item in doc.get("items") or []:
        if kind and isinstance(item, dict) and not {"apiVersion", "kind"} <= item.keys():
            yield {"apiVersion": doc.get("apiVersion"), "kind": kind, **item}
        else:
            yield item


def _add(found: dict[ObjectKey, tuple[Obj, str]], obj: Any, where: str) -> list[str]:
    """Record one object; return the problem with it, if any."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not (
        isinstance(obj, dict)
        and isinstance(obj.get("apiVersion"), str)
        and isinstance(obj.get("kind"), str)
        and isinstance(meta, dict)
        and isinstance(meta.get("name"), str)
    ):
        return [f"{where}: not a Kubernetes object (apiVersion, kind and metadata.name needed)"]
    key = key_of(obj)
    problem = name_problem(key.kind, key.namespace, key.name)
    if problem is not None:  # it would name a path outside the archive
        return [f"{where}: {problem}"]
    if key in found and found[key][0] != obj:
        return [f"{where}: {key} differs from the one in {found[key][1]}"]
    found.setdefault(key, (obj, where))
    return []


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
