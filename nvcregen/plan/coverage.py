"""What each stage of a plan covers of its pool: nodes, leaf pairs, rounds (pure).

Fabric-aware stages have their groups; other inter-node stages on named nodes run
consecutive groups of `nodesPerJob` (as NVCRE and trainer mode split a pool); intra-node
stages run every node alone. Leaf pairs count only on a pool placed by the inventory.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.fabric.drill import PlanRound
from nvcregen.fabric.groups import Coverage, Group, coverage
from nvcregen.fabric.placement import Placement
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit


def unit_groups(unit: TestUnit) -> tuple[tuple[Group, ...], int]:
    """A unit's node groups on named nodes, and in how many rounds they run (() unnamed)."""
    if unit.grouping is not None:
        return unit.grouping.groups, len(unit.grouping.rounds)
    nodes = unit.pool.spec.nodes
    if nodes is None:
        return (), 1
    size = unit.nodes_per_job
    return tuple(tuple(nodes[i : i + size]) for i in range(0, len(nodes) - size + 1, size)), 1


def units_coverage(units: Sequence[TestUnit]) -> Coverage | None:
    """The coverage of some units (a step's), None when none names its nodes."""
    groups: list[Group] = []
    rounds = 1
    pools: dict[str, TestUnit] = {}
    for unit in units:
        found, count = unit_groups(unit)
        groups += found
        rounds = max(rounds, count)
        pools.setdefault(unit.pool.spec.name, unit)
    named = [u.pool for u in pools.values() if u.pool.spec.nodes is not None]
    if not named:
        return None
    placement = next((p.placement for p in named if p.placement is not None), None)
    if placement is None:
        nodes = tuple(n for p in named for n in p.spec.nodes or ())
        placement = Placement(nodes, {}, {})
    return coverage(groups, placement, rounds)


def plan_rounds(test_units: Sequence[TestUnit]) -> list[PlanRound]:
    """The plan's rounds, stage by stage, as `nvcregen drill` replays them.

    A stage's groups are those of its tests (they share them); a job takes the stage's
    longest expected test. A pair test (RDMA rails between two nodes) pairs those groups:
    its pairs run as rounds of their own after the stage's other groups, a job its test.
    A stage on a selector pool (nodes unnamed) is left out.
    """
    by_stage: dict[tuple[int, bool], list[TestUnit]] = {}
    for unit in test_units:
        by_stage.setdefault((unit.stage_index, kind_of(unit.test).pair), []).append(unit)
    found: list[PlanRound] = []
    for _, units in sorted(by_stage.items(), key=lambda item: item[0]):
        first = units[0]
        job_ms = max(u.expected_ms for u in units)
        gpus = first.pool.gpus_per_node
        if first.grouping is not None:
            found += [PlanRound(first.stage.name, r, job_ms, gpus) for r in first.grouping.rounds]
            continue
        groups, _ = unit_groups(first)
        if groups:
            found.append(PlanRound(first.stage.name, groups, job_ms, gpus))
    return found
