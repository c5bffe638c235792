"""Tests of nvcregen.plan.budget: expected and worst-case GPU-hours and hours, by hand.

Durations are the physics model's (tests/unit/plan/test_physics_model.py checks those);
here only the arithmetic on top: jobs, waves, rounds and retests. DCGM level 1 is
expected to take 90 s (30 s start-up + 1m) and times out after 3m (x2, whole minutes);
the NCCL stages state their timeout, so only their expected duration comes from physics.
"""

from __future__ import annotations

import pytest
from sitefactory import site, site_yaml, unit, units_of

from nvcregen.plan.budget import attempts, plan_budget, unit_cost

# Five H100 nodes (8 GPUs each).
POOL = "- {name: gpu, model: H100, nodes: [n1, n2, n3, n4, n5]}"
STAGES = """\
- {name: node, scope: intra-node, tests: [dcgm-l1]}
- {name: fabric, scope: inter-node, nodesPerJob: 2, timeoutPerJob: 40m, tests: [nccl-all-reduce]}
"""
L1_EXPECTED_H, L1_TIMEOUT_H = 90 / 3600, 3 / 60


def small_site(window: str, rounds: int = 2, stages: str = STAGES, pools: str = POOL) -> str:
    return site_yaml(pools=pools, stages=stages, rounds=rounds, window=window)


def test_dcgm_l1_expected_duration_and_timeout_are_what_this_file_assumes() -> None:
    l1 = unit(units_of(small_site("{deadline: 12h, gpuHours: 500}")), "node", "dcgm-l1")
    assert (l1.expected_ms, l1.timeout_ms) == (90_000, 180_000)


def test_unit_costs_with_retests_rounds_and_waves() -> None:
    text = small_site("{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500, retests: 1}")
    parsed, test_units = site(text), units_of(text)
    fabric_h = unit(test_units, "fabric", "nccl-all-reduce").expected_ms / 3_600_000
    l1, fabric = (unit_cost(parsed, u) for u in test_units)
    assert l1 is not None
    assert fabric is not None
    # dcgm-l1: 5 one-node jobs x 8 GPUs, ceil(5/2) = 3 waves, 2 rounds x (1 + 1 retest)
    assert (l1.jobs, l1.name) == (5, "node/dcgm-l1")
    assert l1.gpu_hours == pytest.approx(40 * L1_TIMEOUT_H * 4)
    assert l1.wall_hours == pytest.approx(3 * L1_TIMEOUT_H * 4)
    assert l1.expected_gpu_hours == pytest.approx(40 * L1_EXPECTED_H * 2)  # no retests expected
    assert l1.expected_wall_hours == pytest.approx(3 * L1_EXPECTED_H * 2)
    # nccl-all-reduce: 5 // 2 = 2 two-node jobs = 32 GPUs, one wave, 40m timeout
    assert fabric.jobs == 2
    assert fabric.gpu_hours == pytest.approx(32 * 40 / 60 * 4)
    assert fabric.wall_hours == pytest.approx(40 / 60 * 4)
    assert fabric.expected_gpu_hours == pytest.approx(32 * fabric_h * 2)
    assert fabric.expected_wall_hours == pytest.approx(fabric_h * 2)

    # The ClusterQueue holds 2 one-node jobs (2 nodes, issue 32), so the fabric's two-node
    # jobs go one at a time: two waves, not the one of unit_cost's default of N at once.
    budget = plan_budget(parsed, test_units)
    assert budget.gpu_hours == pytest.approx(l1.gpu_hours + fabric.gpu_hours)
    assert budget.wall_hours == pytest.approx(0.6 + 16 / 3)
    assert budget.expected_wall_hours == pytest.approx(0.15 + fabric_h * 4)
    assert budget.stages() == {
        "node": pytest.approx((0.15, 0.6)),
        "fabric": pytest.approx((fabric_h * 4, 16 / 3)),
    }


@pytest.mark.parametrize(("jobs", "fabric_waves"), [(2, 2), (3, 2), (4, 1)])
def test_jobs_larger_than_the_smallest_go_as_the_quota_admits_them(
    jobs: int, fabric_waves: int
) -> None:
    # Quota = N one-node jobs: 2 nodes hold one pair, 3 still one, 4 both pairs.
    text = small_site(f"{{maxConcurrentJobs: {jobs}, deadline: 12h, gpuHours: 500}}", rounds=1)
    (_, fabric) = plan_budget(site(text), units_of(text)).costs
    assert fabric.wall_hours == pytest.approx(fabric_waves * 40 / 60)


