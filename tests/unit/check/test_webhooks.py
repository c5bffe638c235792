"""Webhook-only rules: each fails on a crafted bad object and passes on a good one."""

from __future__ import annotations

from typing import Any

import pytest

from nvcregen.check.crossref import Located
from nvcregen.check.webhooks import check_runtimes, webhook_findings


def trainjob(name: str = "lab-tcp-0", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "rt"},
        "trainer": {"numNodes": 2},
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "nvcre"},
        "spec": base | spec,
    }


def codes(obj: dict[str, Any]) -> list[str]:
    return sorted(f.code for f in webhook_findings(obj))


def test_a_good_trainjob_passes() -> None:
    assert codes(trainjob()) == []


def test_unsupported_runtime_kind() -> None:
    assert codes(trainjob(runtimeRef={"kind": "PyTorchJob", "name": "rt"})) == ["NVC650"]


def test_reserved_torch_env() -> None:
    obj = trainjob(
        trainer={"env": [{"name": "PET_NNODES", "value": "2"}, {"name": "OK", "value": "1"}]}
    )
    findings = webhook_findings(obj)
    assert [(f.code, f.pointer) for f in findings] == [("NVC652", "/spec/trainer/env/0/name")]


@pytest.mark.parametrize(("length", "bad"), [(44, False), (45, True)])
def test_trainjob_name_leaves_room_for_pod_names(length: int, bad: bool) -> None:
    assert ("NVC653" in codes(trainjob(name="a" * length))) is bad


def test_runtime_patch_manager_must_be_domain_prefixed() -> None:
    obj = trainjob(runtimePatches=[{"manager": "nvcregen"}, {"manager": "nvcregen.io/readiness"}])
    assert [f.pointer for f in webhook_findings(obj)] == ["/spec/runtimePatches/0/manager"]


def jobset(name: str, jobs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": jobs},
    }


def test_jobset_dependencies() -> None:
    first_depends = jobset("js", [{"name": "a", "dependsOn": [{"name": "b"}]}, {"name": "b"}])
    assert codes(first_depends) == ["NVC655"]
    missing = jobset("js", [{"name": "a"}, {"name": "b", "dependsOn": [{"name": "c"}]}])
    assert codes(missing) == ["NVC655"]
    assert codes(jobset("js", [{"name": "a"}, {"name": "b", "dependsOn": [{"name": "a"}]}])) == []


def test_jobset_derived_job_names() -> None:
    assert codes(jobset("j" * 53, [{"name": "launcher", "replicas": 1}])) == ["NVC656"]
    assert codes(jobset("j" * 52, [{"name": "launcher", "replicas": 1}])) == []


@pytest.mark.parametrize(("wave", "bad"), [("-1", False), ("2", False), (2, True), ("first", True)])
def test_sync_wave_is_an_integer_string(wave: object, bad: bool) -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "x", "annotations": {"argocd.argoproj.io/sync-wave": wave}},
    }
    assert ("NVC657" in codes(obj)) is bad


def test_large_objects_need_server_side_apply() -> None:
    big: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x"},
        "data": {"k": "x" * 300_000},
    }
    assert codes(big) == ["NVC658"]
    big["metadata"]["annotations"] = {"argocd.argoproj.io/sync-options": "ServerSideApply=true"}
    assert codes(big) == []


def test_runtime_must_exist_in_the_same_namespace() -> None:
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "rt", "namespace": "nvcre"},
    }
    elsewhere = {**runtime, "metadata": {"name": "rt", "namespace": "other"}}
    job = Located("job.yaml", trainjob())
    assert list(check_runtimes([job, Located("rt.yaml", runtime)])) == []
    assert [f.code for _, f in check_runtimes([job, Located("rt.yaml", elsewhere)])] == ["NVC651"]
    assert list(check_runtimes([job], declared=frozenset({"rt"}))) == []
