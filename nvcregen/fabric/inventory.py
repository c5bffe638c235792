"""A site's node inventory: built from node objects, as plain data, and read back (pure).

The inventory is what `nvcregen inventory` writes and a site names (`spec.inventory`):
per node its GPUs, NICs, fabric labels, taints, and the driver and CUDA versions GPU
feature discovery labels. Node objects come from an export or an API answer, both
untrusted: names are checked, strings bounded, anything else left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nvcregen.core.kube import node_name_problem

API_VERSION = "nvcregen.io/v1alpha1"
KIND = "Inventory"
MAX_NODES = 100_000
MAX_BYTES = 64 * 2**20
GPU_RESOURCE = "nvidia.com/gpu"
PRODUCT = "nvidia.com/gpu.product"
COUNT = "nvidia.com/gpu.count"
# Fabric labels kept: topograph's (old and new keys) and NVIDIA's NVLink clique.
FABRIC_PREFIXES = (
    "network.topology.nvidia.com/",
    "fabric.topograph.run/",
    "accelerator.topograph.run/",
)
FABRIC_LABELS = frozenset({"nvidia.com/gpu.clique"})
# GFD's driver and CUDA labels: newer releases first, then the older dotted ones.
DRIVER_LABELS = (
    ("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor",
     "nvidia.com/cuda.driver-version.revision"),
    ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
)  # fmt: skip
CUDA_LABELS = (
    ("nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor"),
    ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"),
)
NIC_PREFIXES = ("rdma/", "nvidia.com/")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_QUANTITY = re.compile(r"^[0-9]{1,6}$")
_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})


class InventoryError(ValueError):
    """Node objects that cannot become an inventory; the message says which and why."""


@dataclass(frozen=True)
class Taint:
    """A node taint: key, value (may be empty) and effect."""

    key: str
    value: str
    effect: str


@dataclass(frozen=True, order=True)
class SwitchPort:
    """The switch port an HCA is cabled to, as the operator's cabling map states it."""

    switch: str
    port: str

    def __str__(self) -> str:
        return f"{self.switch} {self.port}"


@dataclass(frozen=True)
class InventoryNode:
    """One node as the inventory records it."""

    name: str
    product: str | None = None
    gpus: int | None = None
    nics: Mapping[str, int] = field(default_factory=dict)
    fabric: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    driver: str | None = None
    cuda: str | None = None
    cabling: Mapping[str, SwitchPort] = field(default_factory=dict)  # HCA -> its switch port


@dataclass(frozen=True)
class Inventory:
    """Nodes by name, sorted; `source` says where they were read from."""

    source: str
    nodes: Mapping[str, InventoryNode]


def from_node_list(data: Any, source: str) -> Inventory:
    """Build an inventory from a `v1 List` of Nodes (`kubectl get nodes -o yaml`) or a NodeList.

    Raises:
        InventoryError: It is not a list of nodes, a name is not a node name, or a
            name repeats.

    """
    if not isinstance(data, dict) or data.get("kind") not in {"List", "NodeList"}:
        raise InventoryError("not a list of nodes: save `kubectl get nodes -o yaml`")
    items = data.get("items")
    if not isinstance(items, list):
        raise InventoryError("the list has no items")
    if len(items) > MAX_NODES:
        raise InventoryError(f"{len(items)} items; at most {MAX_NODES} nodes are read")
    return from_nodes(items, source)


def from_nodes(items: Iterable[Any], source: str) -> Inventory:
    """Build an inventory from Node objects (anything else in the list is refused)."""
    nodes: dict[str, InventoryNode] = {}
    for index, item in enumerate(items):
        if not isinstance(item, dict) or item.get("kind", "Node") != "Node":
            raise InventoryError(f"item {index} is not a Node")
        node = node_record(item, index)
        if node.name in nodes:
            raise InventoryError(f"node {node.name} is listed twice")
        nodes[node.name] = node
    return Inventory(source, dict(sorted(nodes.items())))


