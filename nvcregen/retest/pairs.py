"""Which nodes to retest, and with whom (pure): suspects paired with cleared nodes.

A suspect node was only in failing groups of a multi-node test, so the failure may be
its own, its partner's or the link's. Running it again beside a node that passed the
same kind of test tells which: a suspect that fails beside a cleared node is the one to
repair; one that passes was failed by its partner or the link. Groups are the smallest
a multi-node test runs (two nodes), one suspect and one cleared node each, cleared
nodes taken from the suspect's own pool in plan order. When there are fewer cleared
nodes than suspects, the suspects are retested in batches, one stage per batch, the
cleared nodes reused in each. A node that failed alone needs no retest: the report
already names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.results.nodes import NodeVerdict


@dataclass(frozen=True)
class Pair:
    """One retest group: a suspect and the cleared node it runs beside."""

    suspect: str
    cleared: str


@dataclass(frozen=True)
class Batch:
    """Pairs that run as one stage, and the (stage, test) failures they retest."""

    pairs: tuple[Pair, ...]
    tests: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RetestPlan:
    """What to retest, and what needs none."""

    batches: tuple[Batch, ...]
    failed: tuple[NodeVerdict, ...]
    unpaired: tuple[str, ...]  # suspects with no cleared node in their pool


def failing_tests(node: NodeVerdict) -> list[tuple[str, str]]:
    """The (stage, test) of every failing multi-node group a suspect was in."""
    found = [(r.stage, r.test) for r in node.runs if r.word == "fail" and len(r.nodes) > 1]
    return list(dict.fromkeys(found))


def plan_retest(nodes: Sequence[NodeVerdict], pool_of: dict[str, str]) -> RetestPlan:
    """Pair each suspect with a cleared node of its pool, in batches of distinct partners.

    Args:
        nodes: The archive's node verdicts.
        pool_of: Each node's pool in the site (nodes outside the site are not paired).

    """
    suspects = [n for n in nodes if n.status == "suspect"]
    cleared = [n.node for n in nodes if n.status == "cleared"]
    batches: list[Batch] = []
    unpaired: list[str] = []
    by_pool: dict[str, list[NodeVerdict]] = {}
    for node in suspects:
        by_pool.setdefault(pool_of.get(node.node, ""), []).append(node)
    for pool, members in by_pool.items():
        partners = [c for c in cleared if pool and pool_of.get(c) == pool]
        if not partners:
            unpaired += [m.node for m in members]
            continue
        for start in range(0, len(members), len(partners)):
            chunk = members[start : start + len(partners)]
            pairs = tuple(Pair(m.node, c) for m, c in zip(chunk, partners, strict=False))
            tests = tuple(dict.fromkeys(t for m in chunk for t in failing_tests(m)))
            batches.append(Batch(pairs, tests))
    failed = tuple(n for n in nodes if n.status == "failed")
    return RetestPlan(tuple(batches), failed, tuple(unpaired))
