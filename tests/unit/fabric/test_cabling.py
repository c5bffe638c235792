"""The cabling map (`nvcregen inventory --cabling`): each HCA's switch port, untrusted input."""

from __future__ import annotations

import pytest

from nvcregen.emit.canonical import dump_yaml
from nvcregen.fabric.cabling import MAX_BYTES, CablingError, read_cabling, with_cabling
from nvcregen.fabric.inventory import SwitchPort, from_node_list, to_data
from nvcregen.fabric.inventoryfile import read_inventory
from nvcregen.spec.load import load_document
from tools.fleet_nodes import fleet

NODES = {"gpu-0000": None, "gpu-0001": None}
HEADER = "node,hca,switch,port\n"


def problems(text: str | bytes) -> list[str]:
    raw = text.encode() if isinstance(text, str) else text
    with pytest.raises(CablingError) as caught:
        read_cabling(raw, "cabling.csv", NODES)
    return caught.value.problems


def test_rows_become_each_nodes_hca_ports_sorted() -> None:
    text = (
        "# from DCIM\nrack,port,hca,node,switch\n"
        "r1,Ethernet1/12,mlx5_3,gpu-0001,leaf-07\n\n"
        "r1,Ethernet1/1,mlx5_0,gpu-0000,leaf-00\r\n"
        "r1,Ethernet1/11,mlx5_0,gpu-0001,leaf-07\n"
    )
    found = read_cabling(text.encode(), "cabling.csv", NODES)
    assert found == {
        "gpu-0000": {"mlx5_0": SwitchPort("leaf-00", "Ethernet1/1")},
        "gpu-0001": {
            "mlx5_0": SwitchPort("leaf-07", "Ethernet1/11"),
            "mlx5_3": SwitchPort("leaf-07", "Ethernet1/12"),
        },
    }
    assert str(found["gpu-0001"]["mlx5_3"]) == "leaf-07 Ethernet1/12"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("node,hca,switch\n", "cabling.csv:1:1: NVC790: the header names no port column"),
        ("", "cabling.csv:1:1: NVC790: no header row: nothing to read"),
        (HEADER + "gpu-0000,mlx5_0,leaf-00\n", "cabling.csv:2:1: NVC790: 3 fields, fewer"),
        (HEADER + "gpu-0009,mlx5_0,leaf-00,1\n", "cabling.csv:2:1: NVC790: node gpu-0009 is"),
        (HEADER + "GPU_0,mlx5_0,leaf-00,1\n", "cabling.csv:2:1: NVC790: 'GPU_0' is not a node"),
        (HEADER + "gpu-0000,mlx5 0,leaf-00,1\n", "cabling.csv:2:10: NVC790: 'mlx5 0' is not an"),
        (HEADER + "gpu-0000,mlx5_0,-leaf,1\n", "cabling.csv:2:17: NVC790: '-leaf' is not a"),
        (HEADER + "gpu-0000,mlx5_0,leaf,1/\x1b\n", "cabling.csv:2:22: NVC790: '1/\\x1b' is not"),
        (
            HEADER + "gpu-0000,mlx5_0,leaf,1\ngpu-0000,mlx5_0,leaf,2\n",
            "cabling.csv:3:10: NVC790: node gpu-0000 HCA mlx5_0 is listed twice",
        ),
        (
            HEADER + "gpu-0000,mlx5_0,leaf,1\ngpu-0001,mlx5_0,leaf,1\n",
            "cabling.csv:3:17: NVC790: leaf 1 is cabled to gpu-0000 mlx5_0 already (line 2)",
        ),
        (b"node,hca,switch,port\n\xff\n", "cabling.csv:2:1: NVC790: not UTF-8"),
    ],
)  # fmt: skip
def test_a_bad_cabling_map_is_nvc790_at_its_line_and_column(text: str, expected: str) -> None:
    found = problems(text)
    assert found[0].startswith(expected), found


