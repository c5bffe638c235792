"""The domain summary of a site change: what it does in hardware and test-plan terms.

A reviewer reads "GPUs under test 16 -> 24", "two-node: + nccl-alltoall" and "worst case
GPU-hours 96 -> 160" here before the object diff; the facts come from the site's `Plan`
(`plan/resolved.py`: its model, units and budget), not from the YAML that moved.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nvcregen.check.replayed import replay_texts
from nvcregen.core.metrics import THRESHOLD_FIELDS
from nvcregen.emit.naming import IMAGES_FILE
from nvcregen.plan.model import Pool
from nvcregen.plan.resolved import Plan
from nvcregen.replay.context import shown
from nvcregen.replay.report import worst_gpu_hours, worst_wall
from nvcregen.replay.timeline import plan_view
from nvcregen.spec.v1alpha1 import JobSetDependency, Threshold, TrainerDependency

Tree = dict[str, str]


@dataclass(frozen=True)
class Facts:
    """What one valid site puts under test, with what, at what cost: a view of its Plan.

    `values` holds the scalar facts as shown (label -> text), in display order.
    """

    values: dict[str, str]
    stages: dict[str, tuple[str, ...]]
    thresholds: dict[str, str]
    images: tuple[str, ...]


@dataclass(frozen=True)
class Change:
    """One fact on both sides; None where a side has no value (a site added or removed)."""

    label: str
    old: str | None
    new: str | None

    @property
    def changed(self) -> bool:
        """Whether the two sides differ."""
        return self.old != self.new


@dataclass(frozen=True)
class StageTests:
    """The tests one stage gained and lost."""

    stage: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    """The domain summary of one site: every fact (changed or not) and what moved."""

    facts: tuple[Change, ...] = ()
    tests: tuple[StageTests, ...] = ()
    thresholds: tuple[Change, ...] = ()
    images_added: tuple[str, ...] = ()
    images_removed: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether anything in the summary differs between the sides."""
        moved = self.tests or self.thresholds or self.images_added or self.images_removed
        return bool(moved) or any(c.changed for c in self.facts)


def site_facts(plan: Plan, tree: Tree) -> Facts:
    """Facts of a site compiled to `tree` from `plan` (`CompileResult.plan`: planned once)."""
    site, budget = plan.site, plan.budget
    pools = {u.pool.spec.name: u.pool for u in plan.units}
    window = site.spec.readiness.window
    spec = site.spec
    values = {
        "GPUs under test": _count(pools.values(), gpus=True),
        "nodes under test": _count(pools.values(), gpus=False),
        "node pools": ", ".join(f"{p.spec.name} ({p.hardware.model})" for p in pools.values()),
        "rounds": str(spec.readiness.rounds),
        "trigger": spec.readiness.trigger,
        "worst-case GPU-hours": f"{budget.worst_gpu_hours}; budget {window.gpu_hours:g}",
        "worst-case wall time": f"{budget.worst_wall}; deadline {window.deadline}",
        **_replayed(tree, plan),
        "concurrent jobs, retests": f"{window.max_concurrent_jobs}, {window.retests}",
        "NVCRE": f"{spec.nvcre.version} (chart {spec.nvcre.chart.version})",
        "Trainer": _dependency(spec.dependencies.trainer),
        "JobSet": _dependency(spec.dependencies.jobset),
    }
    stages = {s.name: tuple(s.tests) for s in spec.readiness.stages}
    return Facts(values, stages, _thresholds(spec.thresholds), _images(tree.get(IMAGES_FILE, "")))


def _replayed(tree: Tree, plan: Plan) -> dict[str, str]:
    """The plan's wall time and GPU-hours as the replay of its objects has them."""
    if not tree:
        return {}
    view = plan_view(replay_texts(tree, plan))
    return {
        "plan wall time (replayed)": (
            "never ends"
            if view.expected_ms is None
            else f"{shown(view.expected_ms)}, worst case {worst_wall(view)}"
        ),
        "plan GPU-hours (replayed)": f"{view.gpu_hours:.1f}, worst case {worst_gpu_hours(view)}",
    }


def _count(pools: Iterable[Pool], *, gpus: bool) -> str:
    total = 0
    for pool in pools:
        if pool.node_count is None:
            return "unknown (a selector pool without nodeCount)"
        total += pool.node_count * (pool.gpus_per_node if gpus else 1)
    return str(total)


def _dependency(dependency: TrainerDependency | JobSetDependency) -> str:
    return f"{dependency.version} ({'managed' if dependency.managed else 'not managed'})"


def _thresholds(thresholds: list[Threshold]) -> dict[str, str]:
    """Each threshold by what it applies to, with what it requires."""
    found: dict[str, str] = {}
    for threshold in thresholds:
        where = [
            threshold.scope,
            threshold.transport or "",
            f"at {threshold.at}" if threshold.at else "",
        ]
        label = f"{threshold.test} ({', '.join(w for w in where if w)})"
        while label in found:
            label += " (again)"
        bounds = [f"{k} {v}" for k in THRESHOLD_FIELDS if (v := getattr(threshold, k))]
        if threshold.baseline:
            bounds.append(f"baseline {threshold.baseline}")
        found[label] = "; ".join(bounds) or "no bound"
    return found


def _images(text: str) -> tuple[str, ...]:
    return tuple(
        line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def summarize(old: Facts | None, new: Facts | None) -> Summary:
    """Compare the facts of two sides of a site (None: the site is not on that side)."""
    before = old.values if old else {}
    after = new.values if new else {}
    facts = tuple(Change(k, before.get(k), after.get(k)) for k in {**before, **after})
    old_stages = old.stages if old else {}
    new_stages = new.stages if new else {}
    tests = []
    for stage in {**old_stages, **new_stages}:
        was, now = old_stages.get(stage, ()), new_stages.get(stage, ())
        added = tuple(t for t in now if t not in was)
        removed = tuple(t for t in was if t not in now)
        if added or removed:
            tests.append(StageTests(stage, added, removed))
    was_t = old.thresholds if old else {}
    now_t = new.thresholds if new else {}
    thresholds = tuple(
        Change(k, was_t.get(k), now_t.get(k))
        for k in {**was_t, **now_t}
        if was_t.get(k) != now_t.get(k)
    )
    was_i, now_i = set(old.images if old else ()), set(new.images if new else ())
    return Summary(
        facts,
        tuple(tests),
        thresholds,
        tuple(sorted(now_i - was_i)),
        tuple(sorted(was_i - now_i)),
    )