def test_a_gang_scheduler_runs_n_jobs_of_any_size() -> None:
    # No ClusterQueue of nvcregen's: NVCRE's maxConcurrent alone, N two-node jobs at once.
    window = "{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500}"
    text = site_yaml(
        pools=POOL,
        stages=STAGES,
        rounds=1,
        window=window,
        dependencies="gangScheduler: {schedulerName: kai-scheduler}\n",
    )
    (_, fabric) = plan_budget(site(text), units_of(text)).costs
    assert fabric.wall_hours == pytest.approx(40 / 60)


def test_no_retests_and_one_job_at_a_time() -> None:
    text = small_site("{maxConcurrentJobs: 1, deadline: 12h, gpuHours: 500}", rounds=1)
    budget = plan_budget(site(text), units_of(text))
    # waves = jobs: 5 x 3m + 2 x 40m = 95 minutes
    assert budget.wall_hours == pytest.approx(95 / 60)
    # GPU-hours do not depend on concurrency: 40 x 3m + 32 x 40m = 1400 GPU-minutes
    assert budget.gpu_hours == pytest.approx(1400 / 60)


def test_enough_concurrency_is_one_wave_per_test() -> None:
    text = small_site("{maxConcurrentJobs: 8, deadline: 12h, gpuHours: 500}", rounds=3)
    budget = plan_budget(site(text), units_of(text))
    assert budget.wall_hours == pytest.approx((3 + 40) / 60 * 3)


def test_stage_timeout_override_is_what_a_job_costs_in_the_worst_case() -> None:
    stages = "- {name: node, scope: intra-node, timeoutPerJob: 1h, tests: [dcgm-l1]}"
    text = small_site("{maxConcurrentJobs: 5, deadline: 12h, gpuHours: 500}", 1, stages)
    (cost,) = [c for u in units_of(text) if (c := unit_cost(site(text), u))]
    assert (cost.jobs, cost.gpu_hours, cost.wall_hours) == (5, 40.0, 1.0)
    assert cost.expected_gpu_hours == pytest.approx(40 * L1_EXPECTED_H)


def test_timeout_factor_scales_the_worst_case_only() -> None:
    stages = "- {name: node, scope: intra-node, tests: [dcgm-l2]}"
    window = "{maxConcurrentJobs: 5, deadline: 12h, gpuHours: 500, timeoutFactor: 3}"
    text = small_site(window, 1, stages)
    (cost,) = [c for u in units_of(text) if (c := unit_cost(site(text), u))]
    # dcgm-l2: 30s + 5m = 330 s expected; x3 = 990 s -> 17m
    assert cost.wall_hours == pytest.approx(17 / 60)
    assert cost.expected_wall_hours == pytest.approx(330 / 3600)


def test_largest_ranks_by_worst_case_then_name() -> None:
    text = small_site("{maxConcurrentJobs: 1, deadline: 12h, gpuHours: 500}", rounds=1)
    budget = plan_budget(site(text), units_of(text))
    assert [c.name for c in budget.largest()] == ["fabric/nccl-all-reduce", "node/dcgm-l1"]
    assert [c.name for c in budget.largest(1, by="wall_hours")] == ["fabric/nccl-all-reduce"]


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
    assert [c.unit.stage.name for c in budget.costs] == ["node", "fabric"]


def test_selector_pool_with_node_count_is_costed_like_named_nodes() -> None:
    pools = "- {name: fleet, model: L20, selector: {role: gpu}, nodeCount: 5}"
    stages = "- {name: node, scope: intra-node, tests: [dcgm-l1, dcgm-l2]}"
    window = "{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 500}"
    named_text = small_site(window, stages=stages)
    named = plan_budget(site(named_text), units_of(named_text))
    text = small_site(window, stages=stages, pools=pools)
    by_selector = plan_budget(site(text), units_of(text))
    assert by_selector.gpu_hours == pytest.approx(named.gpu_hours)  # L20 has 8 GPUs too
    assert by_selector.wall_hours == pytest.approx(named.wall_hours)


def test_worst_case_names_one_attempt_and_each_retest() -> None:
    """One multiplier (`attempts`): two retests are three attempts, and the text names them."""
    assert (attempts(0), attempts(2)) == (1, 3)
    text = small_site("{maxConcurrentJobs: 1, deadline: 12h, gpuHours: 500, retests: 2}", rounds=1)
    budget = plan_budget(site(text), units_of(text))
    # one attempt: 5 x 3m + 2 x 40m = 95 minutes and 1400 GPU-minutes; three attempts in all
    assert budget.wall_hours == pytest.approx(3 * 95 / 60)
    assert budget.worst_wall == "4h45m (1h35m + 2 retests)"
    assert budget.worst_gpu_hours == "70.0 (23.3 + 2 retests)"
