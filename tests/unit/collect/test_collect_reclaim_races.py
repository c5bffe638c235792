"""`collect --reclaim` deletes only the versions the archive holds (issue #20).

When a Workflow, a measurement or a ConfigMap changed after it was listed and before
the delete, garbage collection removed a version the archive does not hold: only the
owner's uid and resourceVersion were pinned. The fake API server collects garbage as
the control plane does, so these tests fail when a delete cascades; each changed object
must be left, with everything that owns it. An empty or cut ReportExport list, and a
list page whose continue token cannot be read, stop reclaiming.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakelist import FakeKube, Fault, serve, write_kubeconfig
from kubehttp import Received
from labstate import lab_state

from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
FAST = RetryPolicy(attempts=2, backoff=0.0, max_backoff=0.0, timeout=(2.0, 0.3), restarts=1)
Hook = Callable[[FakeKube, Received], None]


@pytest.fixture
def fake() -> Iterator[FakeKube]:
    with serve(lab_state()) as server:
        yield server


def reclaim(tmp_path: Path, fake: FakeKube) -> CollectOutcome:
    config = write_kubeconfig(tmp_path / "kubeconfig", fake.url)
    options = CollectOptions(
        str(SITE_FILE), tmp_path / "results", ROOT, "lab", config, reclaim=True,
        policy=FAST, page_size=4, sleep=lambda _: None,
    )  # fmt: skip
    return collect(options)


def changed_before_the_first_delete(kind: str, name: str) -> Hook:
    """A controller updates one object after collect listed it, before reclaim deletes."""
    done: list[bool] = []

    def hook(fake: FakeKube, _: Received) -> None:
        if not done:
            obj = next(
                o for o in fake.objects if (o["kind"], o["metadata"]["name"]) == (kind, name)
            )
            obj["metadata"]["resourceVersion"] = "424242"
            done.append(True)

    return hook


def names(fake: FakeKube) -> set[str]:
    return {o["metadata"]["name"] for o in fake.objects}


WORKFLOW = "lab-two-node-0002-communication-nccl-all-reduce"
MEASUREMENT = "lab-two-node-0002-communication-nccl-all-reduce-group-0-2-job-bw"
CONFIGMAP = "nodes-lab-two-node-0002-nemotron5-8b-ok"


@pytest.mark.parametrize(
    ("kind", "name", "kept"),
    [
        ("Workflow", WORKFLOW, {WORKFLOW, "lab-two-node-0002"}),
        ("BandwidthMeasurement", MEASUREMENT, {MEASUREMENT, WORKFLOW, "lab-two-node-0002"}),
        (
            "ConfigMap",
            CONFIGMAP,
            {CONFIGMAP, "lab-two-node-0002-training-nemotron5-8b", "lab-two-node-0002"},
        ),
    ],
)
def test_an_object_changed_after_listing_is_never_deleted(
    tmp_path: Path, fake: FakeKube, kind: str, name: str, kept: set[str]
) -> None:
    fake.before_delete = changed_before_the_first_delete(kind, name)
    outcome = reclaim(tmp_path, fake)
    assert fake.collected == []  # no cascade took anything
    assert kept <= names(fake)  # the changed object, and what owns it
    assert f"{kind} nvcre/{name} was not deleted: conflict" in "\n".join(outcome.reclaim_problems)
    assert "Certification nvcre/lab-two-node-0002 was not deleted: kept" in "\n".join(
        outcome.reclaim_problems
    )
    assert "lab-single-node-0001" not in names(fake)  # the other runs are still reclaimed


def test_an_empty_report_export_list_stops_reclaim(tmp_path: Path, fake: FakeKube) -> None:
    fake.faults.append(Fault("reportexports", truncate=True, drop=1))  # the first read only
    outcome = reclaim(tmp_path, fake)
    assert fake.deletes() == []
    [problem] = outcome.reclaim_problems
    assert problem.startswith("nothing deleted: error[NVC725]: the ReportExport list was not read")
    assert "ReportExport nvcre/rex-r-lab-two-node not archived" in problem


def test_a_failing_second_report_export_read_stops_reclaim(tmp_path: Path, fake: FakeKube) -> None:
    reads: list[str] = []
    original = fake.answer

    def answer(request: Received, authorization: str) -> tuple[int, Any, dict[str, str]]:
        if request.path.endswith("/reportexports"):
            reads.append(request.path)
            if len(reads) > 1:  # every read after the first, by source label
                return 500, {"kind": "Status", "code": 500}, {}
        return original(request, authorization)

    fake.answer = answer  # type: ignore[method-assign]
    outcome = reclaim(tmp_path, fake)
    assert fake.deletes() == []
    assert "error[NVC725]: the ReportExports could not be read again" in outcome.reclaim_problems[0]


@pytest.mark.parametrize("metadata", [None, [], {"continue": 7}])
def test_a_page_whose_continue_token_cannot_be_read_is_incomplete(
    tmp_path: Path, fake: FakeKube, metadata: Any
) -> None:
    original = fake.answer

    def answer(request: Received, authorization: str) -> tuple[int, Any, dict[str, str]]:
        code, body, headers = original(request, authorization)
        if request.path.endswith("/reportexports") and isinstance(body, dict):
            body = (
                {**body, "metadata": metadata}
                if metadata is not None
                else {k: v for k, v in body.items() if k != "metadata"}
            )
        return code, body, headers

    fake.answer = answer  # type: ignore[method-assign]
    with pytest.raises(CollectError, match="the list is incomplete"):
        reclaim(tmp_path, fake)
    assert fake.deletes() == []


@pytest.mark.parametrize(
    "body", [b"[" * 100_000 + b"]" * 100_000, b'{"items": ' + b"9" * 5000 + b"}"]
)
def test_a_hostile_api_answer_is_a_failed_read_not_an_internal_error(
    tmp_path: Path, fake: FakeKube, body: bytes
) -> None:
    original = fake.answer

    def answer(request: Received, authorization: str) -> tuple[int, Any, dict[str, str]]:
        if request.path.endswith("/workflows"):
            return 200, body, {}
        return original(request, authorization)

    fake.answer = answer  # type: ignore[method-assign]
    with pytest.raises(CollectError, match="could not read the cluster completely"):
        reclaim(tmp_path, fake)
    assert fake.deletes() == []


def _register(fake: FakeKube, annotation: str, namespace: str = "nvcre") -> None:
    """NVCRE registered lab-two-node-0002 for report export (its bindings annotation)."""
    for obj in fake.objects:
        meta = obj["metadata"]
        if meta["name"] == "lab-two-node-0002":
            meta["annotations"] = {"nvcre.nvidia.com/report-export-bindings": annotation}
        if obj["kind"] == "ReportExport" or meta["name"].startswith("snapshot-"):
            meta["namespace"] = namespace


def test_report_exports_in_a_reporting_namespace_not_read_stop_reclaim(
    tmp_path: Path, fake: FakeKube
) -> None:
    _register(fake, '{"namespace": "nvcre-reports", "name": "registration-0"}', "nvcre-reports")
    outcome = reclaim(tmp_path, fake)
    assert fake.deletes() == []
    assert (
        "ReportExport nvcre-reports/rex-r-lab-two-node not archived" in outcome.reclaim_problems[0]
    )
    second = fake.lists("reportexports")[-1]
    assert second.path == "/apis/nvcre.nvidia.com/v1alpha1/namespaces/nvcre-reports/reportexports"


@pytest.mark.parametrize("annotation", ["{", '{"namespace": "../x"}', "[]", '{"namespace": 7}'])
def test_an_unreadable_bindings_annotation_stops_reclaim(
    tmp_path: Path, fake: FakeKube, annotation: str
) -> None:
    _register(fake, annotation)
    outcome = reclaim(tmp_path, fake)
    assert fake.deletes() == []
    assert outcome.reclaim_problems == (
        "nothing deleted: error[NVC725]: Certification nvcre/lab-two-node-0002: its"
        " nvcre.nvidia.com/report-export-bindings annotation cannot be read",
    )


def test_a_registered_certification_whose_exports_are_archived_is_reclaimed(
    tmp_path: Path, fake: FakeKube
) -> None:
    _register(fake, '{"namespace": "nvcre", "name": "registration-0"}')
    outcome = reclaim(tmp_path, fake)
    assert outcome.reclaim_problems == ()
    assert ("Certification", "nvcre", "lab-two-node-0002") in fake.deleted
