"""Fabric-aware groups and their coverage, on a fleet placed by its inventory."""

from __future__ import annotations

import time

from fabricfactory import fleet_inventory, fleet_site
from sitefactory import catalog, site
from timebounds import HANG

from nvcregen.fabric.groups import grouping_coverage, plan_groups
from nvcregen.fabric.placement import place
from nvcregen.plan.resolve import plan


def placed(count: int, leaves: int):  # type: ignore[no-untyped-def]
    spec = site(fleet_site(count)).spec.node_pools[0]
    found = place(spec, fleet_inventory(count, leaves))
    assert found is not None
    return found


def test_1024_nodes_in_32_leaves_cross_every_leaf_pair_in_31_rounds() -> None:
    start = time.perf_counter()
    grouping = plan_groups("cross-leaf", placed(1024, 32))
    covered = grouping_coverage(grouping)
    assert (covered.leaf_pairs, covered.leaf_pairs_total, covered.rounds) == (496, 496, 31)
    assert (covered.nodes, covered.nodes_total) == (1024, 1024)
    for round_ in grouping.rounds:  # a round's groups are disjoint and use every node
        nodes = [n for g in round_ for n in g]
        assert len(nodes) == len(set(nodes)) == 1024
    assert time.perf_counter() - start < HANG  # a hang guard; speed is in make bench


def test_leaf_accelerator_and_pool_groups() -> None:
    placement = placed(16, 4)
    leaf = grouping_coverage(plan_groups("leaf", placement))
    assert (leaf.nodes, leaf.leaf_pairs, leaf.leaf_pairs_total, leaf.rounds) == (16, 0, 6, 1)
    assert [len(g) for g in plan_groups("leaf", placement).groups] == [4, 4, 4, 4]
    assert plan_groups("accelerator", placement).groups == ()  # one node per NVLink domain
    whole = plan_groups("pool", placement)
    assert whole.groups == (placement.nodes,)
    assert grouping_coverage(whole).leaf_pairs == 6


def test_a_planned_stage_carries_its_groups_and_their_size() -> None:
    units = plan(site(fleet_site(16)), catalog(), fleet_inventory(16, 4))
    (unit,) = units
    assert unit.grouping is not None and len(unit.grouping.rounds) == 3
    assert unit.nodes_per_job == 8 and unit.mode == "workloadrun"  # NVCRE cannot pair leaves
    without = plan(site(fleet_site(16)), catalog())
    assert without[0].grouping is None
