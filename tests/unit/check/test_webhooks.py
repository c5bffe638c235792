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


def runtime(*jobs: dict[str, Any], launcher_as_node: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "rt", "namespace": "nvcre"},
        "spec": {
            "mlPolicy": {"mpi": {"runLauncherAsNode": launcher_as_node}},
            "template": {"spec": {"replicatedJobs": list(jobs)}},
        },
    }


def rjob(name: str, container: str = "node", step: str | None = None, **extra: Any) -> Any:
    template: dict[str, Any] = {
        "spec": {"template": {"spec": {"containers": [{"name": container}]}}}
    }
    if step is not None:
        template["metadata"] = {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": step}}
    return {"name": name, "template": template, **extra}


def test_a_trainer_step_needs_one_replica_and_a_node_container() -> None:
    good = runtime(rjob("node"), rjob("launcher", step="trainer", dependsOn=[{"name": "node"}]))
    assert codes(good) == []
    wrong_container = runtime(rjob("launcher", container="main", step="trainer"))
    assert [(f.code, f.pointer) for f in webhook_findings(wrong_container)] == [
        ("NVC659", "/spec/template/spec/replicatedJobs/0")
    ]
    assert codes(runtime(rjob("launcher", step="trainer", replicas=2))) == ["NVC659"]
    # Jobs that are no TrainJob step may hold any container.
    assert codes(runtime(rjob("node", container="sshd"))) == []


def test_runtime_templates_follow_jobset_dependency_rules() -> None:
    first = runtime(rjob("launcher", step="trainer", dependsOn=[{"name": "node"}]), rjob("node"))
    assert codes(first) == ["NVC655"]
    missing = runtime(rjob("node"), rjob("launcher", step="trainer", dependsOn=[{"name": "x"}]))
    assert [f.pointer for f in webhook_findings(missing)] == [
        "/spec/template/spec/replicatedJobs/1/dependsOn"
    ]


def patch_of(*names: str) -> dict[str, Any]:
    jobs = [{"name": name} for name in names]
    return {
        "manager": "nvcregen.io/placement",
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": jobs}}},
    }


def layout(job: dict[str, Any], rt: dict[str, Any]) -> list[tuple[str, str]]:
    found = check_runtimes([Located("job.yaml", job), Located("rt.yaml", rt)])
    return [(f.code, f.pointer) for _, f in found]


def test_runtime_patches_name_jobs_the_runtime_has() -> None:
    both = runtime(rjob("node"), rjob("launcher", step="trainer"))
    assert layout(trainjob(runtimePatches=[patch_of("launcher", "node")]), both) == []
    only_launcher = runtime(rjob("launcher", step="trainer"))
    job = trainjob(trainer={"numNodes": 1}, runtimePatches=[patch_of("launcher", "node")])
    assert layout(job, only_launcher) == [
        (
            "NVC660",
            "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/1/name",
        )
    ]


@pytest.mark.parametrize(
    ("nodes", "launcher_as_node", "bad"), [(1, True, False), (2, True, True), (2, False, False)]
)
def test_mpi_launcher_as_node_needs_launcher_and_node_for_two_nodes(
    nodes: int, launcher_as_node: bool, bad: bool
) -> None:
    rt = runtime(rjob("launcher", step="trainer"), launcher_as_node=launcher_as_node)
    found = layout(trainjob(trainer={"numNodes": nodes}), rt)
    assert (found == [("NVC660", "/spec/trainer/numNodes")]) is bad
