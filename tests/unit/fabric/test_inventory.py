"""Inventories from node exports (untrusted) and back from their files."""

from __future__ import annotations

from typing import Any

import pytest

from nvcregen.emit.canonical import dump_yaml
from nvcregen.fabric.inventory import (
    MAX_NODES,
    InventoryError,
    from_node_list,
    to_data,
)
from nvcregen.fabric.inventoryfile import read_inventory
from nvcregen.spec.load import load_document
from tools.fleet_nodes import fleet


def node(name: str = "gpu-1", **labels: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}}


def test_a_node_keeps_gpus_nics_fabric_taints_and_versions() -> None:
    inventory = from_node_list(fleet(4, 2), "nodes.yaml")
    first = inventory.nodes["gpu-0000"]
    assert (first.product, first.gpus, dict(first.nics)) == (
        "NVIDIA-H100-80GB-HBM3",
        8,
        {"rdma/ib": 8},
    )
    assert first.fabric["network.topology.nvidia.com/leaf"] == "leaf-00"
    assert inventory.nodes["gpu-0003"].fabric["network.topology.nvidia.com/leaf"] == "leaf-01"
    assert (first.driver, first.cuda) == ("570.124.06", "12.8")
    assert [t.key for t in first.taints] == ["nvidia.com/gpu"]
    assert "kubernetes.io/hostname" not in first.fabric  # only fabric labels are kept


def test_newer_gfd_labels_win_over_the_dotted_ones() -> None:
    labels = {
        "nvidia.com/cuda.driver-version.major": "580",
        "nvidia.com/cuda.driver-version.minor": "65",
        "nvidia.com/cuda.driver-version.revision": "06",
        "nvidia.com/cuda.driver.major": "570",
        "nvidia.com/cuda.driver.minor": "1",
        "nvidia.com/cuda.runtime-version.major": "13",
        "nvidia.com/cuda.runtime-version.minor": "0",
        "fabric.topograph.run/tier-1": "sw-1",
        "accelerator.topograph.run/domain": "nvl-7",
    }
    found = from_node_list({"kind": "List", "items": [node(**labels)]}, "x").nodes["gpu-1"]
    assert (found.driver, found.cuda) == ("580.65.06", "13.0")
    assert set(found.fabric) == {"fabric.topograph.run/tier-1", "accelerator.topograph.run/domain"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "Pod"}, "not a list of nodes"),
        ({"kind": "List", "items": [node("Bad_Name")]}, "is not a node name"),
        ({"kind": "List", "items": [node(), node()]}, "listed twice"),
        ({"kind": "List", "items": [{"kind": "Pod"}]}, "is not a Node"),
        ({"kind": "List", "items": [node("a" * 254)]}, "is not a node name"),
        ({"kind": "List", "items": [node("gpu-1\n")]}, "is not a node name"),
        ({"kind": "List", "items": [node("gpu-1/status")]}, "is not a node name"),
        ({"kind": "List", "items": [node("..")]}, "is not a node name"),
    ],
)
def test_bad_exports_are_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(InventoryError, match=message):
        from_node_list(data, "x")


@pytest.mark.slow
def test_at_most_max_nodes() -> None:
    items = [node(f"n{i}") for i in range(MAX_NODES)]
    assert len(from_node_list({"kind": "List", "items": items}, "x").nodes) == MAX_NODES
    with pytest.raises(InventoryError, match="at most"):
        from_node_list({"kind": "List", "items": [*items, node("one-more")]}, "x")


def test_label_values_that_are_not_label_values_are_left_out() -> None:
    found = from_node_list(
        {"kind": "List", "items": [node(**{"network.topology.nvidia.com/leaf": "x" * 64})]}, "x"
    )
    assert found.nodes["gpu-1"].fabric == {}


def test_written_inventory_reads_back_equal_and_sorted() -> None:
    inventory = from_node_list(fleet(6, 3), "nodes.yaml")
    text = dump_yaml(to_data(inventory))
    doc, diags = load_document(text.encode(), "inventory.yaml")
    assert doc is not None and not diags
    back, problems = read_inventory(doc)
    assert not problems and back == inventory
    assert list(back.nodes) == sorted(back.nodes)


def test_a_broken_inventory_file_is_nvc390_at_its_line() -> None:
    text = "apiVersion: nvcregen.io/v1alpha1\nkind: Inventory\nnodes:\n"
    text += "  - name: ok\n  - name: Not_OK\n"
    doc, _ = load_document(text.encode(), "inventory.yaml")
    assert doc is not None
    inventory, problems = read_inventory(doc)
    assert inventory is None
    assert [(p.code, p.span.line, p.span.column) for p in problems] == [("NVC390", 5, 11)]


def test_an_inventory_file_name_with_a_line_end_is_no_node_name() -> None:
    """`$` matched before a final line end: `"gpu-1\\n"` read as a node name until #31."""
    text = 'apiVersion: nvcregen.io/v1alpha1\nkind: Inventory\nnodes:\n  - name: "gpu-1\\n"\n'
    doc, _ = load_document(text.encode(), "inventory.yaml")
    assert doc is not None
    inventory, problems = read_inventory(doc)
    assert inventory is None
    assert [p.code for p in problems] == ["NVC390"]
    assert "'gpu-1\\n' is not a node name (an RFC 1123 subdomain)" in problems[0].message
