"""The replay on the shipped trees and on trees broken by hand: deadlock, overlap, overrun.

Each broken tree is a shipped tree with one change a person could make (a label dropped, a
sync wave edited, a deadline shortened); the test states the change and what must be
reported, at which file, with which words.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from replayfactory import (
    PER_RUN,
    QUEUE_LABEL,
    SHIPPED,
    WAVE,
    codes,
    edited,
    kind,
    of,
    replay,
    shipped,
    shipped_facts,
)

from nvcregen.core.errors import Severity
from nvcregen.replay.model import TreeObject

MINUTE = 60_000
LAB, TRAINER, L20 = SHIPPED
# h20-3e-lab's two-node stage: four WorkloadRuns (RDMA ones name their NICs, issue 12)
LAB_TWO_NODE = sorted(o.file.rsplit("/", 1)[1] for o in shipped(LAB) if "/02-two-node/" in o.file)
LAB_RDMA = [f for f in LAB_TWO_NODE if "-tcp-" not in f]


def named(site: str, start: str, end: str = ".yaml") -> str:
    """The one file of a shipped tree named `start<hash>...end` (names carry spec hashes)."""
    names = [(o.path, o.path.rsplit("/", 1)[1]) for o in shipped(site)]
    (found,) = [path for path, name in names if name.startswith(start) and name.endswith(end)]
    return found


@pytest.mark.parametrize("site", SHIPPED)
def test_every_shipped_tree_replays_without_a_finding(site: str) -> None:
    found = replay(shipped(site), shipped_facts(site))
    assert found.problems == ()
    assert found.expected.end_ms is not None
    assert found.expected.end_ms <= shipped_facts(site).deadline_ms


def test_the_lab_plan_takes_what_the_budget_says() -> None:
    # 0005: expected 3h52m; the two steps: 3 x (6m15s + 4m22s + 4m34s) of NCCL and the DCGM
    # levels on two nodes, then the two-node collectives one at a time.
    found = replay(shipped(LAB), shipped_facts(LAB))
    assert found.expected.end_ms == 13_890_000  # 3h51m30s
    assert found.worst.end_ms == 28_260_000  # 7h51m: every job to its timeout
    steps = found.expected.steps
    assert steps["h20-3e-lab-readiness#1"] == (0, 3_993_000)
    assert steps["h20-3e-lab-readiness#2"] == (3_993_000, 13_890_000)


def test_trainer_and_nvcre_mode_of_the_same_lab_take_the_same_time() -> None:
    lab = replay(shipped(LAB), shipped_facts(LAB))
    trainer = replay(shipped(TRAINER), shipped_facts(TRAINER))
    assert trainer.expected.end_ms == lab.expected.end_ms
    assert len(trainer.gating.steps) == 6  # a step per round of each stage


def test_never_more_than_the_window_runs_at_once_on_the_shipped_labs() -> None:
    for site in (LAB, TRAINER):
        slots = replay(shipped(site), shipped_facts(site)).expected.slots
        for slot in slots:
            running = [s for s in slots if s.start_ms <= slot.start_ms < s.end_ms]
            assert len(running) <= 2
            assert sum(s.gpus for s in running) <= 16


def _drop_queue(obj: dict[str, Any]) -> None:
    obj["metadata"]["labels"].pop(QUEUE_LABEL)


def test_trainer_tree_without_queue_labels_is_deadlock_prone() -> None:
    runs = lambda o: o.kind in {"Job", "TrainJob"}  # noqa: E731
    tree = edited(shipped(PER_RUN), runs, _drop_queue)
    found = replay(tree, shipped_facts(PER_RUN))
    partial = of(found, "NVC671")
    two_node = [o.file for o in tree if o.kind == "TrainJob" and "/02-two-node/" in o.file]
    assert sorted(p.file for p in partial) == sorted(two_node)  # 4 tests x 3 rounds
    assert len(partial) == 12
    assert all(p.message.startswith("deadlock-prone: TrainJob two-node-") for p in partial)
    assert all(p.pointer == "/metadata/labels" and p.severity is Severity.ERROR for p in partial)
    assert set(codes(found)) == {"NVC671"}  # single-node runs cannot be placed partially


def test_one_two_node_run_outside_the_queue_may_be_placed_partially_not_deadlock() -> None:
    target = named(PER_RUN, "trainjob-two-node-nccl-alltoall-", "-r1-g0.yaml").rsplit("/", 1)[1]
    tree = edited(shipped(PER_RUN), lambda o: o.path.endswith(target), _drop_queue)
    (problem,) = of(replay(tree, shipped_facts(PER_RUN)), "NVC671")
    assert problem.file.endswith(target)
    assert "may be placed partially" in problem.message
    assert "no queue admits it" in problem.message


def test_nvcre_tree_without_workload_labels_is_deadlock_prone() -> None:
    def drop(obj: dict[str, Any]) -> None:
        obj["spec"]["workloadMetadata"]["labels"].pop(QUEUE_LABEL)

    nvcre = lambda o: o.kind in {"Certification", "WorkloadRun"}  # noqa: E731
    found = replay(edited(shipped(LAB), nvcre, drop), shipped_facts(LAB))
    partial = of(found, "NVC671")
    assert [p.file.rsplit("/", 1)[1] for p in partial] == LAB_TWO_NODE and len(partial) == 4
    assert all("deadlock-prone" in p.message for p in partial)
    assert all(p.pointer == "/spec/workloadMetadata" for p in partial)


def _wave(number: str) -> Any:
    def change(obj: dict[str, Any]) -> None:
        obj["metadata"]["annotations"][WAVE] = number

    return change


def test_two_stages_in_one_wave_overlap() -> None:
    tree = edited(shipped(LAB), lambda o: "/02-two-node/" in o.file, _wave("1"))
    found = replay(tree, shipped_facts(LAB))
    overlap = of(found, "NVC672")
    assert [p.file.rsplit("/", 1)[1] for p in overlap] == LAB_TWO_NODE
    assert "both are applied by wave 1 of Application h20-3e-lab-readiness" in overlap[0].message
    assert "(stage 'two-node') may run while" in overlap[0].message


def test_two_rounds_of_one_test_in_one_wave_overlap() -> None:
    round_2 = "/01-single-node/round-2/"
    tree = edited(shipped(PER_RUN), lambda o: round_2 in o.file, _wave("1"))
    overlap = of(replay(tree, shipped_facts(PER_RUN)), "NVC672")
    assert len(overlap) == 10  # every run of round 2
    assert all(round_2 in p.file and "(round 2) may run while" in p.message for p in overlap)


def test_a_run_argo_cd_cannot_see_finish_does_not_gate_the_next_wave() -> None:
    def drop_certification_check(obj: dict[str, Any]) -> None:
        del obj["data"]["resource.customizations.health.nvcre.nvidia.com_Certification"]

    argocd_cm = lambda o: o.name == "argocd-cm"  # noqa: E731
    found = replay(edited(shipped(LAB), argocd_cm, drop_certification_check), shipped_facts(LAB))
    overlap = of(found, "NVC672")
    assert [p.file.rsplit("/", 1)[1] for p in overlap] == LAB_TWO_NODE
    assert all("Argo CD has no health check for Certification" in p.message for p in overlap)
    assert "NVC673" not in codes(found)  # the last stage's WorkloadRuns are still waited on


def test_the_last_stage_argo_cd_cannot_see_finish_is_waited_on_by_nothing() -> None:
    def drop_workloadrun_check(obj: dict[str, Any]) -> None:
        del obj["data"]["resource.customizations.health.nvcre.nvidia.com_WorkloadRun"]

    argocd_cm = lambda o: o.name == "argocd-cm"  # noqa: E731
    found = replay(edited(shipped(LAB), argocd_cm, drop_workloadrun_check), shipped_facts(LAB))
    (end,) = of(found, "NVC673")
    assert end.file.rsplit("/", 1)[1] in LAB_TWO_NODE
    assert "Argo CD has no health check for WorkloadRun" in end.message


def test_kueue_jobs_need_the_job_health_override() -> None:
    def drop_job_check(obj: dict[str, Any]) -> None:
        del obj["data"]["resource.customizations.health.batch_Job"]

    argocd_cm = lambda o: o.name == "argocd-cm"  # noqa: E731
    found = replay(edited(shipped(TRAINER), argocd_cm, drop_job_check), shipped_facts(TRAINER))
    overlap = of(found, "NVC672")
    assert overlap, "a resumed Job is Healthy while it runs: the next round starts too early"
    assert all("built-in Job check calls a Job Kueue resumed Healthy" in p.message for p in overlap)


def test_without_the_final_gate_the_last_wave_is_not_waited_on() -> None:
    tree = tuple(o for o in shipped(LAB) if "/03-passed/" not in o.file)
    (problem,) = of(replay(tree, shipped_facts(LAB)), "NVC673")
    assert problem.file.rsplit("/", 1)[1] in LAB_TWO_NODE
    assert "last sync wave (2) of Application h20-3e-lab-readiness" in problem.message


def test_an_overrun_is_reported_at_the_run_that_ends_last_from_the_exact_deadline() -> None:
    facts = shipped_facts(LAB)
    end = 13_890_000
    on_time = replay(shipped(LAB), dataclasses.replace(facts, deadline_ms=end))
    assert "NVC675" not in codes(on_time)
    late = replay(shipped(LAB), dataclasses.replace(facts, deadline_ms=end - 1000))
    (problem,) = of(late, "NVC675")
    assert problem.severity is Severity.ERROR
    assert problem.file.rsplit("/", 1)[1] == LAB_TWO_NODE[-1]  # the last to end
    assert "the plan ends 3h51m30s after it starts with expected durations" in problem.message
    assert "deadline of 3h51m29s" in problem.message


def test_a_worst_case_past_the_deadline_is_a_warning() -> None:
    facts = dataclasses.replace(shipped_facts(LAB), deadline_ms=7 * 60 * MINUTE)
    (problem,) = replay(shipped(LAB), facts).problems
    assert (problem.code, problem.severity) == ("NVC676", Severity.WARNING)
    assert "every job running to its timeout" in problem.message


def test_the_worst_case_against_the_deadline_counts_every_retest() -> None:
    """Issue 19: one meaning of "worst case": one attempt (7h51m) and the lab's 1 retest."""
    facts = shipped_facts(LAB)
    assert facts.retests == 1
    worst = 2 * 28_260_000  # 15h42m
    assert "NVC676" not in codes(
        replay(shipped(LAB), dataclasses.replace(facts, deadline_ms=worst))
    )
    late = replay(shipped(LAB), dataclasses.replace(facts, deadline_ms=worst - 1000))
    (problem,) = of(late, "NVC676")
    assert (
        "the plan ends 15h42m (7h51m + 1 retest) after it starts with every job running to its "
        "timeout and every retest happening (1)"
    ) in problem.message
    no_retest = dataclasses.replace(facts, retests=0, deadline_ms=28_260_000)
    assert "NVC676" not in codes(replay(shipped(LAB), no_retest))


