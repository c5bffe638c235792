"""`nvcregen inventory`, `plan` coverage and `drill`, end to end in a scratch project."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fabricfactory import INVENTORY, write_project

from nvcregen.cli import main
from nvcregen.emit.cache import site_input_key
from tools.fleet_nodes import fleet


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_inventory_from_an_export_is_written_sorted_and_the_same_twice(project: Path) -> None:
    export = project / "nodes.json"
    data = fleet(8, 2)
    data["items"].reverse()
    export.write_text(json.dumps(data))
    assert run("inventory", "--from", "nodes.json", "-o", "a.yaml").exit_code == 0
    assert run("inventory", "--from", "nodes.json", "-o", "b.yaml").exit_code == 0
    text = (project / "a.yaml").read_text()
    assert text == (project / "b.yaml").read_text()
    names = [line.split(": ")[1] for line in text.splitlines() if line.startswith("    name: ")]
    assert names == sorted(names) and len(names) == 8
    assert sorted(p.name for p in project.iterdir()) == ["a.yaml", "b.yaml", "nodes.json"]


def test_a_bad_export_writes_nothing(project: Path) -> None:
    (project / "nodes.yaml").write_text("kind: List\nitems:\n  - &a {kind: Node}\n  - *a\n")
    result = run("inventory", "--from", "nodes.yaml", "-o", "out.yaml")
    assert result.exit_code == 2 and "NVC780" in result.output
    assert not (project / "out.yaml").exists()
    assert run("inventory").exit_code == 2  # neither --from nor --context


@pytest.mark.slow
def test_plan_states_every_steps_coverage(project: Path) -> None:
    write_project(project, 64, 8)
    result = run("plan", "fleet.yaml", "--format", "json")
    assert result.exit_code == 0, result.output
    (step,) = json.loads(result.stdout)[0]["steps"]
    assert step["coverage"] == {
        "nodes": 64, "nodesTotal": 64, "leafPairs": 28, "leafPairsTotal": 28, "rounds": 7,
    }  # fmt: skip
    text = run("plan", "fleet.yaml").stdout
    assert "gpu-[0000-0063]  64/64 nodes, 28/28 leaf pairs in 7 rounds" in text
    assert (
        "| gpu-[0000-0063] | 64/64 nodes, 28/28 leaf pairs in 7 rounds |"
        in run("plan", "fleet.yaml", "--format", "markdown").stdout
    )


@pytest.mark.slow
def test_drill_names_a_node_and_a_link(project: Path) -> None:
    write_project(project, 64, 8)
    node = run("drill", "fleet.yaml", "--fail", "gpu-0042")
    assert node.exit_code == 0, node.output
    assert node.stdout.startswith("injected node gpu-0042: named (node gpu-0042)\n")
    link = json.loads(
        run("drill", "fleet.yaml", "--fail", "leaf-05,leaf-02", "--format", "json").stdout
    )
    assert (link["named"], link["found"]) == ("link leaf-02,leaf-05", True)
    bad = run("drill", "fleet.yaml", "--fail", "leaf-02,leaf-99")
    assert bad.exit_code == 2 and "NVC781" in bad.output
    assert run("drill", "fleet.yaml", "--fail", "gpu-9999").exit_code == 2


def test_the_render_cache_key_holds_the_inventory(project: Path) -> None:
    site = write_project(project, 16, 4)
    before = site_input_key(site, project)
    inventory = project / INVENTORY
    inventory.write_text(inventory.read_text().replace("leaf-03", "leaf-02"))
    assert site_input_key(site, project) not in {None, before}


def test_an_export_holding_a_secret_writes_no_inventory(project: Path) -> None:
    """The inventory is committed and validate refuses a secret in it (NVC114): a token in
    a node's taint or fabric label was written into the project all the same."""
    data = fleet(4, 2)
    token = "ci_ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    data["items"][1]["spec"]["taints"].append(
        {"key": "team", "value": token, "effect": "NoSchedule"}
    )
    (project / "nodes.json").write_text(json.dumps(data))
    for output in (["-o", "out.yaml"], []):
        result = run("inventory", "--from", "nodes.json", *output)
        assert result.exit_code == 2
        assert (
            "NVC780: node gpu-0001, /taints/1/value holds a GitHub token; nothing written"
        ) in result.output
        assert "ghp_" not in result.output
    assert sorted(p.name for p in project.iterdir()) == ["nodes.json"]


