"""NVC684: a queued run states no field Kueue writes (issue 19, item 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from nvcregen.check.kueuefields import kueue_fields
from nvcregen.check.objectcheck import object_findings

ROOT = Path(__file__).resolve().parents[3]
QUEUED = {"kueue.x-k8s.io/queue-name": "readiness"}


def _job(**pod: Any) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "c", "image": "i"}], **pod}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "labels": dict(QUEUED)},
        "spec": {"template": template},
    }


def _trainjob(*managers: str) -> dict[str, Any]:
    patches = [{"manager": m} for m in managers]
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t", "labels": dict(QUEUED)},
        "spec": {"runtimeRef": {"name": "rt"}, "runtimePatches": patches},
    }


def _found(obj: dict[str, Any]) -> list[str]:
    return [f.pointer for f in kueue_fields(obj)]


def test_a_job_template_node_selector_is_kueues_to_extend() -> None:
    # nvcregen's DCGM Jobs had one before issue 19: a second sync failed on a started Job
    assert _found(_job(nodeSelector={"a": "b"})) == ["/spec/template/spec/nodeSelector"]
    assert _found(_job(affinity={})) == []


def test_suspend_and_kueues_runtime_patch_are_kueues() -> None:
    job = _job()
    job["spec"]["suspend"] = True
    assert _found(job) == ["/spec/suspend"]
    assert _found(_trainjob("nvcregen.io/placement", "kueue.x-k8s.io/manager")) == [
        "/spec/runtimePatches/1"
    ]
    assert _found(_trainjob("nvcregen.io/placement")) == []


def test_runs_kueue_does_not_manage_are_left_alone() -> None:
    job = _job(nodeSelector={"a": "b"})
    job["metadata"]["labels"] = {}
    job["spec"]["suspend"] = True
    assert _found(job) == []
    certification = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification"}
    assert _found(certification) == []


def test_nvc684_is_an_error_in_checks_of_objects() -> None:
    (finding,) = [f for f in object_findings(_job(nodeSelector={"a": "b"})) if f.code == "NVC684"]
    assert finding.severity.value == "error"
    assert "affinity" in finding.hint


def test_no_shipped_run_states_a_field_kueue_writes() -> None:
    runs = [
        yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted((ROOT / "out").glob("*/readiness/**/*.yaml"))
    ]
    assert [obj for obj in runs if obj["kind"] in {"Job", "TrainJob"}]
    assert [(obj["metadata"]["name"], _found(obj)) for obj in runs if _found(obj)] == []


def test_a_prebuilt_workloads_active_is_kueues() -> None:
    """Kueue deactivates a run by setting its Workload's spec.active false; a sync keeps it."""
    spec: dict[str, Any] = {"queueName": "readiness", "podSets": [], "active": True}
    workload: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": spec,
    }
    assert _found(workload) == ["/spec/active"]
    del workload["spec"]["active"]
    assert _found(workload) == []
    (finding,) = [
        f
        for f in object_findings({**workload, "spec": {**workload["spec"], "active": False}})
        if f.code == "NVC684"
    ]
    assert "deactivat" in finding.message