def _quota(resource: str, value: object) -> Any:
    def change(obj: dict[str, Any]) -> None:
        for entry in obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
            if entry["name"] == resource:
                entry["nominalQuota"] = value

    return change


def test_a_quota_below_one_run_never_admits_it() -> None:
    tree = edited(shipped(LAB), kind("ClusterQueue"), _quota("nvidia.com/gpu", 15))
    found = replay(tree, shipped_facts(LAB))
    never = of(found, "NVC670")
    assert [p.file.rsplit("/", 1)[1] for p in never] == LAB_TWO_NODE
    assert "it needs 16 nvidia.com/gpu at once, more than the nominal quota" in never[0].message
    assert "(15)" in never[0].message
    assert found.expected.end_ms is None  # the plan never ends; NVC675 does not repeat it
    assert "NVC675" not in codes(found)
    exact = edited(shipped(LAB), kind("ClusterQueue"), _quota("nvidia.com/gpu", 16))
    assert replay(exact, shipped_facts(LAB)).problems == ()


def test_a_resource_the_queue_does_not_cover_is_never_admitted() -> None:
    def uncover(obj: dict[str, Any]) -> None:
        group = obj["spec"]["resourceGroups"][0]
        group["coveredResources"].remove("rdma/hca")
        resources = group["flavors"][0]["resources"]
        group["flavors"][0]["resources"] = [r for r in resources if r["name"] != "rdma/hca"]

    found = replay(edited(shipped(LAB), kind("ClusterQueue"), uncover), shipped_facts(LAB))
    never = of(found, "NVC670")  # only the RDMA WorkloadRuns ask for NICs
    assert [p.file.rsplit("/", 1)[1] for p in never] == LAB_RDMA and len(never) == 3
    assert all(
        "it requests rdma/hca, which ClusterQueue 'h20-3e-lab-readiness' does not cover"
        in p.message
        for p in never
    )


