"""`nvcregen plan`'s headline names the limit a plan breaks (issue 32), exactly at each bound.

The view is built by hand: one hour of deadline, 100 GPU-hours, 64 jobs at once.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from nvcregen.replay.report import render_plans, summary
from nvcregen.replay.timeline import PlanView, StepRow

HOUR = 3_600_000


def step(
    name: str = "01-single-node/round-1", at_once: int = 64, end: int | None = HOUR
) -> StepRow:
    return StepRow(
        name=name,
        applied_by="Application lab-readiness",
        stages=("single-node",),
        runs=("run",),
        jobs=1,
        nodes=("gpu-0000",),
        start_ms=0,
        end_ms=end,
        expected_ms=end,
        worst_ms=end,
        timeout_ms=HOUR,
        step_timeout_ms=None,
        holds_ms=None,
        at_once=at_once,
        gpu_hours=1.0,
        worst_gpu_hours=1.0,
        fits=True,
    )


def view(*steps: StepRow, expected: int | None = HOUR, gpu_hours: float = 100.0) -> PlanView:
    return PlanView(
        site="lab",
        steps=steps or (step(),),
        expected_ms=expected,
        worst_ms=expected,
        gpu_hours=gpu_hours,
        worst_gpu_hours=gpu_hours,
        deadline_ms=HOUR,
        budget_gpu_hours=100.0,
        max_concurrent_jobs=64,
        errors=0,
        warnings=0,
    )


def test_a_plan_at_every_bound_fits() -> None:
    fits = view()
    assert (fits.fits, fits.breaks) == (True, ())
    assert summary(fits).endswith("64 jobs at once: fits the window")


def test_one_job_too_many_at_once_names_concurrency_and_the_step() -> None:
    crowded = view(step(at_once=65))
    assert (crowded.fits, crowded.breaks) == (False, ("concurrency",))
    assert summary(crowded).endswith(
        "does NOT fit the window (concurrency: 65/64 at once in 01-single-node/round-1)"
    )


def test_the_most_crowded_step_is_named_and_the_others_counted() -> None:
    steps = (step("a", 65), step("b", 128), step("c", 64), step("d", 70))
    assert summary(view(*steps)).endswith("(concurrency: 128/64 at once in b and 2 more steps)")
    two = (step("a", 65), step("b", 128))
    assert summary(view(*two)).endswith("(concurrency: 128/64 at once in b and 1 more step)")


@pytest.mark.parametrize("expected", [HOUR + 1, None])
def test_a_plan_past_the_deadline_breaks_it(expected: int | None) -> None:
    assert view(step(end=expected), expected=expected).breaks == ("deadline",)


@pytest.mark.parametrize("expected", [HOUR + 1000, None])
def test_a_plan_past_the_deadline_names_the_deadline(expected: int | None) -> None:
    late = view(step(end=expected), expected=expected)
    shown = "never" if expected is None else "1h1s"
    assert summary(late).endswith(f"(deadline: expected {shown} > 1h)")


def test_a_step_past_the_deadline_breaks_it() -> None:
    assert view(step(end=HOUR + 1)).breaks == ("deadline",)


def test_gpu_hours_above_the_window_are_named() -> None:
    over = view(gpu_hours=100.05)
    assert over.breaks == ("GPU-hours",)
    assert summary(over).endswith("(GPU-hours: 100.0 > 100)")


def test_every_broken_limit_is_named_in_order_and_in_json() -> None:
    broken = view(step(at_once=128, end=2 * HOUR), expected=2 * HOUR, gpu_hours=150.0)
    assert summary(broken).endswith(
        "(deadline: expected 2h > 1h; GPU-hours: 150.0 > 100; "
        "concurrency: 128/64 at once in 01-single-node/round-1)"
    )
    (found,) = json.loads(render_plans([broken], "json"))
    assert (found["fits"], found["breaks"]) == (False, ["deadline", "GPU-hours", "concurrency"])
    assert (
        json.loads(
            render_plans(
                [replace(broken, steps=(step(),), expected_ms=HOUR, gpu_hours=1.0)], "json"
            )
        )[0]["breaks"]
        == []
    )
