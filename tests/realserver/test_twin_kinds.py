"""`nvcregen rehearse` of a site naming every kind with a log maker, on the twin (issue #34).

Opt-in: skipped unless `make controlplane twin` has built what the command runs. The H100
site of `tests/kindsite.py` (node-health, DCGM, nvbandwidth, RDMA rails, link counters,
burn-in and NCCL in a node, NCCL and RDMA rails across the pair, two rounds), as a user
runs it: packed with `--fail node-a`, every step as planned and node-a failed by every
kind of the single-node stage, node-b suspect (its pair's NCCL and RDMA rails, both
logs of each pair round served), exit 1; one run a test (`packing: perRun`), as planned
and `pass`, exit 0. Measured on the loaded 2-core machine at `--speed 200`: about 99 s
packed and 140 s per run, the twin's start included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kindsite import SINGLE, SITES, write_project

from nvcregen.rehearse import locate

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.slow,
    pytest.mark.skipif(bool(locate.missing()), reason=locate.missing() or "built"),
]

ROOT = Path(__file__).resolve().parents[2]
PAIRED = "only in failing groups of two-node / rdma-rails-pair g0 with node-a: "
RAIL = r"RailFailed: NVC832: (node-a -> node-b|node-b -> node-a) mlx5_0: 38\.00 Gb/s at 8MiB"


def rehearsed(project: Path, packing: str, *args: str) -> tuple[int, dict[str, Any]]:
    site = f"sites/{SITES[packing]}.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "nvcregen", "rehearse", site, "--format", "json",
         "--speed", "200", "--timeout", "300", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, report


def test_a_failing_node_is_failed_by_every_kind_on_the_twin(tmp_path: Path) -> None:
    project, kept = write_project(tmp_path / "project"), tmp_path / "kept"
    code, report = rehearsed(project, "packed", "--fail", "node-a", "--keep", str(kept))
    assert report["as_planned"] is True and (report["unadmitted"], report["unfinished"]) == (0, 0)
    assert (code, report["verdict"], report["collect_error"]) == (1, "fail", None)
    assert report["node_statuses"] == {"node-a": "failed", "node-b": "suspect"}
    verdicts = json.loads((Path(report["archive"]) / "verdicts.json").read_text())
    reasons = {n["node"]: n["reasons"] for n in verdicts["nodes"]}
    prefix = "failed alone in single-node / "
    failed_by = {
        r.removeprefix(prefix).split(":")[0].split(" ")[0]
        for r in reasons["node-a"]
        if r.startswith(prefix)
    }
    assert failed_by == set(SINGLE), reasons["node-a"]
    # the pair's two logs served (server on its worker, client on its launcher, either node)
    paired = [r for r in reasons["node-b"] if r.startswith(PAIRED)]
    assert len(paired) == 1 and len(re.findall(RAIL, paired[0])) == 2, reasons["node-b"]


def test_one_run_a_test_rehearses_to_a_pass(tmp_path: Path) -> None:
    code, report = rehearsed(write_project(tmp_path), "perRun")
    assert (code, report["as_planned"], report["verdict"]) == (0, True, "pass")
    assert report["node_statuses"] == {"node-a": "cleared", "node-b": "cleared"}
