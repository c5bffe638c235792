"""Node affinity the API server refuses when the pod is made (NVC685; pure).

A pod's required node affinity may select on one node field, `metadata.name`, with `In` or
`NotIn` only, and the API server takes exactly one value in such a requirement
(`k8s.io/kubernetes/pkg/apis/core/validation`, `ValidateNodeFieldSelectorRequirement`).
A Job, TrainingRuntime or TrainJob runtime patch holding a wrong one is stored without
complaint (a CRD's schema, or a template nobody validates until a pod is made); the pod
then fails to be created once the run is admitted, long after the sync succeeded. Several
nodes are several terms: the scheduler ORs them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.core import codes
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.podsecurity import pod_specs

CODE = codes.NVC685.code
FIELDS = frozenset({"metadata.name"})  # the only node field a selector may name
ONE_VALUE = frozenset({"In", "NotIn"})
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def affinity_findings(obj: Mapping[str, Any]) -> list[Finding]:
    """NVC685: every node field requirement the API server would refuse in `obj`'s pods."""
    found: list[Finding] = []
    for pointer, pod in _pods(obj):
        terms = list_at(pod, "affinity", "nodeAffinity", _REQUIRED, "nodeSelectorTerms")
        for t, term in enumerate(terms):
            for r, req in enumerate(list_at(term, "matchFields")):
                where = f"{pointer}/affinity/nodeAffinity/{_REQUIRED}/nodeSelectorTerms/{t}"
                found += _refused(f"{where}/matchFields/{r}", req)
    return found


def _refused(pointer: str, req: Any) -> list[Finding]:
    if not isinstance(req, Mapping):
        return []
    key, operator, values = req.get("key"), req.get("operator"), list_at(req, "values")
    if key not in FIELDS:
        message = f"node field {key!r} cannot be selected: only metadata.name can"
        return [Finding(pointer, CODE, message, hint="select nodes by a label instead")]
    if operator not in ONE_VALUE:
        message = f"operator {operator!r} on metadata.name: a node field takes In or NotIn"
        return [Finding(f"{pointer}/operator", CODE, message, hint="use In with one node name")]
    if len(values) != 1:
        message = (
            f"{operator} on metadata.name with {len(values)} values: the API server takes "
            "exactly one, and refuses the pod when the run is admitted"
        )
        hint = "give each node a nodeSelectorTerm of its own (terms are ORed)"
        return [Finding(f"{pointer}/values", CODE, message, hint=hint)]
    return []


def _pods(obj: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every pod spec of `obj`, and those a TrainJob's runtime patches add."""
    yield from pod_specs(obj)
    if obj.get("kind") != "TrainJob":
        return
    for p, patch in enumerate(list_at(obj, "spec", "runtimePatches")):
        jobs = list_at(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
        for j, job in enumerate(jobs):
            pod = mapping_at(job, "template", "spec", "template", "spec")
            if pod is not None:
                base = f"/spec/runtimePatches/{p}/trainingRuntimeSpec/template/spec"
                yield f"{base}/replicatedJobs/{j}/template/spec/template/spec", pod
