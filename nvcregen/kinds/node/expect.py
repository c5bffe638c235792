"""What a node must run: its pool's `expect`, filled per node from the site's inventory.

The pool's statement wins: the inventory's entry for the node gives the driver and CUDA
versions GPU feature discovery labelled (`nvidia.com/cuda.driver-version.*`), and its GPU
count, only where the pool states none (a GPU count the pool states with `gpusPerNode`
wins too; the catalog's default does not). A node the inventory does not list is
reported (NVC822) and judged against the pool alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.fabric.inventory import Inventory
from nvcregen.kinds.node.health import Expectations
from nvcregen.spec.v1alpha1 import NodePool


@dataclass(frozen=True)
class NodeInventory:
    """A site's inventory as the node-health gate reads it: its file and its nodes."""

    file: str  # as the site names it (`spec.inventory`), for the findings' messages
    inventory: Inventory
    gpus_stated: bool  # the pool states `gpusPerNode`, which wins over the inventory's count


def expectations_for(
    pool: NodePool, gpus_per_node: int | None, source: str, products: Sequence[str] = ()
) -> Expectations:
    """The pool's expectations.

    `gpus_per_node` is its resolved count (its own or the catalog's), `products` its GPU
    product labels (its own and the catalog's).
    """
    stated = pool.expect
    return Expectations(
        driver=None if stated is None else stated.driver,
        cuda=None if stated is None else stated.cuda,
        vbios=None if stated is None else stated.vbios,
        gpus_per_node=gpus_per_node,
        pcie_gen=None if stated is None else stated.pcie_gen,
        pcie_width=None if stated is None else stated.pcie_width,
        mig=None if stated is None else stated.mig,
        source=source,
        products=tuple(dict.fromkeys(products)),
    )


def for_node(expected: Expectations, node: str, inventory: NodeInventory | None) -> Expectations:
    """One node's expectations: the pool's, with what it leaves unstated from the inventory."""
    if inventory is None:
        return expected
    entry = inventory.inventory.nodes.get(node)
    if entry is None:
        return dataclasses.replace(expected, inventory=inventory.file, unlisted=True)
    facts: set[str] = set()
    driver, cuda, gpus = expected.driver, expected.cuda, expected.gpus_per_node
    if driver is None and entry.driver is not None:
        driver = entry.driver
        facts.add("driver")
    if cuda is None and entry.cuda is not None:
        cuda = entry.cuda
        facts.add("cuda")
    if not inventory.gpus_stated and entry.gpus is not None:
        gpus = entry.gpus
        facts.add("gpus")
    return dataclasses.replace(
        expected,
        driver=driver,
        cuda=cuda,
        gpus_per_node=gpus,
        inventory=inventory.file,
        from_inventory=frozenset(facts),
    )
