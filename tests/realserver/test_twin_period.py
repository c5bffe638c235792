"""`nvcregen rehearse SITE --period` on the real controllers (issue 37, item 5): one period of
the shipped trainer site with `readiness.periodic` (tests/periodicfactory.py: its
single-node stage as two CronJobs, DCGM's pack and NCCL's), run by kube-controller-manager's
own CronJob controller, admitted by Kueue at the periodic priority, completed by kwok, and
judged by collect's own `--period` code.

Opt-in: skipped unless `make controlplane twin` has built what the command runs. Each test
runs the command as a user does (a subprocess, a twin each: 1.5-2 minutes on the loaded
2-core machine, most of it the twin's start and the wait for the next minute).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from periodicfactory import periodic_text
from sitefactory import edit

from nvcregen.rehearse import locate

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.slow,
    pytest.mark.skipif(bool(locate.missing()), reason=locate.missing() or "built"),
]

ROOT = Path(__file__).resolve().parents[2]
SITE = "sites/h20-3e-trainer.yaml"
PERIODIC = "h20-3e-trainer-periodic"


def rehearse_period(project: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """`rehearse --period` of the periodic site in a project of its own: exit and JSON."""
    (project / "sites").mkdir(parents=True, exist_ok=True)
    text = edit(periodic_text(), "path: out/h20-3e-trainer\n", "")
    (project / SITE).write_text(text, encoding="utf-8")
    command = [sys.executable, "-m", "nvcregen", "rehearse", SITE, "--period"]
    done = subprocess.run(
        [*command, "--format", "json", "--speed", "200", "--timeout", "240", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in {0, 1}, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    print(f"\nrehearse --period {' '.join(args)}: {report['wall_s']} s, exit {done.returncode}")
    return done.returncode, report


def one_period(report: dict[str, Any]) -> int:
    """Every CronJob made one Job, of one period, named `<cronjob>-<minutes>`: the minutes."""
    period = report["period"]
    assert isinstance(period, int)
    for cron in report["cronjobs"]:
        assert cron["schedule"] == "0 3 * * 0"  # the site's; the twin's was '* * * * *'
        assert cron["suspended"]  # after its first Job: one period
        (job,) = cron["jobs"]
        assert job["name"] == f"{cron['name']}-{period}"
        assert (job["minutes"], job["admitted"], job["outcome"]) == (period, True, "Succeeded")
        assert (job["priority_class"], job["priority"]) == (PERIODIC, -1)
        assert job["nodes"] == cron["nodes"] == ["node-a", "node-b"]
    return period


def test_one_period_runs_on_the_cronjob_controller_to_pass(tmp_path: Path) -> None:
    code, report = rehearse_period(tmp_path, "--keep", str(tmp_path / "kept"))
    assert report["problems"] == [] and report["as_planned"]
    period = one_period(report)
    assert [c["pack"] for c in report["cronjobs"]] == ["periodic-0", "periodic-1"]
    assert "'* * * * *'" in report["change"]
    assert report["verdict"] == "pass", report["collect_error"]
    assert report["node_statuses"] == {"node-a": "cleared", "node-b": "cleared"}
    assert report["pod_logs_served"] == 4  # a pod per node of each pack
    archive = Path(report["archive"])
    assert archive.parent == tmp_path / "kept" / "results" / "h20-3e-trainer"
    runs = json.loads((archive / "summary.json").read_text("utf-8"))["runs"]
    assert {r["test"] for r in runs} == {
        "dcgm-l1",
        "dcgm-l2",
        "nccl-all-reduce",
        "nccl-all-gather",
        "nccl-alltoall",
    }  # the periodic stage's tests, read from the period's Jobs alone
    assert all(str(r["source"]["name"]).endswith(f"-{period}") for r in runs)
    assert code == 0
    assert not (tmp_path / "out").exists()  # nothing written beside the site


def test_a_failing_node_fails_the_period_and_exits_1_naming_it(tmp_path: Path) -> None:
    code, report = rehearse_period(tmp_path, "--fail", "node-a")
    assert report["problems"] == [] and report["as_planned"]  # the controllers did as planned
    one_period(report)
    assert report["verdict"] == "fail"
    assert report["node_statuses"] == {"node-a": "failed", "node-b": "cleared"}
    assert code == 1
