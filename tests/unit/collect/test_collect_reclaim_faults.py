"""`collect --reclaim` against a faulty API: never delete what is not in a verified archive.

Issue #14, item 3. Deleting a Certification or WorkloadRun makes Kubernetes delete what
it owns (Workflows, then their measurements and ConfigMaps). The fault-injection test
at the end scripts 404s, lists cut short (with and without `remainingItemCount`), 500s,
timeouts and expired tokens at random, and checks after every collection that each
object the deletes took with them is in a verified archive, byte for byte.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakelist import FakeKube, Fault, serve, write_kubeconfig
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from labstate import lab_state

from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.collector import collect
from nvcregen.collect.completeness import missing_objects
from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome
from nvcregen.results.archive import object_path, verify_archive
from nvcregen.spec.fast import parse_fast

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
FAST = RetryPolicy(attempts=2, backoff=0.0, max_backoff=0.0, timeout=(2.0, 0.3), restarts=1)
Obj = dict[str, Any]


@pytest.fixture
def fake() -> Iterator[FakeKube]:
    with serve(lab_state()) as server:
        yield server


def reclaim(tmp_path: Path, fake: FakeKube, page_size: int = 4) -> CollectOutcome:
    config = write_kubeconfig(tmp_path / "kubeconfig", fake.url)
    options = CollectOptions(
        str(SITE_FILE),
        tmp_path / "results",
        ROOT,
        "lab",
        config,
        reclaim=True,
        policy=FAST,
        page_size=page_size,
        sleep=lambda _: None,
    )
    return collect(options)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (Fault("bandwidthmeasurements", 404), "HTTP 404 although discovery lists"),
        (
            Fault("bandwidthmeasurements", truncate=True, keep_remaining=True),
            "announced 9 more items but sent no continue token",
        ),
        (
            Fault("bandwidthmeasurements", truncate=True, on_continue=True),
            "8 items arrived of the 13 announced",
        ),
        (Fault("goodputmeasurements", 404), "HTTP 404 although discovery lists"),
    ],
)
def test_a_list_cut_short_or_lost_is_an_incomplete_read(
    tmp_path: Path, fake: FakeKube, fault: Fault, message: str
) -> None:
    fake.faults.append(fault)
    with pytest.raises(CollectError, match="could not read the cluster completely") as raised:
        reclaim(tmp_path, fake)
    assert message in str(raised.value)
    assert not (tmp_path / "results").exists()
    assert fake.deletes() == []


def test_a_404_with_failing_discovery_is_an_incomplete_read(tmp_path: Path, fake: FakeKube) -> None:
    fake.faults += [Fault("configmaps", 404), Fault("discovery", 500, times=9)]
    with pytest.raises(CollectError, match=r"GET /api/v1 on .* failed 2 times"):
        reclaim(tmp_path, fake)
    assert fake.deletes() == []


def test_a_silently_short_list_is_archived_but_never_reclaimed(
    tmp_path: Path, fake: FakeKube
) -> None:
    """No continue token, no count: only the objects' references show what is missing."""
    fake.faults.append(Fault("bandwidthmeasurements", truncate=True, drop=2))  # the site's
    outcome = reclaim(tmp_path, fake, page_size=500)
    assert outcome.archive.verified
    assert fake.deletes() == []
    [problem] = outcome.reclaim_problems
    assert problem == "nothing deleted: results are incomplete (nccl-all-reduce-tcp inter-node)"


def site_objects() -> list[Obj]:
    return [o for o in lab_state() if "other-site" not in o["metadata"]["name"]]


def test_every_reference_must_name_an_object_read() -> None:
    objects = site_objects()
    assert missing_objects(objects, objects, []) == []
    node_results = "nodes-lab-single-node-0001-nccl-all-reduce-ok"
    round_two = "lab-single-node-0001-communication-nccl-all-reduce-node-a-2-job"
    read = [o for o in objects if o["metadata"]["name"] not in {node_results, f"{round_two}-bw"}]
    assert missing_objects(read, read, []) == [
        f"Certification nvcre/lab-single-node-0001 names ConfigMap nvcre/{node_results},"
        " which was not read",
        "Workflow nvcre/lab-single-node-0001-communication-nccl-all-reduce names"
        f" BandwidthMeasurement nvcre/(the one of Job {round_two}), which was not read",
        "Workflow nvcre/lab-single-node-0001-communication-nccl-all-reduce names"
        f" ConfigMap nvcre/{node_results}, which was not read",
    ]


