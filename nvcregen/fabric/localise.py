"""Narrowing a failure to one node or one link (two leaves), round by round (pure).

One fault at a time: a group fails when it holds the faulty node, or when its nodes sit
under both leaves of the faulty link (their traffic crosses its uplinks). What a round
says is kept as hypotheses: suspect nodes (in every failing group, in no passing one)
and suspect links (leaf pairs every failing group spans and no passing group spans).

Each retest round: while nodes are suspect, each leaf holding suspects tests them
inside that leaf (no uplink is crossed, so only a node can fail it): all of a leaf's
suspects when several leaves hold some, else the first half. A lone suspect runs beside
a cleared node of the same leaf. Once no node is suspect, links are told apart with
cleared nodes, one under each leaf of a set chosen to hold about half the suspect
links: such a group fails only if both leaves of the faulty link are in the set. A
fault is named when one hypothesis is left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Group = tuple[str, ...]
Link = tuple[str, str]


@dataclass(frozen=True)
class Knowledge:
    """What the results so far leave possible."""

    suspects: tuple[str, ...]
    links: frozenset[Link]
    cleared: frozenset[str]

    def named(self) -> str | None:
        """`node X`, `link A,B`, or `nothing` once one (or no) hypothesis is left; else None."""
        if len(self.suspects) + len(self.links) > 1:
            return None
        if self.suspects:
            return f"node {self.suspects[0]}"
        if self.links:
            a, b = next(iter(self.links))
            return f"link {a},{b}"
        return "nothing"


def links_of(group: Iterable[str], leaf: Mapping[str, str]) -> set[Link]:
    """The leaf pairs a group's traffic crosses: every pair of leaves it has nodes under."""
    leaves = sorted({leaf[n] for n in group if n in leaf})
    return {(a, b) for i, a in enumerate(leaves) for b in leaves[i + 1 :]}


def learn(
    known: Knowledge | None, results: Sequence[tuple[Group, bool]], leaf: Mapping[str, str]
) -> Knowledge:
    """Fold one round's results (group, failed) into what is known (None: nothing yet)."""
    suspects: list[str] | None = list(known.suspects) if known else None
    links: set[Link] | None = set(known.links) if known else None
    cleared = set(known.cleared) if known else set()
    for group, failed in results:
        if not failed:
            continue
        inside = set(group)
        suspects = [n for n in (suspects if suspects is not None else group) if n in inside]
        used = links_of(group, leaf)
        links = (links & used) if links is not None else used
    for group, failed in results:
        if not failed:
            cleared.update(group)
    kept = [n for n in suspects or () if n not in cleared]
    passed = set().union(*(links_of(g, leaf) for g, f in results if not f))
    return Knowledge(tuple(kept), frozenset((links or set()) - passed), frozenset(cleared))


def next_round(known: Knowledge, leaf: Mapping[str, str], nodes: Sequence[str]) -> list[Group]:
    """The retest groups of the next round; [] when a fault is named or nothing can tell."""
    if known.named() is not None:
        return []
    if known.suspects:
        return _node_round(known, leaf, nodes)
    return _link_round(known, leaf, nodes)


def _node_round(known: Knowledge, leaf: Mapping[str, str], nodes: Sequence[str]) -> list[Group]:
    by_leaf: dict[str, list[str]] = {}
    for node in known.suspects:
        by_leaf.setdefault(leaf.get(node, ""), []).append(node)
    groups = []
    for under, members in by_leaf.items():
        tested = members if len(by_leaf) > 1 else members[: (len(members) + 1) // 2]
        if len(tested) == 1:
            partner = _cleared_under(under, known, leaf, nodes)
            tested = tested + ([partner] if partner else [])
        groups.append(tuple(tested))
    return groups


def _link_round(known: Knowledge, leaf: Mapping[str, str], nodes: Sequence[str]) -> list[Group]:
    """One group of cleared nodes, one per leaf of a set holding about half the links."""
    ordered = sorted({x for link in known.links for x in link})
    chosen: list[str] = []
    inside = 0
    for candidate in ordered:
        chosen.append(candidate)
        inside = sum(1 for a, b in known.links if a in chosen and b in chosen)
        if inside * 2 >= len(known.links):
            break
    if inside == len(known.links):  # the set holds every link: its result would tell nothing
        chosen = list(min(known.links))
    group = [_cleared_under(under, known, leaf, nodes) for under in chosen]
    if any(node is None for node in group):
        return []  # a leaf with no cleared node left: nothing can tell the links apart
    return [tuple(n for n in group if n is not None)]


def _cleared_under(
    under: str, known: Knowledge, leaf: Mapping[str, str], nodes: Sequence[str]
) -> str | None:
    """The first cleared node under a leaf, in pool order (None when there is none)."""
    return next((n for n in nodes if n in known.cleared and leaf.get(n, "") == under), None)
