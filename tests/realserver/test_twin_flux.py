"""What the real Flux does with a step of Kueue-queued Jobs (issues #32 and #34).

Opt-in: skipped unless `make twin` has built the twin. On the twin (tests/twin.py: the
control plane, kube-controller-manager, kube-scheduler, kwok, Kueue) the real
source-controller and kustomize-controller read a Git repository served on loopback by
`git http-backend`. A ClusterQueue with no GPU quota keeps every Job queued, suspended by
Kueue. Two Kustomizations with `wait: true`, as nvcregen renders a step:

- over a folder of one such Job, with the Job check nvcregen renders (compile/gitops/healthchecks.py
  JOB): kustomize-controller reads a batch/v1 Job with its own status reader, ahead of the
  `healthCheckExprs`, and that reader calls a suspended Job Current: the Kustomization goes
  Ready while the Job has not run;
- over a folder of the same Job with its prebuilt Workload, and the Workload check nvcregen
  now renders (compile/gitops/healthchecks.py WORKLOAD): not Ready; at its timeout
  HealthCheckFailed, the Job still suspended and the Workload neither admitted nor finished.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
import twin
import yaml
from twin import Twin

from nvcregen.compile.gitops.healthchecks import JOB, WORKLOAD
from nvcregen.engines.gitops.flux.chain import health_expr
from nvcregen.rehearse.gitserver import git_repository

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.skipif(bool(twin.missing()), reason=twin.missing() or "built"),
]

NAMESPACE = "flux-runs"
QUEUE = "no-quota"
REPOSITORY = "rehearsal"
# Seconds: the Kustomizations' `timeout`, after which a health check fails; the least
# kustomize-controller takes (`Kustomization.GetTimeout` raises anything shorter to 30 s).
HEALTH_TIMEOUT = 30
TEST_LIMIT = 60.0
FLUX = "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/" + twin.FLUX_NAMESPACE
SOURCES = "/apis/source.toolkit.fluxcd.io/v1/namespaces/" + twin.FLUX_NAMESPACE


def run_job(name: str, labels: dict[str, str]) -> dict[str, Any]:
    """A Job of one pod asking for 8 GPUs in the queue, its container written out in full
    (the API server's defaults included) so a prebuilt Workload can match it exactly."""
    job = twin.queued_job(name, NAMESPACE, QUEUE, 8)
    job["metadata"]["labels"].update(labels)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    container["resources"]["requests"] = dict(container["resources"]["limits"])
    container.update(
        imagePullPolicy="IfNotPresent",
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
    )
    return job


def prebuilt_workload(job: dict[str, Any], name: str) -> dict[str, Any]:
    """The Workload Kueue would make for `job`, written beside it (nvcregen's trainer mode)."""
    return {
        "apiVersion": WORKLOAD.api_version,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "queueName": QUEUE,
            "podSets": [{"name": "main", "count": 1, "template": job["spec"]["template"]}],
        },
    }


def kustomization(name: str, checks: list[dict[str, Any]]) -> dict[str, Any]:
    """A step as nvcregen renders one for Flux (engines/gitops/flux/chain.py): `wait: true`,
    the checks of its kinds, no pruning."""
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": twin.FLUX_NAMESPACE},
        "spec": {
            "interval": "10m",
            "path": f"./{name}",
            "prune": False,
            "sourceRef": {"kind": "GitRepository", "name": REPOSITORY},
            "timeout": f"{HEALTH_TIMEOUT}s",
            "wait": True,
            "healthCheckExprs": checks,
        },
    }


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Twin]:
    started = twin.start(tmp_path_factory.mktemp("twin-flux"), [], {})
    try:
        twin.start_flux(started)
        yield started
    finally:
        started.stop()


