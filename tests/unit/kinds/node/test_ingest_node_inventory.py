"""Node health against the site's inventory: each node's driver, CUDA and GPU count.

The pool's `expect` wins where it states a fact; the inventory's entry for the node fills
what it leaves out, and the finding says which of the two the value came from.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from nvcregen.cli import main
from nvcregen.fabric.inventory import Inventory, InventoryNode, from_nodes
from nvcregen.kinds.node.expect import NodeInventory, for_node
from nvcregen.kinds.node.files import ingest_nodes
from nvcregen.kinds.node.health import Expectations, same_version

ROOT = Path(__file__).resolve().parents[4]
NODE = ROOT / "tests" / "fixtures" / "node"
REAL = NODE / "h200-vm" / "nvidia-smi-q.xml"  # driver 580.159.04, CUDA 13.0, one H200
OTHER = NODE / "faults" / "driver-other" / "nvidia-smi-q.xml"  # driver 570.195.03
UNSTATED = ("        driver: 580.159.04\n", '        cuda: "13.0"\n')


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def project(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, node: dict[str, object], *, stated: bool = False
) -> Path:
    """A project folder with node-site.yaml naming inventory.yaml, which lists `node`."""
    text = (NODE / "node-site.yaml").read_text()
    for line in () if stated else UNSTATED:
        assert line in text
        text = text.replace(line, "")
    text = text.replace("  nodePools:\n", "  inventory: inventory.yaml\n  nodePools:\n")
    (tmp / "site.yaml").write_text(text)
    inventory = {"apiVersion": "nvcregen.io/v1alpha1", "kind": "Inventory", "nodes": [node]}
    (tmp / "inventory.yaml").write_text(yaml.safe_dump(inventory))
    monkeypatch.chdir(tmp)
    return tmp / "site.yaml"


def entry(driver: str | None = "580.159.04", cuda: str | None = "13.0") -> dict[str, object]:
    node: dict[str, object] = {"name": "h200-vm", "gpu": {"product": "NVIDIA-H200", "count": 1}}
    node.update({k: v for k, v in (("driver", driver), ("cuda", cuda)) if v is not None})
    return node


def capture(tmp: Path, xml: Path, node: str = "h200-vm") -> Path:
    """The capture in a folder named for its node (a capture folder is one node)."""
    folder = tmp / "captures" / node
    folder.mkdir(parents=True)
    return Path(shutil.copy(xml, folder / "nvidia-smi-q.xml"))


def findings(result: Result) -> list[dict[str, str]]:
    (node,) = json.loads(result.stdout)["nodes"]
    found: list[dict[str, str]] = node["findings"]
    return found


def test_a_driver_other_than_the_inventory_records_is_drift_naming_the_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = project(tmp_path, monkeypatch, entry())
    result = run(
        "ingest", "node", capture(tmp_path, OTHER), "--site", site, "--pool", "h200",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 1
    (found,) = findings(result)
    assert (found["code"], found["severity"]) == ("NVC817", "error")
    assert found["message"] == (
        "drift: driver 570.195.03, where the inventory (inventory.yaml) records 580.159.04 "
        "for this node"
    )
    assert "inventory entry (inventory.yaml)" in found["hint"]


def test_the_same_node_with_a_matching_inventory_is_healthy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = project(tmp_path, monkeypatch, entry())
    result = run("ingest", "node", capture(tmp_path, REAL), "--site", site, "--pool", "h200")
    assert result.exit_code == 0, result.output


def test_a_cuda_version_other_than_the_inventory_records_is_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = project(tmp_path, monkeypatch, entry(cuda="12.8"))
    result = run(
        "ingest", "node", capture(tmp_path, REAL), "--site", site, "--pool", "h200",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 1
    assert [f["message"] for f in findings(result)] == [
        "drift: cuda 13.0, where the inventory (inventory.yaml) records 12.8 for this node"
    ]


def test_the_pools_expect_wins_over_the_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = project(tmp_path, monkeypatch, entry(driver="570.195.03", cuda="12.8"), stated=True)
    real = run("ingest", "node", capture(tmp_path, REAL), "--site", site, "--pool", "h200")
    assert real.exit_code == 0, real.output  # the pool states 580.159.04 and CUDA 13.0
    other = run(
        "ingest", "node", capture(tmp_path, OTHER, "other/h200-vm"), "--site", site,
        "--pool", "h200", "--format", "json",
    )  # fmt: skip
    assert [f["message"] for f in findings(other)] == [
        "drift: driver 570.195.03, the pool expects 580.159.04"
    ]


def test_an_inventory_entry_without_versions_gives_no_expectation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = project(tmp_path, monkeypatch, entry(driver=None, cuda=None))
    result = run("ingest", "node", capture(tmp_path, OTHER), "--site", site, "--pool", "h200")
    assert result.exit_code == 0, result.output


def test_a_node_the_inventory_does_not_list_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = project(tmp_path, monkeypatch, entry(driver="570.195.03"))
    result = run(
        "ingest", "node", capture(tmp_path, REAL, "h200-new"), "--site", site, "--pool", "h200",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 1
    (found,) = findings(result)  # and no drift from another node's entry
    assert (found["code"], found["severity"]) == ("NVC822", "warning")
    assert found["message"].startswith("not in the inventory (inventory.yaml)")


def test_gfd_driver_labels_read_as_nvidia_smi_prints_the_driver(tmp_path: Path) -> None:
    labels = {
        "nvidia.com/cuda.driver.major": "580",
        "nvidia.com/cuda.driver.minor": "159",
        "nvidia.com/cuda.driver.rev": "04",
        "nvidia.com/cuda.runtime.major": "13",
        "nvidia.com/cuda.runtime.minor": "0",
        "nvidia.com/gpu.count": "1",
    }
    node = {"kind": "Node", "metadata": {"name": "h200-vm", "labels": labels}}
    inventory = from_nodes([node], "nodes.yaml")
    assert (inventory.nodes["h200-vm"].driver, inventory.nodes["h200-vm"].cuda) == (
        "580.159.04",
        "13.0",
    )
    given = NodeInventory("inventory.yaml", inventory, gpus_stated=False)
    healthy = ingest_nodes([REAL], Expectations(), given)
    assert healthy.exit_code == 0  # the real capture's driver string, like with like
    drifted = ingest_nodes([capture(tmp_path, OTHER)], Expectations(), given)
    assert [f.code for f in drifted.nodes[0].findings] == ["NVC817"]


@pytest.mark.parametrize(
    ("seen", "stated", "same"),
    [
        ("580.159.04", "580.159.04", True),
        ("580.159.04", "580.159.4", True),  # a revision written without its zero
        ("580.159.04", "580.159.05", False),
        ("550.120", "550.120", True),  # GFD leaves the revision empty for such drivers
        ("13.0", "13", False),  # a missing component is not a zero
        ("13.0", "13.0.1", False),
        ("r580", "r580", True),
        ("r580", "580", False),
    ],
)
def test_versions_compare_like_with_like(seen: str, stated: str, same: bool) -> None:
    assert same_version(seen, stated) is same


def _inventory(**fields: object) -> NodeInventory:
    node = InventoryNode("n1", **fields)  # type: ignore[arg-type]
    return NodeInventory("inv.yaml", Inventory("nodes.yaml", {"n1": node}), gpus_stated=False)


def test_for_node_takes_only_what_the_entry_records_and_the_pool_leaves_out() -> None:
    pool = Expectations(driver=None, cuda="13.0", gpus_per_node=8, source="pool h200")
    full = for_node(pool, "n1", _inventory(driver="580.159.04", cuda="12.8", gpus=4))
    assert (full.driver, full.cuda, full.gpus_per_node) == ("580.159.04", "13.0", 4)
    assert full.from_inventory == frozenset({"driver", "gpus"})
    empty = for_node(pool, "n1", _inventory())
    assert (empty.driver, empty.cuda, empty.gpus_per_node) == (None, "13.0", 8)
    assert empty.from_inventory == frozenset()
    assert not empty.unlisted
    stated = NodeInventory("inv.yaml", _inventory(gpus=4).inventory, gpus_stated=True)
    assert for_node(pool, "n1", stated).gpus_per_node == 8  # the pool's gpusPerNode wins
    gone = for_node(pool, "n2", _inventory(driver="580.159.04"))
    assert (gone.unlisted, gone.driver, gone.inventory) == (True, None, "inv.yaml")
    assert for_node(pool, "n1", None) is pool


def test_a_gpu_count_from_the_inventory_names_it(tmp_path: Path) -> None:
    given = _inventory(gpus=2)
    folder = tmp_path / "n1"
    folder.mkdir()
    shutil.copy(REAL, folder / "nvidia-smi-q.xml")
    result = ingest_nodes([folder / "nvidia-smi-q.xml"], Expectations(gpus_per_node=8), given)
    assert [f.message for f in result.nodes[0].findings] == [
        "drift: 1 GPUs, where the inventory (inv.yaml) records 2 for this node"
    ]
    one = ingest_nodes([folder / "nvidia-smi-q.xml"], Expectations(), _inventory(gpus=1))
    assert one.exit_code == 0


def test_an_unreadable_inventory_exits_2_at_its_line_and_judges_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = project(tmp_path, monkeypatch, {"name": "h200-vm", "driver": 580})
    result = run("ingest", "node", capture(tmp_path, REAL), "--site", site, "--pool", "h200")
    assert result.exit_code == 2
    assert "inventory.yaml:" in result.stderr
    assert "error[NVC390]" in result.stderr
    assert result.stdout == ""