def test_a_missing_local_queue_never_admits_anything() -> None:
    tree = tuple(o for o in shipped(LAB) if o.kind != "LocalQueue")
    never = of(replay(tree, shipped_facts(LAB)), "NVC670")
    assert len(never) == 7  # every run object, once each: a Certification, 6 WorkloadRuns
    assert all(
        "LocalQueue 'readiness' does not exist in namespace 'nvcre'" in p.message for p in never
    )
    assert all(p.pointer == "/spec/workloadMetadata" for p in never)


def test_an_external_local_queue_is_trusted() -> None:
    # l20-pool binds its LocalQueue to the platform team's ClusterQueue, outside the tree.
    assert replay(shipped(L20), shipped_facts(L20)).problems == ()


def test_a_pod_larger_than_any_node_never_starts() -> None:
    def sixteen(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"][
            "nvidia.com/gpu"
        ] = 16

    path = next(
        o.path
        for o in shipped(PER_RUN)
        if o.path.endswith("-r1-n1.yaml") and "/job-single-node-dcgm-l1-" in o.path
    )
    name = path.rsplit("/", 1)[1]
    tree = edited(shipped(PER_RUN), lambda o: o.path == path, sixteen)
    (problem,) = of(replay(tree, shipped_facts(PER_RUN)), "NVC670")
    assert problem.file.endswith(name)
    assert problem.message == (
        f"Job {name.removeprefix('job-').removesuffix('.yaml')} can never start: the nodes it "
        "may use cannot "
        "hold its pods (1 x 16 nvidia.com/gpu) even when nothing else runs "
        "(node-b: 8 nvidia.com/gpu, 8 rdma/hca)"
    )


