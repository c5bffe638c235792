"""The plan's worst case in GPU-hours and wall-clock time (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from nvcregen.plan.resolve import TestUnit
from nvcregen.spec.v1alpha1 import Site

_MS_PER_HOUR = 3_600_000


@dataclass(frozen=True)
class UnitCost:
    """Worst-case cost of one test: every job runs to its timeout, every retest happens."""

    unit: TestUnit
    jobs: int
    gpu_hours: float
    wall_hours: float


@dataclass(frozen=True)
class Budget:
    """The whole plan's worst case."""

    costs: tuple[UnitCost, ...]

    @property
    def gpu_hours(self) -> float:
        """Total GPU-hours."""
        return sum(c.gpu_hours for c in self.costs)

    @property
    def wall_hours(self) -> float:
        """Total wall-clock hours, tests one after another."""
        return sum(c.wall_hours for c in self.costs)


def unit_cost(site: Site, unit: TestUnit) -> UnitCost | None:
    """Worst case of one test; None when the pool's node count is unknown."""
    nodes = unit.pool.node_count
    if nodes is None:
        return None
    window = site.spec.readiness.window
    jobs = max(1, nodes // unit.nodes_per_job)
    attempts = site.spec.readiness.rounds * (1 + window.retests)
    hours = unit.timeout_ms / _MS_PER_HOUR
    gpus = jobs * unit.nodes_per_job * unit.pool.gpus_per_node
    waves = math.ceil(jobs / window.max_concurrent_jobs)
    return UnitCost(unit, jobs, gpus * hours * attempts, waves * hours * attempts)


def plan_budget(site: Site, test_units: list[TestUnit]) -> Budget:
    """Add up the worst case of every test whose node count is known."""
    costs = [c for u in test_units if (c := unit_cost(site, u)) is not None]
    return Budget(tuple(costs))
