"""The plan's cost in GPU-hours and wall-clock time, expected and worst case (pure).

Each job takes its expected duration (the physics model, `TestUnit.expected_ms`) in the
expected case and its timeout in the worst. A test's jobs run in waves of
`maxConcurrentJobs`, or of fewer where the ClusterQueue nvcregen sizes holds fewer of
them (`plan/admitted.py`: N of a pool's smallest run), once per round; the worst case
repeats every round `retests` more times. Tests, and stages, run one after another:
each job holds every GPU of its nodes.

"Worst case" has this one meaning in every output (`plan`, NVC313, NVC676, `diff`):
every job runs to its timeout and every retest happens, worded with the retests named
(`worst case 15h42m (7h51m + 1 retest)`, `worst_case`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.core import units
from nvcregen.plan.admitted import admitted_nodes, manages_queues, runs_at_once
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

_MS_PER_HOUR = 3_600_000


def attempts(retests: int) -> int:
    """How often the worst case runs each job: once, then each of the window's `retests`.

    The one place the worst case's multiplier is defined: the budget, the replay's
    timeline and each Flux step's timeout all count attempts with it.
    """
    return 1 + retests


@dataclass(frozen=True)
class UnitCost:
    """The cost of one test: `gpu_hours` and `wall_hours` are the worst case.

    Worst case: every job runs to its timeout and every retest happens (`once_*`: one
    attempt, every round, no retest). Expected case: every job takes its expected
    duration, once per round.
    """

    unit: TestUnit
    jobs: int
    once_gpu_hours: float
    once_wall_hours: float
    expected_gpu_hours: float = 0.0
    expected_wall_hours: float = 0.0
    retests: int = 0

    @property
    def gpu_hours(self) -> float:
        """Worst-case GPU-hours: one attempt's, times the attempts."""
        return self.once_gpu_hours * attempts(self.retests)

    @property
    def wall_hours(self) -> float:
        """Worst-case wall-clock hours: one attempt's, times the attempts."""
        return self.once_wall_hours * attempts(self.retests)

    @property
    def name(self) -> str:
        """`<stage>/<test>`, as messages name a test."""
        return f"{self.unit.stage.name}/{self.unit.test.name}"


@dataclass(frozen=True)
class Budget:
    """The whole plan's cost, tests one after another; worst case with `retests` counted."""

    costs: tuple[UnitCost, ...]
    retests: int = 0

    @property
    def gpu_hours(self) -> float:
        """Worst-case GPU-hours."""
        return sum(c.gpu_hours for c in self.costs)

    @property
    def wall_hours(self) -> float:
        """Worst-case wall-clock hours."""
        return sum(c.wall_hours for c in self.costs)

    @property
    def expected_gpu_hours(self) -> float:
        """Expected GPU-hours."""
        return sum(c.expected_gpu_hours for c in self.costs)

    @property
    def expected_wall_hours(self) -> float:
        """Expected wall-clock hours."""
        return sum(c.expected_wall_hours for c in self.costs)

    @property
    def worst_wall(self) -> str:
        """The worst-case wall time with its retests named: `15h42m (7h51m + 1 retest)`."""
        once = sum(c.once_wall_hours for c in self.costs)
        return worst_case(hours(self.wall_hours), hours(once), self.retests)

    @property
    def worst_gpu_hours(self) -> str:
        """The worst-case GPU-hours with their retests named: `251.2 (125.6 + 1 retest)`."""
        once = sum(c.once_gpu_hours for c in self.costs)
        return worst_case(f"{self.gpu_hours:.1f}", f"{once:.1f}", self.retests)

    def stages(self) -> dict[str, tuple[float, float]]:
        """Wall-clock hours per stage, in plan order: (expected, worst case)."""
        found: dict[str, tuple[float, float]] = {}
        for c in self.costs:
            expected, worst = found.get(c.unit.stage.name, (0.0, 0.0))
            found[c.unit.stage.name] = (expected + c.expected_wall_hours, worst + c.wall_hours)
        return found

    def largest(self, count: int = 3, *, by: str = "gpu_hours") -> tuple[UnitCost, ...]:
        """The `count` costliest tests by a worst-case figure (`gpu_hours` or `wall_hours`)."""
        ranked = sorted(self.costs, key=lambda c: (-getattr(c, by), c.name))
        return tuple(ranked[:count])


def unit_cost(site: Site, unit: TestUnit, at_once: int | None = None) -> UnitCost | None:
    """The cost of one test; None when the pool's node count is unknown.

    `at_once`: how many of its jobs run together (default `maxConcurrentJobs`).
    """
    nodes = unit.pool.node_count
    if nodes is None:
        return None
    window = site.spec.readiness.window
    jobs = max(1, nodes // unit.nodes_per_job)
    if unit.grouping is not None:  # a run per group of every round, as the compile makes
        jobs = max(1, len(unit.grouping.groups))
    rounds = site.spec.readiness.rounds
    gpus = jobs * unit.nodes_per_job * unit.pool.gpus_per_node
    waves = math.ceil(jobs / (at_once or window.max_concurrent_jobs))
    worst = unit.timeout_ms / _MS_PER_HOUR
    expected = unit.expected_ms / _MS_PER_HOUR
    return UnitCost(
        unit,
        jobs,
        once_gpu_hours=gpus * worst * rounds,
        once_wall_hours=waves * worst * rounds,
        expected_gpu_hours=gpus * expected * rounds,
        expected_wall_hours=waves * expected * rounds,
        retests=window.retests,
    )


def plan_budget(site: Site, test_units: Sequence[TestUnit]) -> Budget:
    """Add up the cost of every test whose node count is known."""
    at_once = _at_once(site, test_units)
    costs = [c for u in test_units if (c := unit_cost(site, u, at_once[id(u)])) is not None]
    return Budget(tuple(costs), site.spec.readiness.window.retests)


def _at_once(site: Site, test_units: Sequence[TestUnit]) -> dict[int, int | None]:
    """Each test's jobs at once (by id): fewer than N where nvcregen's quota holds fewer."""
    window = site.spec.readiness.window.max_concurrent_jobs
    if not manages_queues(site):
        return {id(u): None for u in test_units}
    sizes: dict[int, list[int]] = {}
    for unit in test_units:
        sizes.setdefault(unit.pool.index, []).append(unit.nodes_per_job)
    found: dict[int, int | None] = {}
    for unit in test_units:
        quota = admitted_nodes(window, sizes[unit.pool.index], unit.pool.node_count)
        found[id(unit)] = runs_at_once(window, quota, unit.nodes_per_job)
    return found


def hours(value: float) -> str:
    """Hours as a duration to the minute (`15h42m`)."""
    return units.format_duration(round(value * 60) * 60_000)


def worst_case(total: str, once: str, retests: int) -> str:
    """A worst case as every output words it: `24h36m (12h18m + 1 retest)`.

    `total` counts every retest, `once` is one attempt (every job to its timeout, each
    round once); without retests they are equal and `total` stands alone.
    """
    if retests == 0:
        return total
    return f"{total} ({once} + {retests} retest{'s' * (retests > 1)})"
