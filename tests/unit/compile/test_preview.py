"""Tests of the NVCRE preview: the TrainingRuntime and TrainJob each WorkloadRun becomes.

The lab site has DCGM levels 1-3 (the `exec` framework), a TCP baseline and a pinned RDMA
collective (the `mpi` framework), so every kind of WorkloadRun is previewed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sitefactory import FILE, edit, parse, plan_of, site_yaml, units_of

from nvcregen.check.crossref import Located
from nvcregen.check.objectcheck import object_findings
from nvcregen.check.webhooks import check_runtimes
from nvcregen.cli import main
from nvcregen.compile.gitops.common import LAYERS
from nvcregen.compile.gitops.engineparts import objects_of
from nvcregen.compile.gitops.layer import gitops_manifests
from nvcregen.compile.gitops.steps import plan_steps
from nvcregen.compile.gitops.timing import timed_steps
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.compile.readiness.components import PREVIEW as COMPONENT
from nvcregen.core.kube import LABEL_MAX, POD_SUFFIX
from nvcregen.core.manifest import Manifest
from nvcregen.engineapi.registry import gitops_of
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.engines.readiness.nvcre.preview import preview_manifests

ROOT = Path(__file__).resolve().parents[3]
Obj = dict[str, Any]
REPO = "https://git.example.com/gpu/readiness.git"
STAGES = """\
- name: node
  scope: intra-node
  tests: [dcgm-l1, dcgm-l3, nccl-all-reduce]
- name: fabric
  scope: inter-node
  pinTransport: true
  tests: [nccl-all-reduce, nccl-all-reduce-tcp]