def test_a_fifo_export_is_refused_without_blocking(project: Path) -> None:
    """`--from` a FIFO waited forever for a writer (#19 refused FIFOs in out/ for this)."""
    os.mkfifo(project / "nodes.yaml")
    result = run("inventory", "--from", "nodes.yaml", "-o", "out.yaml")
    assert result.exit_code == 2
    assert "NVC780: nodes.yaml cannot be read: " in result.output
    assert "not a regular file" in result.output
    assert not (project / "out.yaml").exists()


def test_inventory_with_a_cabling_map_names_each_hcas_switch_port(project: Path) -> None:
    (project / "nodes.json").write_text(json.dumps(fleet(2, 1)))
    (project / "cabling.csv").write_text(
        "node,hca,switch,port\ngpu-0001,mlx5_3,leaf-07,Ethernet1/12\n"
    )
    result = run("inventory", "--from", "nodes.json", "--cabling", "cabling.csv", "-o", "i.yaml")
    assert result.exit_code == 0, result.output
    text = (project / "i.yaml").read_text()
    assert (
        "  - cabling:\n      mlx5_3:\n        port: Ethernet1/12\n        switch: leaf-07\n" in text
    )
    assert text.count("cabling:") == 1  # gpu-0000 has none: nothing is written for it


def test_a_bad_cabling_map_writes_nothing(project: Path) -> None:
    (project / "nodes.json").write_text(json.dumps(fleet(2, 1)))
    (project / "cabling.csv").write_text(
        "node,hca,switch,port\ngpu-0001,mlx5_3,leaf-07,Ethernet1/12\ngpu-0009,mlx5_0,a,b\n"
    )
    result = run("inventory", "--from", "nodes.json", "--cabling", "cabling.csv", "-o", "i.yaml")
    assert result.exit_code == 2
    assert "cabling.csv:3:1: NVC790: node gpu-0009 is not in the inventory" in result.output
    assert "1 problem in the cabling map; nothing written (hint: a CSV" in result.output
    assert not (project / "i.yaml").exists()


@pytest.mark.slow
def test_drill_injects_a_rail_found_as_its_node_and_named_with_its_switch_port(
    project: Path,
) -> None:
    write_project(project, 64, 8)
    plain = run("drill", "fleet.yaml", "--fail", "gpu-0042/mlx5_3")
    assert plain.exit_code == 0, plain.output
    assert plain.stdout.startswith("injected rail gpu-0042 mlx5_3: named (node gpu-0042)\n")
    assert "  a rail is found as its node: each run of the node's RDMA tests" in plain.stdout
    node = run("drill", "fleet.yaml", "--fail", "gpu-0042")
    assert "a rail is found" not in node.stdout  # a node's drill prints as it did
    inventory = project / INVENTORY
    text = inventory.read_text().replace(
        "    name: gpu-0042\n",
        "    name: gpu-0042\n    cabling:\n      mlx5_3: {switch: leaf-05, port: Ethernet1/12}\n",
    )
    assert text != inventory.read_text()
    inventory.write_text(text)
    cabled = run("drill", "fleet.yaml", "--fail", "gpu-0042/mlx5_3", "--format", "json")
    assert cabled.exit_code == 0, cabled.output
    data = json.loads(cabled.stdout)
    assert (data["fault"], data["found"]) == ("node gpu-0042", True)
    assert data["rail"] == {
        "node": "gpu-0042",
        "hca": "mlx5_3",
        "switchPort": "leaf-05 Ethernet1/12",
    }
    assert "rail" not in json.loads(
        run("drill", "fleet.yaml", "--fail", "gpu-0042", "--format", "json").stdout
    )
    assert run("drill", "fleet.yaml", "--fail", "gpu-0042/mlx5_3").stdout.startswith(
        "injected rail gpu-0042 mlx5_3 (leaf-05 Ethernet1/12): named (node gpu-0042)\n"
    )
    bad = run("drill", "fleet.yaml", "--fail", "gpu-0042/mlx5_9")
    assert bad.exit_code == 2
    assert "NVC792: --fail gpu-0042/mlx5_9: 'mlx5_9' is not an HCA of pool" in bad.output
    assert "(its HCAs: mlx5_0, mlx5_1," in bad.output
    unknown = run("drill", "fleet.yaml", "--fail", "gpu-9999/mlx5_3")
    assert unknown.exit_code == 2 and "NVC781" in unknown.output