def node_record(item: Mapping[str, Any], index: int = 0) -> InventoryNode:
    """One Node object as an inventory entry."""
    meta = _mapping(item.get("metadata"))
    name = meta.get("name")
    problem = node_name_problem(name)
    if problem is not None or not isinstance(name, str):
        raise InventoryError(f"item {index}: {problem}")
    labels = {k: v for k, v in _mapping(meta.get("labels")).items() if _label(k, v)}
    capacity = _mapping(_mapping(item.get("status")).get("capacity"))
    gpus = _count(capacity.get(GPU_RESOURCE))
    if gpus is None:
        gpus = _count(labels.get(COUNT))
    return InventoryNode(
        name=name,
        product=labels.get(PRODUCT),
        gpus=gpus,
        nics=_nics(capacity),
        fabric={k: v for k, v in sorted(labels.items()) if is_fabric_label(k)},
        taints=_taints(_mapping(item.get("spec")).get("taints")),
        driver=_version(labels, DRIVER_LABELS),
        cuda=_version(labels, CUDA_LABELS),
    )


def is_fabric_label(key: str) -> bool:
    """Whether a node label names a fabric level the inventory keeps."""
    return key in FABRIC_LABELS or key.startswith(FABRIC_PREFIXES)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _label(key: Any, value: Any) -> bool:
    return (
        isinstance(key, str)
        and len(key) <= 317
        and isinstance(value, str)
        and bool(LABEL_VALUE.match(value))
    )


def _count(value: Any) -> int | None:
    text = str(value) if isinstance(value, int | str) else ""
    return int(text) if _QUANTITY.match(text) else None


def _nics(capacity: Mapping[str, Any]) -> dict[str, int]:
    found: dict[str, int] = {}
    for key, value in capacity.items():
        if not isinstance(key, str) or key == GPU_RESOURCE or len(key) > 253:
            continue
        count = _count(value)
        if key.startswith(NIC_PREFIXES) and count:
            found[key] = count
    return dict(sorted(found.items()))


def _taints(value: Any) -> tuple[Taint, ...]:
    found = set()
    for taint in value if isinstance(value, list) else []:
        if not isinstance(taint, dict):
            continue
        key, text, effect = taint.get("key"), taint.get("value", ""), taint.get("effect")
        if isinstance(key, str) and len(key) <= 317 and effect in _EFFECTS:
            found.add(Taint(key, text if _label("", text) else "", str(effect)))
    return tuple(sorted(found, key=lambda t: (t.key, t.effect, t.value)))


def _version(labels: Mapping[str, str], keys: tuple[tuple[str, ...], ...]) -> str | None:
    for names in keys:
        parts = [labels.get(n) for n in names]
        if parts[0] is not None and parts[1] is not None:
            return ".".join(p for p in parts if p)
    return None


def version_labels(node: InventoryNode) -> dict[str, str]:
    """The GFD labels (the newer names) that state a node's driver and CUDA versions.

    What `node_record` reads back as the same versions: the parts split at dots.
    """
    labels: dict[str, str] = {}
    for version, names in ((node.driver, DRIVER_LABELS[0]), (node.cuda, CUDA_LABELS[0])):
        parts = version.split(".", len(names) - 1) if version else []
        labels |= {name: part for name, part in zip(names, parts, strict=False) if part}
    return labels


def to_data(inventory: Inventory) -> dict[str, Any]:
    """The inventory as plain data, in the order it is written: sorted, empty fields left out."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "source": inventory.source,
        "nodes": [_node_data(n) for n in inventory.nodes.values()],
    }


def _node_data(node: InventoryNode) -> dict[str, Any]:
    data: dict[str, Any] = {"name": node.name}
    if node.product is not None or node.gpus is not None:
        data["gpu"] = {
            k: v for k, v in (("product", node.product), ("count", node.gpus)) if v is not None
        }
    if node.nics:
        data["nics"] = dict(node.nics)
    if node.fabric:
        data["fabric"] = dict(node.fabric)
    if node.taints:
        data["taints"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
            for t in node.taints
        ]
    if node.driver is not None:
        data["driver"] = node.driver
    if node.cuda is not None:
        data["cuda"] = node.cuda
    if node.cabling:
        data["cabling"] = {
            hca: {"switch": end.switch, "port": end.port} for hca, end in node.cabling.items()
        }
    return data
