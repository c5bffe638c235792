"""`nvcregen collect --context` for a trainer-mode site: TrainJobs, Jobs, pods and pod logs.

Pod logs need a kubelet, which the tests' real control plane (tests/realserver/) does
not run, so the official `kubernetes` client, unmodified, talks to `fakelist.py`: a
local HTTP server that speaks the Kubernetes API for exactly the calls collect makes
(paginated LISTs of trainjobs, jobs and pods; GET pods/<pod>/log), with scripted faults.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakelist import FakeKube, Fault, serve, write_kubeconfig
from trainerlogs import default_log, is_two_node_all_reduce, runs, write_saved_logs

from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect import podlogs
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions
from nvcregen.core.errors import ExitCode

ROOT = Path(__file__).resolve().parents[3]
SITE = str(ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml")
FAST = RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.05, timeout=(2.0, 2.0), restarts=2)
SITE_LABEL = {"nvcregen.io/site": "h20-3e-trainer"}


def pod(name: str, labels: dict[str, str], created: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "nvcre", "labels": {**SITE_LABEL, **labels}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta | {"creationTimestamp": created}}


def cluster_state() -> tuple[list[dict[str, Any]], dict[tuple[str, str, str], bytes]]:
    """The example site's runs, a launcher and a worker pod per TrainJob, a pod per Job.

    Each TrainJob also has an older, failed launcher pod whose log must not be read.
    """
    objects: list[dict[str, Any]] = []
    logs: dict[tuple[str, str, str], bytes] = {}
    for run in runs():
        objects.append(copy.deepcopy(run))
        name = run["metadata"]["name"]
        if run["kind"] == "TrainJob":
            jobset = {"jobset.sigs.k8s.io/jobset-name": name}
            launcher = {**jobset, "jobset.sigs.k8s.io/replicatedjob-name": "launcher"}
            worker = {**jobset, "jobset.sigs.k8s.io/replicatedjob-name": "node"}
            objects.append(pod(f"{name}-launcher-0-0-new", launcher, "2026-01-02T00:00:00Z"))
            objects.append(pod(f"{name}-launcher-0-0-old", launcher, "2026-01-01T00:00:00Z"))
            objects.append(pod(f"{name}-node-0-0-wrk", worker, "2026-01-02T00:00:00Z"))
            logs[("nvcre", f"{name}-launcher-0-0-new", "node")] = default_log(run).encode()
            logs[("nvcre", f"{name}-launcher-0-0-old", "node")] = b"Test NCCL failure\n"
        else:
            labels = {"batch.kubernetes.io/job-name": name, "job-name": name}
            objects.append(pod(f"{name}-abcde", labels, "2026-01-02T00:00:00Z"))
            logs[("nvcre", f"{name}-abcde", "dcgm-diag")] = default_log(run).encode()
    return objects, logs


@pytest.fixture
def fake() -> Iterator[FakeKube]:
    objects, logs = cluster_state()
    with serve(objects) as server:
        server.logs = logs
        yield server


def options(tmp_path: Path, fake: FakeKube, **extra: Any) -> CollectOptions:
    base: dict[str, Any] = {
        "site": SITE,
        "out_dir": tmp_path / "results",
        "root": ROOT,
        "context": "lab",
        "kubeconfig": write_kubeconfig(tmp_path / "kubeconfig", fake.url),
        "policy": FAST,
        "page_size": 10,
        "sleep": lambda _: None,
    }
    return CollectOptions(**(base | extra))


def verdicts(path: Path) -> Any:
    return json.loads((path / "verdicts.json").read_text())


@pytest.mark.slow
def test_cluster_logs_give_the_verdicts_of_the_saved_logs(tmp_path: Path, fake: FakeKube) -> None:
    fake.faults.append(Fault("pods/log", code=503, times=2))  # retried
    outcome = collect(options(tmp_path, fake))
    assert (outcome.archive.verified, outcome.exit_code) == (True, ExitCode.OK)
    saved = write_saved_logs(tmp_path / "saved")
    offline = collect(CollectOptions(SITE, tmp_path / "offline", ROOT, from_dir=saved))
    assert verdicts(outcome.archive.path) == verdicts(offline.archive.path)
    reads = [r for r in fake.received if r.path.endswith("/log")]
    assert len(reads) == 42 + 2  # one per run, and the two 503s
    assert all("-old" not in r.path and "-wrk" not in r.path for r in reads)
    assert {r.query["container"][0] for r in reads} == {"node", "dcgm-diag"}
    assert {r.query["limitBytes"][0] for r in reads} == {str(256 * 1024 * 1024 + 1)}
    pages = fake.lists("pods")
    assert len(pages) > 1  # paginated
    assert all(r.query["labelSelector"] == ["nvcregen.io/site=h20-3e-trainer"] for r in pages)
    provenance = json.loads((outcome.archive.path / "provenance.json").read_text())
    assert [item["kind"] for item in provenance["listings"]] == ["TrainJob", "Job", "Pod"]


def test_a_pod_that_is_gone_is_a_note_and_incomplete(tmp_path: Path, fake: FakeKube) -> None:
    gone = next(r for r in runs() if is_two_node_all_reduce(r))["metadata"]["name"]
    del fake.logs[("nvcre", f"{gone}-launcher-0-0-new", "node")]
    outcome = collect(options(tmp_path, fake))
    assert outcome.archive.verified
    assert f"TrainJob {gone}: pod {gone}-launcher-0-0-new is gone, no log" in outcome.notes
    assert str(outcome.verdicts.word) == "incomplete"


@pytest.mark.slow
def test_a_log_over_the_cap_is_a_note_never_judged(
    tmp_path: Path, fake: FakeKube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pod log is read with `limitBytes` and never judged past what `ingest` reads."""
    big = next(r for r in runs() if is_two_node_all_reduce(r))["metadata"]["name"]
    key = ("nvcre", f"{big}-launcher-0-0-new", "node")
    monkeypatch.setattr(podlogs, "MAX_LOG_BYTES", len(fake.logs[key]) - 1)
    outcome = collect(options(tmp_path, fake))
    assert any(f"TrainJob {big}: the log of pod" in n and "not read" in n for n in outcome.notes)
    assert str(outcome.verdicts.word) == "incomplete"
    monkeypatch.setattr(podlogs, "MAX_LOG_BYTES", len(fake.logs[key]))
    (tmp_path / "at").mkdir()
    assert not any("not read" in n for n in collect(options(tmp_path / "at", fake)).notes)


