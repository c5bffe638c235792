"""Read and check many files on every core: forked workers share the parent's warm caches."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nvcregen.check.findings import Finding
from nvcregen.check.objectcheck import object_findings
from nvcregen.core.errors import Severity
from nvcregen.core.forked import forked_iter, forked_map
from nvcregen.core.regular import read_regular
from nvcregen.spec.fast import parse_fast


@dataclass(frozen=True)
class FileJob:
    """One generated file to read and check, and how to check it."""

    path: Path
    kube_version: str
    strict: bool = False
    old: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class FileResult:
    """A file's data (None when libyaml cannot parse it) and the object's findings."""

    data: Any
    findings: list[Finding] = field(default_factory=list)


def is_object(data: Any) -> bool:
    """Whether parsed data is a Kubernetes object (a mapping with a kind)."""
    return not_object(data) is None


def not_object(data: Any) -> str | None:
    """Why parsed data is no Kubernetes object (None when it is one).

    An object is a mapping whose `kind` and `apiVersion` (when present) are strings; its
    `metadata`, labels and annotations, when present, mappings. Anything else would only
    confuse the checks that read them.
    """
    if not isinstance(data, dict) or "kind" not in data:
        return "not a Kubernetes object (no kind)"
    for key in ("kind", "apiVersion"):
        if key in data and not isinstance(data[key], str):
            return f"not a Kubernetes object ({key} is {_shape(data[key])}, not a string)"
    meta = data.get("metadata", {})
    if not isinstance(meta, dict):
        return f"not a Kubernetes object (metadata is {_shape(meta)}, not a mapping)"
    for key in ("labels", "annotations"):
        if meta.get(key) is not None and not isinstance(meta[key], dict):
            return f"not a Kubernetes object (metadata.{key} is {_shape(meta[key])}, not a mapping)"
    return None


def _shape(value: Any) -> str:
    """What a YAML value is, with its article: `a list`, `a number`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "a boolean" if isinstance(value, bool) else "a number"


def check_files(jobs: list[FileJob]) -> list[FileResult]:
    """Parse and check every file, in order; large trees use every core (`iter_check_files`)."""
    return list(iter_check_files(jobs))


def iter_check_files(
    jobs: list[FileJob], meanwhile: Callable[[], None] = lambda: None
) -> Iterator[FileResult]:
    """Parse and check every file, yielding results in order as soon as they are known.

    Large trees use every core (`core/forked.py`): workers are forked after one file of
    each kind has warmed the schema, CEL and policy caches, receive job indexes and send
    back plain data and findings, equal strings as one object (`share_strings`; each
    worker remembers the strings it has seen). `meanwhile` runs once the workers have
    their work (first, when there are none), before the first result is yielded.
    """
    seen: dict[str, str] = {}

    def task(index: int) -> tuple[Any, list[Plain]]:
        result = check_file(jobs[index])
        share_strings(result.data, seen)
        return result.data, _plain(result.findings)

    first = tuple(_one_per_kind(jobs))
    for data, found in forked_iter(task, len(jobs), first=first, meanwhile=meanwhile):
        yield FileResult(data, _findings(found))


def _one_per_kind(jobs: list[FileJob]) -> list[int]:
    """One job per file-name prefix: nvcregen names files `<kind>-<name>.yaml`."""
    first: dict[str, int] = {}
    for index, job in enumerate(jobs):
        first.setdefault(job.path.name.split("-", 1)[0], index)
    return sorted(first.values())


def check_file(job: FileJob) -> FileResult:
    """Parse one file with libyaml and, when it holds an object, check it."""
    try:
        data = parse_fast(read_regular(job.path))
    except (OSError, yaml.YAMLError):
        return FileResult(None)
    if not is_object(data):
        return FileResult(data)
    findings = object_findings(data, kube_version=job.kube_version, strict=job.strict, old=job.old)
    return FileResult(data, findings)


def share_strings(data: Any, seen: dict[str, str]) -> None:
    """Make equal strings in `data`'s mappings and lists one object, in place.

    A tree repeats the same texts in thousands of objects (a run's script, its image, a
    prebuilt Workload's copy of its run's containers); the parent keeps every object, so
    one copy of each saves a third of its memory at fleet size.
    """
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, str):
                    node[key] = seen.setdefault(value, value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                if isinstance(value, str):
                    node[index] = seen.setdefault(value, value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)


Plain = tuple[str, str, str, str, str]  # a Finding as marshal writes it


def _plain(findings: Sequence[Finding]) -> list[Plain]:
    return [(f.pointer, f.code, f.message, f.severity.value, f.hint) for f in findings]


def _findings(plain: Sequence[Plain]) -> list[Finding]:
    return [Finding(p, c, m, Severity(s), h) for p, c, m, s, h in plain]


def objects_findings(
    objects: Sequence[Mapping[str, Any]],
    kube_version: str,
    meanwhile: Callable[[], None] = lambda: None,
) -> list[list[Finding]]:
    """`object_findings` of each object, in order; many objects use every core.

    One object of each kind is checked in this process first, so forked workers inherit
    compiled validators and warm caches (`core/forked.py`); they send back findings only.
    `meanwhile` runs while they work (first, when there are none): the render gate checks
    across objects then.
    """
    first: dict[str, int] = {}
    for index, obj in enumerate(objects):
        first.setdefault(str(obj.get("kind")), index)

    def task(index: int) -> list[Plain]:
        return _plain(object_findings(objects[index], kube_version=kube_version))

    encoded = forked_map(task, len(objects), first=tuple(first.values()), meanwhile=meanwhile)
    return [_findings(found) for found in encoded]
