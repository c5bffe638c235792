"""`rehearse --fail`: the node, or the link between two leaves, whose logs fail (pure).

`--fail NODE` names a node of the site (of its pools, as the twin plays them): every
section of every run holding it fails. `--fail LEAF-A,LEAF-B` names a link between two
leaves of the site's inventory (`spec.inventory`, the leaf of each node): every run
whose nodes sit under both leaves fails its NCCL figures. A site without an inventory
has no leaves, so a link is refused there, as is a name the site does not hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nvcregen.plan.model import Pool


@dataclass(frozen=True)
class Failing:
    """What fails: nodes, leaf pairs, and each node's leaf (for the pairs)."""

    nodes: frozenset[str] = frozenset()
    links: frozenset[frozenset[str]] = frozenset()
    leaves: dict[str, str] = field(default_factory=dict)


def failing(target: str | None, pools: Sequence[Pool], nodes: Sequence[str]) -> Failing | str:
    """What `--fail target` fails among the twin's `nodes`, or why it cannot (a message)."""
    if not target:
        return Failing()
    parts = [p.strip() for p in target.split(",")]
    if len(parts) == 1:
        if parts[0] not in nodes:
            return f"--fail {target}: not a node of the site (its nodes: {', '.join(nodes)})"
        return Failing(nodes=frozenset(parts))
    return _link(target, parts, pools)


def _link(target: str, parts: list[str], pools: Sequence[Pool]) -> Failing | str:
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        return f"--fail {target}: a node, or two different leaves as LEAF-A,LEAF-B"
    leaves = {n: leaf for p in pools if p.placement for n, leaf in p.placement.leaf.items()}
    if not leaves:
        return (
            f"--fail {target}: a link between two leaves needs the site's inventory"
            " (spec.inventory), which places nodes in leaves; this site has none"
        )
    unknown = [p for p in parts if p not in set(leaves.values())]
    if unknown:
        known = ", ".join(sorted(set(leaves.values())))
        return f"--fail {target}: {', '.join(unknown)} is no leaf of the inventory ({known})"
    return Failing(links=frozenset({frozenset(parts)}), leaves=leaves)
