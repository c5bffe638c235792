"""Reading from (and reclaiming on) a misbehaving API server, through the real client.

tests/realserver/test_cp_collect.py runs collect against the real kube-apiserver through
a fault proxy (500s, timeouts, lists cut short, objects changed before a delete); here,
for scripted answers a real server cannot be made to give (a 403 on one list, 410 Gone
for a chosen token, exact retry counts), the official `kubernetes` client, unmodified,
talks to `fakelist.py`: a local HTTP server that speaks the Kubernetes API for exactly
the LIST and DELETE calls collect makes, and answers with scripted faults: 500s, a reply
slower than the client's read timeout, 410 Gone for an expired continue token, 403. How
a call is retried (429 and Retry-After, 5xx, giving up) is `nvcregen.cluster.retry`'s,
tested in `tests/unit/cluster/test_retry.py`; here, that collect passes its policy and
what it makes of a call that still fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakelist import FakeKube, Fault, serve, write_kubeconfig
from labstate import find, lab_state, write_export

from nvcregen.cli import main
from nvcregen.cluster import connect
from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.client import delete_object
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome
from nvcregen.collect.requests import DeleteRequest, ListRequest
from nvcregen.core.errors import ExitCode
from nvcregen.results.archive import object_path

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
FAST = RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.05, timeout=(2.0, 0.3), restarts=2)
OWNERS = [
    ("Certification", "nvcre", "lab-single-node-0001"),
    ("Certification", "nvcre", "lab-two-node-0002"),
    ("WorkloadRun", "nvcre", "lab-single-node-dcgm-l1-0003"),
    ("WorkloadRun", "nvcre", "lab-two-node-nccl-all-reduce-tcp-0004"),
]


@pytest.fixture
def fake() -> Iterator[FakeKube]:
    with serve(lab_state()) as server:
        yield server


@pytest.fixture
def kubeconfig(tmp_path: Path, fake: FakeKube) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", fake.url)


@pytest.fixture
def slept() -> list[float]:
    return []


def options(tmp_path: Path, kubeconfig: Path, slept: list[float], **extra: Any) -> CollectOptions:
    base: dict[str, Any] = {
        "site": str(SITE_FILE),
        "out_dir": tmp_path / "results",
        "root": ROOT,
        "context": "lab",
        "kubeconfig": kubeconfig,
        "policy": FAST,
        "page_size": 4,
        "sleep": slept.append,
    }
    return CollectOptions(**(base | extra))


def provenance_listing(outcome: CollectOutcome, kind: str) -> dict[str, Any]:
    import json

    data = json.loads((outcome.archive.path / "provenance.json").read_text())
    return next(
        item for item in data["listings"] if item["kind"] == kind and item["namespace"] == "nvcre"
    )


def test_a_cluster_read_in_pages_archives_what_a_folder_export_does(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    pages: list[tuple[str, int]] = []
    outcome = collect(
        options(tmp_path, kubeconfig, slept, on_page=lambda r, n: pages.append((r.kind, n)))
    )
    assert outcome.archive.verified and outcome.exit_code is ExitCode.OK
    certifications = fake.lists("certifications")
    assert certifications[0].query["labelSelector"] == ["nvcregen.io/site=lab"]
    assert certifications[0].query["limit"] == ["4"]
    bandwidth = fake.lists("bandwidthmeasurements")
    assert (
        len(bandwidth) == 4
    )  # 13 in the namespace, 4 per page; the other site's one dropped later
    assert "continue" in bandwidth[1].query
    assert ("BandwidthMeasurement", 13) in pages
    assert provenance_listing(outcome, "BandwidthMeasurement")["pages"] == 4
    assert provenance_listing(outcome, "BandwidthMeasurement")["resource_version"] == "1000"
    from_folder = collect(
        CollectOptions(
            str(SITE_FILE),
            tmp_path / "folder",
            ROOT,
            from_dir=write_export(tmp_path / "export", lab_state()),
        )
    )
    assert (
        from_folder.archive.path.name == outcome.archive.path.name
    )  # the same state, the same run
    assert slept == []


def test_500s_are_retried_with_backoff(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    fake.faults.append(Fault("workflows", 500, times=2))
    outcome = collect(options(tmp_path, kubeconfig, slept))
    assert outcome.archive.verified
    assert slept == [0.01, 0.02]
    assert len(fake.lists("workflows")) == 2 + 2  # two 500s, then 6 Workflows in pages of 4


def test_a_reply_slower_than_the_read_timeout_is_retried(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    fake.faults.append(Fault("goodputmeasurements", delay=1.0))  # the client waits 0.3 s
    outcome = collect(options(tmp_path, kubeconfig, slept))
    assert outcome.archive.verified
    assert slept == [0.01]
    assert len(fake.lists("goodputmeasurements")) == 2


def test_an_expired_continue_token_restarts_the_listing(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    fake.faults.append(Fault("bandwidthmeasurements", 410, on_continue=True))
    outcome = collect(options(tmp_path, kubeconfig, slept))
    assert outcome.archive.verified
    requests = fake.lists("bandwidthmeasurements")
    assert ["continue" in r.query for r in requests] == [False, True, False, True, True, True]
    assert provenance_listing(outcome, "BandwidthMeasurement")["restarts"] == 1
    archived = list((outcome.archive.path / "objects" / "bandwidthmeasurement").rglob("*.yaml"))
    assert len(archived) == 12  # every item once: the first pages were read again, not kept twice


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (Fault("bandwidthmeasurements", 500, times=99), "failed 3 times; last: HTTP 500"),
        (
            Fault("bandwidthmeasurements", 410, times=99, on_continue=True),
            "continue token expired 3 times",
        ),
        (Fault("goodputmeasurements", delay=1.0, times=99), "failed 3 times; last: no answer"),
        (Fault("configmaps", 403), "read-only RBAC of the platform layer"),
    ],
)
@pytest.mark.slow
def test_a_partial_read_is_never_archived(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float], fault: Fault, message: str
) -> None:
    fake.faults.append(fault)
    with pytest.raises(CollectError, match="could not read the cluster completely") as raised:
        collect(options(tmp_path, kubeconfig, slept, reclaim=True))
    assert message in str(raised.value)
    assert not (tmp_path / "results").exists()
    assert fake.deletes() == []


def test_a_kind_the_cluster_does_not_serve_is_noted(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    fake.served.discard("reportexports")
    outcome = collect(options(tmp_path, kubeconfig, slept))
    assert outcome.notes == ("the cluster serves no ReportExport (its CRD is not installed)",)
    assert outcome.verdicts.exports == ()


def test_reclaim_deletes_the_sites_owners_once_the_archive_verified(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    outcome = collect(options(tmp_path, kubeconfig, slept, reclaim=True))
    assert outcome.exit_code is ExitCode.OK
    owners = [d for d in fake.deleted if d[0] in {"Certification", "WorkloadRun"}]
    assert sorted(owners) == OWNERS
    assert fake.deleted[-len(OWNERS) :] == owners  # what they own went first
    first = fake.deletes()[0]
    assert first.body["propagationPolicy"] == "Orphan"
    assert set(first.body["preconditions"]) == {"uid", "resourceVersion"}
    assert find(fake.objects, "Certification", "other-site-0009")  # another site's stays
    assert [o.status for o in outcome.deleted] == ["deleted"] * len(fake.deleted)


def test_objects_still_measuring_are_archived_as_incomplete_and_never_reclaimed(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    cert = find(fake.objects, "Certification", "lab-two-node-0002")
    cert["status"]["categoryStatuses"][0]["status"] = "InProgress"
    bw = find(
        fake.objects,
        "BandwidthMeasurement",
        "lab-two-node-0002-communication-nccl-all-reduce-group-0-3-job-bw",
    )
    bw["status"]["conditions"] = [
        {
            "type": "Measuring",
            "status": "True",
            "reason": "JobRunning",
            "message": "",
            "lastTransitionTime": "2026-10-14T12:00:00Z",
        }
    ]
    outcome = collect(options(tmp_path, kubeconfig, slept, reclaim=True))
    assert outcome.archive.verified
    assert outcome.verdicts.word == "incomplete"
    assert outcome.reclaim_problems == ("nothing deleted: still running: two-node/nccl-all-reduce",)
    assert fake.deletes() == []
    assert outcome.exit_code is ExitCode.INVALID  # asked to reclaim, and it did not


def test_nothing_is_deleted_when_the_archive_does_not_verify(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    first = collect(options(tmp_path, kubeconfig, slept))
    victim = first.archive.path / object_path(
        find(fake.objects, "Certification", "lab-two-node-0002")
    )
    victim.write_text(victim.read_text() + "# edited\n")
    again = collect(options(tmp_path, kubeconfig, slept, reclaim=True))
    assert (again.archive.state, again.archive.verified) == ("exists", False)
    assert again.reclaim_problems[0].startswith("nothing deleted: the archive did not verify")
    assert fake.deletes() == []
    assert again.exit_code is ExitCode.INVALID


def test_a_changed_object_is_not_deleted(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    cluster = connect("lab", kubeconfig, sleep=slept.append)
    cert = find(fake.objects, "Certification", "lab-two-node-0002")
    stale = DeleteRequest("Certification", "nvcre", "lab-two-node-0002", "uid-cert-2", "1")
    outcome = delete_object(cluster, stale, FAST)
    assert (outcome.status, outcome.code) == ("conflict", 409)
    assert "Precondition failed" in outcome.message
    assert cert in fake.objects
    current = DeleteRequest(
        "Certification",
        "nvcre",
        "lab-two-node-0002",
        "uid-cert-2",
        cert["metadata"]["resourceVersion"],
    )
    assert delete_object(cluster, current, FAST).status == "deleted"
    assert delete_object(cluster, current, FAST).status == "gone"


def test_a_refused_delete_fails_the_reclaim(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    fake.faults.append(Fault("workloadruns", 403, method="DELETE", times=99))
    outcome = collect(options(tmp_path, kubeconfig, slept, reclaim=True))
    owners = [d for d in fake.deleted if d[0] in {"Certification", "WorkloadRun"}]
    assert sorted(owners) == OWNERS[:2]
    assert len(outcome.reclaim_problems) == 2
    assert "refused (HTTP 403" in outcome.reclaim_problems[0]
    assert outcome.exit_code is ExitCode.INVALID


def test_listing_is_read_only_until_reclaim_is_asked(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path, slept: list[float]
) -> None:
    collect(options(tmp_path, kubeconfig, slept))
    assert {r.method for r in fake.received} == {"GET"}
    assert ListRequest("Workflow", "nvcre").path() in {r.path for r in fake.received}


def test_the_command_line_reads_a_context_and_reclaims(
    tmp_path: Path, fake: FakeKube, kubeconfig: Path
) -> None:
    args = [
        "collect",
        "--site",
        str(SITE_FILE),
        "--context",
        "lab",
        "--kubeconfig",
        str(kubeconfig),
    ]
    done = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "results"), "--reclaim"])
    assert done.exit_code == 0, done.output
    deleted = [line for line in done.stdout.splitlines() if line.startswith("deleted")]
    assert deleted[-len(OWNERS) :] == [
        f"deleted    {kind} {ns}/{name}" for kind, ns, name in OWNERS
    ]
    assert len(deleted) == len(OWNERS) + 25  # what they own in the archive, deleted first
    missing = CliRunner().invoke(
        main, [*args[:-2], "--kubeconfig", str(tmp_path / "none"), "--out", str(tmp_path)]
    )
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr
