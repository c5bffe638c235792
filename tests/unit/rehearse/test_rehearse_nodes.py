"""The nodes a rehearsal gives kwok, from the site's pools and inventory (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import CompileResult, Options, build_site
from nvcregen.fabric.inventory import node_record
from nvcregen.plan.model import Pool
from nvcregen.rehearse.nodes import (
    FakeNode,
    kwok_parallelism,
    node_object,
    site_nodes,
    taints_tolerated,
    unready,
)

ROOT = Path(__file__).resolve().parents[3]
TRAINER = ROOT / "sites" / "h20-3e-trainer.yaml"
FLEET = ROOT / "examples" / "fabric" / "fleet.yaml"


def pools(text: str, shown: str) -> list[Pool]:
    built = build_site(text.encode(), shown, load_catalog(), Options(root=ROOT))
    assert not isinstance(built, CompileResult), [str(d) for d in built.diagnostics]
    found: dict[str, Pool] = {}
    for unit in built.plan.units:
        found.setdefault(unit.pool.spec.name, unit.pool)
    return list(found.values())


def test_a_named_pool_gives_its_nodes_with_the_flavors_labels_gpus_and_nics() -> None:
    nodes = site_nodes(pools(TRAINER.read_text("utf-8"), "sites/h20-3e-trainer.yaml"))
    assert [n.name for n in nodes] == ["node-a", "node-b"]
    node = node_object(nodes[0])
    assert node["metadata"]["labels"] == {
        "kubernetes.io/hostname": "node-a",
        "type": "kwok",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-H20-3e",
    }
    assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    allocatable = node["status"]["allocatable"]
    assert (allocatable["nvidia.com/gpu"], allocatable["rdma/hca"]) == ("8", "8")
    assert node["status"]["capacity"] == allocatable
    assert node["spec"] == {}  # no taints: the pool tolerates none
    assert "addresses" not in node["status"]  # kwok writes its own (see node_object)


def test_a_pools_tolerations_become_its_nodes_taints() -> None:
    text = TRAINER.read_text("utf-8").replace(
        "      gpusPerNode: 8\n",
        "      gpusPerNode: 8\n      tolerations:\n"
        "        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
        "        - {key: dedicated, value: readiness}\n"
        "        - {operator: Exists}\n",
    )
    nodes = site_nodes(pools(text, "sites/h20-3e-trainer.yaml"))
    assert {n.taints for n in nodes} == {
        (("nvidia.com/gpu", "", "NoSchedule"), ("dedicated", "readiness", "NoSchedule"))
    }
    assert node_object(nodes[0])["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "readiness", "effect": "NoSchedule"},
    ]


def test_a_keyless_toleration_names_no_taint() -> None:
    assert taints_tolerated([{"operator": "Exists"}]) == []
    assert taints_tolerated([{"key": "a", "operator": "Exists", "effect": "NoExecute"}]) == [
        ("a", "", "NoExecute")
    ]


@pytest.mark.slow
def test_the_inventory_gives_fabric_labels_and_its_own_taints() -> None:
    """A keyless toleration names no taint, so these taints can only be the inventory's."""
    text = FLEET.read_text("utf-8").replace(
        "        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}",
        "        - {operator: Exists}",
    )
    nodes = site_nodes(pools(text, "examples/fabric/fleet.yaml"))
    assert len(nodes) == 1024
    first = nodes[0]
    assert first.name == "gpu-0000"
    assert {k: v for k, v in first.labels.items() if k.startswith("network.")} == {
        "network.topology.nvidia.com/accelerator": "nvl-0000",
        "network.topology.nvidia.com/core": "core-0",
        "network.topology.nvidia.com/leaf": "leaf-00",
        "network.topology.nvidia.com/spine": "spine-0",
    }
    assert first.taints == (("nvidia.com/gpu", "", "NoSchedule"),)
    assert first.devices == {"nvidia.com/gpu": 8, "rdma/ib": 8}


@pytest.mark.slow
def test_the_inventory_gives_the_driver_and_cuda_labels_it_was_read_from() -> None:
    """GPU feature discovery's labels, as the inventory recorded them: collect's drift
    check (NVC772) reads them back as the same versions, so a rehearsal reports none."""
    nodes = site_nodes(pools(FLEET.read_text("utf-8"), "examples/fabric/fleet.yaml"))
    first = nodes[0]
    assert {k: v for k, v in first.labels.items() if k.startswith("nvidia.com/cuda.")} == {
        "nvidia.com/cuda.driver-version.major": "570",
        "nvidia.com/cuda.driver-version.minor": "124",
        "nvidia.com/cuda.driver-version.revision": "06",
        "nvidia.com/cuda.runtime-version.major": "12",
        "nvidia.com/cuda.runtime-version.minor": "8",
    }
    read = node_record({"metadata": {"name": first.name, "labels": dict(first.labels)}})
    assert (read.driver, read.cuda) == ("570.124.06", "12.8")


TAINT = ("nvidia.com/gpu", "", "NoSchedule")


def listed_node(name: str, ready: str = "True", taints: object = None) -> dict[str, object]:
    spec = {} if taints is None else {"taints": taints}
    conditions = [{"type": "Ready", "status": ready}]
    return {"metadata": {"name": name}, "spec": spec, "status": {"conditions": conditions}}


def test_one_list_of_nodes_says_which_are_not_ready_with_their_taints() -> None:
    wanted = {
        "a": FakeNode("a", {}, (), {}),
        "b": FakeNode("b", {}, (TAINT,), {}),
        "c": FakeNode("c", {}, (), {}),
        "d": FakeNode("d", {}, (), {}),
    }
    taint = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    listed = [
        listed_node("a"),  # ready, no taint
        listed_node("b", taints=[taint]),  # ready with exactly its taint
        listed_node("c", taints=[not_ready]),  # the API server's taint not lifted yet
        listed_node("d", ready="False"),
        listed_node("other"),  # not one of ours
    ]
    assert unready(listed, wanted) == ["c", "d"]
    assert unready(listed[:1], wanted) == ["b", "c", "d"]  # missing from the list
    assert unready([listed_node("b")], {"b": wanted["b"]}) == ["b"]  # its taint missing
    assert unready([], {}) == []


def test_a_listed_node_of_the_wrong_shape_is_not_ready() -> None:
    wanted = {"a": FakeNode("a", {}, (), {})}
    for hostile in (
        {"metadata": "a", "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"metadata": {"name": 7}},
        {"metadata": {"name": "a"}, "status": {"conditions": "Ready"}},
        {"metadata": {"name": "a"}, "status": []},
        listed_node("a", taints="nvidia.com/gpu"),
        listed_node("a", taints=[{"key": "x"}]),  # an extra (half-written) taint
        {"metadata": {"name": "a"}, "status": {"conditions": ["Ready"]}},
    ):
        assert unready([hostile], wanted) == ["a"], hostile
    assert unready([listed_node("a", taints=["junk"])], wanted) == []  # no taint read


@pytest.mark.parametrize(
    ("nodes", "workers"), [(0, 4), (2, 4), (128, 4), (129, 5), (1024, 32), (2048, 64), (9999, 64)]
)
def test_kwok_plays_with_more_workers_for_more_nodes(nodes: int, workers: int) -> None:
    assert kwok_parallelism(nodes) == workers
