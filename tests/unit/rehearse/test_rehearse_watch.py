"""The watch's lists (nvcregen.rehearse.watch): live objects typed as the engine reads them.

Found by the rehearsal of the packed trainer site: a list's items of a built-in kind carry
no `apiVersion` or `kind` (a custom resource's do), so a listed Job had no `batch_Job`
health check, read Healthy at once, and each Argo CD wave of Jobs passed before its runs
ran (rounds 2 and 3 admitted while round 1 ran).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvcregen.core.kueuekeys import PREBUILT_LABEL
from nvcregen.engines.gitops.argocd.livehealth import argocd_health
from nvcregen.rehearse.watch import (
    KUEUE,
    POLL_SHARE,
    SELECTOR_VALUES,
    TRAINER,
    RunState,
    Watch,
    label_selector,
    name_selector,
    pause_s,
    run_states,
)
from nvcregen.replay.model import TreeObject

ROOT = Path(__file__).resolve().parents[3]
_ROUND_1 = "nvcregen.io/round in (1),nvcregen.io/stage in (two-node)"
SUSPENDED = {"conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended"}]}


class ListingPlane:
    """A control plane answering each list with items as the API server gives them."""

    def request(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        assert method == "GET"
        path = path.split("?", maxsplit=1)[0]
        if path.endswith("/jobs"):  # built-in: no apiVersion or kind in the items
            return 200, {"items": [{"metadata": {"name": "j"}, "spec": {}, "status": SUSPENDED}]}
        if path.endswith("/trainjobs"):
            item = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"}
            return 200, {"items": [{**item, "metadata": {"name": "t"}}]}
        return 200, {"items": []}


def test_listed_jobs_are_typed_so_their_health_check_holds_the_wave() -> None:
    run = RunState("readiness/x/job-j.yaml", "Job", "nvcre", "j", "step", applied_s=0.0)
    train = RunState("readiness/x/trainjob-t.yaml", "TrainJob", "nvcre", "t", "step", applied_s=0.0)
    snapshot = Watch(ListingPlane(), [run, train]).snapshot()  # type: ignore[arg-type]
    job = snapshot.get("Job", "nvcre", "j")
    assert job is not None and (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    train_job = snapshot.get("TrainJob", "nvcre", "t")
    assert train_job is not None and train_job["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    checks = {"batch_Job": 'return {status = "Suspended", message = "queued"}'}
    assert argocd_health(checks, job).verdict == "waiting"  # the Job's own check, not none


def test_a_selector_every_labelled_object_matches_narrowed_to_shared_keys() -> None:
    round_1 = {"nvcregen.io/stage": "two-node", "nvcregen.io/round": "1", "name": "a"}
    round_2 = {"nvcregen.io/stage": "two-node", "nvcregen.io/round": "2", "name": "b"}
    assert label_selector([round_1]) == (
        "name in (a),nvcregen.io/round in (1),nvcregen.io/stage in (two-node)"
    )
    assert label_selector([round_1, round_2, {**round_2, "extra": "x"}]) == (
        "name in (a,b),nvcregen.io/round in (1,2),nvcregen.io/stage in (two-node)"
    )
    assert label_selector([round_1, {"other": "1"}]) == ""  # no key shared: everything
    assert label_selector([]) == ""
    assert label_selector([{"k": ""}, {"k": "v"}]) == ""  # `in ()` cannot name ""


def test_a_key_of_more_values_than_a_selector_names_is_left_out() -> None:
    many = [{"run": f"r{i}", "stage": "s"} for i in range(SELECTOR_VALUES)]
    assert label_selector(many).startswith("run in (r0,r1,")  # at the limit: named
    assert label_selector([*many, {"run": "last", "stage": "s"}]) == "stage in (s)"


def test_pods_are_selected_by_their_owners_names() -> None:
    assert name_selector("batch.kubernetes.io/job-name", ["b", "a", "b"]) == (
        "batch.kubernetes.io/job-name in (a,b)"
    )
    assert name_selector("batch.kubernetes.io/job-name", []) == ""


def test_the_wait_between_polls_grows_with_the_polls_cost() -> None:
    assert pause_s(0.3, 0.0) == 0.3
    assert pause_s(0.3, 0.15) == 0.3  # exactly the base
    assert pause_s(0.3, 0.5) == POLL_SHARE * 0.5


class RecordingPlane:
    """Answers every list with nothing; records the paths asked for."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def request(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        self.paths.append(path)
        return 200, {"items": []}


