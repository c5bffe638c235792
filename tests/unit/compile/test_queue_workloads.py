"""Every readiness run reaches its queue, in both engines (nvcregen.compile.queue.workloads).

Trainer mode: each TrainJob and DCGM Job carries the LocalQueue label itself. NVCRE mode:
the label reaches the TrainJobs NVCRE creates through `workloadMetadata.labels` of every
Certification and WorkloadRun; with KAI Scheduler they carry `gangScheduler` instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sitefactory import parse, plan_of, site_yaml
from trainerfactory import compiled, example_manifests, jobs_named, of_kind, trainer_text

from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.core.manifest import Manifest

ROOT = Path(__file__).resolve().parents[3]
LAB = ROOT / "sites" / "h20-3e-lab.yaml"
QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
Obj = dict[str, Any]
THREE_NODES = """\
- name: gpu
  model: H100
  nodes: [gpu-1, gpu-2, gpu-3]
  nics: {count: 2, fabric: ib, speed: 400Gb/s, hcas: [mlx5_0, mlx5_1], resourceName: rdma/ib}
"""
TRIPLES = """\
- name: fabric
  scope: inter-node
  nodesPerJob: 3
  tests: [nccl-all-reduce]
"""


def layers(text: str) -> list[Manifest]:
    site, _ = parse(text)
    return postprocess(site_manifests(plan_of(site), ROOT), site, "s.yaml")


def nvcre_labels(found: list[Manifest]) -> list[dict[str, str]]:
    return [
        m.obj["spec"]["workloadMetadata"]["labels"]
        for m in found
        if m.kind in {"Certification", "WorkloadRun"}
    ]


# Trainer mode


def test_every_trainjob_and_dcgm_job_names_the_local_queue_and_its_stage_priority() -> None:
    found = list(example_manifests())
    runs = of_kind(found, "TrainJob") + of_kind(found, "Job")
    assert len(runs) == 30 + 12  # TrainJobs, DCGM Jobs
    for run in runs:
        labels = run["metadata"]["labels"]
        assert labels[QUEUE] == "readiness"
        assert labels[PRIORITY] == f"h20-3e-trainer-{labels['nvcregen.io/stage']}"


def test_a_dcgm_pod_asks_for_one_whole_host() -> None:
    for job in of_kind(list(example_manifests()), "Job"):
        assert job["spec"]["template"]["metadata"]["annotations"] == {
            REQUIRED: "kubernetes.io/hostname"
        }


def test_runtime_podsets_ask_for_hosts_one_pod_each_or_spread() -> None:
    text = trainer_text(site_yaml(pools=THREE_NODES, stages=TRIPLES))
    (runtime,) = of_kind(compiled(text), "TrainingRuntime")
    jobs = jobs_named(runtime)
    annotations = {
        name: job["template"]["spec"]["template"]["metadata"]["annotations"]
        for name, job in jobs.items()
    }
    assert annotations == {
        "launcher": {REQUIRED: "kubernetes.io/hostname"},
        "node": {UNCONSTRAINED: "true"},  # two workers: one per node, wherever free
    }


def test_an_external_kueue_gets_the_label_but_no_priority_or_topology() -> None:
    text = trainer_text(site_yaml(dependencies="kueue: {managed: false, localQueue: gpu}\n"))
    found = compiled(text)
    for run in of_kind(found, "TrainJob") + of_kind(found, "Job"):
        assert run["metadata"]["labels"][QUEUE] == "gpu"
        assert PRIORITY not in run["metadata"]["labels"]
        assert "annotations" not in run["spec"].get("template", {}).get("metadata", {})
    for runtime in of_kind(found, "TrainingRuntime"):
        for job in jobs_named(runtime).values():
            assert "annotations" not in job["template"]["spec"]["template"]["metadata"]


# NVCRE mode


def test_every_certification_and_workloadrun_passes_the_queue_to_its_trainjobs() -> None:
    found = layers(LAB.read_text(encoding="utf-8"))
    labels = nvcre_labels(found)
    assert len(labels) == 7  # 1 Certification; DCGM l1, l2, 3 RDMA and 1 TCP WorkloadRuns
    assert {label[QUEUE] for label in labels} == {"readiness"}
    assert {label[PRIORITY] for label in labels} == {
        "h20-3e-lab-single-node",
        "h20-3e-lab-two-node",
    }
    previews = [m.obj for m in found if m.component == "preview" and m.kind == "TrainJob"]
    assert previews and all(p["metadata"]["labels"][QUEUE] == "readiness" for p in previews)


def test_a_kai_scheduler_site_uses_nvcres_gang_scheduler_instead() -> None:
    gang = "gangScheduler: {schedulerName: kai-scheduler, queue: gpu, queueLabelKey: kai/q}\n"
    stages = "- {name: node, scope: intra-node, tests: [nccl-all-reduce]}\n"
    found = layers(site_yaml(dependencies=gang, stages=stages))
    (cert,) = [m.obj for m in found if m.kind == "Certification"]
    assert cert["spec"]["gangScheduler"] == {
        "schedulerName": "kai-scheduler",
        "queue": "gpu",
        "queueLabelKey": "kai/q",
    }
    assert all(QUEUE not in label for label in nvcre_labels(found))


def test_a_workloadrun_gets_the_gang_scheduler_without_a_label_key() -> None:
    found = layers(site_yaml(dependencies="gangScheduler: {schedulerName: kai-scheduler}\n"))
    runs = [m.obj for m in found if m.kind == "WorkloadRun"]
    assert runs
    for run in runs:
        assert run["spec"]["gangScheduler"] == {
            "schedulerName": "kai-scheduler",
            "queue": "default-queue",
        }
