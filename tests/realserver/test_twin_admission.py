"""What the real Kueue does with nodes nvcregen's checks now refuse (issues #32 and #34).

Opt-in: skipped unless `make twin` has built the twin. One twin for the file (tests/twin.py:
the control plane, kube-controller-manager, kube-scheduler, kwok, Kueue); each test brings
its own fake nodes, Topology, flavor and queues, and shows one engine behaviour as a pair:
the configuration nvcregen refuses leaves a Job unadmitted, with Kueue's own reason on its
Workload, and the one it requires runs to completion.

- A Topology level no node carries (`validate` refuses it against the inventory: NVC394,
  NVC399): Kueue's TAS cache keeps only the nodes that carry every level's label
  (`NodeMatchesFlavor`, pkg/util/tas/node.go), so a flavor whose nodes lack one has no
  domains at all.
- A taint the pods do not tolerate (NVC365): Kueue's topology scheduler skips such a node
  (`FindMatchingUntoleratedTaint`, pkg/cache/scheduler/scheduling_simulator_default.go),
  before kube-scheduler could.

Why 30 s of "not admitted" is enough: Kueue's scheduler takes a new Workload at once (here
it writes its refusal, or admits the passing half, within a second of the Job's creation;
each test asserts its passing half was admitted within a third of the wait), and a
Workload it found inadmissible is parked until a cluster event (a node, flavor or quota
change) retries it; each test first waits for Kueue's written refusal, so the wait that
follows only shows that nothing else admits it later. Wall time per test: docs/design/0019.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import twin
from twin import Twin

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.skipif(bool(twin.missing()), reason=twin.missing() or "built"),
]

CORE = "network.topology.nvidia.com/core"
HOSTNAME = "kubernetes.io/hostname"
REQUIRED = {"kueue.x-k8s.io/podset-required-topology": HOSTNAME}
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
UNADMITTED_WAIT = 30.0  # seconds a refused Job is watched (see the module's docstring)
TEST_LIMIT = 60.0  # seconds each test may take, its own nodes and queues included


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Twin]:
    started = twin.start(tmp_path_factory.mktemp("twin-admission"), [], {})
    try:
        yield started
    finally:
        started.stop()


def refused(rehearsal: Twin, namespace: str, job: str) -> dict[str, Any]:
    """Wait for Kueue's refusal of `job`: its Workload's QuotaReserved False, with why."""

    def reason() -> dict[str, Any] | None:
        workload = rehearsal.workload_of(namespace, job)
        conditions = ((workload or {}).get("status") or {}).get("conditions") or []
        pending = [
            c
            for c in conditions
            if c["type"] == "QuotaReserved" and c["status"] == "False" and c.get("message")
        ]
        return pending[0] if pending else None

    found: dict[str, Any] = rehearsal.wait_for(f"Kueue's refusal of Job {job}", reason, 30)
    return found


def stays_unadmitted(rehearsal: Twin, namespace: str, job: str, since: float) -> None:
    """Until UNADMITTED_WAIT after `since`: never admitted, the Job still suspended."""
    while True:
        workload = rehearsal.workload_of(namespace, job)
        assert not twin.condition(workload, "QuotaReserved"), workload
        assert not twin.condition(workload, "Admitted"), workload
        assert (rehearsal.job(namespace, job) or {})["spec"]["suspend"] is True
        if time.monotonic() - since >= UNADMITTED_WAIT:
            return
        time.sleep(1.0)


def completes(rehearsal: Twin, namespace: str, job: str, nodes: tuple[str, ...]) -> float:
    """Wait until `job` is admitted and Complete, its pod bound to one of `nodes`;
    the seconds from the call to the Workload's admission."""
    began = time.monotonic()
    rehearsal.wait_for(
        f"Job {job} admitted",
        lambda: twin.condition(rehearsal.workload_of(namespace, job), "Admitted"),
        timeout=30,
    )
    admitted = time.monotonic() - began
    rehearsal.wait_for(
        f"Job {job} complete",
        lambda: twin.condition(rehearsal.job(namespace, job), "Complete"),
        timeout=30,
    )
    pods = rehearsal.get(f"/api/v1/namespaces/{namespace}/pods?labelSelector=job-name%3D{job}")
    (pod,) = (pods or {})["items"]
    assert pod["spec"]["nodeName"] in nodes  # bound by kube-scheduler
    assert pod["status"]["phase"] == "Succeeded"
    return admitted


def test_a_topology_level_no_node_carries_admits_nothing_until_the_nodes_carry_it(
    rehearsal: Twin,
) -> None:
    began = time.monotonic()
    namespace, pool = "levels", {"nvcregen.io/pool": "levels"}
    nodes = ("levels-0", "levels-1")
    rehearsal.add_gpu_nodes(nodes, pool)  # no CORE label, as topograph leaves it off
    rehearsal.topology("levels", [CORE, HOSTNAME])
    rehearsal.queue("levels", namespace, pool, gpus=16, topology="levels")
    created = time.monotonic()
    rehearsal.post(
        f"/apis/batch/v1/namespaces/{namespace}/jobs",
        twin.queued_job("run", namespace, "levels", 8, annotations=REQUIRED),
    )
    why = refused(rehearsal, namespace, "run")
    assert "no topology domains at level" in why["message"], why
    stays_unadmitted(rehearsal, namespace, "run", created)

    # The same nodes given the level's label: the same Workload is admitted and runs.
    rehearsal.label_nodes(nodes, {CORE: "core-0"})
    # Admitted well within the wait the refusal was given: that wait was long enough.
    assert completes(rehearsal, namespace, "run", nodes) < UNADMITTED_WAIT / 3
    assert time.monotonic() - began < TEST_LIMIT


def test_a_taint_the_pods_do_not_tolerate_admits_nothing_and_a_toleration_runs(
    rehearsal: Twin,
) -> None:
    began = time.monotonic()
    namespace, pool = "taints", {"nvcregen.io/pool": "taints"}
    nodes = ("taints-0", "taints-1")
    rehearsal.add_gpu_nodes(nodes, pool, taints=[GPU_TAINT])  # as the inventory records
    rehearsal.topology("taints", [HOSTNAME])
    rehearsal.queue("taints", namespace, pool, gpus=16, topology="taints")
    created = time.monotonic()
    rehearsal.post(
        f"/apis/batch/v1/namespaces/{namespace}/jobs",
        twin.queued_job("untolerated", namespace, "taints", 8, annotations=REQUIRED),
    )
    why = refused(rehearsal, namespace, "untolerated")
    assert 'taint "nvidia.com/gpu:NoSchedule": 2' in why["message"], why

    # Beside it, the same Job tolerating the taint is admitted and runs; the first is not.
    rehearsal.post(
        f"/apis/batch/v1/namespaces/{namespace}/jobs",
        twin.queued_job(
            "tolerated",
            namespace,
            "taints",
            8,
            annotations=REQUIRED,
            tolerations=[GPU_TOLERATION],
        ),
    )
    assert completes(rehearsal, namespace, "tolerated", nodes) < UNADMITTED_WAIT / 3
    stays_unadmitted(rehearsal, namespace, "untolerated", created)
    assert time.monotonic() - began < TEST_LIMIT