def test_a_target_on_an_unknown_node_never_runs() -> None:
    def pin(obj: dict[str, Any]) -> None:
        obj["spec"]["target"]["nodeNames"] = ["node-z"]

    name = named(LAB, "workloadrun-h20-3e-lab-single-node-dcgm-l1-")
    tree = edited(shipped(LAB), lambda o: o.path == name, pin)
    (problem,) = of(replay(tree, shipped_facts(LAB)), "NVC670")
    assert "its target matches 0 of the site's nodes, and each job needs 1" in problem.message


def test_a_quota_above_the_window_is_an_error_at_the_cluster_queue() -> None:
    more_nodes = _four_nodes(shipped_facts(TRAINER))
    tree = edited(shipped(TRAINER), kind("ClusterQueue"), _quota("nvidia.com/gpu", 48))
    tree = edited(tree, kind("ClusterQueue"), _quota("rdma/hca", 48))
    tree = edited(tree, kind("ClusterQueue"), _quota("pods", 6))
    tree = edited(tree, kind("ClusterQueue"), _quota("cpu", "54"))  # 3 x 2 pods x 9 CPUs
    tree = edited(tree, kind("ClusterQueue"), _quota("memory", "216Gi"))
    tree = edited(tree, lambda o: o.kind in {"Job", "TrainJob"}, _unpin)
    found = replay(tree, more_nodes)
    (problem,) = of(found, "NVC674")
    assert problem.file.endswith("queues/clusterqueue-h20-3e-trainer-readiness.yaml")
    assert problem.pointer == "/spec/resourceGroups"
    assert "quota admits 3 of its largest run" in problem.message
    assert "above maxConcurrentJobs 2" in problem.message


def _four_nodes(facts: Any) -> Any:
    extra = tuple(
        dataclasses.replace(
            n, name=f"{n.name}-2", labels={**n.labels, "kubernetes.io/hostname": f"{n.name}-2"}
        )
        for n in facts.nodes
    )
    return dataclasses.replace(facts, nodes=facts.nodes + extra)


def _unpin(obj: dict[str, Any]) -> None:
    """Drop every `metadata.name` pin of a trainer-mode run (let it use any node)."""

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            value.pop("matchFields", None)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(obj)


def test_runs_without_a_queue_on_many_nodes_exceed_the_window() -> None:
    tree = edited(shipped(PER_RUN), lambda o: o.kind in {"Job", "TrainJob"}, _drop_queue)
    tree = edited(tree, lambda o: o.kind in {"Job", "TrainJob"}, _unpin)
    found = replay(tree, _four_nodes(shipped_facts(PER_RUN)))
    too_many = of(found, "NVC674")
    assert too_many and all(p.severity is Severity.ERROR for p in too_many)
    assert "up to 4 jobs of wave 1 of Application h20-3e-trainer-readiness" in too_many[0].message
    assert "no queue admits them" in too_many[0].message


