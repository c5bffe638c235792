"""Drift between a site's inventory and its live nodes, as findings (pure).

`check --server` and `collect` both call `inventory_drift` with the nodes they read:
NVC770 a node of the inventory is gone, NVC771 it has fewer GPUs or NICs than recorded,
NVC772 its GPU product, a fabric label, or its driver or CUDA version changed (GPU feature
discovery's labels, older or newer, `fabric/inventory.py`; a version no label gives any
more is "not labelled"). Nodes the inventory does not list are not drift (another
site's, or new ones to inventory). `collect --from DIR` compares the nodes saved in DIR
(`collect/nodedrift.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.fabric.inventory import Inventory, InventoryNode
from nvcregen.spec.positions import Document

GONE = codes.NVC770.code
FEWER = codes.NVC771.code
CHANGED = codes.NVC772.code
HINT = "repair the node, or write the inventory again (`nvcregen inventory`) and review the diff"


@dataclass(frozen=True)
class Drift:
    """One difference: the node, its code, and what changed."""

    node: str
    code: str
    message: str


def inventory_drift(inventory: Inventory, live: Inventory) -> list[Drift]:
    """Every difference between the inventory and the live nodes, by node name."""
    found: list[Drift] = []
    for name, recorded in inventory.nodes.items():
        now = live.nodes.get(name)
        if now is None:
            found.append(Drift(name, GONE, f"node {name} of the inventory is gone"))
            continue
        found += list(_node_drift(recorded, now))
    return found


def _node_drift(recorded: InventoryNode, now: InventoryNode) -> Iterator[Drift]:
    name = recorded.name
    if recorded.gpus is not None and (now.gpus or 0) < recorded.gpus:
        yield Drift(
            name, FEWER, f"node {name} has {now.gpus or 0} GPUs, the inventory {recorded.gpus}"
        )
    for resource, count in recorded.nics.items():
        if now.nics.get(resource, 0) < count:
            have = now.nics.get(resource, 0)
            yield Drift(name, FEWER, f"node {name} has {have} {resource}, the inventory {count}")
    if recorded.product != now.product:
        yield Drift(
            name, CHANGED, f"node {name} is {now.product}, the inventory {recorded.product}"
        )
    for key in sorted(set(recorded.fabric) | set(now.fabric)):
        before, after = recorded.fabric.get(key), now.fabric.get(key)
        if before != after:
            yield Drift(name, CHANGED, f"node {name}: {key} is {after}, the inventory {before}")
    for what, before, after in (
        ("driver", recorded.driver, now.driver),
        ("CUDA", recorded.cuda, now.cuda),
    ):
        if before != after:
            shown, recorded_as = _version(after), _version(before)
            yield Drift(name, CHANGED, f"node {name}: {what} {shown}, the inventory {recorded_as}")


def _version(value: str | None) -> str:
    """A driver or CUDA version, or what its absence means: GFD labelled none."""
    return value if value is not None else "not labelled"


def drift_diagnostics(doc: Document, inventory: Inventory, live: Inventory) -> list[Diagnostic]:
    """The drift as warnings at each node's entry in the inventory file."""
    where = {
        str(item.get("name")): f"/nodes/{index}"
        for index, item in enumerate(
            doc.data.get("nodes") or [] if isinstance(doc.data, dict) else []
        )
        if isinstance(item, dict)
    }
    return [
        Diagnostic(
            doc.span(where.get(d.node, "")),
            Severity.WARNING,
            d.code,
            d.message,
            where.get(d.node, ""),
            HINT,
        )
        for d in inventory_drift(inventory, live)
    ]
