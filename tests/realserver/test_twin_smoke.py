"""The twin's smoke run (issue #34): a Kueue-queued Job on fake GPU nodes, end to end.

Opt-in: skipped unless `make twin` has built the twin for the current pins. On its own
control plane (tests/twin.py): kube-controller-manager, kube-scheduler, kwok with two fake
nodes of 8 GPUs, and Kueue with its own webhooks and CRDs. A Job asking for 8 GPUs in a
LocalQueue is suspended by Kueue's webhook, admitted to the ClusterQueue, bound by the
scheduler to a kwok node, completed by kwok, and its log read through the API server.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
import twin
from kubecontrolplane import ControlPlaneError
from twin import Twin

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.skipif(bool(twin.missing()), reason=twin.missing() or "built"),
]

NAMESPACE = "smoke"
NODES = ("gpu-node-0", "gpu-node-1")
LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
LOG_LINES = ("# nThread 1 nGpus 8", "# Avg bus bandwidth    : 391.2")


def running_under(folder: Path) -> list[str]:
    """The command lines of the processes naming `folder` (their data, logs, configs)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with suppress(OSError):
                line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                if str(folder) in line and proc.name != str(os.getpid()):
                    found.append(line)
    return found


def test_a_start_that_fails_midway_stops_what_it_started(tmp_path: Path) -> None:
    """Runs before the module's twin starts: a node name the API server refuses fails
    the start after the control plane, kube-scheduler and kwok are up; all of them end
    (by `start`'s own stop, and else by the Twin's finalizer once it is dropped)."""
    with pytest.raises(ControlPlaneError, match=r"POST /api/v1/nodes: HTTP 422"):
        twin.start(tmp_path / "failing", ["Not_A_Node_Name"], LABELS)
    assert (tmp_path / "failing" / "kwok.log").exists()  # it got as far as kwok
    assert running_under(tmp_path / "failing") == []


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Twin]:
    folder = tmp_path_factory.mktemp("twin")
    log = twin.write_cri_log(folder / "main.log", LOG_LINES)
    started = twin.start(
        folder, NODES, LABELS, kwok_config=[twin.cluster_logs(NAMESPACE, "main", log)]
    )
    try:
        yield started
    finally:
        started.stop()


def test_a_queued_job_is_admitted_bound_to_a_kwok_node_and_completes(rehearsal: Twin) -> None:
    rehearsal.queue("gpus", NAMESPACE, {"nvidia.com/gpu.present": "true"}, gpus=16)
    began = time.monotonic()
    job = rehearsal.post(
        f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs",
        twin.queued_job("smoke", NAMESPACE, "gpus", 8),
    )
    assert job["spec"]["suspend"] is True  # Kueue's mutating webhook ran on the create

    def admitted() -> dict[str, Any] | None:
        listed = rehearsal.get(f"{KUEUE}/namespaces/{NAMESPACE}/workloads") or {}
        mine = [w for w in listed.get("items") or [] if twin.condition(w, "Admitted")]
        return mine[0] if mine else None

    workload = rehearsal.wait_for("the Job's Workload admitted", admitted, timeout=120)
    (owner,) = workload["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"]) == ("Job", "smoke")
    admission = workload["status"]["admission"]
    assert admission["clusterQueue"] == "gpus"
    (pod_set,) = admission["podSetAssignments"]
    assert pod_set["flavors"] == {"nvidia.com/gpu": "gpus"}
    assert pod_set["resourceUsage"]["nvidia.com/gpu"] == "8"

    def completed() -> dict[str, Any] | None:
        current = rehearsal.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/smoke")
        return current if twin.condition(current, "Complete") else None

    done = rehearsal.wait_for("the Job complete", completed, timeout=180)
    assert done["status"]["succeeded"] == 1
    assert done["spec"]["suspend"] is False  # Kueue let it start
    pods = rehearsal.get(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=job-name%3Dsmoke")
    (pod,) = (pods or {})["items"]
    assert pod["spec"]["nodeName"] in NODES  # bound by kube-scheduler to a kwok node
    assert pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}  # the flavor's
    assert pod["status"]["phase"] == "Succeeded"
    assert twin.condition(pod, "PodScheduled")
    code, log = rehearsal.plane.request(
        "GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{pod['metadata']['name']}/log"
    )
    assert code == 200, log
    assert log.splitlines() == list(LOG_LINES)  # served by kwok from the CRI-format file
    assert time.monotonic() - began < 240


# A flag each binary's usage names: it was built from its own main package.
USAGE = {
    "kwok": "--manage-nodes-with-annotation-selector",
    "kube-scheduler": "--leader-elect",
    "kueue": "-feature-gates",
    "jobset": "-leader-elect",
    "trainer-controller-manager": "-kubeconfig",
    "source-controller": "--storage-path",
    "kustomize-controller": "--default-kubeconfig-service-account",
}


@pytest.mark.parametrize("name", twin.BINARIES)
def test_every_twin_binary_runs(name: str) -> None:
    """The smoke run starts only some of them; each one built must at least start."""
    binary = twin.cache_dir() / "bin" / name
    done = subprocess.run(
        [str(binary), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert USAGE[name] in done.stdout + done.stderr


def pinned(folder: str, module: str) -> str:
    """The version of `module` that tools/<folder>/go.mod requires."""
    text = (twin.TOOLS / folder / "go.mod").read_text("utf-8")
    (version,) = [x.split()[1] for x in text.splitlines() if x.strip().startswith(module + " v")]
    return str(version)


def test_kwok_and_kube_scheduler_report_the_releases_pinned() -> None:
    def version(name: str) -> str:
        binary = twin.cache_dir() / "bin" / name
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=True
        )
        return done.stdout.strip()

    release = pinned("controlplane", "k8s.io/kubernetes")
    assert version("kube-scheduler") == f"Kubernetes {release}" == "Kubernetes v1.35.4"
    kwok = pinned("twin/kwok", "sigs.k8s.io/kwok")
    assert version("kwok").startswith(f"kwok version {kwok} ")
    assert kwok == "v0.8.0"


def test_stopping_the_twin_ends_every_process_it_started(rehearsal: Twin) -> None:
    """Last in this file: stops the module's twin (the fixture's stop is then a no-op)."""
    started = {**rehearsal.plane.processes, **rehearsal.processes}
    assert {"etcd", "kube-apiserver", "kube-controller-manager", "kwok", "kueue"} <= set(started)
    groups = [rehearsal.processes[name].pid for name in rehearsal.processes]
    rehearsal.stop()
    assert {name: p.poll() is not None for name, p in started.items()} == dict.fromkeys(
        started, True
    )
    for group in groups:  # nothing left in any controller's process group
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)
    assert rehearsal.processes == {}
    rehearsal.stop()  # a second stop is harmless
