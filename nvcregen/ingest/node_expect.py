"""A pool's stated node configuration (`nodePools[].expect`), as the node-health gate reads it."""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.ingest.node_health import Expectations
from nvcregen.spec.v1alpha1 import NodePool


def expectations_for(
    pool: NodePool, gpus_per_node: int | None, source: str, products: Sequence[str] = ()
) -> Expectations:
    """The pool's expectations.

    `gpus_per_node` is its resolved count (its own or the catalog's), `products` its GPU
    product labels (its own and the catalog's).

    The hook for a node inventory (issue 22): an inventory entry that states a node's
    driver or VBIOS would give its own `Expectations` here, per node, before the pool's.
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
        products=tuple(dict.fromkeys(products)),
        source=source,
    )