def test_every_problem_is_told_not_only_the_first() -> None:
    found = problems(HEADER + "gpu-9,mlx5_0,leaf,1\ngpu-0000,m x,leaf,2\n")
    assert [p.split(": ")[0] for p in found] == ["cabling.csv:2:1", "cabling.csv:3:10"]


def test_the_size_bound_is_exact() -> None:
    row = "gpu-0000,mlx5_0,leaf,1\n"
    exact = (HEADER + row).encode()
    exact += b"#" * (MAX_BYTES - len(exact) - 1) + b"\n"
    assert len(exact) == MAX_BYTES
    assert read_cabling(exact, "c.csv", NODES)["gpu-0000"]["mlx5_0"].port == "1"
    assert problems(exact + b"\n") == [f"cabling.csv: NVC790: over {MAX_BYTES // 2**20} MiB"]


def test_cabling_is_written_only_when_known_and_reads_back() -> None:
    inventory = from_node_list(fleet(2, 1), "nodes.yaml")
    plain = dump_yaml(to_data(inventory))
    assert "cabling" not in plain  # an inventory without a map is byte-identical
    cabled = with_cabling(inventory, {"gpu-0001": {"mlx5_3": SwitchPort("leaf-07", "Eth1/12")}})
    text = dump_yaml(to_data(cabled))
    block = "  - cabling:\n      mlx5_3:\n        port: Eth1/12\n        switch: leaf-07\n    cuda"
    assert text.count(block) == 1
    assert text.replace(block, "  - cuda") == plain
    doc, _ = load_document(text.encode(), "inventory.yaml")
    assert doc is not None
    back, found = read_inventory(doc)
    assert not found and back == cabled


@pytest.mark.parametrize(
    ("cabling", "line", "message"),
    [
        ("[]", 5, "cabling maps each HCA"),
        ("{'m x': {switch: a, port: b}}", 5, "'m x' is not an HCA name"),
        ("{mlx5_0: {switch: a}}", 5, "HCA mlx5_0 has a switch and a port"),
        ("{mlx5_0: {switch: a, port: '1 2'}}", 5, "'1 2' is not a switch port name"),
    ],
)
def test_a_bad_cabling_entry_in_an_inventory_file_is_nvc390(
    cabling: str, line: int, message: str
) -> None:
    text = "apiVersion: nvcregen.io/v1alpha1\nkind: Inventory\nnodes:\n  - name: gpu-1\n"
    text += f"    cabling: {cabling}\n"
    doc, _ = load_document(text.encode(), "inventory.yaml")
    assert doc is not None
    inventory, found = read_inventory(doc)
    assert inventory is None
    assert [(p.code, p.span.line) for p in found] == [("NVC390", line)]
    assert message in found[0].message


def test_one_switch_port_cabled_twice_in_an_inventory_file_is_nvc390() -> None:
    """As `--cabling` refuses it: a hand-edited inventory putting two HCAs on one port would
    name a failing rail by the wrong cable. Another port of the same switch is fine."""
    text = "apiVersion: nvcregen.io/v1alpha1\nkind: Inventory\nnodes:\n"
    text += "  - name: gpu-1\n    cabling: {mlx5_0: {switch: leaf-1, port: E1}}\n"
    text += "  - name: gpu-2\n    cabling: {mlx5_0: {switch: leaf-1, port: E2}}\n"
    doc, _ = load_document(text.encode(), "inventory.yaml")
    assert doc is not None
    inventory, found = read_inventory(doc)
    assert inventory is not None and not found
    twice = text.replace("port: E2", "port: E1")
    doc, _ = load_document(twice.encode(), "inventory.yaml")
    assert doc is not None
    inventory, found = read_inventory(doc)
    assert inventory is None
    assert [(p.code, p.span.line) for p in found] == [("NVC390", 7)]
    assert "is cabled to gpu-1 mlx5_0 already" in found[0].message
