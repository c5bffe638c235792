"""`collect --from DIR`: the nodes saved in DIR against the site's inventory (NVC770-NVC773).

Issue #32: drift was compared only with a cluster's live nodes; a folder of saved results
with `kubectl get nodes -o yaml` beside them reported none. The site sits in another
project than the current folder, so its `spec.inventory` must be found from the site's
project (`chain/sites.py` site_root), as render finds it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from nodehealthlogs import EXAMPLES, health_log
from oncallfactory import dcgm_log
from sitefactory import parse, plan_of, site_yaml

from nvcregen.cli import main
from nvcregen.collect import nodedrift
from nvcregen.collect.model import LoadedSite
from nvcregen.collect.nodedrift import saved_drift_notes
from nvcregen.fabric.inventory import from_nodes
from nvcregen.results.archivefiles import SiteFile

NODES = ("h200-a", "h200-b", "h200-c")


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def node(name: str, driver: str = "580.159.04", cuda: str = "13.0") -> dict[str, Any]:
    """A Node as `kubectl get nodes -o yaml` lists it, with GFD's older and newer labels."""
    major, minor, rev = driver.split(".")
    runtime_major, runtime_minor = cuda.split(".")
    labels = {
        "nvidia.com/gpu.product": "NVIDIA-H200",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.driver-version.major": major,
        "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.driver-version.full": driver,
        "nvidia.com/cuda.runtime.major": runtime_major,
        "nvidia.com/cuda.runtime.minor": runtime_minor,
        "nvidia.com/cuda.runtime-version.major": runtime_major,
        "nvidia.com/cuda.runtime-version.minor": runtime_minor,
        "nvidia.com/cuda.runtime-version.full": cuda,
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": {"nvidia.com/gpu": "8"}},
    }


def node_list(items: list[dict[str, Any]]) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


def changed_nodes() -> list[dict[str, Any]]:
    """h200-b's driver upgraded, h200-c's CUDA; h200-a as inventoried."""
    return [node("h200-a"), node("h200-b", driver="580.200.01"), node("h200-c", cuda="13.1")]


def project(tmp_path: Path, mode: str) -> Path:
    """tmp/project/sites/<mode>.yaml naming inventory.yaml, written by `nvcregen inventory`."""
    root = tmp_path / "project"
    (root / "sites").mkdir(parents=True)
    text = (EXAMPLES / f"h200-{mode}.yaml").read_text()
    text = text.replace("  nodePools:\n", "  inventory: inventory.yaml\n  nodePools:\n", 1)
    site = root / "sites" / f"{mode}.yaml"
    site.write_text(text)
    (tmp_path / "nodes.yaml").write_text(node_list([node(n) for n in NODES]))
    written = run("inventory", "--from", tmp_path / "nodes.yaml", "-o", root / "inventory.yaml")
    assert written.exit_code == 0, written.output
    return site


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # outside the site's project
    return tmp_path


def saved_folder(tmp_path: Path, tree: Path, kinds: set[str]) -> Path:
    """A `--from` folder: the rendered runs of `kinds` and a node-health log per node."""
    saved = tmp_path / "saved"
    (saved / "logs" / "nvcre").mkdir(parents=True)
    for path in sorted(tree.rglob("*.yaml")):
        obj = yaml.safe_load(path.read_text())
        if isinstance(obj, dict) and obj.get("kind") in kinds:
            (saved / path.name).write_text(path.read_text())
    return saved


EXPECTED = [
    "note: NVC772: node h200-b: driver 580.200.01, the inventory 580.159.04"
    " (the nodes saved in the folder)",
    "note: NVC772: node h200-c: CUDA 13.1, the inventory 13.0 (the nodes saved in the folder)",
]


def drift_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "NVC77" in line]


