"""Pods that would be rejected or starved: Pod Security (NVC682) and requests (NVC683).

NVC682 (cross-object, per site): every generated Namespace names the Pod Security level
it enforces, and no object puts pods into a namespace whose level forbids them (an
`IPC_LOCK` pod under `baseline` is rejected when its Job or JobSet creates it, long after
the sync succeeded). NVC683 (per readiness object): every container of every pod template,
TrainJob `resourcesPerNode` and WorkloadRun `resources` states cpu and memory, so no
readiness pod is BestEffort: evicted first under pressure, and counted as nothing by Kueue.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from nvcregen.check.crossref import Located
from nvcregen.check.findings import Finding
from nvcregen.core import codes
from nvcregen.core.fields import mapping_at
from nvcregen.core.podsecurity import ENFORCE, containers, needed_level, pod_specs, rank

SECURITY = codes.NVC682.code
REQUESTS = codes.NVC683.code
_SIZED = ("cpu", "memory")


def check_pod_security(objects: Iterable[Located]) -> Iterator[tuple[str, Finding]]:
    """Namespaces without an enforce label, and pods their namespace's level forbids."""
    listed = list(objects)
    levels: dict[str, str | None] = {}
    for located in listed:
        if located.obj.get("kind") == "Namespace" and located.obj.get("apiVersion") == "v1":
            metadata = mapping_at(located.obj, "metadata") or {}
            level = (mapping_at(metadata, "labels") or {}).get(ENFORCE)
            levels[str(metadata.get("name"))] = level
            if level is None:
                message = f"namespace {metadata.get('name')} names no Pod Security level"
                hint = f"label it {ENFORCE}: <the level its pods need>"
                yield located.file, Finding("/metadata/labels", SECURITY, message, hint=hint)
    for located in listed:
        yield from _forbidden(located, levels)


def _forbidden(located: Located, levels: Mapping[str, str | None]) -> Iterator[tuple[str, Finding]]:
    namespace = (mapping_at(located.obj, "metadata") or {}).get("namespace")
    level = levels.get(str(namespace)) if namespace else None
    needed = needed_level(located.obj)
    if level is None or needed is None or rank(needed[0]) <= rank(level):
        return
    why = ", ".join(needed[1])
    message = (
        f"its pods need Pod Security level {needed[0]} ({why}), but namespace {namespace} "
        f"enforces {level}: they would be rejected when created"
    )
    hint = f"label namespace {namespace} {ENFORCE}: {needed[0]}"
    yield located.file, Finding("/metadata/namespace", SECURITY, message, hint=hint)


def request_findings(obj: Mapping[str, Any]) -> list[Finding]:
    """NVC683: containers, TrainJob nodes and WorkloadRuns without cpu or memory."""
    sized: list[tuple[str, str, Any]] = [
        (f"{pointer}{where}", f"container {container.get('name')}", container.get("resources"))
        for pointer, pod in pod_specs(obj)
        for where, container in containers(pod)
    ]
    spec = mapping_at(obj, "spec") or {}
    if obj.get("kind") == "TrainJob":
        trainer = mapping_at(spec, "trainer") or {}
        sized.append(
            ("/spec/trainer/resourcesPerNode", "each node", trainer.get("resourcesPerNode"))
        )
    if obj.get("kind") == "WorkloadRun":
        sized.append(("/spec/resources", "the workload", spec.get("resources")))
    return [
        _unsized(pointer, what, missing)
        for pointer, what, resources in sized
        if (missing := _missing(resources))
    ]


def _missing(resources: Any) -> list[str]:
    """The quantities (cpu, memory) neither requested nor limited (a limit implies a request)."""
    given: set[str] = set()
    if isinstance(resources, Mapping):
        for field in ("requests", "limits"):
            given |= {str(name) for name in mapping_at(resources, field) or {}}
    return [name for name in _SIZED if name not in given]


def _unsized(pointer: str, what: str, missing: list[str]) -> Finding:
    return Finding(
        pointer,
        REQUESTS,
        f"{what} requests no {' or '.join(missing)}: without requests a pod is BestEffort, "
        "evicted first and invisible to Kueue's quota",
        hint="give it cpu and memory requests (catalog/pods.yaml sizes nvcregen's pods)",
    )
