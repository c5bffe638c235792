"""The nvbandwidth kind end to end (issue #36, item 4): render, check, plan and collect.

A three-node H100 site (the node-health examples, re-pooled) runs `nvbandwidth` alone,
in both engines, with a threshold naming it. Saved trainer-mode logs are the real H100
SXM captures behind the script's begin line (tests/fixtures/captures/nvbandwidth/): one
node's host->device figure edited under the catalog's 48 GB/s floor must fail that node,
naming the GPU; a log naming another node is another run's evidence (NVC730).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parents[4]
CAPTURES = ROOT / "tests" / "fixtures" / "captures" / "nvbandwidth"
EXAMPLES = ROOT / "examples" / "node-health"
NODES = ("h100-a", "h100-b", "h100-c")
pytestmark = pytest.mark.slow


def site_text(engine: str) -> str:
    data = yaml.safe_load((EXAMPLES / f"h200-{engine}.yaml").read_text())
    data["metadata"]["name"] = f"nvbw-{engine}"
    spec = data["spec"]
    spec["cluster"] = f"nvbw-{engine}"
    # one GPU a node, as the captures' lent machine had: a run on another number of GPUs
    # than its node's is no evidence for it (test_a_run_on_fewer_gpus_than_its_node_fails)
    pool = {"name": "h100", "model": "H100", "nodes": list(NODES), "gpusPerNode": 1}
    spec["nodePools"] = [pool]
    spec["readiness"]["stages"] = [
        {"name": "copies", "scope": "intra-node", "tests": ["nvbandwidth"]}
    ]
    spec["thresholds"] = [{"test": "nvbandwidth", "scope": "intra-node", "note": "catalog floors"}]
    spec["gitops"]["path"] = f"out/nvbw-{engine}"
    return yaml.safe_dump(data, sort_keys=False)


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nvbw")
    (root / "sites").mkdir()
    for engine in ("trainer", "nvcre"):
        (root / "sites" / f"nvbw-{engine}.yaml").write_text(site_text(engine))
    return root


def objects(tree: Path, kind: str) -> list[dict[str, Any]]:
    found = [yaml.safe_load(p.read_text()) for p in sorted(tree.rglob("*.yaml"))]
    return [o for o in found if isinstance(o, dict) and o.get("kind") == kind]


@pytest.mark.parametrize("engine", ["trainer", "nvcre"])
def test_a_site_naming_nvbandwidth_renders_checks_and_plans(
    project: Path, engine: str, tmp_path: Path
) -> None:
    site = project / "sites" / f"nvbw-{engine}.yaml"
    rendered = run("render", "--out", tmp_path / "out", site)
    assert rendered.exit_code == 0, rendered.output
    tree = tmp_path / "out" / f"nvbw-{engine}"
    assert run("check", tmp_path / "out").exit_code == 0
    plan = run("plan", site)
    assert plan.exit_code == 0, plan.output
    step = next(line for line in plan.stdout.splitlines() if "01-copies" in line)
    assert "h100-a,h100-b,h100-c" in step
    if engine == "trainer":
        jobs = objects(tree, "Job")
        assert sorted(j["metadata"]["annotations"]["nvcregen.io/nodes"] for j in jobs) == list(
            NODES
        )
        (container,) = jobs[0]["spec"]["template"]["spec"]["containers"]
        assert container["name"] == "nvbandwidth"
        assert container["resources"]["limits"]["nvidia.com/gpu"] == 1  # every GPU of the node
        assert "@@nvcregen-nvbandwidth begin node=${NODE_NAME" in container["command"][2]
    else:
        (workload,) = objects(tree, "WorkloadRun")
        assert workload["spec"]["target"]["nodeNames"] == list(NODES)
        assert "-t host_to_device_memcpy_ce" in workload["spec"]["framework"]["exec"]["command"][2]
        assert objects(tree, "Certification") == []  # NVCRE has no nvbandwidth category


def saved_logs(project: Path, tmp: Path, logs: dict[str, str]) -> Path:
    out = tmp / "out"
    assert run("render", "--out", out, project / "sites" / "nvbw-trainer.yaml").exit_code == 0
    folder = tmp / "saved" / "logs" / "nvcre"
    folder.mkdir(parents=True)
    for job in objects(out / "nvbw-trainer", "Job"):
        name, node = job["metadata"]["name"], job["metadata"]["annotations"]["nvcregen.io/nodes"]
        begin = f"@@nvcregen-nvbandwidth begin node={logs.get(node + ':names', node)}"
        head = f"{begin} pod={name}-x7k2p start=2026-12-06T09:19:12Z\n"
        (folder / f"{name}.log").write_text(head + logs[node] + "nvcregen: nvbandwidth exit=0\n")
    return tmp / "saved"


def collect_verdicts(project: Path, saved: Path, tmp: Path) -> tuple[Result, dict[str, Any]]:
    results = tmp / "results"
    site = project / "sites" / "nvbw-trainer.yaml"
    collected = run("collect", "--site", site, "--from", saved, "--out", results)
    (archive,) = (results / "nvbw-trainer").iterdir()
    return collected, json.loads((archive / "verdicts.json").read_text())


def test_trainer_mode_collect_fails_the_node_whose_gpu_is_under_the_floor(
    project: Path, tmp_path: Path
) -> None:
    slow = (CAPTURES / "v0.8-h100-sxm.txt").read_text().replace(" 0     55.30", " 0     40.30")
    logs = {
        "h100-a": (CAPTURES / "v0.8-h100-sxm.json").read_text(),
        "h100-b": slow,
        "h100-c": (CAPTURES / "v0.7-h100-sxm.txt").read_text(),
    }
    collected, verdicts = collect_verdicts(project, saved_logs(project, tmp_path, logs), tmp_path)
    assert collected.exit_code == 1, collected.output
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes == {"h100-a": "cleared", "h100-b": "failed", "h100-c": "cleared"}
    why = next(n for n in verdicts["nodes"] if n["node"] == "h100-b")["reasons"]
    assert why == [
        "failed alone in copies / nvbandwidth: DiagnosticFailed: round 1:"
        " host_to_device_memcpy_ce GPU 0: 40.3 GB/s, under the floor 48 GB/s"
    ]
    (threshold,) = verdicts["thresholds"]
    assert (threshold["test"], threshold["word"], threshold["groups"]) == (
        "nvbandwidth",
        "fail",
        [],
    )
    assert threshold["reasons"][0]["message"] == (
        "judged node by node from its logs: 2 passed, failed: h100-b"
    )


def test_trainer_mode_a_log_naming_another_node_is_not_evidence(
    project: Path, tmp_path: Path
) -> None:
    good = (CAPTURES / "v0.8-h100-sxm.json").read_text()
    logs = dict.fromkeys(NODES, good) | {"h100-c:names": "h100-a"}
    collected, verdicts = collect_verdicts(project, saved_logs(project, tmp_path, logs), tmp_path)
    assert collected.exit_code == 1
    nodes = {n["node"]: n["status"] for n in verdicts["nodes"]}
    assert nodes["h100-a"] == "cleared"
    assert nodes["h100-c"] != "cleared"
    assert "NVC730" in json.dumps(verdicts)


def test_a_model_without_a_floor_clears_no_node(tmp_path: Path) -> None:
    """Found by review: the catalog states floors for H100, H20 and L20 alone; on another
    model only ceilings were checked, and any figure (1 GB/s included) cleared the node."""
    root = tmp_path / "project"
    (root / "sites").mkdir(parents=True)
    text = site_text("trainer").replace("model: H100", "model: H200")
    assert "model: H200" in text
    (root / "sites" / "nvbw-trainer.yaml").write_text(text)
    good = (CAPTURES / "v0.8-h100-sxm.json").read_text()
    saved = saved_logs(root, tmp_path, dict.fromkeys(NODES, good))
    collected, verdicts = collect_verdicts(root, saved, tmp_path)
    assert collected.exit_code != 0, collected.output
    assert {n["node"]: n["status"] for n in verdicts["nodes"]} == dict.fromkeys(NODES, "untested")
    assert verdicts["word"] == "incomplete"
    (archive,) = (tmp_path / "results" / "nvbw-trainer").iterdir()
    records = json.loads((archive / "summary.json").read_text())["logs"]
    assert {r["status"] for r in records} == {"no-data"}
    assert all("no nvbandwidth floor for H200" in r["errors"][0] for r in records)
