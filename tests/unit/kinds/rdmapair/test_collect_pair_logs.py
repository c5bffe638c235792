"""A pair run's TrainJob from a cluster: its launcher's log and its server pod's (issue #36)."""

from __future__ import annotations

from typing import Any

import pytest

from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect import podlogs
from nvcregen.collect.model import CollectOptions

JOBSET = "jobset.sigs.k8s.io/jobset-name"
RJOB = "jobset.sigs.k8s.io/replicatedjob-name"


def pod(name: str, jobset: str, rjob: str, node: str) -> dict[str, Any]:
    labels = {JOBSET: jobset, RJOB: rjob}
    created = "2026-12-06T09:00:00Z"
    meta = {"name": name, "labels": labels, "creationTimestamp": created}
    return {"metadata": meta, "spec": {"nodeName": node}}


def trainjob(name: str, *, pair: bool) -> dict[str, Any]:
    annotations = {"nvcregen.io/server-log": "node"} if pair else {}
    meta = {"name": name, "namespace": "nvcre", "annotations": annotations}
    return {"kind": "TrainJob", "metadata": meta}


PODS = [
    pod("pair-r1-g0-launcher-0-0-x1", "pair-r1-g0", "launcher", "node-a"),
    pod("pair-r1-g0-node-0-0-x2", "pair-r1-g0", "node", "node-b"),
    pod("nccl-r1-g0-launcher-0-0-x3", "nccl-r1-g0", "launcher", "node-a"),
    pod("nccl-r1-g0-node-0-0-x4", "nccl-r1-g0", "node", "node-b"),
]


def test_a_pair_runs_server_pod_is_found_and_an_mpi_workers_is_not() -> None:
    index = podlogs.PodIndex(PODS)
    found, container = index.server_of(trainjob("pair-r1-g0", pair=True))
    assert found is not None and found["metadata"]["name"] == "pair-r1-g0-node-0-0-x2"
    assert container == "node"
    assert index.server_of(trainjob("nccl-r1-g0", pair=False))[0] is None  # sshd's log: no result


def test_both_logs_are_read_the_servers_named_after_its_pod(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []

    def fake_read(_cluster: object, path: str, query: object, _policy: object) -> bytes:
        read.append(path)
        return path.encode()

    monkeypatch.setattr(podlogs, "read_text", fake_read)
    options = CollectOptions(site="pair", policy=RetryPolicy())
    runs = [trainjob("pair-r1-g0", pair=True), trainjob("nccl-r1-g0", pair=False)]
    logs, notes = podlogs._read_logs(object(), runs, PODS, options)  # type: ignore[arg-type]
    assert notes == []
    assert [(g.name, g.node) for g in logs] == [
        ("pair-r1-g0", "node-a"),
        ("pair-r1-g0-node-0-0-x2", "node-b"),
        ("nccl-r1-g0", "node-a"),
    ]
    assert read[1] == "/api/v1/namespaces/nvcre/pods/pair-r1-g0-node-0-0-x2/log"
