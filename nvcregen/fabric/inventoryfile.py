"""Reading an inventory file back: plain data with positions -> Inventory, or NVC390 (pure)."""

from __future__ import annotations

from typing import Any

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.kube import node_name_problem
from nvcregen.fabric.cabling import name_problem
from nvcregen.fabric.inventory import (
    API_VERSION,
    KIND,
    LABEL_VALUE,
    MAX_NODES,
    Inventory,
    InventoryNode,
    SwitchPort,
    Taint,
)
from nvcregen.spec.positions import Document, escape

BAD_INVENTORY = codes.NVC390.code
_HINT = "write it with `nvcregen inventory --from nodes.yaml` (or --context) and review the diff"
_NODE_KEYS = frozenset({"name", "gpu", "nics", "fabric", "taints", "driver", "cuda", "cabling"})


class _Problems:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.found: list[Diagnostic] = []

    def add(self, where: str, message: str) -> None:
        span = self.doc.span(where)
        self.found.append(Diagnostic(span, Severity.ERROR, BAD_INVENTORY, message, where, _HINT))


def read_inventory(doc: Document) -> tuple[Inventory | None, list[Diagnostic]]:
    """The inventory a document holds, or every problem with it (at file:line:column)."""
    problems = _Problems(doc)
    data = doc.data
    if not isinstance(data, dict) or data.get("kind") != KIND:
        problems.add("", f"not an inventory: expected kind {KIND}")
        return None, problems.found
    if data.get("apiVersion") != API_VERSION:
        problems.add("/apiVersion", f"apiVersion must be {API_VERSION}")
    items = data.get("nodes")
    if not isinstance(items, list) or len(items) > MAX_NODES:
        problems.add("/nodes", f"nodes must be a list of at most {MAX_NODES} nodes")
        return None, problems.found
    nodes: dict[str, InventoryNode] = {}
    taken: dict[SwitchPort, str] = {}  # a switch port holds one cable, as --cabling checks
    for index, item in enumerate(items):
        node = _node(item, f"/nodes/{index}", problems)
        if node is None:
            continue
        if node.name in nodes:
            problems.add(f"/nodes/{index}/name", f"node {node.name} is listed twice")
        nodes[node.name] = node
        for hca, end in node.cabling.items():
            if end in taken:
                at = f"/nodes/{index}/cabling/{escape(hca)}"
                problems.add(at, f"{end} is cabled to {taken[end]} already: a port holds one cable")
            taken.setdefault(end, f"{node.name} {hca}")
    if problems.found:
        return None, problems.found
    return Inventory(str(data.get("source", "")), dict(sorted(nodes.items()))), []


def _node(item: Any, where: str, problems: _Problems) -> InventoryNode | None:
    if not isinstance(item, dict):
        problems.add(where, "a node is a mapping with a name")
        return None
    unknown = sorted(str(k) for k in item if k not in _NODE_KEYS)
    if unknown:
        problems.add(f"{where}/{unknown[0]}", f"unknown field {unknown[0]!r}")
    name = item.get("name")
    problem = node_name_problem(name)
    if problem is not None or not isinstance(name, str):
        problems.add(f"{where}/name", str(problem))
        return None
    gpu = item.get("gpu") or {}
    product, count = gpu.get("product"), gpu.get("count")
    if not isinstance(gpu, dict) or not _optional(product, str) or not _optional(count, int):
        problems.add(f"{where}/gpu", "gpu has a product (a string) and a count (a number)")
        return None
    nics = _string_map(item.get("nics"), f"{where}/nics", problems, int)
    fabric = _string_map(item.get("fabric"), f"{where}/fabric", problems, str)
    taints = _taints(item.get("taints"), f"{where}/taints", problems)
    driver, cuda = item.get("driver"), item.get("cuda")
    if not _optional(driver, str) or not _optional(cuda, str):
        problems.add(where, "driver and cuda are version strings")
        return None
    cabling = _cabling(item.get("cabling"), f"{where}/cabling", problems)
    return InventoryNode(name, product, count, nics, fabric, taints, driver, cuda, cabling)


def _cabling(value: Any, where: str, problems: _Problems) -> dict[str, SwitchPort]:
    """Each HCA's switch port (`nvcregen inventory --cabling`), every name checked."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.add(where, "cabling maps each HCA to its switch and port")
        return {}
    found: dict[str, SwitchPort] = {}
    for hca, end in value.items():
        at = f"{where}/{escape(str(hca))}"
        if (problem := name_problem("hca", hca)) is not None:
            problems.add(at, problem)
            continue
        if not isinstance(end, dict) or set(end) != {"switch", "port"}:
            problems.add(at, f"HCA {hca} has a switch and a port, nothing else")
            continue
        why = name_problem("switch", end["switch"]) or name_problem("port", end["port"])
        if why is not None:
            problems.add(at, why)
            continue
        found[hca] = SwitchPort(end["switch"], end["port"])
    return found


def _optional(value: Any, kind: type) -> bool:
    return value is None or (isinstance(value, kind) and not isinstance(value, bool))


def _string_map(value: Any, where: str, problems: _Problems, kind: type) -> dict[str, Any]:
    if value is None:
        return {}
    good = isinstance(value, dict) and all(
        isinstance(k, str) and len(k) <= 317 and _optional(v, kind) and v is not None
        for k, v in value.items()
    )
    if not good or (kind is str and not all(LABEL_VALUE.match(v) for v in value.values())):
        problems.add(where, f"a mapping of names to {kind.__name__} values")
        return {}
    return dict(value)


def _taints(value: Any, where: str, problems: _Problems) -> tuple[Taint, ...]:
    found: list[Taint] = []
    for index, taint in enumerate(value or []):
        if not isinstance(taint, dict) or not isinstance(taint.get("key"), str):
            problems.add(f"{where}/{index}", "a taint has a key, a value and an effect")
            continue
        found.append(Taint(taint["key"], str(taint.get("value", "")), str(taint.get("effect"))))
    return tuple(found)
