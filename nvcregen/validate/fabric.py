"""A site against its inventory, and its fabric-aware stages: NVC390-NVC399.

The inventory is read here (bounded: a file over 64 MiB is refused), relative to the
site's project folder (`root`: `chain/sites.py` site_root, the folder render compiles the
site in), so every command that loads a site plans with it, from any folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from nvcregen.catalog.load import Catalog
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.engineapi.registry import readiness_of
from nvcregen.fabric.groups import plan_groups
from nvcregen.fabric.inventory import MAX_BYTES, Inventory, Taint
from nvcregen.fabric.inventoryfile import BAD_INVENTORY, read_inventory
from nvcregen.fabric.placement import place
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import NodePool, Site

NOT_INVENTORIED = codes.NVC391.code
WRONG_PRODUCT = codes.NVC392.code
FEWER_GPUS = codes.NVC393.code
NO_LEAF = codes.NVC394.code
GROUPS_NEED_FABRIC = codes.NVC395.code
GROUPS_UNSUPPORTED = codes.NVC396.code
TOO_FEW_GROUPS = codes.NVC397.code
OTHER_LEVELS = codes.NVC398.code
NO_LEVEL = codes.NVC399.code
UNTOLERATED = codes.NVC365.code
# topograph v1 (`fabric.topograph.run/tier-N`, tier 0 the switch closest to the node, and
# `accelerator.topograph.run/domain`, NVIDIA/topograph docs/reference/node-labels.md): the
# key a node labelled by it carries for each level, to name in a hint.
TOPOGRAPH_V1 = {
    "leaf": "fabric.topograph.run/tier-0",
    "spine": "fabric.topograph.run/tier-1",
    "core": "fabric.topograph.run/tier-2",
    "accelerator": "accelerator.topograph.run/domain",
}
INVENTORY_FIELD = "/spec/inventory"
_REPORTED_PER_POOL = 20  # one wrong inventory would print a line per node otherwise


def load_inventory(
    site: Site, doc: Document, root: Path | None
) -> tuple[Inventory | None, list[Diagnostic]]:
    """The inventory the site names (None when it names none or it is unusable)."""
    named = site.spec.inventory
    if named is None:
        return None, []
    return read_named_inventory(named, root, doc.span(INVENTORY_FIELD))


def read_named_inventory(
    named: str, root: Path | None, span: Span
) -> tuple[Inventory | None, list[Diagnostic]]:
    """The inventory file a site's `spec.inventory` names, relative to `root` (default: here).

    None when it is unusable, with the diagnostics saying why (NVC390 at `span`, or the
    file's own line and column); a command that only needs the inventory (`retest
    --rail`'s switch ports) reads it so, without loading and planning the whole site.
    """
    path = (root or Path.cwd()) / named
    where = INVENTORY_FIELD
    try:
        raw = _read_bounded(path)
    except OSError as exc:
        message = f"the inventory {named} cannot be read: {exc.strerror or exc}"
        hint = (
            "write it with `nvcregen inventory`; the path is relative to the site's project"
            " folder (the nearest folder above the site file that holds sites/)"
        )
        return None, [Diagnostic(span, Severity.ERROR, BAD_INVENTORY, message, where, hint)]
    from nvcregen.spec.load import load_document  # ruamel, imported only where it is used

    inventory_doc, diags = load_document(raw, named, max_bytes=MAX_BYTES)
    if inventory_doc is None:
        return None, diags
    inventory, problems = read_inventory(inventory_doc)
    return inventory, diags + problems


def _read_bounded(path: Path) -> bytes:
    """A file's bytes, refused over `MAX_BYTES` (an OSError saying so)."""
    with path.open("rb") as stream:
        raw = stream.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise OSError(0, f"over the {MAX_BYTES // 2**20} MiB limit")
    return raw


def inventory_problems(
    site: Site, catalog: Catalog, inventory: Inventory, doc: Document
) -> list[Diagnostic]:
    """Named nodes missing from the inventory, of another product, with fewer GPUs, unplaced."""
    found: list[Diagnostic] = []
    for index, pool in enumerate(site.spec.node_pools):
        hardware = catalog.find_hardware(pool.model)
        products = set(pool.product_labels or (hardware.product_labels if hardware else ()))
        gpus = pool.gpus_per_node or (hardware.gpus_per_node if hardware else None)
        problems: list[Diagnostic] = []
        for position, name in enumerate(pool.nodes or []):
            where = f"/spec/nodePools/{index}/nodes/{position}"
            problems += _node_problems(pool, name, inventory, products, gpus, doc, where)
        found += problems[:_REPORTED_PER_POOL]
        if len(problems) > _REPORTED_PER_POOL:
            more = len(problems) - _REPORTED_PER_POOL
            first = problems[_REPORTED_PER_POOL]
            found.append(
                Diagnostic(
                    first.span,
                    Severity.INFO,
                    first.code,
                    f"{more} more like these left out",
                    first.path,
                )
            )
    return found


def _node_problems(
    pool: NodePool,
    name: str,
    inventory: Inventory,
    products: set[str],
    gpus: int | None,
    doc: Document,
    where: str,
) -> list[Diagnostic]:
    span = doc.span(where)
    node = inventory.nodes.get(name)
    if node is None:
        hint = "run `nvcregen inventory` again, or take the node out of the pool"
        return [_error(span, NOT_INVENTORIED, f"node {name} is not in the inventory", where, hint)]
    found = []
    if products and node.product is not None and node.product not in products:
        wanted = ", ".join(sorted(products))
        message = f"node {name} has {node.product}, not the pool's {pool.model} ({wanted})"
        hint = "move the node to a pool of its model, or set productLabels"
        found.append(_error(span, WRONG_PRODUCT, message, where, hint))
    if gpus is not None and node.gpus is not None and node.gpus < gpus:
        message = f"node {name} has {node.gpus} GPUs, the pool {gpus} per node"
        found.append(_error(span, FEWER_GPUS, message, where, "repair the node or leave it out"))
    if pool.fabric is not None:
        found += _level_problems(pool, name, node.fabric, span, where)
    untolerated = [t for t in node.taints if not _tolerated(pool, t)]
    if untolerated:
        taints = ", ".join(_taint_text(t) for t in untolerated)
        message = (
            f"node {name} carries {taints} in the inventory, which the pool's runs do not "
            "tolerate: Kueue's topology scheduler and kube-scheduler leave the node out, and "
            "its runs never start"
        )
        first = untolerated[0]
        hint = (
            f"add `tolerations: [{{key: {first.key}, operator: Exists, effect: {first.effect}}}]`"
            " to the pool, or take the node out of the pool"
        )
        found.append(_error(span, UNTOLERATED, message, where, hint))
    return found


def _tolerated(pool: NodePool, taint: Taint) -> bool:
    """Whether the pool's tolerations let a pod onto a node with this taint.

    Kubernetes' rule (`k8s.io/api/core/v1` `Toleration.ToleratesTaint`): a toleration
    without a key and `Exists` tolerates every taint; else the keys match, and `Exists`, or
    `Equal` with the same value; an effect left out matches every effect. A
    `PreferNoSchedule` taint keeps no pod off a node.
    """
    if taint.effect == "PreferNoSchedule":
        return True
    for t in pool.tolerations:
        if t.effect is not None and t.effect != taint.effect:
            continue
        if t.key is None:
            if t.operator == "Exists":
                return True
            continue
        if t.key == taint.key and (t.operator == "Exists" or (t.value or "") == taint.value):
            return True
    return False


def _taint_text(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"the taint {taint.key}{value}:{taint.effect}"


def _level_problems(
    pool: NodePool, name: str, labels: Mapping[str, str], span: Span, where: str
) -> list[Diagnostic]:
    """NVC394 (no leaf label), NVC399 (another level's label missing) for one node.

    Kueue places a pod only on nodes that carry every level of its Topology
    (`pkg/util/tas/node.go`): a level one node lacks keeps that node out of every run, and a
    level no node carries admits nothing at all.
    """
    assert pool.fabric is not None
    levels = pool.fabric.levels
    found = []
    for level in ("leaf", "spine", "core", "accelerator"):
        label = getattr(levels, level)
        if label is None or label in labels:
            continue
        v1 = TOPOGRAPH_V1[level]
        if v1 in labels:
            hint = f"the node carries topograph v1's {v1}: set fabric.levels.{level} to it"
        elif level == "leaf":
            hint = "label the node's leaf (topograph does), or name the leaf label in fabric.levels"
        else:
            hint = (
                f"Kueue admits nothing on a Topology level the nodes lack: name only the levels "
                f"the nodes carry in fabric.levels (leave {level} out), or label the node"
            )
        code = NO_LEAF if level == "leaf" else NO_LEVEL
        message = f"node {name} has no {label} label in the inventory"
        if level != "leaf":
            message += f" (the fabric's {level} level, a level of the site's Topology)"
        found.append(_error(span, code, message, where, hint))
    return found


def _error(span: Span, code: str, message: str, where: str, hint: str) -> Diagnostic:
    return Diagnostic(span, Severity.ERROR, code, message, where, hint)


def level_problems(site: Site, doc: Document) -> list[Diagnostic]:
    """NVC398: pools naming other fabric levels than the first (the site has one Topology)."""
    fabrics = [(i, p.fabric) for i, p in enumerate(site.spec.node_pools) if p.fabric is not None]
    if not fabrics:
        return []
    first = fabrics[0][1].levels.keys()
    found = []
    for index, fabric in fabrics[1:]:
        if fabric.levels.keys() != first:
            where = f"/spec/nodePools/{index}/fabric"
            names = site.spec.node_pools[index].name, site.spec.node_pools[fabrics[0][0]].name
            message = f"pool {names[0]} names other fabric levels than pool {names[1]}"
            hint = (
                "a site's fabric Topology has one set of levels: name the same labels in every pool"
            )
            found.append(_error(doc.span(where), OTHER_LEVELS, message, where, hint))
    return found


def group_problems(site: Site, inventory: Inventory | None, doc: Document) -> list[Diagnostic]:
    """Stages whose `groups` cannot be planned: no fabric or inventory, wrong scope or engine."""
    found = level_problems(site, doc)
    pools = {p.name: p for p in site.spec.node_pools}
    for index, stage in enumerate(site.spec.readiness.stages):
        if stage.groups is None:
            continue
        where = f"/spec/readiness/stages/{index}/groups"
        span = doc.span(where)
        if stage.scope != "inter-node":
            found.append(
                _error(
                    span,
                    GROUPS_UNSUPPORTED,
                    "groups are for inter-node stages",
                    where,
                    "remove groups",
                )
            )
            continue
        if stage.groups == "diagnose":
            if not readiness_of(site).diagnose_groups:
                hint = "trainer mode narrows a fault with `nvcregen retest`; use cross-leaf or pool"
                found.append(
                    _error(
                        span,
                        GROUPS_UNSUPPORTED,
                        "diagnose is NVCRE's; this site runs trainer mode",
                        where,
                        hint,
                    )
                )
            continue
        pool = pools.get(stage.pool or site.spec.node_pools[0].name)
        if pool is None:
            continue
        placement = place(pool, inventory)
        if placement is None:
            message = (
                f"groups: {stage.groups} needs the pool's fabric, named nodes and the site's"
                " inventory"
            )
            hint = "give the pool `fabric: {}` and `nodes`, and name the inventory (spec.inventory)"
            found.append(_error(span, GROUPS_NEED_FABRIC, message, where, hint))
            continue
        if not plan_groups(stage.groups, placement).groups or (
            stage.groups == "cross-leaf" and len(placement.by_leaf) < 2
        ):
            message = (
                f"groups: {stage.groups} finds no group of two or more nodes in pool {pool.name}"
            )
            hint = "cross-leaf needs two leaves; leaf and accelerator a domain of two nodes"
            found.append(_error(span, TOO_FEW_GROUPS, message, where, hint))
    return found
