"""Finding a fault: a node in at most 2 x log2(nodes) jobs, a link named as a link."""

from __future__ import annotations

import math

import pytest
from fabricfactory import fleet_inventory, fleet_site
from sitefactory import catalog, site

from nvcregen.fabric.drill import Fault, run_drill
from nvcregen.fabric.localise import Knowledge, learn, next_round
from nvcregen.plan.coverage import plan_rounds
from nvcregen.plan.resolve import plan


def fleet(count: int, leaves: int, groups: str = "cross-leaf"):  # type: ignore[no-untyped-def]
    units = plan(site(fleet_site(count, groups)), catalog(), fleet_inventory(count, leaves))
    placement = units[0].pool.placement
    assert placement is not None
    return plan_rounds(units), placement


@pytest.fixture(scope="module")
def big():  # type: ignore[no-untyped-def]
    return fleet(1024, 32)


@pytest.mark.parametrize("node", ["gpu-0000", "gpu-0517", "gpu-0999", "gpu-1023"])
def test_one_faulty_node_among_1024_within_20_jobs(big, node: str) -> None:  # type: ignore[no-untyped-def]
    rounds, placement = big
    drill = run_drill(rounds, Fault(node=node), placement.leaf, placement.nodes, 64)
    assert drill.named == f"node {node}" and drill.found
    assert drill.retest_jobs <= 2 * math.log2(1024)
    assert len(drill.plan_rounds) == 1  # a node fails the first round it is in


@pytest.mark.parametrize(
    ("a", "b"), [("leaf-00", "leaf-01"), ("leaf-03", "leaf-17"), ("leaf-00", "leaf-31")]
)
def test_a_faulty_link_is_named_as_a_link(big, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    rounds, placement = big
    drill = run_drill(rounds, Fault(link=(a, b)), placement.leaf, placement.nodes, 64)
    assert drill.named == f"link {a},{b}"
    assert drill.retest_jobs <= 2


def test_a_pool_wide_failure_finds_a_link_by_halving_leaf_sets() -> None:
    rounds, placement = fleet(64, 8, "pool")
    drill = run_drill(
        rounds, Fault(link=("leaf-02", "leaf-05")), placement.leaf, placement.nodes, 64
    )
    assert drill.named == "link leaf-02,leaf-05"
    node = run_drill(rounds, Fault(node="gpu-0042"), placement.leaf, placement.nodes, 64)
    assert node.named == "node gpu-0042"


def test_a_fault_no_group_touches_is_not_found() -> None:
    rounds, placement = fleet(16, 4, "leaf")
    drill = run_drill(
        rounds, Fault(link=("leaf-00", "leaf-01")), placement.leaf, placement.nodes, 8
    )
    assert not drill.found and drill.named.startswith("nothing")


def test_learning_keeps_only_what_every_failure_shares() -> None:
    leaf = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
    known = learn(None, [(("a1", "b1"), True), (("a1", "c1"), True), (("a2",), False)], leaf)
    assert known == Knowledge(("a1",), frozenset(), frozenset({"a2"}))
    assert known.named() == "node a1"
    assert next_round(known, leaf, list(leaf)) == []


def test_a_pair_test_adds_its_pairs_as_rounds_after_the_stages_groups() -> None:
    text = fleet_site(16, "cross-leaf").replace(
        "tests: [nccl-all-reduce]", "tests: [rdma-rails-pair, nccl-all-reduce]"
    )
    units = plan(site(text), catalog(), fleet_inventory(16, 4))
    placement = units[0].pool.placement
    assert placement is not None
    rounds = plan_rounds(units)
    nccl = next(u for u in units if u.test.name == "nccl-all-reduce")
    pairs = next(u for u in units if u.test.name == "rdma-rails-pair")
    assert [len(r.groups[0]) for r in rounds] == [8, 8, 8, 2, 2, 2]  # NCCL first, listed or not
    assert [r.job_ms for r in rounds] == [nccl.expected_ms] * 3 + [pairs.expected_ms] * 3
    for r in rounds[3:]:
        assert len(r.groups) == 8 and all(  # 2 leaf pairs of 4 node pairs
            placement.leaf[a] != placement.leaf[b] for a, b in r.groups
        )
    drill = run_drill(rounds, Fault(node="gpu-0005"), placement.leaf, placement.nodes, 64)
    assert drill.named == "node gpu-0005"
