"""Tests of NVC685: node affinity the API server refuses (nvcregen.check.affinity).

Found by the real API server (tests/realserver/test_cp_kueue_parity.py): a Job pinned to
two nodes with one `metadata.name In [a, b]` requirement is refused with "must be only one
value when `operator` is 'In' or 'NotIn' for node field selector".
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trainerfactory import SHIPPED, compiled, of_kind

from nvcregen.check.affinity import affinity_findings

Obj = dict[str, Any]
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def pinned(values: list[str], operator: str = "In", key: str = "metadata.name") -> Obj:
    term = {"matchFields": [{"key": key, "operator": operator, "values": values}]}
    return {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [term]}}}


def job(affinity: Obj) -> Obj:
    pod = {"affinity": affinity, "containers": [{"name": "c", "image": "i"}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": pod}}}


def test_one_node_per_requirement_passes_and_two_are_refused_at_the_values() -> None:
    assert affinity_findings(job(pinned(["node-a"]))) == []
    (found,) = affinity_findings(job(pinned(["node-a", "node-b"])))
    assert found.code == "NVC685"
    assert found.pointer == (
        f"/spec/template/spec/affinity/nodeAffinity/{REQUIRED}/nodeSelectorTerms/0"
        "/matchFields/0/values"
    )
    assert "exactly one" in found.message and "nodeSelectorTerm of its own" in found.hint
    assert len(affinity_findings(job(pinned([])))) == 1  # none is not one either


@pytest.mark.parametrize(
    ("key", "operator", "where"),
    [("metadata.namespace", "In", "key"), ("metadata.name", "Exists", "operator")],
)
def test_other_node_fields_and_operators_are_refused(key: str, operator: str, where: str) -> None:
    (found,) = affinity_findings(job(pinned(["node-a"], operator, key)))
    assert found.code == "NVC685"
    assert found.pointer.endswith("/matchFields/0" if where == "key" else "/matchFields/0/operator")


def test_a_trainjobs_runtime_patch_is_checked_too() -> None:
    (train_job,) = of_kind(compiled(SHIPPED.read_text(encoding="utf-8")), "TrainJob")[:1]
    assert affinity_findings(train_job) == []  # what nvcregen writes: a term per node
    broken = copy.deepcopy(train_job)
    spec = broken["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    pod = spec["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    pod["affinity"] = pinned(["node-a", "node-b"])
    (found,) = affinity_findings(broken)
    assert found.pointer.startswith(
        "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/1/"
    )


def test_every_rendered_pin_is_one_node_per_term() -> None:
    for manifest in compiled(SHIPPED.read_text(encoding="utf-8")):
        assert affinity_findings(manifest.obj) == [], manifest.name
