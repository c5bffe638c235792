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
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError

from nvcregen.core import codes
from nvcregen.core.kube import name_problem
from nvcregen.results.liveobjects import Obj, ObjectKey, Snapshot, key_of
from nvcregen.spec.fast import LOADER

SUFFIXES = frozenset({".yaml", ".yml", ".json"})
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
MAX_DEPTH = 100  # objects nest a few dozen levels; far deeper is an attack on recursion
NOT_REGULAR = codes.NVC710.code
SAME_RUN = codes.NVC711.code  # two saved logs of one run (`x.log`, `x.txt`)
DUPLICATE_KEY = codes.NVC712.code
TOO_LONG = codes.NVC713.code
TOO_DEEP = codes.NVC714.code


class SourceError(Exception):
    """The folder cannot be read as exported objects; `problems` says why, one per line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class DuplicateKeyError(ConstructorError):
    """A mapping gives one key twice."""


class _KubeLoader(LOADER):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """nvcregen's alias-free safe loader (libyaml): timestamps stay strings, no key twice."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[tuple[str, Any]] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = (key_node.tag, _scalar(self, key_node))
            if key in seen:
                raise DuplicateKeyError(
                    None, None, f"the key {key_node.value!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


def _scalar(loader: Any, node: Any) -> Any:
    """A key's value as its tag reads it (`1` and `0x1` are one int), without keeping it."""
    construct = loader.yaml_constructors.get(node.tag)
    try:
        return construct(loader, node) if construct is not None else node.value
    except (ValueError, yaml.YAMLError):
        return node.value


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
    files, problems = regular_files(folder, SUFFIXES)
    if not files and not problems:
        raise SourceError([f"{folder}: no .yaml, .yml or .json files to read"])
    found: dict[ObjectKey, tuple[Obj, str]] = {}
    for file in files:
        shown = file.relative_to(folder).as_posix()
        try:
            documents = list(_documents(file))
        except DuplicateKeyError as exc:
            problems.append(_coded(shown, DUPLICATE_KEY, exc))
            continue
        except RecursionError:
            problems.append(f"{shown}: error[{TOO_DEEP}]: nested too deeply to be read")
            continue
        except yaml.MarkedYAMLError as exc:
            deep = "maximum nesting depth" in str(exc.problem)  # libyaml's own bound
            problems.append(
                _coded(shown, TOO_DEEP, exc)
                if deep
                else f"{shown}: cannot be read: {_first_line(exc)}"
            )
            continue
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
            long = isinstance(exc, ValueError) and "digits" in str(exc)  # int() of 4300 digits
            code = f"error[{TOO_LONG}]: " if long else ""
            problems.append(f"{shown}: {code}cannot be read: {_first_line(exc)}")
            continue
        if any(_deeper_than(doc, MAX_DEPTH) for doc in documents):
            problems.append(f"{shown}: error[{TOO_DEEP}]: nested more than {MAX_DEPTH} deep")
            continue
        for index, doc in enumerate(documents, 1):
            for obj in _expand(doc):
                problems += _add(found, obj, f"{shown} (document {index})")
    if problems:
        raise SourceError(problems)
    return Snapshot(tuple(obj for obj, _ in found.values()), f"folder {folder.name}")


def regular_files(folder: Path, suffixes: frozenset[str]) -> tuple[list[Path], list[str]]:
    """Every regular file under `folder` whose suffix is one of `suffixes`, sorted.

    The folder is walked with lstat and no link is followed. Returns the files and a
    refusal (NVC710) for each symbolic link in the folder, whatever it names, and for
    each FIFO, socket or device with one of the suffixes.
    """
    files: list[Path] = []
    problems: list[str] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{_shown(folder, current)}: cannot be read: {exc.strerror or exc}")
            continue
        for entry in entries:
            path = Path(entry.path)
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                problems.append(
                    f"{_shown(folder, path)}: error[{NOT_REGULAR}]: a symbolic link; nothing"
                    " is followed out of the folder (copy the file it names instead)"
                )
            elif stat.S_ISDIR(mode):
                pending.append(path)
            elif path.suffix in suffixes:
                if stat.S_ISREG(mode):
                    files.append(path)
                else:
                    problems.append(
                        f"{_shown(folder, path)}: error[{NOT_REGULAR}]: not a regular file"
                    )
    return sorted(files), problems


def read_regular(file: Path) -> bytes:
    """A regular file's bytes, opened without following a link (one put there since).

    Raises:
        OSError: When it cannot be opened, is a link, or is not a regular file.

    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(file, flags)
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{file.name} is not a regular file")
        return handle.read()


def _shown(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix() if path != folder else str(folder)


def _coded(shown: str, code: str, exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark
    where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark is not None else shown
    return f"{where}: error[{code}]: {exc.problem}"


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether data nests more than `limit` levels (walked without recursion)."""
    pending = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            pending += [(item, depth + 1) for item in items]
    return False


def _documents(file: Path) -> Iterator[Any]:
    text = read_regular(file).decode("utf-8")
    if file.suffix == ".json":
        yield json.loads(text, object_pairs_hook=_unique_pairs)
        return
    yield from (doc for doc in yaml.load_all(text, Loader=_KubeLoader) if doc is not None)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKeyError(None, None, f"the key {key!r} is given twice", None)
        found[key] = value
    return found


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
