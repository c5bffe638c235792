"""Fleets for the fabric tests: node exports, inventories and sites placed on them."""

from __future__ import annotations

from pathlib import Path

from sitefactory import site_yaml

from nvcregen.emit.canonical import dump_yaml
from nvcregen.fabric.inventory import Inventory, from_node_list, to_data
from tools.fleet_nodes import fleet

INVENTORY = "inventory.yaml"


def fleet_inventory(count: int, leaves: int) -> Inventory:
    """The inventory of a fleet of `count` H100 nodes under `leaves` leaves."""
    return from_node_list(fleet(count, leaves), "nodes.yaml")


def pool(count: int, *, fabric: str = "fabric: {}") -> str:
    """A pool naming the fleet's nodes, with a fabric."""
    names = ", ".join(f"gpu-{i:04d}" for i in range(count))
    return f"""\
- name: fleet
  model: H100
  {fabric}
  nodes: [{names}]
  nics: {{count: 8, fabric: ib, speed: 400Gb/s, resourceName: rdma/ib,
    hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7]}}
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
"""


def fleet_site(count: int, groups: str = "cross-leaf", *, inventory: bool = True) -> str:
    """A site testing a fleet with one inter-node stage grouped by `groups`."""
    stages = f"""\
- name: fabric
  scope: inter-node
  groups: {groups}
  tests: [nccl-all-reduce]
"""
    window = "{maxConcurrentJobs: 64, deadline: 200h, gpuHours: 1000000}"
    text = site_yaml(name="fleet", pools=pool(count), stages=stages, window=window)
    if inventory:
        text = text.replace("  nodePools:\n", f"  inventory: {INVENTORY}\n  nodePools:\n", 1)
    return text


def write_project(folder: Path, count: int, leaves: int, groups: str = "cross-leaf") -> Path:
    """A project folder with the fleet's site (`fleet.yaml`) and inventory; the site's path."""
    (folder / INVENTORY).write_text(dump_yaml(to_data(fleet_inventory(count, leaves))))
    site = folder / "fleet.yaml"
    site.write_text(fleet_site(count, groups))
    return site
