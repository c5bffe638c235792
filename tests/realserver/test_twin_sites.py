"""Every shipped site and example that trainer mode can run, rehearsed on the twin (issue 34).

Opt-in: skipped unless `make controlplane twin` has built what the command runs. Each site
is written into a project of its own as a user would change it, rehearsed with `nvcregen
rehearse --format json` (a subprocess), and must run as planned to `pass`, the replay and
the rehearsal agreeing on every step's order and concurrency:

- `sites/h20-3e-lab.yaml` with `readiness.engine: trainer` (Argo CD, per-run: 84 runs);
- `examples/node-health/h200-trainer.yaml` under Argo CD and under Flux (run by Flux's own
  controllers: `engines/gitops/flux/play.py`);
- a 64-node trainer copy of `examples/fabric/fleet.yaml` (packed, its first 64 nodes and
  their inventory entries; Flux; a cross-leaf group of 64 nodes).

`sites/h20-3e-trainer.yaml` is `test_twin_rehearse.py`'s. `sites/l20-pool.yaml` is not
rehearsable in trainer mode: its pool selects nodes by label (trainer mode pins runs to
named nodes, NVC321) and its Kueue is the cluster owner's (`managed: false`), so the twin
would have no ClusterQueue to admit it; the refusal of its NVCRE form is tested with the
command (`tests/unit/rehearse/test_rehearse_cli.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcregen.rehearse import locate

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.slow,
    pytest.mark.skipif(bool(locate.missing()), reason=locate.missing() or "built"),
]

ROOT = Path(__file__).resolve().parents[2]
SPEED = "200"
TIMEOUT = "400"  # seconds of the rehearsal's own; the slowest here takes about 150


def rehearsed(project: Path, site: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "nvcregen", "rehearse", site, "--format", "json",
         "--speed", SPEED, "--timeout", TIMEOUT],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, report, done.stderr


def disagreements(report: dict[str, Any]) -> list[str]:
    """Steps where the rehearsal and the replay differ on order or concurrency, named."""
    return [
        f"{step['step']}: {what} {step['observed'][what]}, planned {step['planned'][what]}"
        for step in report["steps"]
        if step["planned"] is not None
        for what in ("order", "at_once")
        if step["observed"][what] != step["planned"][what]
    ]


def assert_as_planned_and_passed(code: int, report: dict[str, Any], stderr: str) -> None:
    assert (code, report["verdict"], report["collect_error"]) == (0, "pass", None), (
        json.dumps(report["steps"])[-3000:] + stderr
    )
    assert report["as_planned"] is True
    assert (report["unadmitted"], report["unfinished"]) == (0, 0)
    assert disagreements(report) == []
    assert set(report["node_statuses"].values()) == {"cleared"}


def copy_site(project: Path, source: str, edit: Any = None) -> str:
    """The site at `source` (relative to the repository) written into `project`, edited."""
    text = (ROOT / source).read_text("utf-8")
    if edit is not None:
        text = edit(text)
    (project / source).parent.mkdir(parents=True, exist_ok=True)
    (project / source).write_text(text, "utf-8")
    return source


def test_the_lab_site_in_trainer_mode(tmp_path: Path) -> None:
    def trainer(text: str) -> str:
        assert "\n  readiness:\n" in text
        return text.replace("\n  readiness:\n", "\n  readiness:\n    engine: trainer\n", 1)

    site = copy_site(tmp_path, "sites/h20-3e-lab.yaml", trainer)
    code, report, stderr = rehearsed(tmp_path, site)
    assert report["engine"] == "argocd"
    assert_as_planned_and_passed(code, report, stderr)
    assert set(report["node_statuses"]) == {"node-a", "node-b"}


@pytest.mark.parametrize("engine", ["argocd", "flux"])
def test_the_node_health_example_under_both_engines(tmp_path: Path, engine: str) -> None:
    source = "examples/node-health/h200-trainer.yaml"
    site = copy_site(tmp_path, source, lambda t: t.replace("engine: argocd", f"engine: {engine}"))
    code, report, stderr = rehearsed(tmp_path, site)
    assert report["engine"] == engine
    if engine == "flux":
        assert "kustomize-controller ran" in report["note"]
    assert_as_planned_and_passed(code, report, stderr)


def test_a_64_node_trainer_copy_of_the_fabric_example(tmp_path: Path) -> None:
    folder = tmp_path / "examples" / "fabric"
    folder.mkdir(parents=True)
    inventory = yaml.safe_load((ROOT / "examples/fabric/inventory.yaml").read_text("utf-8"))
    inventory["nodes"] = inventory["nodes"][:64]
    (folder / "inventory.yaml").write_text(yaml.safe_dump(inventory, sort_keys=False), "utf-8")
    site = yaml.safe_load((ROOT / "examples/fabric/fleet.yaml").read_text("utf-8"))
    pool = site["spec"]["nodePools"][0]
    pool["nodes"] = pool["nodes"][:64]
    site["spec"]["readiness"] |= {"engine": "trainer", "packing": "packed"}
    (folder / "fleet.yaml").write_text(yaml.safe_dump(site, sort_keys=False), "utf-8")
    code, report, stderr = rehearsed(tmp_path, "examples/fabric/fleet.yaml")
    assert report["engine"] == "flux" and "kustomize-controller ran" in report["note"]
    assert_as_planned_and_passed(code, report, stderr)
    assert len(report["node_statuses"]) == 64
    placed = [nodes for s in report["steps"] for nodes in s["observed"]["placement"].values()]
    assert [len(nodes) for nodes in placed] == [64]  # one cross-leaf group, every node bound