"""
TEXT = site_yaml(stages=STAGES, rounds=2)


def runs_and_previews(text: str = TEXT) -> tuple[list[Manifest], list[Manifest]]:
    site, _ = parse(text)
    readiness = readiness_manifests(site, units_of(text))
    runs = [m for m in readiness if m.kind == "WorkloadRun"]
    return runs, postprocess(preview_manifests(readiness), site, FILE)


def pair(run: Manifest, previews: list[Manifest]) -> tuple[Obj, Obj]:
    """The preview runtime and TrainJob of one WorkloadRun."""
    (runtime,) = [m.obj for m in previews if m.name == f"{run.name}-runtime"]
    (job,) = [
        m.obj
        for m in previews
        if m.kind == "TrainJob"
        and m.obj["spec"]["runtimeRef"]["name"] == runtime["metadata"]["name"]
    ]
    return runtime, job


def run_of(runs: list[Manifest], test: str) -> Manifest:
    """The one WorkloadRun of a test (intra-node all-reduce is a Certification category)."""
    (found,) = [
        r for r in runs if r.obj["spec"]["workloadMetadata"]["labels"]["nvcregen.io/test"] == test
    ]
    return found


def jobs_named(runtime: Obj) -> dict[str, Obj]:
    return {j["name"]: j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def pod(job: Obj) -> Obj:
    spec: Obj = job["template"]["spec"]["template"]["spec"]
    return spec


def test_every_workloadrun_gets_a_runtime_and_a_trainjob() -> None:
    runs, previews = runs_and_previews()
    assert len(runs) == 4  # dcgm-l1, dcgm-l3, the pinned RDMA all-reduce, the TCP baseline
    assert len(previews) == 2 * len(runs)
    assert {m.component for m in previews} == {COMPONENT}
    for run in runs:
        runtime, job = pair(run, previews)
        namespace = run.obj["metadata"]["namespace"]
        assert runtime["metadata"]["namespace"] == job["metadata"]["namespace"] == namespace
        assert runtime["metadata"]["labels"]["app"] == run.name
        assert job["spec"]["runtimeRef"] == {
            "apiGroup": "trainer.kubeflow.org",
            "kind": "TrainingRuntime",
            "name": f"{run.name}-runtime",
        }
        assert job["spec"]["trainer"]["image"] == run.obj["spec"]["image"]
        assert job["spec"]["trainer"]["numNodes"] == run.obj["spec"]["numNodes"]
        # The labels NVCRE copies from workloadMetadata onto the TrainJob.
        assert (
            run.obj["spec"]["workloadMetadata"]["labels"].items()
            <= job["metadata"]["labels"].items()
        )
        assert "not applied" in job["metadata"]["annotations"]["nvcregen.io/preview"]
        name = job["metadata"]["name"]
        assert len(name) <= LABEL_MAX - POD_SUFFIX
        assert name.endswith(run.name[-8:])  # the WorkloadRun's content hash


def test_mpi_runtime_follows_nvcres_mapping() -> None:
    runs, previews = runs_and_previews()
    run = run_of(runs, "nccl-all-reduce")
    runtime, _ = pair(run, previews)
    assert runtime["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "mpi"
    assert runtime["spec"]["mlPolicy"] == {
        "mpi": {
            "mpiImplementation": "OpenMPI",
            "numProcPerNode": 8,
            "sshAuthMountPath": "/tmp/mpi-ssh-raw",
        }
    }
    template = runtime["spec"]["template"]["spec"]
    assert template["network"] == {"publishNotReadyAddresses": True}
    assert template["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    jobs = jobs_named(runtime)
    assert list(jobs) == ["node", "launcher"]
    worker, launcher = pod(jobs["node"]), pod(jobs["launcher"])
    # Workers: sshd, installed only when missing; ready on 22; IPC_LOCK; OnFailure.
    (sshd,) = worker["containers"]
    assert "test -x /usr/sbin/sshd ||" in sshd["command"][2]
    assert "/tmp/mpi-ssh-raw" in sshd["command"][2]
    assert sshd["readinessProbe"] == {"tcpSocket": {"port": 22}, "initialDelaySeconds": 5}
    assert sshd["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert worker["restartPolicy"] == "OnFailure"
    # The pinned RDMA run asks for every GPU and its 2 InfiniBand NICs on each worker.
    assert sshd["resources"] == {
        "requests": {"cpu": "8", "memory": "32Gi"},  # the WorkloadRun's resources
        "limits": {"nvidia.com/gpu": 8, "rdma/ib": 2, "memory": "64Gi"},
    }
    # Launcher: the trainer step, after the workers are ready, 2 CPUs and 1Gi.
    assert jobs["launcher"]["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
    }
    assert jobs["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
    (node,) = launcher["containers"]
    assert node["name"] == "node"
    assert node["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}}
    assert [c["name"] for c in launcher["initContainers"]] == ["fix-ssh-permissions"]
    for spec in (worker, launcher):
        assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in spec["volumes"]


def test_mpi_trainjob_carries_the_workloadruns_command_and_environment() -> None:
    runs, previews = runs_and_previews()
    for test in ("nccl-all-reduce", "nccl-all-reduce-tcp"):
        run = run_of(runs, test)
        mpi = run.obj["spec"]["framework"]["mpi"]
        _, job = pair(run, previews)
        trainer = job["spec"]["trainer"]
        assert trainer["command"] == [mpi["mpirunPath"]]
        assert trainer["args"] == [*mpi["mpiArgs"], mpi["binary"], *mpi["args"]]
        assert trainer["numProcPerNode"] == 8
        assert trainer["env"] == run.obj["spec"]["env"]
    tcp_runtime, tcp_job = pair(run_of(runs, "nccl-all-reduce-tcp"), previews)
    env = {e["name"]: e["value"] for e in tcp_job["spec"]["trainer"]["env"]}
    assert (env["NCCL_NET"], env["NCCL_IB_DISABLE"]) == ("Socket", "1")
    (sshd,) = pod(jobs_named(tcp_runtime)["node"])["containers"]
    assert sshd["resources"]["limits"] == {"nvidia.com/gpu": 8, "memory": "64Gi"}  # no NICs


def test_exec_runtime_runs_the_dcgm_command_on_one_node_job() -> None:
    runs, previews = runs_and_previews()
    run = run_of(runs, "dcgm-l3")
    runtime, job = pair(run, previews)
    (only,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert only["name"] == "node"
    assert only["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
    }
    (container,) = pod(only)["containers"]
    assert container["resources"] == {
        "requests": {"cpu": "2", "memory": "8Gi"},
        "limits": {"nvidia.com/gpu": 8, "cpu": "8", "memory": "16Gi"},
    }
    assert job["spec"]["trainer"]["command"] == run.obj["spec"]["framework"]["exec"]["command"]
    assert "--run 3 --json" in job["spec"]["trainer"]["command"][2]


def test_every_preview_object_validates_and_finds_its_runtime() -> None:
    _, previews = runs_and_previews()
    for manifest in previews:
        assert object_findings(manifest.obj, kube_version="1.30") == [], manifest.name
    located = [Located(m.name, m.obj) for m in previews]
    assert list(check_runtimes(located)) == []


def test_preview_is_never_applied_by_gitops() -> None:
    for engine in ("argocd", "flux"):
        text = edit(
            TEXT,
            "  readiness:\n",
            f"  gitops:\n    engine: {engine}\n    repoURL: {REPO}\n  readiness:\n",
        )
        site, _ = parse(text)
        planned = plan_of(site)
        found = site_manifests(planned, ROOT)
        assert [m for m in found if m.component == COMPONENT]
        gitops = [m for m in found if m.component == "gitops"]
        paths = [
            str(m.obj["spec"].get("path") or m.obj["spec"].get("source", {}).get("path"))
            for m in gitops
            if m.kind in {"Application", "Kustomization"}
        ]
        assert paths and not [p for p in paths if "preview" in p]
        # The AppProject is the same with or without the preview among the layers.
        without = [m for m in found if m.component not in {COMPONENT, "gitops"}]
        present = [layer for layer in LAYERS if any(m.component == layer for m in without)]
        placed = [m for m in found if m.component in {"readiness", "queues"}]
        steps = timed_steps(planned, plan_steps(site, planned.units), placed)
        objects = objects_of(gitops_of(site))
        assert objects.chain(site, gitops_manifests(site, present, without), steps) == gitops
    assert COMPONENT not in LAYERS


def test_trainer_mode_has_no_preview() -> None:
    text = edit(TEXT, "  readiness:\n", "  readiness:\n    engine: trainer\n")
    site, _ = parse(text)
    found = site_manifests(plan_of(site), ROOT)
    assert not [m for m in found if m.component == COMPONENT]


@pytest.mark.parametrize("framework", [{"torch": {"script": "train.py"}}])
def test_a_framework_without_a_preview_is_refused(framework: Obj) -> None:
    runs, _ = runs_and_previews()
    run = runs[0]
    obj = {**run.obj, "spec": {**run.obj["spec"], "framework": framework}}
    broken = Manifest(obj, run.component, run.source)
    with pytest.raises(ValueError, match="no preview"):
        preview_manifests([broken])


def test_check_validates_the_preview_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nvcregen check` reads out/<site>/preview/ like any layer (only --server skips it)."""
    (tmp_path / "sites").mkdir()
    shutil.copyfile(ROOT / "sites" / "h20-3e-lab.yaml", tmp_path / "sites" / "h20-3e-lab.yaml")
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["render"]).exit_code == 0
    folder = tmp_path / "out" / "h20-3e-lab" / "preview"
    mpi = next(p for p in folder.glob("trainjob-*.yaml") if "numProcPerNode: 8" in p.read_text())
    assert CliRunner().invoke(main, ["check"]).exit_code == 0
    mpi.write_text(
        mpi.read_text(encoding="utf-8").replace("numProcPerNode: 8", "numProcPerNode: x")
    )
    result = CliRunner().invoke(main, ["check", "--format", "json"])
    assert result.exit_code == 1
    found = json.loads(result.stdout)
    assert found
    assert {d["file"] for d in found} == {mpi.relative_to(tmp_path).as_posix()}
