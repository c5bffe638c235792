"""The replay's indexed searches give exactly the answers of trying every pair (issue #22).

At fleet size the replay cannot try every run against every run, nor every node for every
pod: `ordering._Rivals` finds an overlapping run's rival by index and `NodeIndex` narrows
a pod's candidate nodes. Each is checked here against the pairwise definition it replaced,
on shipped trees broken in the ways that make runs overlap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from replayfactory import SHIPPED, WAVE, edited, shipped, shipped_facts

from nvcregen.plan.facts import HOSTNAME, Node
from nvcregen.replay.context import Context
from nvcregen.replay.model import PodSet, Run, TreeObject
from nvcregen.replay.ordering import _Rivals
from nvcregen.replay.placement import Cluster, NodeIndex
from nvcregen.replay.selectors import Constraint, Requirement, Term
from nvcregen.replay.site import replay_context

LAB, TRAINER, L20 = SHIPPED


def _earlier(ctx: Context, first: Run, second: Run) -> bool:
    """The definition: an earlier stage (by plan rank, then name), or an earlier round."""
    rank_a, rank_b = ctx.facts.stage_rank(first.stage), ctx.facts.stage_rank(second.stage)
    if first.stage != second.stage:
        return (rank_a, first.stage) < (rank_b, second.stage)
    if first.test != second.test or first.round is None or second.round is None:
        return False
    return _number(first.round) < _number(second.round)


def _number(value: str) -> int:
    return int(value) if value.isdigit() else 0


def _pairwise(ctx: Context) -> list[Run | None]:
    """Every run's rival as the replay found it before the index: every pair tried."""
    return [
        next((r for r in ctx.runs if _earlier(ctx, r, run) and ctx.may_overlap(r, run)), None)
        for run in ctx.runs
    ]


def _context(tree: tuple[TreeObject, ...], site: str) -> Context:
    return replay_context(tree, shipped_facts(site))


def _wave(value: str) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        obj["metadata"].setdefault("annotations", {})[WAVE] = value

    return change


def _no_gitops(tree: tuple[TreeObject, ...]) -> tuple[TreeObject, ...]:
    """The tree with its Applications dropped: applied wave by wave."""
    return tuple(o for o in tree if o.kind not in {"Application", "Kustomization"})


def _elsewhere(obj: dict[str, Any]) -> None:
    """An Application applying another folder: its runs become steps of their own."""
    obj["spec"]["source"]["path"] = "out/elsewhere"


def _readiness_app(item: TreeObject) -> bool:
    return item.kind == "Application" and item.name == "h20-3e-trainer-readiness"


BROKEN: dict[str, tuple[str, Callable[[], tuple[TreeObject, ...]]]] = {
    "shipped lab": (LAB, lambda: shipped(LAB)),
    "shipped trainer": (TRAINER, lambda: shipped(TRAINER)),
    "lab: every run in wave 1": (
        LAB,
        lambda: edited(shipped(LAB), lambda o: "/readiness/" in o.file, _wave("1")),
    ),
    "trainer: round 2 in round 1's wave": (
        TRAINER,
        lambda: edited(shipped(TRAINER), lambda o: "/round-2/" in o.file, _wave("1")),
    ),
    "trainer: stages swapped": (
        TRAINER,
        lambda: edited(
            edited(shipped(TRAINER), lambda o: "/02-two-node/" in o.file, _wave("1")),
            lambda o: "/01-single-node/round-1/" in o.file,
            _wave("9"),
        ),
    ),
    "trainer: runs no Application applies": (
        TRAINER,
        lambda: edited(shipped(TRAINER), _readiness_app, _elsewhere),
    ),
    "l20: no GitOps object, one wave": (
        L20,
        lambda: edited(_no_gitops(shipped(L20)), lambda o: "/readiness/" in o.file, _wave("3")),
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_indexed_rival_is_the_first_pairwise_rival(case: str) -> None:
    site, tree = BROKEN[case]
    ctx = _context(tree(), site)
    rivals = _Rivals(ctx)
    expected = _pairwise(ctx)
    assert [rivals.first(run) for run in ctx.runs] == expected
    if case.startswith("shipped"):
        assert expected == [None] * len(ctx.runs)
    else:
        assert any(r is not None for r in expected), "the broken tree must make runs overlap"


def _nodes() -> list[Node]:
    nodes = []
    for index in range(12):
        name = f"gpu-{index:02d}"
        labels = {"pool": "a" if index < 8 else "b", "rack": str(index % 3), HOSTNAME: name}
        nodes.append(Node(name, labels["pool"], labels, {"nvidia.com/gpu": 8}))
    return nodes


def _in(key: str, *values: str) -> Requirement:
    return Requirement(key, "In", values)


CONSTRAINTS = {
    "anything": Constraint(),
    "a selector": Constraint((("pool", "a"),)),
    "a hostname selector": Constraint(((HOSTNAME, "gpu-03"),)),
    "a missing label": Constraint((("zone", "x"),)),
    "node names": Constraint(names=frozenset({"gpu-09", "gpu-02", "nowhere"})),
    "names and a selector": Constraint((("pool", "b"),), names=frozenset({"gpu-02", "gpu-09"})),
    "a name field": Constraint(terms=(Term(fields=(_in("metadata.name", "gpu-05", "gpu-01"),)),)),
    "terms OR-ed": Constraint(
        terms=(Term((_in("rack", "1"),)), Term(fields=(_in("metadata.name", "gpu-00"),)))
    ),
    "a term naming none": Constraint(
        terms=(Term((_in("rack", "2"),)), Term((Requirement("rack", "NotIn", ("0",)),)))
    ),
    "requirements AND-ed": Constraint(
        terms=(Term((_in("pool", "a", "b"), _in("rack", "0")), (_in("metadata.name", "gpu-06"),)),)
    ),
    "an In with no value": Constraint(terms=(Term((_in("rack"),)),)),
    "Exists": Constraint(terms=(Term((Requirement("rack", "Exists"),)),)),
}


@pytest.mark.parametrize("case", sorted(CONSTRAINTS))
@pytest.mark.parametrize("flavor", [(), (("pool", "a"),), (("rack", "9"),)])
def test_the_node_index_narrows_to_the_nodes_every_node_check_allows(
    case: str, flavor: tuple[tuple[str, str], ...]
) -> None:
    nodes = sorted(_nodes(), key=lambda n: n.name)
    constraint = CONSTRAINTS[case]
    allowed = [
        n for n in nodes if constraint.allows(n) and all(n.labels.get(k) == v for k, v in flavor)
    ]
    possible = list(NodeIndex(nodes).possible(constraint, flavor))
    assert set(allowed) <= set(possible)
    assert possible == sorted(possible, key=lambda n: n.name)
    found = Cluster(_nodes()).eligible(PodSet("p", 1, {}, constraint), dict(flavor))
    assert list(found) == allowed


def test_a_named_node_is_tried_alone() -> None:
    nodes = _nodes()
    index = NodeIndex(sorted(nodes, key=lambda n: n.name))
    pinned = Constraint(terms=(Term((_in("pool", "a"),), (_in("metadata.name", "gpu-04"),)),))
    assert [n.name for n in index.possible(pinned, ())] == ["gpu-04"]
    assert len(index.possible(Constraint((("pool", "a"),)), ())) == 8
