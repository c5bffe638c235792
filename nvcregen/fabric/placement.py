"""Where a pool's nodes sit in its fabric: leaf and NVLink domain, from the inventory (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from nvcregen.fabric.inventory import Inventory
from nvcregen.spec.v1alpha1 import NodePool


@dataclass(frozen=True)
class Placement:
    """A pool's nodes in pool order, each node's leaf and (if labelled) NVLink domain."""

    nodes: tuple[str, ...]
    leaf: dict[str, str]
    accelerator: dict[str, str]

    @cached_property
    def by_leaf(self) -> dict[str, tuple[str, ...]]:
        """The nodes under each leaf, leaves sorted, nodes in pool order."""
        found: dict[str, list[str]] = {}
        for node in self.nodes:
            if node in self.leaf:
                found.setdefault(self.leaf[node], []).append(node)
        return {leaf: tuple(found[leaf]) for leaf in sorted(found)}

    @cached_property
    def by_accelerator(self) -> dict[str, tuple[str, ...]]:
        """The nodes of each NVLink domain, domains sorted, nodes in pool order."""
        found: dict[str, list[str]] = {}
        for node in self.nodes:
            if node in self.accelerator:
                found.setdefault(self.accelerator[node], []).append(node)
        return {domain: tuple(found[domain]) for domain in sorted(found)}

    @property
    def leaf_pairs_total(self) -> int:
        """How many leaf pairs the pool's fabric has: L(L-1)/2."""
        count = len(self.by_leaf)
        return count * (count - 1) // 2


def place(pool: NodePool, inventory: Inventory | None) -> Placement | None:
    """The placement of a pool that has a fabric and names its nodes; None otherwise.

    Nodes the inventory lacks, or that lack the leaf label, are left out of the maps
    (validation reports them, NVC391 and NVC394).
    """
    if pool.fabric is None or pool.nodes is None or inventory is None:
        return None
    levels = pool.fabric.levels
    leaf: dict[str, str] = {}
    accelerator: dict[str, str] = {}
    for name in pool.nodes:
        node = inventory.nodes.get(name)
        if node is None:
            continue
        if levels.leaf in node.fabric:
            leaf[name] = node.fabric[levels.leaf]
        if levels.accelerator is not None and levels.accelerator in node.fabric:
            accelerator[name] = node.fabric[levels.accelerator]
    return Placement(tuple(pool.nodes), leaf, accelerator)
