"""A rehearsal judged against the replay's plan: the JSON shape, order and the exit code."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from nvcregen.plan.facts import PlanFacts
from nvcregen.rehearse.gitopsplay import read_order
from nvcregen.rehearse.report import (
    Collected,
    Rehearsal,
    exit_code,
    node_summary,
    step_reports,
    to_json,
    to_text,
)
from nvcregen.rehearse.steps import StepOutcome
from nvcregen.rehearse.watch import RunState, run_states
from nvcregen.replay.model import TreeObject
from nvcregen.replay.runs import is_run
from nvcregen.replay.site import replay_site
from nvcregen.replay.timeline import plan_view

Tree = tuple[list[TreeObject], PlanFacts]
RUN_SECONDS = 5.0


def rehearsal(tree: Tree, *, admitted_late: str = "", never: str = "") -> Rehearsal:
    """Every step applied in order and its runs played two at a time, RUN_SECONDS each;
    `admitted_late`: that run admitted before the previous step's runs finished;
    `never`: that run never admitted, and no later step applied (the engine waits)."""
    objects, facts = tree
    order = read_order(objects, facts.root)
    step_of = {p: s.key for s in order.steps for p in s.runs}
    runs = run_states([o for o in objects if is_run(o) and o.path in step_of], step_of)
    clock, outcomes, at_once = 0.0, [], {}
    stuck = False
    for step in order.steps:
        mine = [r for r in runs if r.step == step.key]
        if stuck:
            outcomes.append(StepOutcome(step.key, step.label, None))
            continue
        stuck = any(r.name == never for r in mine)
        applied = clock
        for index, run in enumerate(mine):
            run.applied_s = applied
            if run.name == never:
                continue
            run.admitted_s = applied + RUN_SECONDS * (index // 2)
            run.finished_s = run.admitted_s + RUN_SECONDS
            run.outcome = "Succeeded"
            run.nodes = {"node-a"}
        if mine:
            at_once[step.key] = min(2, len(mine))
            clock = max((r.finished_s or applied) for r in mine)
        outcomes.append(StepOutcome(step.key, step.label, applied, None if stuck else clock))
    for run in runs:
        if run.name == admitted_late:
            run.admitted_s = (run.admitted_s or 0.0) - RUN_SECONDS * 3
    plan = plan_view(replay_site(objects, facts))
    return Rehearsal(
        facts.site, order.engine, 100.0, 600.0, plan, tuple(outcomes), tuple(runs), 2, at_once
    )


def test_every_run_admitted_and_finished_in_order_is_as_planned(argocd_tree: Tree) -> None:
    done = rehearsal(argocd_tree)
    data = to_json(done)
    assert json.loads(json.dumps(data)) == data  # plain JSON data
    assert (data["as_planned"], data["unadmitted"], data["unfinished"]) == (True, 0, 0)
    assert data["out_of_order"] == 0 and data["runs"] == 42
    assert exit_code(step_reports(done)) == 0
    planned = [s for s in data["steps"] if s["planned"] is not None]
    assert [s["step"] for s in planned] == [
        *(f"01-single-node/round-{r}" for r in (1, 2, 3)),
        *(f"02-two-node/round-{r}" for r in (1, 2, 3)),
    ]
    first = planned[0]
    assert first["planned"]["order"] == first["observed"]["order"] == 1
    assert (first["planned"]["runs"], first["planned"]["jobs"]) == (10, 10)
    assert (first["planned"]["at_once"], first["observed"]["at_once"]) == (2, 2)
    assert first["observed"]["admitted"] == 10
    assert first["applied_by"] == "wave 1 of Application h20-3e-trainer-readiness"
    assert all(v == ["node-a"] for v in first["observed"]["placement"].values())
    assert [s["planned"]["order"] for s in planned] == [1, 2, 3, 4, 5, 6]
    assert [s["observed"]["order"] for s in planned] == [1, 2, 3, 4, 5, 6]
    assert "Argo CD itself was not run" in data["note"]


def test_a_run_never_admitted_fails_its_step(argocd_tree: Tree) -> None:
    done = rehearsal(argocd_tree, never="two-node-nccl-alltoall-c5c59001-r1-g0")
    data = to_json(done)
    # That run, and the 8 runs of the two later steps, never applied.
    assert (data["as_planned"], data["unadmitted"], data["unfinished"]) == (False, 9, 0)
    bad = [s for s in data["steps"] if not s["as_planned"]]
    # the steps after it, the last wave (the passed gate, no runs) too: never applied
    assert [s["step"] for s in bad] == [
        *(f"02-two-node/round-{r}" for r in (1, 2, 3)),
        "wave 7 of Application h20-3e-trainer-readiness",
    ]
    assert bad[0]["observed"]["unadmitted"] == ["TrainJob/two-node-nccl-alltoall-c5c59001-r1-g0"]
    assert bad[0]["observed"]["admitted"] == 3 and bad[0]["observed"]["out_of_order"] == []
    assert bad[1]["observed"]["applied_s"] is None
    assert exit_code(step_reports(done)) == 1
    assert "never admitted" in to_text(done)


def test_a_run_admitted_before_the_step_planned_before_it_finished_is_out_of_order(
    argocd_tree: Tree,
) -> None:
    done = rehearsal(argocd_tree, admitted_late="single-node-dcgm-l1-e092fe17-r2-n0")
    data = to_json(done)
    assert data["out_of_order"] == 1 and not data["as_planned"]
    (bad,) = [s for s in data["steps"] if not s["as_planned"]]
    assert bad["step"] == "01-single-node/round-2"
    assert bad["observed"]["out_of_order"] == ["Job/single-node-dcgm-l1-e092fe17-r2-n0"]
    assert exit_code(step_reports(done)) == 1


@pytest.mark.parametrize(("gap", "late"), [(0.0, False), (-0.01, True)])
def test_admitted_exactly_when_the_earlier_step_finished_is_in_order(
    argocd_tree: Tree, gap: float, late: bool
) -> None:
    done = rehearsal(argocd_tree)
    earlier = [r for r in done.runs if r.step.endswith("#1")]
    later = next(r for r in done.runs if r.step.endswith("#2"))
    later.admitted_s = max(r.finished_s or 0.0 for r in earlier) + gap
    assert (to_json(done)["out_of_order"] == 1) is late


def test_a_run_that_failed_is_unfinished(argocd_tree: Tree) -> None:
    done = rehearsal(argocd_tree)
    failed: RunState = done.runs[0]
    failed.outcome = "Failed: BackoffLimitExceeded"
    data = to_json(done)
    assert (data["unfinished"], data["as_planned"]) == (1, False)
    (step,) = [s for s in data["steps"] if s["observed"]["unfinished"]]
    assert step["observed"]["outcomes"] == {failed.label: "Failed: BackoffLimitExceeded"}
    assert exit_code(step_reports(done)) == 1


def test_a_refused_object_or_a_failed_health_check_fails_the_step(argocd_tree: Tree) -> None:
    done = rehearsal(argocd_tree)
    steps = list(done.steps)
    steps[0] = StepOutcome(steps[0].key, steps[0].label, 0.0, None, ("Namespace/x: HTTP 422",))
    refused = Rehearsal(**{**done.__dict__, "steps": tuple(steps)})
    assert to_json(refused)["refused"] == 1 and exit_code(step_reports(refused)) == 1
    steps[0] = StepOutcome(steps[0].key, steps[0].label, 0.0, None, (), "Job/x: Degraded")
    failed = Rehearsal(**{**done.__dict__, "steps": tuple(steps)})
    assert not to_json(failed)["as_planned"] and exit_code(step_reports(failed)) == 1


@pytest.mark.parametrize("healthy", [False, True])
def test_a_step_without_runs_never_applied_or_never_healthy_is_not_as_planned(
    argocd_tree: Tree, healthy: bool
) -> None:
    """Found by review: the last wave (the passed gate) holds no run; when the engine never
    got to it, or its health never passed, the rehearsal still exited 0."""
    done = rehearsal(argocd_tree)
    steps = list(done.steps)
    last = steps[-1]
    assert not [r for r in done.runs if r.step == last.key]  # a step without runs
    steps[-1] = StepOutcome(last.key, last.label, 1.0, 2.0 if healthy else None)
    ended = Rehearsal(**{**done.__dict__, "steps": tuple(steps)})
    assert exit_code(step_reports(ended)) == (0 if healthy else 1)
    steps[-1] = StepOutcome(last.key, last.label, None)  # never applied
    skipped = Rehearsal(**{**done.__dict__, "steps": tuple(steps)})
    assert not to_json(skipped)["as_planned"] and exit_code(step_reports(skipped)) == 1


def test_the_text_report_has_a_table_per_step_and_escapes_what_the_server_said(
    argocd_tree: Tree,
) -> None:
    done = rehearsal(argocd_tree, never="single-node-dcgm-l1-70d2a194-r1-n1")
    stuck = next(r for r in done.runs if r.name == "single-node-dcgm-l1-70d2a194-r1-n1")
    stuck.waiting = "Pending: \x1b[31mquota\x1b[0m"
    text = to_text(done)
    assert "\x1b" not in text and "\\x1b[31mquota" in text
    assert text.count("  run ") == 6  # one table per step with runs
    assert "01-single-node/round-1 (wave 1 of Application h20-3e-trainer-readiness)" in text


def test_the_verdict_decides_the_exit_with_the_order(argocd_tree: Tree) -> None:
    """As planned and `pass`: 0; as planned but `fail`, or not collected for an error: 1."""
    planned = rehearsal(argocd_tree)
    reports = step_reports(planned)
    assert exit_code(reports) == 0  # not collected: the order alone
    passed = Collected("pass", (("node-a", "cleared"), ("node-b", "cleared")), "/s/r", ("x",))
    assert exit_code(reports, passed) == 0
    assert exit_code(reports, replace(passed, word="fail")) == 1
    assert exit_code(reports, replace(passed, word="incomplete")) == 1
    assert exit_code(reports, Collected(error="kwok did not serve")) == 1
    late = rehearsal(argocd_tree, never=planned.runs[-1].name)
    assert exit_code(step_reports(late), passed) == 1  # passed, but not as planned


def test_json_and_text_say_the_verdict_and_each_nodes_status(argocd_tree: Tree) -> None:
    assert to_json(rehearsal(argocd_tree))["verdict"] is None  # not collected
    failed = Collected(
        "fail",
        (("node-a", "failed"), ("node-b", "suspect")),
        "/s/results/r1",
        ("fail  run x",),
        served=14,
    )
    done = replace(rehearsal(argocd_tree), collected=failed)
    data = json.loads(json.dumps(to_json(done)))
    assert data["verdict"] == "fail"
    assert data["node_statuses"] == {"node-a": "failed", "node-b": "suspect"}
    assert (data["archive"], data["pod_logs_served"], data["collect_error"]) == (
        "/s/results/r1",
        14,
        None,
    )
    text = to_text(done)
    assert (
        "\nverdicts: fail (collect read 14 pods' logs; nodes: node-a failed, node-b suspect)\n"
        in text
    )
    assert "\n  archive: /s/results/r1\n  fail  run x\n" in text
    broken = replace(done, collected=Collected(error="kwok did not serve pod p's log in 60s"))
    assert to_json(broken)["verdict"] is None
    assert to_json(broken)["collect_error"] == "kwok did not serve pod p's log in 60s"
    assert to_text(broken).endswith(
        "\nverdicts: not collected: kwok did not serve pod p's log in 60s\n"
    )


def test_many_nodes_of_one_status_are_counted_not_named() -> None:
    """At fleet size the text names the nodes to act on and counts the rest; eight of a
    status are still named, nine are counted."""
    eight = [(f"gpu-{i:04d}", "cleared") for i in range(8)]
    assert node_summary([("node-a", "failed"), *eight]) == "node-a failed, " + ", ".join(
        f"{n} cleared" for n, _ in eight
    )
    nine = [*eight, ("gpu-0008", "cleared")]
    assert node_summary([("node-a", "failed"), ("node-b", "suspect"), *nine]) == (
        "node-a failed, node-b suspect, 9 cleared"
    )
    assert node_summary([]) == "none"
