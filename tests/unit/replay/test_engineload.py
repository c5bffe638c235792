"""Kueue's admission and Flux's workers in `plan` (issue #33)."""

from __future__ import annotations

import dataclasses
import json

from replayfactory import SHIPPED, replay, shipped, shipped_facts

from nvcregen.catalog.engines import engine_facts
from nvcregen.replay.engineload import engine_load
from nvcregen.replay.report import engine_lines, render_plans
from nvcregen.replay.timeline import plan_view

LAB, TRAINER, L20 = SHIPPED


def test_each_step_queues_its_runs_in_its_cluster_queue_one_per_cycle() -> None:
    facts = engine_facts()
    found = replay(shipped(TRAINER), shipped_facts(TRAINER))
    view = plan_view(found)
    load = view.load
    assert load is not None
    # packed trainer mode: a workload per run, 2 runs a single-node round (the DCGM levels,
    # the NCCL tests: one Job each for both nodes), 1 a two-node round (every test of the pair)
    assert [a.workloads for a in load.admissions] == [2, 2, 2, 1, 1, 1]
    assert {a.cluster_queue for a in load.admissions} == {"h20-3e-trainer-readiness"}
    assert load.expected_ms == 9 * facts.cycle_expected_ms
    assert load.worst_ms == 9 * facts.cycle_worst_ms
    assert load.flux_workers is None  # Argo CD
    (line,) = engine_lines(view)
    assert line.startswith("Kueue admission: 9 workloads in ClusterQueue h20-3e-trainer-readiness")


def test_a_flux_site_holds_one_worker_per_step_for_its_timeout() -> None:
    view = plan_view(replay(shipped(L20), shipped_facts(L20)))
    assert view.load is not None
    assert view.load.flux_workers == 1  # steps run one after the other
    assert view.load.flux_limit == 4
    # the pairs step's timeout, 4h24m (its replayed worst case), is the longest hold
    assert view.load.flux_hold_ms == 15_840_000
    data = json.loads(render_plans([view], "json"))
    plan = data[0]
    assert plan["flux_workers"]["at_once"] == 1
    assert plan["admission"]["fits"] is True


def test_admission_alone_outlasting_the_window_does_not_fit() -> None:
    found = replay(shipped(TRAINER), shipped_facts(TRAINER))
    view = plan_view(found)
    assert view.fits
    facts = engine_facts()
    deadline = shipped_facts(TRAINER).deadline_ms
    # a cycle such that 9 admissions take the window exactly, then one ms more
    exact = facts.model_copy(update={"kueue": facts.kueue.model_copy(
        update={"cycle_expected": f"{deadline // 9}ms"})})  # fmt: skip
    at = engine_load(found, view.steps, exact)
    assert at.expected_ms == 9 * (deadline // 9) <= deadline
    assert dataclasses.replace(view, load=at).fits
    over = facts.model_copy(update={"kueue": facts.kueue.model_copy(
        update={"cycle_expected": f"{deadline // 9 + 1}ms"})})  # fmt: skip
    late = dataclasses.replace(view, load=engine_load(found, view.steps, over))
    assert late.load is not None and late.load.expected_ms > deadline
    assert not late.fits
    assert late.breaks == ("admission",)
    assert "does NOT fit the window (admission: Kueue needs" in render_plans([late], "text")
    assert "admission alone outlasts the 16h window" in engine_lines(late)[0]
