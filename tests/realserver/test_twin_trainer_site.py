"""A rendered trainer-mode site's first steps on the real controllers (issue #34).

Opt-in: skipped unless `make twin` has built the twin. `sites/h20-3e-trainer.yaml` is
rendered into a temporary folder; on the twin (tests/twin.py, started with JobSet and
Kubeflow Trainer, and Kueue's TrainJob integration on) kwok gets the pool's nodes
(node-a, node-b: the labels its ResourceFlavor selects on, `nvidia.com/gpu.product`, 8 GPUs
and 8 `rdma/hca` allocatable, the pool's taints), and the rendered objects are created as
a GitOps engine applies them, layer by layer: the `nvcre` namespace, `queues/`,
`readiness/00-common/`, then `readiness/01-single-node/round-1/` (the site packs its runs:
two Indexed Jobs, the DCGM levels and the intra-node NCCL tests, one pod on each node),
then `readiness/02-two-node/round-1/` (one TrainJob running every test of the pair). Every
run must be admitted by Kueue through its prebuilt Workload (adopted, never `OutOfSync`),
its pods bound by kube-scheduler to the nodes it is pinned to (`nvcregen.io/nodes`, one
pod on each), and finish Complete.

Left out, because the twin runs those controllers itself or needs none of them: the
platform layer's Argo CD Applications (Kueue's and Trainer's charts), its collector RBAC
and argocd-cm, and `gitops/`. What kwok does not model: the RoCE networks' Multus
annotations (the two-node runtime's pods carry them; kwok ignores them), container
images, volumes and the commands themselves (kwok completes each pod 1-6 s after it runs).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import twin
import yaml
from click.testing import CliRunner
from kubecontrolplane import collection_path
from twin import Twin

from nvcregen.cli import main

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.skipif(bool(twin.missing()), reason=twin.missing() or "built"),
]

SITE = twin.ROOT / "sites" / "h20-3e-trainer.yaml"
STEPS = ("readiness/01-single-node/round-1", "readiness/02-two-node/round-1")
KUEUE = twin.KUEUE_API
TRAINER = "/apis/trainer.kubeflow.org/v1alpha1"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
STEP_LIMIT = 60.0  # seconds from the first readiness object to the last run Complete
# kwok's pod stages 5 times faster than its defaults: each pod created, Ready and complete
# 0.2-1.2 s after the last, not 1-6 s.
POD_SPEED = 5.0


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`nvcregen render --out <tmp>` of the site: its folder of layers."""
    out = tmp_path_factory.mktemp("rendered")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(twin.ROOT)
        result = CliRunner().invoke(main, ["render", str(SITE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out / "h20-3e-trainer"


def kueue_configuration(rendered: Path) -> dict[str, Any]:
    """The Kueue Configuration the site's platform layer installs Kueue with (the chart's
    `managerConfig` in its Argo CD Application)."""
    (application,) = [
        o
        for o in layer(rendered / "platform")
        if o["kind"] == "Application" and o["spec"]["source"]["helm"]["releaseName"] == "kueue"
    ]
    values = application["spec"]["source"]["helm"]["valuesObject"]
    configuration: dict[str, Any] = yaml.safe_load(
        values["managerConfig"]["controllerManagerConfigYaml"]
    )
    return configuration


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory: pytest.TempPathFactory, rendered: Path) -> Iterator[Twin]:
    started = twin.start(
        tmp_path_factory.mktemp("twin-trainer"),
        [],
        {},
        trainer=True,
        kueue_settings=kueue_configuration(rendered),
        pod_speed=POD_SPEED,
    )
    try:
        yield started
    finally:
        started.stop()


def layer(folder: Path) -> list[dict[str, Any]]:
    """The objects of one rendered folder, in file-name order (as `kubectl apply -f`)."""
    return [yaml.safe_load(path.read_text("utf-8")) for path in sorted(folder.glob("*.yaml"))]


def apply(rehearsal: Twin, objects: list[dict[str, Any]]) -> None:
    """Create each object; a refusal (a webhook's, the API server's) fails with its message."""
    for obj in objects:
        rehearsal.post(collection_path(obj), obj)


def pool_nodes(rendered: Path) -> tuple[list[str], dict[str, str], list[dict[str, str]], str]:
    """The site's one pool: its node names, the labels its ResourceFlavor selects on, its
    taints, and its NICs' resource name."""
    site = yaml.safe_load(SITE.read_text("utf-8"))
    (pool,) = site["spec"]["nodePools"]
    (flavor,) = [o for o in layer(rendered / "queues") if o["kind"] == "ResourceFlavor"]
    labels = dict(flavor["spec"]["nodeLabels"])
    assert labels["nvidia.com/gpu.product"] in pool["productLabels"]
    taints = twin.taints_tolerated(pool.get("tolerations") or [])
    return list(pool["nodes"]), labels, taints, pool["nics"]["resourceName"]


def run_state(rehearsal: Twin, run: dict[str, Any]) -> dict[str, Any]:
    """A run (Job or TrainJob) as stored, and its prebuilt Workload."""
    namespace, name = run["metadata"]["namespace"], run["metadata"]["name"]
    if run["kind"] == "Job":
        stored = rehearsal.job(namespace, name)
    else:
        stored = rehearsal.get(f"{TRAINER}/namespaces/{namespace}/trainjobs/{name}")
    workload = rehearsal.get(
        f"{KUEUE}/namespaces/{namespace}/workloads/{run['metadata']['labels'][PREBUILT]}"
    )
    return {"run": stored, "workload": workload}


def out_of_sync(workload: dict[str, Any] | None) -> str:
    """Kueue's verdict on a prebuilt Workload that does not match its job ("" if none)."""
    conditions = ((workload or {}).get("status") or {}).get("conditions") or []
    return "".join(
        f"{c['reason']}: {c.get('message')}"
        for c in conditions
        if c["type"] == "Finished" and c["status"] == "True" and c.get("reason") == "OutOfSync"
    )


def test_kueue_runs_with_the_sites_rendered_configuration(rendered: Path, rehearsal: Twin) -> None:
    """The integrations and the all-or-nothing admission (`waitForPodsReady`) the site
    renders are the twin Kueue's; only where it listens and its leader election are not."""
    site = kueue_configuration(rendered)
    running = yaml.safe_load((rehearsal.folder / "kueue.yaml").read_text("utf-8"))
    assert site["integrations"]["frameworks"] == ["batch/job", "trainer.kubeflow.org/trainjob"]
    for key in ("integrations", "waitForPodsReady", "controller", "clientConnection"):
        assert running[key] == site[key], key
    assert running["webhook"]["host"] == "127.0.0.1"
    assert running["leaderElection"] == {"leaderElect": False}


def prepare(rendered: Path, rehearsal: Twin) -> tuple[list[str], str]:
    """The pool's nodes on kwok, the `nvcre` namespace (the platform layer's), the `queues/`
    layer; the nodes' names and the ClusterQueue's, once it is Active."""
    nodes, labels, taints, nic = pool_nodes(rendered)
    assert nodes == ["node-a", "node-b"] and nic == "rdma/hca"
    rehearsal.add_gpu_nodes(nodes, labels, taints, devices={nic: "8"})
    for name in nodes:
        allocatable = (rehearsal.get(f"/api/v1/nodes/{name}") or {})["status"]["allocatable"]
        assert (allocatable["nvidia.com/gpu"], allocatable[nic]) == ("8", "8")
    (namespace,) = [
        o
        for o in layer(rendered / "platform")
        if o["kind"] == "Namespace" and o["metadata"]["name"] == "nvcre"
    ]
    apply(rehearsal, [namespace])
    queues = layer(rendered / "queues")
    apply(rehearsal, queues)
    (queue,) = [o["metadata"]["name"] for o in queues if o["kind"] == "ClusterQueue"]
    rehearsal.wait_for(
        f"ClusterQueue {queue} Active",
        lambda: twin.condition(rehearsal.get(f"{KUEUE}/clusterqueues/{queue}"), "Active"),
        60,
    )
    return nodes, queue


@dataclass
class StepWatch:
    """What a step's runs did, polled: seconds (from `began`) to each run's admission and
    completion, the nodes each run's pods were bound to, and how many runs held quota at
    each poll."""

    rehearsal: Twin
    runs: list[dict[str, Any]]
    began: float
    admitted: dict[str, float] = field(default_factory=dict)
    finished: dict[str, float] = field(default_factory=dict)
    placed: dict[str, set[str]] = field(default_factory=dict)
    at_once: list[int] = field(default_factory=list)

    def poll(self) -> bool:
        """One round: record admissions, completions and pod placements; all done?"""
        listed = self.rehearsal.get(f"{KUEUE}/namespaces/nvcre/workloads") or {}
        # One list, one moment: read one by one, a Workload finishing between two reads
        # would let the next one admitted count as running beside it.
        workloads = {w["metadata"]["name"]: w for w in listed.get("items") or []}
        holding = 0
        for run in self.runs:
            name = run["metadata"]["name"]
            workload = workloads.get(run["metadata"]["labels"][PREBUILT])
            assert not out_of_sync(workload), (name, out_of_sync(workload))
            if twin.condition(workload, "Admitted"):
                self.admitted.setdefault(name, time.monotonic() - self.began)
                holding += not twin.condition(workload, "Finished")
            if name not in self.finished and twin.condition(
                run_state(self.rehearsal, run)["run"], "Complete"
            ):
                self.finished[name] = time.monotonic() - self.began
        self.at_once.append(holding)
        pods = self.rehearsal.get("/api/v1/namespaces/nvcre/pods") or {}
        for pod in pods.get("items") or []:
            pod_labels = pod["metadata"].get("labels") or {}
            owner = pod_labels.get("jobset.sigs.k8s.io/jobset-name") or pod_labels.get(
                "batch.kubernetes.io/job-name"
            )
            if owner and pod["spec"].get("nodeName"):
                self.placed.setdefault(str(owner), set()).add(pod["spec"]["nodeName"])
        return len(self.finished) == len(self.runs)


def run_step(rehearsal: Twin, objects: list[dict[str, Any]]) -> tuple[StepWatch, float]:
    """Apply one step's folder and wait for every run of it to be Complete."""
    runs = [o for o in objects if o["kind"] in {"Job", "TrainJob"}]
    began = time.monotonic()
    apply(rehearsal, objects)
    applied = time.monotonic() - began
    watch = StepWatch(rehearsal, runs, began)
    rehearsal.wait_for("every run of the step Complete", watch.poll, timeout=STEP_LIMIT)

    def finished() -> bool:  # Kueue marks a Workload Finished just after its run completes
        return all(
            twin.condition(run_state(rehearsal, run)["workload"], "Finished") for run in runs
        )

    rehearsal.wait_for("every Workload of the step Finished", finished, timeout=STEP_LIMIT)
    return watch, applied


def check_runs(rehearsal: Twin, watch: StepWatch, nodes: list[str], queue: str) -> None:
    """Each run admitted through its own prebuilt Workload, Finished Succeeded, every pod on
    a node it is pinned to, one pod on each of them."""
    for run in watch.runs:
        name = run["metadata"]["name"]
        workload = run_state(rehearsal, run)["workload"]
        # Admitted through the prebuilt Workload: Kueue adopted it for this run.
        (owner,) = workload["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"]) == (run["kind"], name)
        assert workload["status"]["admission"]["clusterQueue"] == queue
        # Finished by Kueue as its run succeeded (not OutOfSync, not evicted).
        (done,) = [c for c in workload["status"]["conditions"] if c["type"] == "Finished"]
        assert (done["status"], done["reason"]) == ("True", "Succeeded"), (name, done)
        # Pinned: its pods on the nodes the run names, each of them holding one.
        pinned = set(run["metadata"]["annotations"]["nvcregen.io/nodes"].split(","))
        assert pinned <= set(nodes)
        assert watch.placed[name] == pinned, (name, watch.placed[name], pinned)


def test_the_first_steps_of_a_rendered_trainer_site_run_admitted_pinned_and_complete(
    rendered: Path, rehearsal: Twin
) -> None:
    nodes, queue = prepare(rendered, rehearsal)
    common = layer(rendered / "readiness/00-common")
    single, pairs = (layer(rendered / folder) for folder in STEPS)
    kinds = sorted({o["kind"] for o in common + single + pairs})
    assert kinds == ["ConfigMap", "Job", "TrainJob", "TrainingRuntime", "Workload"], kinds
    began = time.monotonic()
    apply(rehearsal, common)

    first, applied = run_step(rehearsal, single)
    assert [r["kind"] for r in first.runs] == ["Job", "Job"]  # the DCGM levels, the NCCL tests
    assert all(r["spec"]["completionMode"] == "Indexed" for r in first.runs)
    assert set(first.placed) == {run["metadata"]["name"] for run in first.runs}  # no other pods
    # The window's concurrency (`maxConcurrentJobs: 2`): the quota holds 2 nodes, so one
    # packed Job (a pod on each node) at a time.
    window = yaml.safe_load(SITE.read_text("utf-8"))["spec"]["readiness"]["window"]
    assert window["maxConcurrentJobs"] == 2 and max(first.at_once) == 1, first.at_once
    check_runs(rehearsal, first, nodes, queue)
    step_time = time.monotonic() - began

    second, _ = run_step(rehearsal, pairs)
    (train_job,) = second.runs
    assert train_job["kind"] == "TrainJob"
    # JobSet made the launcher's and the worker's Jobs from the runtime patch pinning each
    # node in a term of its own: the API server took them, and each pod went to its node.
    check_runs(rehearsal, second, nodes, queue)

    # No other Workload: Kueue made none of its own beside the prebuilt ones.
    workloads = (rehearsal.get(f"{KUEUE}/namespaces/nvcre/workloads") or {})["items"]
    assert sorted(w["metadata"]["name"] for w in workloads) == sorted(
        r["metadata"]["labels"][PREBUILT] for r in first.runs + second.runs
    )
    rehearsal.timings.update(
        {
            "step apply": applied,
            "first admission": min(first.admitted.values()),
            "last admission": max(first.admitted.values()),
            "step": step_time,
            "two-node step": max(second.finished.values()),
        }
    )
    print(f"\ntwin timings (s): { {k: round(v, 1) for k, v in rehearsal.timings.items()} }")


def test_stopping_the_twin_ends_jobset_and_trainer(rehearsal: Twin) -> None:
    """Last in this file: stops the module's twin (the fixture's stop is then a no-op)."""
    started = dict(rehearsal.processes)
    assert {"jobset", "trainer-controller-manager", "kueue", "kwok"} <= set(started)
    rehearsal.stop()
    assert {name: p.poll() is not None for name, p in started.items()} == dict.fromkeys(
        started, True
    )
    assert rehearsal.processes == {}