def test_a_missing_crd_is_told_from_a_missing_object(tmp_path: Path, fake: FakeKube) -> None:
    fake.served.discard("workflows")
    outcome = reclaim(tmp_path, fake)
    assert fake.deletes() == []
    [problem] = outcome.reclaim_problems
    assert "but the cluster serves no Workflow" in problem
    assert "the cluster serves no Workflow (its CRD is not installed)" in outcome.notes


def test_incomplete_results_are_never_reclaimed(tmp_path: Path, fake: FakeKube) -> None:
    victims = [o for o in fake.objects if o["kind"] == "GoodputMeasurement"]
    for obj in victims:
        obj["status"]["conditions"][1]["status"] = "False"  # Complete: False, not final
    outcome = reclaim(tmp_path, fake)
    assert fake.deletes() == []
    assert outcome.reclaim_problems[0].startswith("nothing deleted: results are incomplete")


def test_a_complete_read_is_still_reclaimed(tmp_path: Path, fake: FakeKube) -> None:
    outcome = reclaim(tmp_path, fake)
    assert outcome.reclaim_problems == ()
    owners = [d for d in fake.deleted if d[0] in {"Certification", "WorkloadRun"}]
    assert len(owners) == 4 and len(fake.deleted) == 29  # and the 25 objects they own
    assert fake.collected == []  # each DELETE named its object: nothing went by cascade
    for sent in fake.deletes():
        assert sent.body["propagationPolicy"] == "Orphan"
        assert set(sent.body["preconditions"]) == {"uid", "resourceVersion"}
    assert {o["metadata"]["name"] for o in fake.objects} == {
        "rex-r-lab-two-node",  # not owned by a Certification: ReportExports have a retention
        "snapshot-r-lab-two-node",
        "other-site-0009",
        "other-site-0009-communication-nccl-all-reduce",
        "other-site-0009-communication-nccl-all-reduce-group-0-1-job-bw",
        "kube-root-ca.crt",
    }


# The fault-injection test.

PLURALS = [
    "certifications",
    "workloadruns",
    "workflows",
    "bandwidthmeasurements",
    "goodputmeasurements",
    "configmaps",
    "reportexports",
]
FAULTS = st.one_of(
    st.builds(Fault, st.sampled_from(PLURALS), st.just(404)),
    st.builds(Fault, st.sampled_from(PLURALS), st.just(500), times=st.integers(1, 3)),
    st.builds(Fault, st.sampled_from(PLURALS), st.just(410), on_continue=st.just(True)),
    st.builds(Fault, st.sampled_from(PLURALS), delay=st.just(0.5)),
    st.builds(
        Fault,
        st.sampled_from(PLURALS),
        truncate=st.just(True),
        keep_remaining=st.booleans(),
        drop=st.integers(0, 3),
        on_continue=st.booleans(),
        times=st.integers(1, 9),
    ),
    st.builds(Fault, st.just("discovery"), st.sampled_from([404, 500])),
)


def owned_closure(objects: list[Obj], roots: set[str]) -> list[Obj]:
    """Every object Kubernetes garbage collection deletes with the objects of uids `roots`."""
    gone, changed = set(roots), True
    while changed:
        changed = False
        for obj in objects:
            meta = obj["metadata"]
            owners = {ref["uid"] for ref in meta.get("ownerReferences") or []}
            if meta["uid"] not in gone and owners & gone:
                gone.add(meta["uid"])
                changed = True
    return [o for o in objects if o["metadata"]["uid"] in gone]


@pytest.mark.slow
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(faults=st.lists(FAULTS, max_size=3), page_size=st.sampled_from([2, 4, 500]))
def test_no_fault_ever_deletes_an_unarchived_object(
    tmp_path_factory: pytest.TempPathFactory, faults: list[Fault], page_size: int
) -> None:
    state = lab_state()
    before = copy.deepcopy(state)
    tmp_path = tmp_path_factory.mktemp("reclaim")
    with serve(state) as fake:
        fake.faults.extend(copy.deepcopy(faults))
        try:
            outcome: CollectOutcome | None = reclaim(tmp_path, fake, page_size)
        except CollectError:
            outcome = None
        deleted = {(kind, ns, name) for kind, ns, name in fake.deleted}
    if not deleted:
        return
    assert outcome is not None
    roots = {
        o["metadata"]["uid"]
        for o in before
        if (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) in deleted
    }
    run = outcome.archive.path
    assert verify_archive(run) == []
    for obj in owned_closure(before, roots):
        assert parse_fast((run / object_path(obj)).read_bytes()) == obj, object_path(obj)