def test_a_log_that_cannot_be_read_archives_nothing(tmp_path: Path, fake: FakeKube) -> None:
    fake.faults.append(Fault("pods/log", code=403))
    with pytest.raises(CollectError, match=r"/log: HTTP 403") as caught:
        collect(options(tmp_path, fake))
    assert "nvcregen-collector" in str(caught.value)  # the RBAC hint
    assert not (tmp_path / "results").exists()


def test_a_launcher_pod_on_a_node_the_plan_does_not_name_is_unbound(tmp_path: Path) -> None:
    objects, logs = cluster_state()
    planned = {}  # each pod's planned node: its group's first node
    for run in runs():
        name = run["metadata"]["name"]
        group = int(name.rsplit("-", 1)[1][1:])
        single = run["metadata"]["labels"]["nvcregen.io/stage"] == "single-node"
        planned[name] = ("node-a", "node-b")[group] if single else "node-a"
        if is_two_node_all_reduce(run) and name.endswith("-r1-g0"):
            planned[name] = "node-z"
    for obj in objects:
        if obj["kind"] == "Pod":
            owner = next(n for n in planned if obj["metadata"]["name"].startswith(f"{n}-"))
            obj["spec"] = {"nodeName": planned[owner]}
    with serve(objects) as server:
        server.logs = logs
        outcome = collect(options(tmp_path, server))
    found = [f for f in outcome.verdicts.findings if f.code == "NVC733"]
    assert [(f.stage, f.test, f.round) for f in found] == [("two-node", "nccl-all-reduce", 1)]
    assert "its launcher pod was scheduled on node-z, which the plan does not name" in (
        found[0].message
    )
    assert outcome.exit_code is ExitCode.DRIFT
    summary = json.loads((outcome.archive.path / "summary.json").read_text())
    assert {r["pod_node"] for r in summary["logs"]} == {"node-a", "node-b", "node-z"}
