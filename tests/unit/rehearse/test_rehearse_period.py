"""`rehearse --period` (issue 37 item 5), its pure parts: what a period applies, the one change
to the CronJobs, the minute it creates them in, the reading of the Jobs the CronJob controller
made and their Workloads, what is not as planned, the report and its exit code, and NVC786.
The period on the real controllers: tests/realserver/test_twin_period.py."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from periodicfactory import period_job, periodic_text
from rehearsetrees import compiled

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from nvcregen.rehearse.period import (
    SCHEDULE,
    PeriodJob,
    PeriodPlan,
    minutes_of,
    period_jobs,
    period_of,
    period_plan,
    problems,
    wait_before_create_s,
)
from nvcregen.rehearse.periodreport import exit_code, to_json, to_text
from nvcregen.rehearse.periodrun import PeriodRehearsal
from nvcregen.rehearse.report import Collected
from nvcregen.replay.model import TreeObject

ROOT = Path(__file__).resolve().parents[3]
MINUTES = 29_412_000
PERIODIC = "h20-3e-trainer-periodic"


@pytest.fixture(scope="module")
def tree() -> tuple[list[TreeObject], PeriodPlan]:
    objects, facts = compiled(periodic_text())
    expected = {key: timing.expected_ms for key, timing in facts.timings.items()}
    return objects, period_plan(objects, expected)


def test_a_period_applies_namespaces_queues_and_the_periodic_layer_crons_last(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    objects, plan = tree
    kinds = [o.kind for o in plan.objects]
    assert kinds[:3] == ["Namespace"] * 3
    assert kinds[-2:] == ["CronJob", "CronJob"]  # created last, in one minute
    assert {o.path.split("/")[0] for o in plan.objects} == {"platform", "queues", "periodic"}
    assert not any(o.kind in {"Job", "TrainJob", "Workload"} for o in plan.objects)  # no run
    queues = {o.path for o in objects if o.path.startswith(("queues/", "periodic/"))}
    assert queues <= {o.path for o in plan.objects}
    assert "periodic/priorityclass-h20-3e-trainer-periodic.yaml" in queues
    assert plan.priorities == {
        PERIODIC: -1,
        "h20-3e-trainer-single-node": 200,
        "h20-3e-trainer-two-node": 100,
    }


def test_the_one_change_is_each_cronjobs_schedule(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    objects = copy.deepcopy(tree[0])  # objects of this test's own, planned here
    as_rendered = {o.path: copy.deepcopy(o.obj) for o in objects}
    plan = period_plan(objects, {})
    rendered = {o.path: o.obj for o in objects if o.kind == "CronJob"}
    before = copy.deepcopy(rendered)
    applied = {o.path: o.obj for o in plan.objects if o.kind == "CronJob"}
    assert applied.keys() == rendered.keys()
    for path, obj in applied.items():
        assert obj["spec"]["schedule"] == SCHEDULE == "* * * * *"
        assert rendered[path]["spec"]["schedule"] == "0 3 * * 0"
        same = copy.deepcopy(obj)
        same["spec"]["schedule"] = rendered[path]["spec"]["schedule"]
        assert same == rendered[path]  # nothing else changed
    assert rendered == before  # the tree's objects are left as rendered
    others = {o.path: o.obj for o in plan.objects if o.kind != "CronJob"}
    assert others  # the queues and the periodic layer's other objects, applied as rendered
    assert all(others[p] == as_rendered[p] for p in others)


def test_each_cron_is_read_with_its_pack_nodes_priority_and_duration(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    _, plan = tree
    _, facts = compiled(periodic_text())
    dcgm, nccl = plan.crons
    assert (dcgm.stage, dcgm.test) == ("single-node", "periodic-0")
    assert dcgm.tests == ("dcgm-l1", "dcgm-l2")
    assert nccl.tests == ("nccl-all-reduce", "nccl-all-gather", "nccl-alltoall")
    assert dcgm.nodes == ("node-a", "node-b") and dcgm.namespace == "nvcre"
    assert (dcgm.schedule, dcgm.priority_class) == ("0 3 * * 0", PERIODIC)
    for cron in plan.crons:  # kwok completes a pack's pods after its tests' planned sum
        want = sum(facts.timings[("single-node", t)].expected_ms for t in cron.tests)
        assert plan.expected_ms[("single-node", cron.test)] == want > 0


def test_a_site_without_periodic_has_no_cron_and_nvc786_refuses_it() -> None:
    objects, _ = compiled(periodic_text(""))
    plan = period_plan(objects, {})
    assert plan.crons == () and not any(o.kind == "CronJob" for o in plan.objects)
    result = CliRunner().invoke(main, ["rehearse", "sites/h20-3e-trainer.yaml", "--period"])
    assert result.exit_code == ExitCode.INVALID, result.output
    assert "sites/h20-3e-trainer.yaml:" in result.output
    assert "error[NVC786]: rehearse --period: site h20-3e-trainer has no readiness.periodic" in (
        result.output
    )
    assert "hint: add readiness.periodic" in result.output
    line = next(x for x in result.output.splitlines() if "NVC786" in x)
    where = line.split(": error")[0].split(":")
    text = (ROOT / "sites" / "h20-3e-trainer.yaml").read_text("utf-8").splitlines()
    assert text[int(where[1]) - 1].strip().startswith("readiness:")


@pytest.mark.parametrize(
    ("second", "micro", "wait"),
    [
        (0, 0, 0.0),
        (50, 0, 0.0),  # 10 s left: created now
        (50, 1, 60.0 + 1.0 - 50.000001),  # less: a second into the next minute
        (59, 500_000, 1.5),
    ],
)
def test_the_cronjobs_are_created_in_one_minute_with_ten_seconds_left(
    second: int, micro: int, wait: float
) -> None:
    now = datetime(2026, 12, 6, 13, 0, second, micro, tzinfo=UTC)
    assert wait_before_create_s(now) == pytest.approx(wait)


def test_a_jobs_period_is_the_minutes_its_cronjob_appended() -> None:
    assert minutes_of("x-c0", f"x-c0-{MINUTES}") == MINUTES
    assert minutes_of("x-c0", f"x-c0-{MINUTES}-0-abcde") is None  # a pod's name
    assert minutes_of("x-c0", f"y-c0-{MINUTES}") is None
    assert minutes_of("x-c0", "x-c0-") is None
    assert minutes_of("x-c0", "x-c0-1234567890123") is None  # 13 digits: no period id


def live(tree: tuple[list[TreeObject], PeriodPlan], minutes: int) -> dict[str, Any]:
    """What the controller made of each CronJob for a period: Jobs, Workloads, pods."""
    objects, plan = tree
    crons = {o.name: o.obj for o in objects if o.kind == "CronJob"}
    jobs, workloads, pods = [], [], []
    for cron in plan.crons:
        job = period_job(dict(crons[cron.name]), minutes)
        job["metadata"]["ownerReferences"] = [{"kind": "CronJob", "name": cron.name}]
        job["metadata"]["namespace"] = cron.namespace
        job["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
        name = job["metadata"]["name"]
        jobs.append(job)
        workloads.append(
            {
                "metadata": {
                    "namespace": cron.namespace,
                    "ownerReferences": [{"kind": "Job", "name": name}],
                },
                "spec": {"priorityClassRef": {"name": PERIODIC}, "priority": -1},
                "status": {"conditions": [{"type": "Admitted", "status": "True"}]},
            }
        )
        for index, node in enumerate(cron.nodes):
            pods.append(
                {
                    "metadata": {
                        "name": f"{name}-{index}-abcde",
                        "namespace": cron.namespace,
                        "labels": {"batch.kubernetes.io/job-name": name},
                    },
                    "spec": {"nodeName": node},
                }
            )
    return {"jobs": jobs, "workloads": workloads, "pods": pods}


def test_the_jobs_the_controller_made_are_read_by_owner(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    _, plan = tree
    made = live(tree, MINUTES)
    stranger = copy.deepcopy(made["jobs"][0])
    stranger["metadata"]["ownerReferences"] = [{"kind": "CronJob", "name": "another"}]
    # the same Job, Workload and pod in another namespace: owners of one name there are not
    # this CronJob's, nor their pods' nodes this Job's
    elsewhere = [copy.deepcopy(made[k][0]) for k in ("jobs", "workloads", "pods")]
    for item in elsewhere:
        item["metadata"]["namespace"] = "tenant"
    elsewhere[2]["spec"]["nodeName"] = "tenant-node"
    found = period_jobs(
        plan.crons,
        [*made["jobs"], stranger, elsewhere[0]],
        [*made["workloads"], elsewhere[1]],
        [*made["pods"], elsewhere[2]],
    )
    assert list(found) == [c.name for c in plan.crons]
    for cron in plan.crons:
        (job,) = found[cron.name]
        assert job == PeriodJob(
            cron.name,
            f"{cron.name}-{MINUTES}",
            MINUTES,
            "2025-12-03T00:00:00Z",
            True,
            PERIODIC,
            -1,
            "Succeeded",
            ("node-a", "node-b"),
        )
    assert period_of(found) == MINUTES
    assert problems(plan, found) == []


def test_a_job_kueue_holds_is_read_with_its_reason(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    _, plan = tree
    made = live(tree, MINUTES)
    made["workloads"][0]["status"] = {
        "conditions": [
            {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "no quota"}
        ]
    }
    del made["jobs"][0]["status"]
    found = period_jobs(plan.crons, made["jobs"], made["workloads"], [])
    job = found[plan.crons[0].name][0]
    assert (job.admitted, job.waiting, job.outcome, job.nodes) == (
        False,
        "Pending: no quota",
        "",
        (),
    )
    assert problems(plan, found) == [f"Job {job.name} was not admitted: Pending: no quota"]
    no_workload = period_jobs(plan.crons, made["jobs"], [], [])
    assert no_workload[plan.crons[0].name][0].priority_class == ""


def test_what_is_not_as_planned_is_named(tree: tuple[list[TreeObject], PeriodPlan]) -> None:
    _, plan = tree
    first, second = plan.crons
    good = period_jobs(plan.crons, **live(tree, MINUTES))
    ok = good[first.name][0]

    def said(**changed: Any) -> list[str]:
        changed_job = PeriodJob(**{**ok.__dict__, **changed})
        return problems(plan, {first.name: [changed_job], second.name: good[second.name]})

    name = ok.name
    assert said(priority=0) == [
        f"Job {name} was admitted at priority {PERIODIC} (0), not {PERIODIC} (-1)"
    ]
    assert said(priority_class="h20-3e-trainer-single-node", priority=200) == [
        f"Job {name} was admitted at priority h20-3e-trainer-single-node (200), not {PERIODIC} (-1)"
    ]
    assert said(outcome="") == [f"Job {name} did not finish in time"]
    assert said(outcome="DeadlineExceeded: too long") == [
        f"Job {name} failed: DeadlineExceeded: too long"
    ]
    assert said(nodes=("node-a", "node-c")) == [
        f"Job {name} ran on node-c, pinned to node-a, node-b"
    ]
    assert said(minutes=None) == [f"Job {name} is not named <cronjob>-<minutes>: no period id"]
    assert said(minutes=MINUTES + 1) == [
        f"the Jobs are of 2 periods ({MINUTES}, {MINUTES + 1}), not one"
    ]
    assert problems(plan, {first.name: [], second.name: good[second.name]}) == [
        f"CronJob {first.name} made no Job"
    ]
    twice = {first.name: [ok, ok], second.name: good[second.name]}
    assert problems(plan, twice) == [f"CronJob {first.name} made 2 Jobs, not one"]
    assert period_of({first.name: [], second.name: []}) is None


def rehearsed(
    tree: tuple[list[TreeObject], PeriodPlan],
    collected: Collected | None,
    refused: tuple[str, ...] = (),
    suspended: tuple[str, ...] | None = None,
) -> PeriodRehearsal:
    _, plan = tree
    found = period_jobs(plan.crons, **live(tree, MINUTES))
    jobs = {k: tuple(v) for k, v in found.items()}
    suspended = tuple(c.name for c in plan.crons) if suspended is None else suspended
    nodes = ("node-a", "node-b")
    return PeriodRehearsal(
        "h20-3e-trainer", plan, refused, jobs, MINUTES, suspended, nodes, 12.0, 70.0, collected, 200
    )


PASSED = Collected("pass", (("node-a", "cleared"), ("node-b", "cleared")), "/r/1", ("ok",), "", 4)
FAILED = Collected("fail", (("node-a", "failed"), ("node-b", "cleared")), "/r/1", ("x",), "", 4)


def test_a_period_as_planned_and_passing_exits_0_and_says_so(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    result = rehearsed(tree, PASSED)
    assert exit_code(result) == ExitCode.OK
    text = to_text(result)
    change = "the rehearsal's one change: the schedule of the 2 periodic CronJobs ('0 3 * * 0')"
    assert change in text
    assert f"  period: {MINUTES}\n" in text
    assert "admitted at h20-3e-trainer-periodic (-1), Succeeded, on node-a, node-b" in text
    assert "  as planned: yes\n" in text and "  verdict: pass (4 pods' logs served)\n" in text
    assert "    cleared: node-a, node-b\n" in text
    data = json.loads(json.dumps(to_json(result)))
    assert (data["as_planned"], data["passed"], data["period"], data["verdict"]) == (
        True,
        True,
        MINUTES,
        "pass",
    )
    assert data["node_statuses"] == {"node-a": "cleared", "node-b": "cleared"}
    assert all(c["suspended"] and len(c["jobs"]) == 1 for c in data["cronjobs"])


def test_a_failing_node_a_problem_or_no_collection_exits_1(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    failed = rehearsed(tree, FAILED)
    assert exit_code(failed) == ExitCode.DRIFT
    assert "    failed: node-a\n" in to_text(failed)
    assert exit_code(rehearsed(tree, None)) == ExitCode.DRIFT
    assert "verdict: none (the period was not collected)" in to_text(rehearsed(tree, None))
    broken = Collected(error="collect: --period 1: no log of that period")
    assert "verdict: none (collect: --period 1" in to_text(rehearsed(tree, broken))
    assert exit_code(rehearsed(tree, broken)) == ExitCode.DRIFT
    refused = rehearsed(tree, PASSED, ("CronJob/x: HTTP 422: no",))
    assert exit_code(refused) == ExitCode.DRIFT
    assert "    refused: CronJob/x: HTTP 422: no\n" in to_text(refused)
    assert to_json(refused)["as_planned"] is False


def test_a_cronjob_left_unsuspended_is_not_as_planned(
    tree: tuple[list[TreeObject], PeriodPlan],
) -> None:
    _, plan = tree
    first, second = plan.crons
    held = rehearsed(tree, PASSED, suspended=(second.name,))
    assert held.problems == [
        f"CronJob {first.name} was not suspended after its first Job: another period could run"
    ]
    assert exit_code(held) == ExitCode.DRIFT
    assert [c["suspended"] for c in to_json(held)["cronjobs"]] == [False, True]
