"""`collect`'s drift notes: the site's inventory against the nodes (NVC770-NVC773).

From a cluster, the nodes are listed live (`cluster/nodes.py`); from a folder
(`collect --from DIR`), they are the Node objects saved in it (`kubectl get nodes -o
yaml > DIR/nodes.yaml`), read as every other export is and just as untrusted: names
checked, labels bounded (`fabric/inventory.py`). Saved nodes are taken as every node
the cluster had, so an inventory node missing from them is reported gone. Drift is a
note, never a failed collection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nvcregen.cluster.client import Cluster, ClusterError
from nvcregen.cluster.nodes import live_inventory
from nvcregen.collect.model import CollectError, CollectOptions, LoadedSite
from nvcregen.core import codes
from nvcregen.fabric.drift import inventory_drift
from nvcregen.fabric.inventory import MAX_NODES, Inventory, InventoryError, from_nodes
from nvcregen.results.liveobjects import Obj

UNREADABLE = codes.NVC773.code
SAVE_NODES = "save every node beside the results: `kubectl get nodes -o yaml > DIR/nodes.yaml`"


def drift_notes(
    loaded: LoadedSite, options: CollectOptions, connect: Callable[[], Cluster]
) -> tuple[str, ...]:
    """The live nodes against the site's inventory; none without an inventory or a cluster."""
    if loaded.plan.inventory is None or options.from_dir is not None:
        return ()
    try:
        live = live_inventory(connect(), options.policy)
    except (ClusterError, CollectError) as exc:
        return (f"{UNREADABLE}: the live nodes cannot be compared with the inventory: {exc}",)
    return tuple(f"{d.code}: {d.message}" for d in inventory_drift(loaded.plan.inventory, live))


def saved_drift_notes(loaded: LoadedSite, objects: Sequence[Obj]) -> tuple[str, ...]:
    """The Node objects saved in `collect --from`'s folder against the site's inventory."""
    if loaded.plan.inventory is None:
        return ()
    nodes = [o for o in objects if o.get("kind") == "Node" and o.get("apiVersion") == "v1"]
    if not nodes:
        return (f"{UNREADABLE}: no Node objects saved in the folder: drift from the inventory"
                f" not checked ({SAVE_NODES})",)  # fmt: skip
    if len(nodes) > MAX_NODES:
        return (f"{UNREADABLE}: {len(nodes)} saved nodes; at most {MAX_NODES} are compared",)
    try:
        saved: Inventory = from_nodes(nodes, "saved nodes")
    except InventoryError as exc:
        return (f"{UNREADABLE}: the saved nodes cannot be compared with the inventory: {exc}",)
    found = inventory_drift(loaded.plan.inventory, saved)
    return tuple(f"{d.code}: {d.message} (the nodes saved in the folder)" for d in found)
