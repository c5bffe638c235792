"""A site against its inventory (NVC390-NVC394) and its fabric-aware stages (NVC395-NVC397)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fabricfactory import INVENTORY, fleet_inventory, fleet_site, write_project
from sitefactory import catalog, edit, line_of

from nvcregen.core.errors import Diagnostic
from nvcregen.emit.canonical import dump_yaml
from nvcregen.fabric.inventory import to_data
from nvcregen.spec.bounded import MAX_SITE_BYTES
from nvcregen.validate.site import load_site


def diagnose(folder: Path, text: str) -> list[Diagnostic]:
    (folder / "fleet.yaml").write_text(text)
    return load_site(text.encode(), "fleet.yaml", catalog(), root=folder).diagnostics


def codes(found: list[Diagnostic]) -> list[tuple[str, int]]:
    return [(d.code, d.span.line) for d in found if d.code.startswith("NVC39")]


def test_the_fleet_validates_against_its_inventory(tmp_path: Path) -> None:
    site = write_project(tmp_path, 16, 4)
    loaded = load_site(site.read_bytes(), "fleet.yaml", catalog(), root=tmp_path)
    assert [d for d in loaded.diagnostics if d.is_error] == []
    assert loaded.plan is not None and loaded.plan.inventory is not None
    assert len(loaded.plan.inventory.nodes) == 16
    assert loaded.plan is not None and loaded.plan.units[0].grouping is not None


def test_a_missing_inventory_is_nvc390_at_the_field(tmp_path: Path) -> None:
    text = fleet_site(16)
    found = diagnose(tmp_path, text)
    assert codes(found) == [("NVC390", line_of(text, f"inventory: {INVENTORY}"))]


def test_nodes_off_the_inventory_of_another_model_or_short_of_gpus(tmp_path: Path) -> None:
    write_project(tmp_path, 16, 4)
    inventory = (tmp_path / INVENTORY).read_text()
    inventory = inventory.replace("name: gpu-0003\n", "name: gpu-9999\n", 1)
    inventory = inventory.replace("count: 8", "count: 4", 1)  # gpu-0000
    inventory = inventory.replace("product: NVIDIA-H100-80GB-HBM3", "product: NVIDIA-L20", 2)
    (tmp_path / INVENTORY).write_text(inventory)
    text = fleet_site(16)
    found = {d.code: d.message for d in diagnose(tmp_path, text) if d.code.startswith("NVC39")}
    # dict keeps the last message per code: gpu-0001 for the two NVC392
    assert found["NVC391"] == "node gpu-0003 is not in the inventory"
    assert found["NVC393"] == "node gpu-0000 has 4 GPUs, the pool 8 per node"
    assert found["NVC392"] == (
        "node gpu-0001 has NVIDIA-L20, not the pool's H100 (NVIDIA-H100-80GB-HBM3)"
    )


def test_an_unplaced_node_is_nvc394(tmp_path: Path) -> None:
    write_project(tmp_path, 16, 4)
    inventory = (tmp_path / INVENTORY).read_text()
    inventory = inventory.replace("      network.topology.nvidia.com/leaf: leaf-03\n", "", 1)
    (tmp_path / INVENTORY).write_text(inventory)
    found = {d.code: d.message for d in diagnose(tmp_path, fleet_site(16))}
    assert (
        found["NVC394"]
        == "node gpu-0012 has no network.topology.nvidia.com/leaf label in the inventory"
    )


def test_groups_need_a_fabric_an_inventory_and_an_inter_node_stage(tmp_path: Path) -> None:
    write_project(tmp_path, 16, 4)
    text = edit(fleet_site(16), "      fabric: {}\n", "")
    assert codes(diagnose(tmp_path, text)) == [("NVC395", line_of(text, "groups: cross-leaf"))]
    text = edit(fleet_site(16), "scope: inter-node", "scope: intra-node")
    assert [c for c, _ in codes(diagnose(tmp_path, text))] == ["NVC396"]
    trainer = edit(
        fleet_site(16, "diagnose"), "  readiness:\n", "  readiness:\n    engine: trainer\n"
    )
    assert [c for c, _ in codes(diagnose(tmp_path, trainer))] == ["NVC396"]


def test_cross_leaf_needs_two_leaves(tmp_path: Path) -> None:
    write_project(tmp_path, 16, 1)
    assert [c for c, _ in codes(diagnose(tmp_path, fleet_site(16)))] == ["NVC397"]
    write_project(tmp_path, 16, 2)
    assert codes(diagnose(tmp_path, fleet_site(16))) == []


def test_pools_share_their_fabric_levels(tmp_path: Path) -> None:
    write_project(tmp_path, 16, 4)
    text = fleet_site(16)
    second = "    - name: other\n      model: H100\n      nodes: [gpu-0000]\n"
    other = text.replace(
        "  readiness:\n",
        second + "      fabric: {levels: {leaf: network.topology.nvidia.com/leaf}}\n  readiness:\n",
    )
    assert codes(diagnose(tmp_path, other)) == [("NVC398", line_of(other, "fabric: {levels"))]
    same = text.replace("  readiness:\n", second + "      fabric: {}\n  readiness:\n")
    assert codes(diagnose(tmp_path, same)) == []


@pytest.mark.slow
def test_an_inventory_over_a_site_files_size_is_read(tmp_path: Path) -> None:
    """A fleet's inventory passes the 1 MiB a site file may hold (2,500 nodes are about
    1.07 MB); it was refused as "larger than 1024 KiB ... a site file should be small"."""
    site = write_project(tmp_path, 16, 4)
    inventory = dump_yaml(to_data(fleet_inventory(2500, 625)))
    assert len(inventory.encode()) > MAX_SITE_BYTES
    (tmp_path / INVENTORY).write_text(inventory)
    loaded = load_site(site.read_bytes(), "fleet.yaml", catalog(), root=tmp_path)
    assert [d for d in loaded.diagnostics if d.is_error] == []
    assert loaded.plan is not None and loaded.plan.inventory is not None
    assert len(loaded.plan.inventory.nodes) == 2500


def test_a_topology_level_the_nodes_lack_is_nvc399_naming_the_level(tmp_path: Path) -> None:
    # Kueue places pods only on nodes carrying every Topology level (pkg/util/tas/node.go):
    # `fabric: {}` names core, spine, leaf and accelerator; an inventory without core and
    # accelerator labels would leave every run pending.
    write_project(tmp_path, 16, 4)
    inventory = (tmp_path / INVENTORY).read_text()
    lines = inventory.splitlines(keepends=True)
    kept = [x for x in lines if "topology.nvidia.com/core" not in x]
    kept = [x for x in kept if "topology.nvidia.com/accelerator" not in x]
    (tmp_path / INVENTORY).write_text("".join(kept))
    found = [d for d in diagnose(tmp_path, fleet_site(16)) if d.code == "NVC399"]
    assert found and found[0].is_error  # (after 20 per pool, one info counts the rest)
    assert found[0].message == (
        "node gpu-0000 has no network.topology.nvidia.com/core label in the inventory"
        " (the fabric's core level, a level of the site's Topology)"
    )
    assert "leave core out" in (found[0].hint or "")
    # naming only the levels the nodes carry renders
    text = edit(
        fleet_site(16),
        "fabric: {}",
        "fabric: {levels: {leaf: network.topology.nvidia.com/leaf,"
        " spine: network.topology.nvidia.com/spine}}",
    )
    assert [d.code for d in diagnose(tmp_path, text) if d.code in {"NVC394", "NVC399"}] == []


def test_a_node_labelled_by_topograph_v1_gets_the_key_to_name(tmp_path: Path) -> None:
    write_project(tmp_path, 16, 4)
    inventory = (tmp_path / INVENTORY).read_text()
    inventory = inventory.replace(
        "network.topology.nvidia.com/leaf:", "fabric.topograph.run/tier-0:"
    )
    (tmp_path / INVENTORY).write_text(inventory)
    found = [d for d in diagnose(tmp_path, fleet_site(16)) if d.code == "NVC394"]
    assert found
    assert found[0].hint == (
        "the node carries topograph v1's fabric.topograph.run/tier-0: set fabric.levels.leaf to it"
    )
    text = edit(
        fleet_site(16),
        "fabric: {}",
        "fabric: {levels: {leaf: fabric.topograph.run/tier-0,"
        " spine: network.topology.nvidia.com/spine, core: network.topology.nvidia.com/core,"
        " accelerator: network.topology.nvidia.com/accelerator}}",
    )
    assert [d.code for d in diagnose(tmp_path, text) if d.is_error] == []


def test_a_taint_the_runs_do_not_tolerate_is_nvc365_naming_it(tmp_path: Path) -> None:
    # The fleet's nodes carry nvidia.com/gpu:NoSchedule; Kueue's topology scheduler skips
    # nodes whose taints a pod does not tolerate.
    write_project(tmp_path, 16, 4)
    toleration = "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"
    toleration += "\n"
    bare = edit(fleet_site(16), toleration, "")
    found = [d for d in diagnose(tmp_path, bare) if d.code == "NVC365"]
    assert found and found[0].is_error
    assert found[0].message == (
        "node gpu-0000 carries the taint nvidia.com/gpu:NoSchedule in the inventory, which the"
        " pool's runs do not tolerate: Kueue's topology scheduler and kube-scheduler leave the"
        " node out, and its runs never start"
    )
    assert "key: nvidia.com/gpu, operator: Exists, effect: NoSchedule" in (found[0].hint or "")
    assert found[0].span.line == line_of(bare, "nodes: [gpu-0000")

    def codes_with(tolerations: str) -> list[str]:
        text = edit(fleet_site(16), toleration, f"      tolerations: {tolerations}\n")
        return [d.code for d in diagnose(tmp_path, text) if d.code == "NVC365"]

    assert codes_with("[{key: nvidia.com/gpu, operator: Exists}]") == []
    assert codes_with("[{operator: Exists}]") == []
    assert codes_with("[{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]") != []
    assert codes_with("[{key: nvidia.com/gpu, value: present}]") != []  # Equal: "" != present
    assert codes_with("[{key: other.io/x, operator: Exists}]") != []
    inventory = (tmp_path / INVENTORY).read_text().replace("NoSchedule", "PreferNoSchedule")
    (tmp_path / INVENTORY).write_text(inventory)
    assert [d.code for d in diagnose(tmp_path, bare) if d.code == "NVC365"] == []
