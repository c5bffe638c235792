"""NVC684: a queued run must not state a field Kueue rewrites (pure, one object at a time).

Kueue (v0.19.2) suspends every Job and TrainJob it manages on creation and flips
`spec.suspend` at admission; it appends its own `runtimePatches` entry (manager
`kueue.x-k8s.io/manager`) to a TrainJob; and it merges the flavor's node labels into a
Job's pod template `nodeSelector`, an atomic map to server-side apply. Flux applies
server-side with force, and so does Argo CD with `ServerSideApply=true`: a field the
manifest states and Kueue changed is taken back at the next sync, which suspends a running
run again, strips Kueue's entry, or is refused on a started Job's immutable template
(docs/design/0006-stage-gating.md, "Applying runs twice"). A prebuilt Workload's
`spec.active` is Kueue's too: it deactivates a run by setting it false.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.core import codes
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kueuekeys import KUEUE_PREFIX, QUEUE_LABEL

CODE = codes.NVC684.code
KUEUE_PATCH = "kueue.x-k8s.io/manager"
_RUNS = {("batch/v1", "Job"), ("trainer.kubeflow.org/v1alpha1", "TrainJob")}


def kueue_fields(obj: Mapping[str, Any]) -> Iterator[Finding]:
    """Every field of a run Kueue manages (or of its prebuilt Workload) that Kueue writes."""
    if obj.get("kind") == "Workload" and str(obj.get("apiVersion", "")).startswith(KUEUE_PREFIX):
        yield from _workload_fields(obj)
        return
    if (obj.get("apiVersion"), obj.get("kind")) not in _RUNS:
        return
    labels = mapping_at(obj, "metadata", "labels") or {}
    spec = mapping_at(obj, "spec")
    if QUEUE_LABEL not in labels or spec is None:
        return
    if "suspend" in spec:
        yield _finding(
            "/spec/suspend",
            "spec.suspend is Kueue's: it suspends the run on creation and resumes it when "
            "admitted, and a forced apply of this value would undo that on the next sync",
            "leave spec.suspend out; Kueue sets it",
        )
    for index, patch in enumerate(list_at(spec, "runtimePatches")):
        if isinstance(patch, Mapping) and patch.get("manager") == KUEUE_PATCH:
            yield _finding(
                f"/spec/runtimePatches/{index}",
                f"the runtimePatches entry of manager {KUEUE_PATCH} is Kueue's own",
                "leave Kueue's entry out; it adds it when the TrainJob is created",
            )
    pod = mapping_at(spec, "template", "spec") if obj.get("kind") == "Job" else None
    if pod is not None and "nodeSelector" in pod:
        yield _finding(
            "/spec/template/spec/nodeSelector",
            "Kueue merges the flavor's node labels into this nodeSelector at admission, and it "
            "is one atomic field to server-side apply: the next sync takes it back from a "
            "started Job, whose template is immutable, and fails",
            "select nodes with affinity instead (the flavor's node labels are added anyway)",
        )


def _workload_fields(obj: Mapping[str, Any]) -> Iterator[Finding]:
    """A prebuilt Workload's `spec.active`: Kueue sets it false to deactivate the run."""
    if "active" in (mapping_at(obj, "spec") or {}):
        yield _finding(
            "/spec/active",
            "spec.active is Kueue's: it sets it false when it deactivates the run, and a sync "
            "applying this value would reactivate a run Kueue gave up on",
            "leave spec.active out; the Workload CRD defaults it to true",
        )


def _finding(where: str, message: str, hint: str) -> Finding:
    return Finding(where, CODE, message, hint=hint)