def _flux(name: str, change: Any) -> tuple[TreeObject, ...]:
    return edited(shipped(L20), lambda o: o.kind == "Kustomization" and o.name == name, change)


def test_flux_step_without_its_dependency_overlaps() -> None:
    def head_only(obj: dict[str, Any]) -> None:
        obj["spec"]["dependsOn"] = [{"name": "l20-pool-readiness"}]

    found = replay(_flux("l20-pool-readiness-02-pairs", head_only), shipped_facts(L20))
    overlap = of(found, "NVC672")
    assert len(overlap) == 2
    assert (
        "Kustomization l20-pool-readiness-02-pairs does not wait for Kustomization "
        "l20-pool-readiness-01-single-node" in overlap[0].message
    )


def test_flux_without_health_expressions_waits_for_nothing() -> None:
    def no_exprs(obj: dict[str, Any]) -> None:
        del obj["spec"]["healthCheckExprs"]

    found = replay(_flux("l20-pool-readiness-01-single-node", no_exprs), shipped_facts(L20))
    overlap = of(found, "NVC672")
    assert overlap
    assert (
        "has no healthCheckExprs for Certification: kstatus calls it healthy" in overlap[0].message
    )
    found = replay(_flux("l20-pool-readiness-02-pairs", no_exprs), shipped_facts(L20))
    (end,) = of(found, "NVC673")
    assert "has no healthCheckExprs for WorkloadRun" in end.message


def test_flux_without_wait_does_not_gate() -> None:
    def no_wait(obj: dict[str, Any]) -> None:
        obj["spec"]["wait"] = False

    found = replay(_flux("l20-pool-readiness-01-single-node", no_wait), shipped_facts(L20))
    assert "has no `wait: true`" in of(found, "NVC672")[0].message


def test_a_flux_step_timeout_shorter_than_its_runs_is_a_warning_at_the_kustomization() -> None:
    # The pairs step is expected to take 2h11m6s; its timeout is its worst case, 4h24m.
    def timeout(value: str) -> Any:
        def change(obj: dict[str, Any]) -> None:
            obj["spec"]["timeout"] = value

        return change

    name = "l20-pool-readiness-02-pairs"
    assert replay(_flux(name, timeout("2h11m6s")), shipped_facts(L20)).problems == ()
    (problem,) = replay(_flux(name, timeout("2h11m5s")), shipped_facts(L20)).problems
    assert (problem.code, problem.severity, problem.pointer) == (
        "NVC676",
        Severity.WARNING,
        "/spec/timeout",
    )
    assert problem.file.endswith("gitops/kustomization-l20-pool-readiness-02-pairs.yaml")
    assert "expected to take 2h11m6s" in problem.message


def test_the_replay_is_deterministic() -> None:
    one = replay(shipped(TRAINER), shipped_facts(TRAINER))
    two = replay(reversed(shipped(TRAINER)), shipped_facts(TRAINER))
    assert one.expected == two.expected
    assert one.worst == two.worst


def test_every_shipped_flux_step_waits_for_its_worst_case() -> None:
    """A Flux step that times out before its runs can end fails a slow but passing plan."""
    found = replay(shipped(L20), shipped_facts(L20))
    steps = [s for k, s in found.gating.steps.items() if k in set(found.gating.step_of.values())]
    assert [s.label for s in steps] == [
        "Kustomization l20-pool-readiness-01-single-node",
        "Kustomization l20-pool-readiness-02-pairs",
    ]
    for step in steps:
        applied, done = found.worst.steps[step.key]
        assert applied is not None and done is not None and step.timeout_ms is not None
        assert done - applied <= step.timeout_ms < done - applied + MINUTE


def test_health_checks_another_site_installs_are_trusted() -> None:
    """`gitops.healthChecks: existing`: the tree has no argocd-cm, the cluster has one."""
    tree = tuple(o for o in shipped(LAB) if o.name != "argocd-cm")
    assert set(codes(replay(tree, shipped_facts(LAB)))) == {"NVC672", "NVC673"}
    facts = dataclasses.replace(shipped_facts(LAB), external_health_checks=True)
    assert replay(tree, facts).problems == ()
