"""A Workload's container lists are checked once per distinct list, with the same findings."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trainerfactory import example_manifests

from nvcregen.check import objectcheck
from nvcregen.check.objectcheck import _object_findings, object_findings
from nvcregen.check.podsets import cel_view, split_containers, templates_unread
from nvcregen.check.webhooks import APPLY_ANNOTATION_LIMIT

Obj = dict[str, Any]
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _workload(kind: str = "TrainJob") -> Obj:
    names = {f"{m.name}-workload" for m in example_manifests() if m.kind == kind}
    return copy.deepcopy(
        next(m.obj for m in example_manifests() if m.kind == "Workload" and m.name in names)
    )


def _broken(workload: Obj) -> Obj:
    last = workload["spec"]["podSets"][-1]["template"]["spec"]
    last["containers"][0]["imagePullPolicyy"] = "Always"  # not in the schema
    last["containers"][0].setdefault("env", []).append({"name": "T", "value": TOKEN})
    last["initContainers"] = [{"image": "busybox:1.36"}]  # no name
    workload["spec"]["podSets"][0]["count"] = -1  # outside the containers: the skeleton's
    return workload


@pytest.mark.parametrize("kind", ["TrainJob", "Job"])
def test_valid_workloads_are_clean_either_way(kind: str) -> None:
    workload = _workload(kind)
    assert split_containers(workload) is not None
    assert (
        object_findings(workload)
        == []
        == _object_findings(workload, kube_version="1.30", strict=False)
    )


def test_a_broken_workload_gets_the_same_findings_as_checked_whole() -> None:
    workload = _broken(_workload())
    split = sorted(object_findings(workload), key=lambda f: (f.pointer, f.code, f.message))
    whole = sorted(
        _object_findings(workload, kube_version="1.30", strict=False),
        key=lambda f: (f.pointer, f.code, f.message),
    )
    assert split == whole
    codes = {f.code for f in split}
    assert "NVC669" in codes  # the token in a container, found through the probe
    last = len(workload["spec"]["podSets"]) - 1
    assert any(
        f.pointer.startswith(f"/spec/podSets/{last}/template/spec/containers/0") for f in split
    )
    assert any(
        f.pointer.startswith(f"/spec/podSets/{last}/template/spec/initContainers") for f in split
    )
    assert any(f.pointer.startswith("/spec/podSets/0/count") for f in split)


def test_each_distinct_container_list_is_checked_once() -> None:
    objectcheck._container_findings.cache_clear()
    workloads = [m.obj for m in example_manifests() if m.kind == "Workload"]
    for workload in workloads:
        object_findings(workload)
    info = objectcheck._container_findings.cache_info()
    pod_sets = sum(len(w["spec"]["podSets"]) for w in workloads)
    assert info.misses + info.hits == pod_sets
    assert info.misses < pod_sets / 3  # a few lists, repeated by every round and node


def test_other_objects_and_odd_workloads_are_checked_whole() -> None:
    assert split_containers({"apiVersion": "batch/v1", "kind": "Job", "spec": {}}) is None
    odd = _workload()
    odd["spec"]["podSets"][0]["template"] = "not a template"
    assert split_containers(odd) is None
    assert object_findings(odd)  # the schema says what is wrong


def test_the_workload_crds_rules_never_read_a_pod_template() -> None:
    """So the skeleton's CEL rules run without its templates, with the same results."""
    assert templates_unread("kueue.x-k8s.io/v1beta2")
    workload = _workload()
    workload["spec"]["priorityClassRef"]["kind"] = "PriorityClass"  # CEL: kueue.x-k8s.io's
    split = [f for f in object_findings(workload) if f.code == "NVC610"]
    whole = [
        f
        for f in _object_findings(workload, kube_version="1.30", strict=False)
        if f.code == "NVC610"
    ]
    assert split == whole != []
    view = cel_view(workload)
    assert view is not None
    assert all("template" not in p for p in view["spec"]["podSets"])


def test_a_container_with_a_key_that_is_no_string_is_checked_whole() -> None:
    """YAML reads `1: x` as an int key: the schema reports it, nothing crashes."""
    odd = _workload()
    odd["spec"]["podSets"][0]["template"]["spec"]["containers"][0][1] = "x"
    assert split_containers(odd) is None
    assert object_findings(odd) == _object_findings(odd, kube_version="1.30", strict=False)
    assert object_findings(odd)


def test_a_workload_too_large_to_apply_client_side_is_measured_whole() -> None:
    """NVC658 is the whole Workload's size, though its containers are checked apart."""
    large = _workload()
    args = large["spec"]["podSets"][-1]["template"]["spec"]["containers"][0]["args"]
    args.append("x" * (APPLY_ANNOTATION_LIMIT + 10))
    assert split_containers(large) is not None
    assert [f.code for f in object_findings(large)] == ["NVC658"]
    assert object_findings(large) == _object_findings(large, kube_version="1.30", strict=False)
    args[-1] = "x" * 10  # small again: no warning
    assert object_findings(large) == []