def runs_of_two_rounds() -> list[RunState]:
    labels = {"nvcregen.io/stage": "two-node"}
    made = []
    for round_, kind in (("1", "Job"), ("1", "TrainJob"), ("2", "TrainJob")):
        name = f"{kind.lower()}-r{round_}"
        made.append(
            RunState(
                f"readiness/{name}.yaml",
                kind,
                "nvcre",
                name,
                f"round-{round_}",
                f"{name}-workload",
                labels={**labels, "nvcregen.io/round": round_},
                workload_labels={**labels, "nvcregen.io/round": round_, "w": "1"},
            )
        )
    return made


def test_a_poll_lists_only_what_runs_still_going_can_change() -> None:
    runs = runs_of_two_rounds()
    plane = RecordingPlane()
    watch = Watch(plane, runs)  # type: ignore[arg-type]
    watch.snapshot()
    assert plane.paths == []  # nothing applied yet: nothing listed
    runs[0].applied_s = runs[1].applied_s = 0.0  # round 1 applied
    assert watch.lists("nvcre") == [
        (
            "Workload",
            f"{KUEUE}/namespaces/nvcre/workloads",
            "nvcregen.io/round in (1),nvcregen.io/stage in (two-node),w in (1)",
        ),
        ("Job", "/apis/batch/v1/namespaces/nvcre/jobs", _ROUND_1),
        ("TrainJob", f"{TRAINER}/namespaces/nvcre/trainjobs", _ROUND_1),
        ("Pod", "/api/v1/namespaces/nvcre/pods", "batch.kubernetes.io/job-name in (job-r1)"),
        ("Pod", "/api/v1/namespaces/nvcre/pods", "jobset.sigs.k8s.io/jobset-name in (trainjob-r1)"),
    ]
    runs[0].finished_s = runs[1].finished_s = 1.0  # round 1 done, round 2 going
    runs[2].applied_s = 1.0
    kinds = [(kind, selector) for kind, _, selector in watch.lists("nvcre")]
    assert [kind for kind, _ in kinds] == ["Workload", "TrainJob", "Pod"]  # no Job going
    assert "nvcregen.io/round in (2)" in kinds[1][1]
    assert watch.lists("other") == []
    watch.snapshot()
    assert all("labelSelector=" in path for path in plane.paths)
    assert watch.polls == 2


def test_a_workload_kueue_made_itself_lists_every_workload() -> None:
    runs = runs_of_two_rounds()
    runs[0].applied_s = 0.0
    runs[0].workload_labels = None  # the run names no prebuilt Workload of the tree
    lists = Watch(RecordingPlane(), runs).lists("nvcre")  # type: ignore[arg-type]
    assert lists[0][0] == "Workload" and lists[0][2] == ""


class OncePlane:
    """Lists a finished Job once; later polls select it no more."""

    def request(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        if "/jobs" in path:
            return 200, {"items": [{"metadata": {"name": "job-r1"}, "status": {}}]}
        return 200, {"items": []}


def test_an_object_no_longer_listed_stays_as_last_seen() -> None:
    runs = runs_of_two_rounds()
    runs[0].applied_s = 0.0
    watch = Watch(OncePlane(), runs)  # type: ignore[arg-type]
    assert watch.snapshot().get("Job", "nvcre", "job-r1") is not None
    runs[0].finished_s = 1.0  # no longer listed: kept for the wave's health checks
    assert watch.snapshot().get("Job", "nvcre", "job-r1") is not None


def test_run_states_keep_the_labels_of_each_run_and_of_its_prebuilt_workload() -> None:
    labels = {"nvcregen.io/round": "1", PREBUILT_LABEL: "w"}
    job = TreeObject(
        "f",
        "job-j.yaml",
        {"kind": "Job", "metadata": {"name": "j", "namespace": "nvcre", "labels": labels}},
    )
    workload = TreeObject(
        "f",
        "workload-w.yaml",
        {"kind": "Workload", "metadata": {"name": "w", "namespace": "nvcre", "labels": {"a": "b"}}},
    )
    other = TreeObject("f", "job-k.yaml", {"kind": "Job", "metadata": {"name": "k", "labels": 7}})
    steps = {"job-j.yaml": "s", "job-k.yaml": "s"}
    (found, bare) = run_states([job, other], steps, [job, workload])
    assert found.labels == labels and found.workload == "w"
    assert found.workload_labels == {"a": "b"}
    assert (bare.labels, bare.workload, bare.workload_labels) == ({}, "", None)
