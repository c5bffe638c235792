"""Whether a read holds every object its objects point at (pure), before `--reclaim`.

Reclaiming deletes a site's Certifications and WorkloadRuns; Kubernetes then deletes
what they own, measurements included. So nothing may be deleted unless every object the
read objects name was read too:

- a Certification's `categoryStatuses[].workflowRef` and a WorkloadRun's `workflowRef`
  name Workflows; their `succeededNodesRef` and `failedNodesRef` name ConfigMaps;
- a Workflow's `succeededNodesRef` and `failedNodesRef` name ConfigMaps, and, once any
  measurement of a Workflow was read, every Job its `iterationHistory` shows succeeded
  must have one (`spec.jobRef.name`);
- a ReportExport's `snapshotRef` names a ConfigMap.

A reference to a kind the cluster does not serve (its CRD is missing) and a reference to
an object that is not there (a missing object) are told apart in the message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from nvcregen.results.liveobjects import ListRecord, Obj, key_of, metadata, owner_uids, status_of

_NODE_REFS = ("succeededNodesRef", "failedNodesRef")
_MEASUREMENTS = frozenset({"BandwidthMeasurement", "GoodputMeasurement"})
Ref = tuple[str, str, str]  # kind, namespace, name


def missing_objects(
    objects: Sequence[Obj], read: Sequence[Obj], listings: Sequence[ListRecord]
) -> list[str]:
    """Every reference among a site's `objects` that names no object `read`, said plainly."""
    present = {(k.kind, k.namespace, k.name) for k in map(key_of, read)}
    unserved = {record.kind for record in listings if not record.served}
    problems = []
    for holder, ref in _references(objects):
        if ref in present:
            continue
        kind, namespace, name = ref
        if kind in unserved:
            problems.append(f"{holder} names {kind} {name}, but the cluster serves no {kind}")
        else:
            problems.append(f"{holder} names {kind} {namespace}/{name}, which was not read")
    return sorted(set(problems))


def _references(objects: Sequence[Obj]) -> Iterator[tuple[str, Ref]]:
    for obj in objects:
        kind, holder = obj.get("kind"), str(key_of(obj))
        namespace = str(metadata(obj).get("namespace") or "")
        status = status_of(obj)
        entries: list[Mapping[str, Any]] = [status]
        if kind == "Certification":
            entries += [e for e in status.get("categoryStatuses") or [] if isinstance(e, Mapping)]
        if kind in {"Certification", "WorkloadRun", "Workflow"}:
            for entry in entries:
                yield from _entry_refs(holder, namespace, entry, workflow=kind != "Workflow")
        if kind == "ReportExport":
            yield from _named(holder, "ConfigMap", namespace, status.get("snapshotRef"))
    yield from _measured_jobs(objects)


def _entry_refs(
    holder: str, namespace: str, entry: Mapping[str, Any], *, workflow: bool
) -> Iterator[tuple[str, Ref]]:
    if workflow:
        yield from _named(holder, "Workflow", namespace, entry.get("workflowRef"))
    for key in _NODE_REFS:
        yield from _named(holder, "ConfigMap", namespace, entry.get(key))


def _named(holder: str, kind: str, namespace: str, ref: object) -> Iterator[tuple[str, Ref]]:
    if isinstance(ref, Mapping) and ref.get("name"):
        yield holder, (kind, str(ref.get("namespace") or namespace), str(ref["name"]))


def _measured_jobs(objects: Sequence[Obj]) -> Iterator[tuple[str, Ref]]:
    """A measurement per succeeded Job of each Workflow that has any measurement read."""
    measured: dict[str, list[Obj]] = {}
    for obj in objects:
        if obj.get("kind") in _MEASUREMENTS:
            for uid in owner_uids(obj):
                measured.setdefault(uid, []).append(obj)
    for workflow in objects:
        found = measured.get(str(metadata(workflow).get("uid") or ""), [])
        if workflow.get("kind") != "Workflow" or not found:
            continue
        jobs = {_job_of(m) for m in found}
        kind, namespace = str(found[0].get("kind")), str(metadata(found[0]).get("namespace"))
        for job in _succeeded_jobs(workflow):
            if job not in jobs:
                yield str(key_of(workflow)), (kind, namespace, f"(the one of Job {job})")


def _succeeded_jobs(workflow: Obj) -> Iterator[str]:
    orchestration = status_of(workflow).get("orchestration") or {}
    for iteration in orchestration.get("iterationHistory") or []:
        for group in (iteration or {}).get("groups") or []:
            if isinstance(group, Mapping) and group.get("phase") == "Succeeded":
                yield str(group.get("jobName"))


def _job_of(measurement: Obj) -> str:
    spec = measurement.get("spec")
    ref = spec.get("jobRef") if isinstance(spec, Mapping) else None
    return str(ref.get("name")) if isinstance(ref, Mapping) else ""
