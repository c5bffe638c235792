"""The weekly cost of periodic re-certification (nvcregen.plan.periodic) and `plan`'s line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from periodicfactory import periodic_text
from sitefactory import catalog, edit, parse

from nvcregen.cli import main
from nvcregen.plan.periodic import (
    HOUR_MS,
    START_SLACK_S,
    PeriodicCost,
    job_deadline_s,
    periodic_cost,
    periodic_packs,
)
from nvcregen.plan.resolve import plan
from nvcregen.replay.report import periodic_line, render_plans
from nvcregen.replay.timeline import PlanView

GPUS = 16  # two H20-3e nodes of eight GPUs


def cost_of(text: str) -> tuple[PeriodicCost | None, float, float, float]:
    """The cost, and one run's expected, worst and preempted GPU-hours by hand."""
    site, _ = parse(text)
    units = plan(site, catalog())
    packs = periodic_packs(site, units)
    expected = sum(p.expected_ms for p in packs) / HOUR_MS * GPUS
    worst = sum(p.timeout_ms for p in packs) / HOUR_MS * GPUS
    preempted = sum(job_deadline_s(p) for p in packs) / 3600 * GPUS
    return periodic_cost(site, units), expected, worst, preempted


def test_a_weekly_schedule_costs_one_run_a_week() -> None:
    cost, expected, worst, preempted = cost_of(periodic_text())
    assert cost is not None
    assert cost.gpus == GPUS  # two packs on the same two nodes: each GPU once
    assert cost.worst_runs == 1
    assert cost.runs_per_week == pytest.approx(52 / 365 * 7)
    assert cost.expected_gpu_hours == pytest.approx(expected * cost.runs_per_week)
    assert cost.worst_gpu_hours == pytest.approx(worst)
    assert cost.preempted_gpu_hours == pytest.approx(preempted)
    assert cost.expected_gpu_hours < cost.worst_gpu_hours < cost.preempted_gpu_hours


def test_the_worst_week_counts_the_busiest_week_of_a_month_day_schedule() -> None:
    # the 1st of the month or a Monday: some weeks hold two runs
    text = periodic_text("    periodic: {schedule: '0 0 1 * 1', stages: [single-node]}\n")
    cost, _, worst, preempted = cost_of(text)
    assert cost is not None
    assert cost.worst_runs == 2
    assert cost.worst_gpu_hours == pytest.approx(2 * worst)
    assert cost.preempted_gpu_hours == pytest.approx(2 * preempted)
    assert 1 < cost.runs_per_week < 2


def test_a_period_job_deadline_is_every_timeout_and_the_start() -> None:
    site, _ = parse(periodic_text())
    (pack, _) = periodic_packs(site, plan(site, catalog()))
    assert job_deadline_s(pack) == -(-pack.timeout_ms // 1000) + START_SLACK_S
    one_ms_more = replace(pack.units[0], timeout_ms=pack.units[0].timeout_ms + 1)
    longer = replace(pack, units=(one_ms_more, *pack.units[1:]))
    assert job_deadline_s(longer) == job_deadline_s(pack) + 1  # rounded up to the second


def test_no_periodic_no_cost_and_no_line() -> None:
    site, _ = parse(periodic_text(""))
    assert periodic_cost(site, plan(site, catalog())) is None


def view(cost: PeriodicCost | None) -> PlanView:
    return PlanView("lab", (), 0, 0, 0.0, 0.0, 3_600_000, 10.0, 1, 0, 0, periodic=cost)


def test_plan_states_the_weekly_gpu_hours_the_worst_week_and_preemption() -> None:
    cost = PeriodicCost("0 3 * * 0", 1.0, 1, 5.9, 12.3, 17.6, 16)
    (line,) = periodic_line(view(cost))
    assert line == (
        "Periodic (0 3 * * 0, 1 run a week on 16 GPUs): 5.9 GPU-hours a week expected, worst"
        " week 12.3 (1 run, every test to its timeout); tenants preempting its pods can"
        " stretch a week to 17.6 (each node's tests restarted until its Job's deadline);"
        " outside the window"
    )
    assert line in render_plans([view(cost)], "text")
    assert line in render_plans([view(cost)], "markdown")
    (data,) = json.loads(render_plans([view(cost)], "json"))
    assert data["periodic"] == {
        "schedule": "0 3 * * 0",
        "runs_per_week": 1.0,
        "worst_week_runs": 1,
        "gpus": 16,
        "gpu_hours_per_week": 5.9,
        "worst_week_gpu_hours": 12.3,
        "preempted_week_gpu_hours": 17.6,
    }
    daily = replace(cost, runs_per_week=7.0, worst_runs=7)
    assert "7 runs a week" in periodic_line(view(daily))[0]
    assert "(7 runs, every" in periodic_line(view(daily))[0]
    assert periodic_line(view(None)) == []
    assert "periodic" not in json.loads(render_plans([view(None)], "json"))[0]


def test_the_plan_command_prints_the_periodic_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sites").mkdir()
    site = tmp_path / "sites" / "h20-3e-trainer.yaml"
    site.write_text(edit(periodic_text(), "path: out/h20-3e-trainer\n", ""), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["plan", "sites/h20-3e-trainer.yaml"])
    assert result.exit_code == 0, result.output
    assert "Periodic (0 3 * * 0, 1 run a week on 16 GPUs): 5.9 GPU-hours a week" in result.output