def ready(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    """A Flux object's Ready condition once it is decided (True or False), else None."""
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    decided = [c for c in conditions if c["type"] == "Ready" and c["status"] in {"True", "False"}]
    return decided[0] if decided else None


def test_flux_calls_a_queued_job_ready_and_the_prebuilt_workloads_check_holds_it(
    rehearsal: Twin,
) -> None:
    began = time.monotonic()
    rehearsal.queue(QUEUE, NAMESPACE, {"nvcregen.io/pool": "none"}, gpus=0)
    gated_job = run_job("gated", {"kueue.x-k8s.io/prebuilt-workload-name": "gated-workload"})
    files = {
        "queued/job.yaml": yaml.safe_dump(run_job("queued", {})),
        "gated/job.yaml": yaml.safe_dump(gated_job),
        "gated/workload.yaml": yaml.safe_dump(prebuilt_workload(gated_job, "gated-workload")),
    }
    server = rehearsal.git_server()
    commit = git_repository(server.root, REPOSITORY, files)
    rehearsal.post(
        f"{SOURCES}/gitrepositories",
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": {"name": REPOSITORY, "namespace": twin.FLUX_NAMESPACE},
            "spec": {"interval": "10m", "url": server.url(REPOSITORY), "ref": {"branch": "main"}},
        },
    )
    source = rehearsal.wait_for(
        "GitRepository fetched",
        lambda: ready(rehearsal.get(f"{SOURCES}/gitrepositories/{REPOSITORY}")),
        30,
    )
    assert source["status"] == "True", source  # cloned from the Git server on loopback
    rehearsal.post(f"{FLUX}/kustomizations", kustomization("queued", [health_expr(JOB)]))
    rehearsal.post(
        f"{FLUX}/kustomizations", kustomization("gated", [health_expr(JOB), health_expr(WORKLOAD)])
    )

    # Without the Workload's check: Ready, though the Job is queued and has never run.
    queued = rehearsal.wait_for(
        "Kustomization queued decided",
        lambda: ready(rehearsal.get(f"{FLUX}/kustomizations/queued")),
        45,
    )
    job = rehearsal.job(NAMESPACE, "queued") or {}
    assert queued["status"] == "True", queued
    assert queued["message"].endswith(commit), queued  # "Applied revision: main@sha1:<commit>"
    assert job["spec"]["suspend"] is True  # Kueue's webhook suspended it; it never ran
    assert not (job.get("status") or {}).get("active")
    assert not twin.condition(rehearsal.workload_of(NAMESPACE, "queued"), "QuotaReserved")

    # With it: held until its timeout, then failed, the Job still queued.
    gated = rehearsal.wait_for(
        "Kustomization gated decided",
        lambda: ready(rehearsal.get(f"{FLUX}/kustomizations/gated")),
        45,
    )
    assert (gated["status"], gated["reason"]) == ("False", "HealthCheckFailed"), gated
    assert "[Workload/flux-runs/gated-workload status: 'InProgress']" in gated["message"], gated
    assert (rehearsal.job(NAMESPACE, "gated") or {})["spec"]["suspend"] is True
    workload = rehearsal.get(f"{twin.KUEUE_API}/namespaces/{NAMESPACE}/workloads/gated-workload")
    (owner,) = (workload or {})["metadata"]["ownerReferences"]  # Kueue adopted it for the Job
    assert (owner["kind"], owner["name"]) == ("Job", "gated")
    assert not twin.condition(workload, "QuotaReserved")
    assert not twin.condition(workload, "Finished")  # not OutOfSync: it matches its Job
    assert time.monotonic() - began < TEST_LIMIT


def test_stopping_the_twin_ends_flux_and_the_git_server(rehearsal: Twin) -> None:
    """Last in this file: stops the module's twin (the fixture's stop is then a no-op)."""
    started = dict(rehearsal.processes)
    assert set(twin.FLUX_CONTROLLERS) <= set(started)
    (server,) = rehearsal.servers
    address = ("127.0.0.1", server.port)
    with socket.create_connection(address, timeout=5):  # serving until the stop
        pass
    rehearsal.stop()
    assert {name: p.poll() is not None for name, p in started.items()} == dict.fromkeys(
        started, True
    )
    assert rehearsal.servers == []
    assert not server.thread.is_alive()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=5)
