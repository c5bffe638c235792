"""The site's nodes as kwok plays them: names, labels, taints, GPUs and NICs (pure).

The nodes are the replay's (`plan/facts.py::pool_nodes`: each pool's named nodes, else
`<pool>-1..N`; `nvidia.com/gpu.present`, the first product label, the pool's selector,
the hostname; GPUs and the NIC resource as capacity), with what the site's inventory says
of each node it lists (its fabric labels: leaf, spine, core, NVLink domain; its taints),
and else the taints the pool's `tolerations` name (a keyed toleration's key, its value,
its effect or `NoSchedule`). kwok manages a node annotated `kwok.x-k8s.io/node=fake`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nvcregen.fabric.inventory import version_labels
from nvcregen.plan.facts import pool_nodes
from nvcregen.plan.model import Pool

FAKE_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
# What every fake node offers besides its GPUs and NICs: never the limit of a rehearsal.
BASE_CAPACITY = {"cpu": "128", "memory": "2Ti", "pods": "110"}


@dataclass(frozen=True)
class FakeNode:
    """One node to create: its name, labels, taints and extended resources."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[tuple[str, str, str], ...]  # (key, value, effect)
    devices: Mapping[str, int]


def taints_tolerated(tolerations: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """The taints a pool's `tolerations` say its nodes carry, as (key, value, effect).

    A keyed toleration names its key, its value ("" for `Exists`) and its effect
    (`NoSchedule` when it names none: it tolerates every effect). A keyless one tolerates
    every taint and names none.
    """
    return [
        (str(t["key"]), str(t.get("value") or ""), str(t.get("effect") or "NoSchedule"))
        for t in tolerations
        if t.get("key")
    ]


def site_nodes(pools: Iterable[Pool]) -> list[FakeNode]:
    """Every node of the pools, in pool order: inventory facts where the inventory has it."""
    found: list[FakeNode] = []
    for pool in pools:
        tolerated = taints_tolerated(t.model_dump() for t in pool.spec.tolerations)
        listed = pool.inventory.nodes if pool.inventory is not None else {}
        for node in pool_nodes(pool):
            known = listed.get(node.name)
            labels = dict(node.labels)
            taints = tuple(tolerated)
            if known is not None:
                labels |= dict(known.fabric) | version_labels(known)
                taints = tuple((t.key, t.value, t.effect) for t in known.taints)
            found.append(FakeNode(node.name, labels, taints, dict(node.capacity)))
    return found


def node_object(node: FakeNode) -> dict[str, Any]:
    """The Node object kwok manages: labels, taints, resources allocatable, no addresses.

    No addresses: kwok's node-initialize stage writes its `nodeIP` (loopback) as the
    InternalIP, and the API server dials kwok for a pod's log. (Given an InternalIP and no
    Hostname, that stage writes an empty list instead.)
    """
    resources = {**BASE_CAPACITY, **{name: str(count) for name, count in node.devices.items()}}
    key, value = FAKE_NODE_ANNOTATION
    taints = [{"key": k, "value": v, "effect": e} for k, v, e in node.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "labels": {"kubernetes.io/hostname": node.name, "type": "kwok", **node.labels},
            "annotations": {key: value, "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": taints} if taints else {},
        "status": {"allocatable": resources, "capacity": resources},
    }


def unready(listed: Iterable[Mapping[str, Any]], wanted: Mapping[str, FakeNode]) -> list[str]:
    """The wanted nodes one list of Nodes shows not yet Ready with exactly their taints.

    Read once per poll for every node (a GET per node per poll was a thousand requests a
    poll at fleet size). A node missing from the list is not ready; the list's items are
    read as untrusted (a field of the wrong type is not Ready).
    """
    ready: set[str] = set()
    for item in listed:
        meta, spec, status = item.get("metadata"), item.get("spec"), item.get("status")
        name = meta.get("name") if isinstance(meta, dict) else None
        node = wanted.get(name) if isinstance(name, str) else None
        conditions = status.get("conditions") if isinstance(status, dict) else None
        taints = (spec.get("taints") if isinstance(spec, dict) else None) or []
        if node is None or not isinstance(conditions, list) or not isinstance(taints, list):
            continue
        carried = {
            (str(t.get("key")), str(t.get("value") or ""), str(t.get("effect")))
            for t in taints
            if isinstance(t, dict)
        }
        if carried == set(node.taints) and any(
            isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
            for c in conditions
        ):
            ready.add(node.name)
    return [name for name in wanted if name not in ready]


def kwok_parallelism(nodes: int) -> int:
    """Workers kwok plays node and pod stages and renews leases with, for `nodes` nodes.

    Left at 0 kwok plays nothing; 4 kept up with two to 64 nodes. One worker per 32 nodes
    beyond that, at most 64 (the twin shares two cores with the API server).
    """
    return max(4, min(64, -(-nodes // 32)))
