"""Periodic re-certification: its packs and what it costs a week (pure; issue 37).

A periodic stage's tests of one image are one node pack (`periodic-<n>`), each chunk of
its nodes one CronJob (`engines/readiness/trainer/periodic.py`). Per week:

- **expected**: the schedule's runs in an average week (`core/cron.runs_per_week`) times
  every pack's expected duration on each of its nodes' GPUs;
- **worst week**: the most runs in any calendar week (a month-day schedule bunches them)
  times every test to its timeout;
- **with preemption**: a tenant's pod evicts a periodic pod (its PriorityClass is below
  0); the Job's `podFailurePolicy` ignores that disruption, so the node's pod starts over
  when the node is free again, at most until the Job's deadline (`job_deadline_s`): no
  period costs more than every node held to that deadline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.core.cron import parse_cron, runs_per_week
from nvcregen.plan.model import TestUnit
from nvcregen.plan.packs import Pack, chunk_of, grouped
from nvcregen.spec.v1alpha1 import Site

PERIODIC_PREFIX = "periodic-"
START_SLACK_S = 600  # a period's Job: image pull and pod start, on top of its tests' timeouts
HOUR_MS = 3_600_000


@dataclass(frozen=True)
class PeriodicCost:
    """GPU-hours a week of a site's periodic runs.

    Attributes:
        schedule: The CronJob schedule.
        runs_per_week: Runs in an average week.
        worst_runs: Runs in the busiest calendar week.
        expected_gpu_hours: An average week, every test at its expected duration.
        worst_gpu_hours: The busiest week, every test to its timeout.
        preempted_gpu_hours: The busiest week, every node's pod evicted and restarted until
            its Job's deadline: what preemption can stretch a week to, at most.
        gpus: GPUs a period runs on (every node of its packs, each once).

    """

    schedule: str
    runs_per_week: float
    worst_runs: int
    expected_gpu_hours: float
    worst_gpu_hours: float
    preempted_gpu_hours: float
    gpus: int


def periodic_packs(site: Site, test_units: Sequence[TestUnit]) -> list[Pack]:
    """The node packs of the periodic stages: a stage's tests of one image, in plan order.

    Named `periodic-<n>` within their stage (a one-shot pack is `pack-<n>`); a pack of one
    test is still a pack, so every periodic run has the same form.
    """
    periodic = site.spec.readiness.periodic
    if periodic is None:
        return []
    stages = set(periodic.stages)

    def key(unit: TestUnit) -> tuple[object, ...] | None:
        if unit.stage.name in stages and unit.nodes_per_job == 1:
            return (unit.stage.name, unit.image)
        return None

    return grouped(test_units, key, PERIODIC_PREFIX, chunk_of(site))


def job_deadline_s(pack: Pack) -> int:
    """A period's Job deadline: every test of the pack to its timeout, and the pod's start."""
    return -(-pack.timeout_ms // 1000) + START_SLACK_S


def periodic_cost(site: Site, test_units: Sequence[TestUnit]) -> PeriodicCost | None:
    """What the site's periodic runs cost a week; None without `readiness.periodic`."""
    periodic = site.spec.readiness.periodic
    if periodic is None:
        return None
    average, worst = runs_per_week(parse_cron(periodic.schedule))
    packs = periodic_packs(site, test_units)
    expected = worst_run = preempted = 0.0
    nodes: dict[tuple[str, str], int] = {}  # the GPUs of each node a period runs on
    for pack in packs:
        pool = pack.first.pool
        nodes |= {(pool.spec.name, node): pool.gpus_per_node for node in pool.spec.nodes or []}
        pack_gpus = len(pool.spec.nodes or []) * pool.gpus_per_node
        expected += pack.expected_ms / HOUR_MS * pack_gpus
        worst_run += pack.timeout_ms / HOUR_MS * pack_gpus
        preempted += job_deadline_s(pack) / 3600 * pack_gpus
    return PeriodicCost(
        periodic.schedule,
        average,
        worst,
        expected * average,
        worst_run * worst,
        preempted * worst,
        sum(nodes.values()),
    )
