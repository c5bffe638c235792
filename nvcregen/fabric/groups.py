"""Fabric-aware node groups of an inter-node stage, and what they cover (pure).

`leaf`: one group per leaf. `cross-leaf`: the round-robin tournament over leaves, a group
being both leaves' nodes, so every leaf pair's uplinks carry one group's traffic and a
round's groups run side by side. `accelerator`: one group per NVLink domain. `pool` and
`diagnose`: the pool as one group (NVCRE's diagnose splits it itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.fabric.placement import Placement
from nvcregen.fabric.tournament import leaf_rounds

Group = tuple[str, ...]
GROUP_KINDS = ("leaf", "cross-leaf", "accelerator", "pool", "diagnose")


@dataclass(frozen=True)
class Grouping:
    """A stage's groups in rounds: a round's groups are disjoint and may run together."""

    kind: str
    rounds: tuple[tuple[Group, ...], ...]
    placement: Placement

    @property
    def groups(self) -> tuple[Group, ...]:
        """Every group, round after round."""
        return tuple(g for r in self.rounds for g in r)

    @property
    def largest(self) -> int:
        """The most nodes in one group (0 without groups)."""
        return max((len(g) for g in self.groups), default=0)


@dataclass(frozen=True)
class Coverage:
    """What a step exercises: nodes in some group, leaf pairs sharing a group, and rounds."""

    nodes: int
    nodes_total: int
    leaf_pairs: int
    leaf_pairs_total: int
    rounds: int

    def to_json(self) -> dict[str, int]:
        """The `coverage` object of `plan --format json`."""
        return {
            "nodes": self.nodes,
            "nodesTotal": self.nodes_total,
            "leafPairs": self.leaf_pairs,
            "leafPairsTotal": self.leaf_pairs_total,
            "rounds": self.rounds,
        }

    def text(self) -> str:
        """`1024/1024 nodes, 496/496 leaf pairs in 31 rounds`."""
        pairs = f", {self.leaf_pairs}/{self.leaf_pairs_total} leaf pairs" * bool(
            self.leaf_pairs_total
        )
        rounds = f" in {self.rounds} rounds" * (self.rounds > 1)
        return f"{self.nodes}/{self.nodes_total} nodes{pairs}{rounds}"


def plan_groups(kind: str, placement: Placement) -> Grouping:
    """The groups of one kind over a placed pool; groups of fewer than two nodes are dropped."""
    if kind == "leaf":
        rounds = [tuple(g for g in placement.by_leaf.values() if len(g) > 1)]
    elif kind == "cross-leaf":
        by_leaf = placement.by_leaf
        rounds = [
            tuple(by_leaf[a] + by_leaf[b] for a, b in pairs) for pairs in leaf_rounds(list(by_leaf))
        ]
    elif kind == "accelerator":
        rounds = [tuple(g for g in placement.by_accelerator.values() if len(g) > 1)]
    else:
        rounds = [(placement.nodes,)]
    return Grouping(kind, tuple(r for r in rounds if r), placement)


def paired(grouping: Grouping) -> Grouping:
    """The same grouping as pairs of nodes, round by round (a pair kind's runs).

    A group under two leaves (a `cross-leaf` group) pairs each node of its first leaf with
    the node at the same place under the second, so every pair crosses the uplinks the
    group was made for; any other group (a leaf, an NVLink domain, the pool) pairs its
    nodes in order. A node left without a partner is not tested, as nodes after the last
    full group of `nodesPerJob` are not.
    """
    rounds = tuple(
        tuple(pair for group in groups for pair in _pairs(group, grouping.placement))
        for groups in grouping.rounds
    )
    return Grouping(grouping.kind, tuple(r for r in rounds if r), grouping.placement)


def _pairs(group: Group, placement: Placement) -> list[Group]:
    leaves: dict[str, list[str]] = {}
    for node in group:
        leaves.setdefault(placement.leaf.get(node, ""), []).append(node)
    if len(leaves) == 2 and "" not in leaves:
        first, second = leaves.values()
        return [(a, b) for a, b in zip(first, second, strict=False)]
    return [(group[i], group[i + 1]) for i in range(0, len(group) - 1, 2)]


def coverage(groups: Sequence[Group], placement: Placement, rounds: int = 1) -> Coverage:
    """What some groups cover of a placed pool: linear in nodes, quadratic only in leaves."""
    seen: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for group in groups:
        seen.update(group)
        leaves = sorted({placement.leaf[n] for n in group if n in placement.leaf})
        pairs.update((a, b) for i, a in enumerate(leaves) for b in leaves[i + 1 :])
    return Coverage(
        len(seen & set(placement.nodes)),
        len(placement.nodes),
        len(pairs),
        placement.leaf_pairs_total,
        rounds,
    )


def grouping_coverage(grouping: Grouping) -> Coverage:
    """The coverage of a whole grouping, with its number of rounds."""
    return coverage(grouping.groups, grouping.placement, len(grouping.rounds))