def test_nvcre_mode_compares_the_saved_nodes_with_the_inventory(elsewhere: Path) -> None:
    site = project(elsewhere, "nvcre")
    rendered = run("render", site, "--out", elsewhere / "out")
    assert rendered.exit_code == 0, rendered.output
    saved = saved_folder(elsewhere, elsewhere / "out" / "node-health-nvcre", {"WorkloadRun"})
    for name in NODES:
        (saved / "logs" / "nvcre" / f"node-health-{name}.log").write_text(health_log(name))
    (saved / "nodes.yaml").write_text(node_list(changed_nodes()))
    results = elsewhere / "results"
    collected = run("collect", "--site", site, "--from", saved, "--out", results)
    assert "NVC390" not in collected.output  # the inventory is found from the site's project
    assert drift_lines(collected.output) == EXPECTED
    (saved / "nodes.yaml").unlink()  # none saved: said so, never a silent pass
    again = run("collect", "--site", site, "--from", saved, "--out", results)
    assert drift_lines(again.output) == [
        "note: NVC773: no Node objects saved in the folder: drift from the inventory not"
        " checked (save every node beside the results: `kubectl get nodes -o yaml >"
        " DIR/nodes.yaml`)"
    ]


def test_trainer_mode_compares_the_saved_nodes_with_the_inventory(elsewhere: Path) -> None:
    site = project(elsewhere, "trainer")
    rendered = run("render", site, "--out", elsewhere / "out")
    assert rendered.exit_code == 0, rendered.output
    saved = saved_folder(elsewhere, elsewhere / "out" / "node-health-trainer", set())
    for path in sorted((elsewhere / "out").rglob("*.yaml")):
        job = yaml.safe_load(path.read_text())
        if not isinstance(job, dict) or job.get("kind") != "Job":
            continue
        name, test = job["metadata"]["name"], job["metadata"]["labels"]["nvcregen.io/test"]
        pinned = job["metadata"]["annotations"]["nvcregen.io/nodes"]
        text = health_log(pinned) if test == "node-health" else dcgm_log(name, pinned)
        (saved / "logs" / "nvcre" / f"{name}.log").write_text(text)
    listed = {"apiVersion": "v1", "kind": "List", "items": changed_nodes()}
    (saved / "nodes.json").write_text(json.dumps(listed))  # as `-o json` writes it
    collected = run("collect", "--site", site, "--from", saved, "--out", elsewhere / "results")
    assert "NVC390" not in collected.output
    assert drift_lines(collected.output) == EXPECTED, collected.output


def loaded_with(nodes: list[dict[str, Any]] | None) -> LoadedSite:
    """The default site's plan, with an inventory of `nodes` (None: the site names none)."""
    inventory = from_nodes(nodes, "nodes.yaml") if nodes is not None else None
    plan = dataclasses.replace(plan_of(*parse(site_yaml())), inventory=inventory)
    return LoadedSite(plan, SiteFile(plan.name, "site.yaml", ""))


def test_saved_nodes_gone_short_or_unreadable_are_notes() -> None:
    loaded = loaded_with([node(n) for n in NODES])
    assert saved_drift_notes(loaded, [node(n) for n in NODES]) == ()
    fewer = copy.deepcopy(node("h200-a"))
    fewer["status"]["capacity"]["nvidia.com/gpu"] = "7"
    assert saved_drift_notes(loaded, [fewer, node("h200-b")]) == (
        "NVC771: node h200-a has 7 GPUs, the inventory 8 (the nodes saved in the folder)",
        "NVC770: node h200-c of the inventory is gone (the nodes saved in the folder)",
    )
    bad = node("h200-a")
    bad["metadata"]["name"] = "h200-a/status"
    (note,) = saved_drift_notes(loaded, [bad])
    assert note.startswith("NVC773: the saved nodes cannot be compared with the inventory: ")
    other = {**node("h200-a"), "apiVersion": "example.com/v1"}  # not a core Node
    (none,) = saved_drift_notes(loaded, [other])
    assert none.startswith("NVC773: no Node objects saved in the folder")
    assert saved_drift_notes(loaded_with(None), [bad]) == ()


def test_at_most_max_nodes_saved_nodes_are_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = loaded_with([node(n) for n in NODES])
    monkeypatch.setattr(nodedrift, "MAX_NODES", 3)
    assert saved_drift_notes(loaded, [node(n) for n in NODES]) == ()
    four = [*(node(n) for n in NODES), node("h200-d")]
    assert saved_drift_notes(loaded, four) == ("NVC773: 4 saved nodes; at most 3 are compared",)
