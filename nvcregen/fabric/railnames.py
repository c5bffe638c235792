"""A rail named by its cable: the switch port the inventory's cabling map gives an HCA (pure).

`nvcregen inventory --cabling` records, per node, the switch port each HCA is cabled to
(`fabric/cabling.py`). The RDMA rails and pair verdicts and the link-counter verdicts
append it to the node and HCA they name (`gpu-007 mlx5_3 (leaf-07 Ethernet1/12)`); where
the inventory does not know it, nothing is appended, so those messages stay as they were.
"""

from __future__ import annotations

from nvcregen.fabric.inventory import Inventory, SwitchPort


def switch_port(inventory: Inventory | None, node: str, hca: str) -> SwitchPort | None:
    """The switch port `node`'s `hca` is cabled to, when the inventory knows it."""
    if inventory is None:
        return None
    found = inventory.nodes.get(node)
    return None if found is None else found.cabling.get(hca)


def cabled(inventory: Inventory | None, node: str, hca: str) -> str:
    """` (leaf-07 Ethernet1/12)` after one node's HCA, or nothing when it is not known."""
    end = switch_port(inventory, node, hca)
    return "" if end is None else f" ({end})"


def pair_cabled(inventory: Inventory | None, nodes: tuple[str, str], hca: str) -> str:
    """The switch ports of the ends of a pair's rail that the inventory knows.

    ` (node-a: leaf-07 Ethernet1/12; node-b: leaf-08 Ethernet1/3)`; nothing when neither.
    """
    known = [(n, switch_port(inventory, n, hca)) for n in nodes]
    shown = [f"{node}: {end}" for node, end in known if end is not None]
    return f" ({'; '.join(shown)})" if shown else ""
