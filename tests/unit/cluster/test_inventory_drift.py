"""Drift between a site's inventory and the live nodes (NVC770-NVC773), from a local API server."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fabricfactory import INVENTORY, fleet_inventory, write_project
from fakeapi import closed_port_url, write_kubeconfig
from kubehttp import Received, serve_app

from nvcregen.check.inventory import tree_drift
from nvcregen.cluster import connect
from nvcregen.cluster.nodes import PAGE, live_inventory
from nvcregen.emit.canonical import dump_yaml
from nvcregen.fabric.drift import drift_diagnostics, inventory_drift
from nvcregen.fabric.inventory import to_data
from nvcregen.spec.load import load_document
from tools.fleet_nodes import fleet


class Nodes:
    """Answers `GET /api/v1/nodes` in pages, as kube-apiserver does with `limit`."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.calls: list[Received] = []

    def handle(self, request: Received) -> tuple[int, Any, dict[str, str]]:
        self.calls.append(request)
        if request.path != "/api/v1/nodes":
            return 404, {}, {}
        start = int((request.query.get("continue") or ["0"])[0])
        limit = int(request.query["limit"][0])
        page = self.items[start : start + limit]
        more = start + limit < len(self.items)
        metadata = {"continue": str(start + limit)} if more else {}
        return 200, {"kind": "NodeList", "items": page, "metadata": metadata}, {}


def changed_fleet() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = copy.deepcopy(fleet(PAGE + 20, 4)["items"])
    del items[3]  # gpu-0003 is gone
    items[0]["status"]["capacity"]["nvidia.com/gpu"] = "7"  # gpu-0000 lost a GPU
    items[1]["metadata"]["labels"]["network.topology.nvidia.com/leaf"] = "leaf-09"  # recabled
    return items


def test_drift_names_each_gone_short_or_changed_node() -> None:
    recorded = fleet_inventory(PAGE + 20, 4)
    from nvcregen.fabric.inventory import from_nodes

    live = from_nodes(changed_fleet(), "live")
    found = [(d.node, d.code, d.message) for d in inventory_drift(recorded, live)]
    assert found == [
        ("gpu-0000", "NVC771", "node gpu-0000 has 7 GPUs, the inventory 8"),
        (
            "gpu-0001",
            "NVC772",
            "node gpu-0001: network.topology.nvidia.com/leaf is leaf-09, the inventory leaf-00",
        ),
        ("gpu-0003", "NVC770", "node gpu-0003 of the inventory is gone"),
    ]
    assert inventory_drift(recorded, recorded) == []


def test_drift_is_reported_at_the_nodes_entry_in_the_inventory_file() -> None:
    recorded = fleet_inventory(8, 2)
    text = dump_yaml(to_data(recorded))
    doc, _ = load_document(text.encode(), INVENTORY)
    assert doc is not None
    live = fleet_inventory(8, 2)
    live.nodes.pop("gpu-0005")  # type: ignore[attr-defined]
    (found,) = drift_diagnostics(doc, recorded, live)
    line = text.splitlines()[found.span.line - 1]
    assert found.code == "NVC770" and found.span.file == INVENTORY
    assert line.lstrip().startswith("- ") and found.path == "/nodes/5"


def test_live_nodes_are_read_page_by_page(tmp_path: Path) -> None:
    app = Nodes(changed_fleet())
    with serve_app(app) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url, closed_port_url())
        live = live_inventory(connect("ctx", kubeconfig))
    assert len(live.nodes) == PAGE + 19
    assert [c.query.get("continue") for c in app.calls] == [None, [str(PAGE)]]


@pytest.mark.slow
def test_check_server_finds_the_drift_of_rendered_sites(tmp_path: Path) -> None:
    write_project(tmp_path, PAGE + 20, 4)
    (tmp_path / "out" / "fleet").mkdir(parents=True)
    index = {"site": "fleet", "source": {"file": "fleet.yaml"}}
    (tmp_path / "out" / "fleet" / "index.json").write_text(json.dumps(index))
    with serve_app(Nodes(changed_fleet())) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url, closed_port_url())
        found = tree_drift(tmp_path / "out", tmp_path, connect("ctx", kubeconfig))
    assert [(d.code, d.span.file) for d in found] == [
        ("NVC771", INVENTORY),
        ("NVC772", INVENTORY),
        ("NVC770", INVENTORY),
    ]
    down = write_kubeconfig(tmp_path / "down", closed_port_url(), closed_port_url())
    unreachable = tree_drift(tmp_path / "out", tmp_path, connect("ctx", down, sleep=lambda _: None))
    assert [(d.code, d.severity.value) for d in unreachable] == [("NVC773", "warning")]
    shutil.rmtree(tmp_path / "out" / "fleet")
    assert tree_drift(tmp_path / "out", tmp_path, connect("ctx", down)) == []  # no site, no call


@pytest.mark.slow
def test_inventory_from_a_context_matches_one_from_the_export(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from nvcregen.cli import main

    items = fleet(PAGE + 3, 4)["items"]
    (tmp_path / "nodes.json").write_text(json.dumps({"kind": "List", "items": items}))
    with serve_app(Nodes(items)) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url, closed_port_url())
        args = ["inventory", "--context", "ctx", "--kubeconfig", str(kubeconfig)]
        live = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "live.yaml")])
    saved = CliRunner().invoke(main, ["inventory", "--from", str(tmp_path / "nodes.json")])
    assert live.exit_code == 0 and saved.exit_code == 0
    body = (tmp_path / "live.yaml").read_text().replace("source: context ctx", "")
    assert body == saved.stdout.replace("source: nodes.json", "")
    target = tmp_path / "x.yaml"
    down = ["inventory", "--context", "nope", "--kubeconfig", str(kubeconfig), "-o", str(target)]
    refused = CliRunner().invoke(main, down)
    assert refused.exit_code == 2 and "context 'nope'" in refused.output
    assert not target.exists()


def test_check_server_reports_a_changed_driver_or_cuda_version(tmp_path: Path) -> None:
    """Issue #32: a driver or CUDA upgrade is drift, under GFD's older and newer labels."""
    write_project(tmp_path, 8, 2)
    (tmp_path / "out" / "fleet").mkdir(parents=True)
    index = {"site": "fleet", "source": {"file": "fleet.yaml"}}
    (tmp_path / "out" / "fleet" / "index.json").write_text(json.dumps(index))
    items = copy.deepcopy(fleet(8, 2)["items"])
    newer = {"major": "580", "minor": "65", "revision": "06", "full": "580.65.06"}
    items[0]["metadata"]["labels"].update(
        {f"nvidia.com/cuda.driver-version.{k}": v for k, v in newer.items()}
    )  # read before the older labels, which GFD still writes beside them
    items[1]["metadata"]["labels"]["nvidia.com/cuda.runtime.minor"] = "9"
    del items[2]["metadata"]["labels"]["nvidia.com/cuda.driver.major"]  # GFD gone
    with serve_app(Nodes(items)) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url, closed_port_url())
        found = tree_drift(tmp_path / "out", tmp_path, connect("ctx", kubeconfig))
    assert [(d.code, d.path, d.message) for d in found] == [
        ("NVC772", "/nodes/0", "node gpu-0000: driver 580.65.06, the inventory 570.124.06"),
        ("NVC772", "/nodes/1", "node gpu-0001: CUDA 12.9, the inventory 12.8"),
        ("NVC772", "/nodes/2", "node gpu-0002: driver not labelled, the inventory 570.124.06"),
    ]
