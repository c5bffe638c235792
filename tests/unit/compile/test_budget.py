"""Tests of nvcregen.plan.budget: worst-case GPU-hours and wall-clock hours, by hand."""

from __future__ import annotations

import pytest
from sitefactory import site, site_yaml, units_of

from nvcregen.plan.budget import plan_budget, unit_cost

# Five H100 nodes (8 GPUs each); dcgm-l1 times out after 5m, nccl-all-reduce after 10m.
POOL = "- {name: gpu, model: H100, nodes: [n1, n2, n3, n4, n5]}"
STAGES = """\
- {name: node, scope: intra-node, tests: [dcgm-l1, nccl-all-reduce]}
- {name: fabric, scope: inter-node, nodesPerJob: 2, tests: [nccl-all-reduce]}
"""


def small_site(window: str, rounds: int = 2, stages: str = STAGES, pools: str = POOL) -> str:
    return site_yaml(pools=pools, stages=stages, rounds=rounds, window=window)


def costs(text: str) -> list[tuple[str, int, float, float]]:
    parsed = site(text)
    result = []
    for u in units_of(text):
        cost = unit_cost(parsed, u)
        assert cost is not None
        result.append((f"{u.stage.name}/{u.test.name}", cost.jobs, cost.gpu_hours, cost.wall_hours))
    return result


def test_unit_costs_with_retests_rounds_and_waves() -> None:
    text = small_site("{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500, retests: 1}")
    # attempts = rounds 2 x (1 + retests 1) = 4
    # node/dcgm-l1: 5 one-node jobs x 8 GPUs x 5m x 4 = 40 x 1/12 h x 4; ceil(5/2) = 3 waves
    # node/nccl-all-reduce: the same with 10m
    # fabric/nccl-all-reduce: 5 // 2 = 2 two-node jobs = 32 GPUs x 1/6 h x 4; 1 wave
    expected = [
        ("node/dcgm-l1", 5, 40 / 12 * 4, 3 / 12 * 4),
        ("node/nccl-all-reduce", 5, 40 / 6 * 4, 3 / 6 * 4),
        ("fabric/nccl-all-reduce", 2, 32 / 6 * 4, 1 / 6 * 4),
    ]
    got = costs(text)
    assert [(name, jobs) for name, jobs, _, _ in got] == [(n, j) for n, j, _, _ in expected]
    for (_, _, gpu, wall), (_, _, want_gpu, want_wall) in zip(got, expected, strict=True):
        assert gpu == pytest.approx(want_gpu)
        assert wall == pytest.approx(want_wall)

    budget = plan_budget(site(text), units_of(text))
    assert budget.gpu_hours == pytest.approx(13.3333 + 26.6667 + 21.3333, abs=1e-3)
    assert budget.wall_hours == pytest.approx(1.0 + 2.0 + 2 / 3)


def test_no_retests_and_one_job_at_a_time() -> None:
    text = small_site("{maxConcurrentJobs: 1, deadline: 12h, gpuHours: 500}", rounds=1)
    budget = plan_budget(site(text), units_of(text))
    # attempts = 1; waves = jobs: 5 x 5m + 5 x 10m + 2 x 10m = 95 minutes
    assert budget.wall_hours == pytest.approx(95 / 60)
    # GPU-hours do not depend on concurrency: 40 x 5m + 40 x 10m + 32 x 10m = 920 GPU-minutes
    assert budget.gpu_hours == pytest.approx(920 / 60)


def test_enough_concurrency_is_one_wave_per_test() -> None:
    text = small_site("{maxConcurrentJobs: 8, deadline: 12h, gpuHours: 500}", rounds=3)
    budget = plan_budget(site(text), units_of(text))
    assert budget.wall_hours == pytest.approx((5 + 10 + 10) / 60 * 3)


def test_stage_timeout_override_is_what_a_job_costs() -> None:
    stages = "- {name: node, scope: intra-node, timeoutPerJob: 1h, tests: [dcgm-l1]}"
    text = small_site("{maxConcurrentJobs: 5, deadline: 12h, gpuHours: 500}", 1, stages)
    assert costs(text) == [("node/dcgm-l1", 5, 40.0, 1.0)]


def test_selector_pool_without_node_count_costs_nothing() -> None:
    pools = f"{POOL}\n- {{name: fleet, model: L20, selector: {{role: gpu}}}}"
    stages = STAGES + "- {name: fleet-node, scope: intra-node, pool: fleet, tests: [dcgm-l1]}"
    text = small_site("{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500}", 1, stages, pools)
    parsed = site(text)
    test_units = units_of(text)
    fleet = [u for u in test_units if u.pool.spec.name == "fleet"]
    assert len(fleet) == 1
    assert unit_cost(parsed, fleet[0]) is None
    budget = plan_budget(parsed, test_units)
    assert [c.unit.stage.name for c in budget.costs] == ["node", "node", "fabric"]


def test_selector_pool_with_node_count_is_costed_like_named_nodes() -> None:
    pools = "- {name: fleet, model: L20, selector: {role: gpu}, nodeCount: 5}"
    window = "{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500}"
    named = plan_budget(site(small_site(window)), units_of(small_site(window)))
    text = small_site(window, pools=pools)
    by_selector = plan_budget(site(text), units_of(text))
    assert by_selector.gpu_hours == pytest.approx(named.gpu_hours)  # L20 has 8 GPUs too
    assert by_selector.wall_hours == pytest.approx(named.wall_hours)
