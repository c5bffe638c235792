"""`nvcregen plan` and the replay in `nvcregen check`, end to end in a scratch project."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main
from nvcregen.core.units import parse_duration
from tools.fleetsite import fleet_site

ROOT = Path(__file__).resolve().parent.parent
SITES = ("h20-3e-lab", "h20-3e-trainer", "l20-pool")
QUEUE_LINE = "    kueue.x-k8s.io/queue-name: readiness\n"

# The lab's timeline, as `nvcregen plan` prints it (docs/design/0008-replay.md).
LAB_TEXT = """\
h20-3e-lab: expected 3h51m30s, worst case 15h42m (7h51m + 1 retest); 61.7 GPU-hours, worst case 251.2 (125.6 + 1 retest); window 16h, 260 GPU-hours, 2 jobs at once: fits the window
  step            runs  jobs  nodes           starts  expected  worst  job timeout  step timeout  holds sync  at once  GPU-h  fits
  01-single-node     3    30  node-a,node-b       0s   1h6m33s  4h36m          13m             -    no limit      2/2   17.7   yes
  02-two-node        4    12  node-a,node-b  1h6m33s  2h44m57s  11h6m        1h10m             -    no limit      1/2   44.0   yes
  Kueue admission: 42 workloads in ClusterQueue h20-3e-lab-readiness, one per scheduling cycle: expected 1s, worst 4m12s (the most in one step: 30, wave 1 of Application h20-3e-lab-readiness)
"""  # noqa: E501


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with the shipped sites, as the current directory."""
    (tmp_path / "sites").mkdir()
    for site in SITES:
        shutil.copyfile(ROOT / "sites" / f"{site}.yaml", tmp_path / "sites" / f"{site}.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_plan_prints_the_lab_timeline(project: Path) -> None:
    result = run("plan", "sites/h20-3e-lab.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout == LAB_TEXT
    assert not list(project.glob("out"))  # nothing written


def test_plan_of_every_shipped_site_fits_its_window(project: Path) -> None:
    result = run("plan", "--format", "json")
    assert result.exit_code == 0, result.output
    plans = {p["site"]: p for p in json.loads(result.stdout)}
    assert sorted(plans) == sorted(SITES)
    assert all(p["fits"] and p["problems"] == {"errors": 0, "warnings": 0} for p in plans.values())
    trainer = plans["h20-3e-trainer"]
    assert [s["step"] for s in trainer["steps"]] == [
        f"{stage}/round-{r}" for stage in ("01-single-node", "02-two-node") for r in (1, 2, 3)
    ]
    assert trainer["expected_ms"] == plans["h20-3e-lab"]["expected_ms"] == 13_890_000
    assert all(s["at_once"] <= 2 for s in trainer["steps"])
    pairs = plans["l20-pool"]["steps"][1]
    assert (pairs["step"], pairs["applied_by"]) == (
        "02-pairs",
        "Kustomization l20-pool-readiness-02-pairs",
    )
    assert pairs["nodes"] == ["l20-1", "l20-2", "l20-3", "l20-4"]


def test_plan_as_markdown(project: Path) -> None:
    out = run("plan", "sites/l20-pool.yaml", "--format", "markdown").stdout
    assert out.startswith("### l20-pool\n\nexpected 4h16m36s, worst case 8h36m; 136.9 GPU-hours")
    header = "| step | runs | jobs | nodes | starts | expected | worst | job timeout |"
    assert header + " step timeout | holds sync | at once | GPU-h | fits |" in out
    assert "| 02-pairs | 2 | 8 | l20-1,l20-2,l20-3,l20-4 | 2h5m30s | 2h11m6s |" in out
    assert "| 4h24m | 2h | 4h24m | 4h24m | 2/4 |" in out  # worst, job and step timeout, hold


def test_plan_states_the_longest_a_stuck_step_holds_a_sync(project: Path) -> None:
    # Flux gives a stuck step up at its timeout. Argo CD has no sync timeout: with NVCRE a
    # run Kueue deactivated looks queued to every health check and nothing ends it; in
    # trainer mode its prebuilt Workload turns Degraded, which ends the sync once Kueue
    # gives up (4 pods-ready timeouts of 10m and 7m of backoffs), and a run never
    # admitted still holds it (issue 19).
    plans = {p["site"]: p for p in json.loads(run("plan", "--format", "json").stdout)}
    for step in plans["l20-pool"]["steps"]:
        assert step["holds_sync_ms"] == step["step_timeout_ms"] > 0
        assert step["holds_sync_while_queued"] is False
    assert all(s["holds_sync_ms"] is None for s in plans["h20-3e-lab"]["steps"])
    for step in plans["h20-3e-trainer"]["steps"]:
        assert step["holds_sync_ms"] == step["worst_once_ms"] + 47 * 60_000
        assert step["holds_sync_while_queued"] is True
    text = run("plan", "sites/h20-3e-trainer.yaml").stdout
    assert "+queue" in text
    assert "no limit" not in text


def test_plan_of_an_invalid_site_exits_2_with_its_errors(project: Path) -> None:
    site = project / "sites" / "h20-3e-lab.yaml"
    site.write_text(site.read_text().replace("rounds: 3", "rounds: 0"))
    result = run("plan", "sites/h20-3e-lab.yaml")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "sites/h20-3e-lab.yaml" in result.stderr


def test_check_reports_a_hand_built_tree_without_queue_labels_as_deadlock_prone(
    project: Path,
) -> None:
    shutil.copytree(ROOT / "out" / "h20-3e-trainer", project / "out" / "h20-3e-trainer")
    edited = 0
    for path in (project / "out" / "h20-3e-trainer" / "readiness").rglob("*.yaml"):
        text = path.read_text()
        if QUEUE_LINE in text:
            path.write_text(text.replace(QUEUE_LINE, ""))
            edited += 1
    assert edited == 9  # every packed Job (2 a round) and TrainJob (1 a round)
    result = run("check", "out", "--format", "json")
    assert result.exit_code == 1
    found = json.loads(result.stdout)
    deadlocks = [d for d in found if d["code"] == "NVC671"]
    # the two node packs of a round, two pods each, in one wave: without Kueue one may take
    # node-a and the other node-b, and both wait; a round's one TrainJob contends with none
    assert len(deadlocks) == 6
    assert all(d["message"].startswith("deadlock-prone:") for d in deadlocks)
    assert all(
        "/01-single-node/" in d["file"] and d["path"] == "/metadata/labels" for d in deadlocks
    )


def test_check_of_the_shipped_trees_replays_them_clean(project: Path) -> None:
    for site in SITES:
        shutil.copytree(ROOT / "out" / site, project / "out" / site)
    result = run("check", "out", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []


def test_plan_shows_how_long_each_flux_step_waits(project: Path) -> None:
    result = run("plan", "sites/l20-pool.yaml", "--format", "json")
    assert result.exit_code == 0, result.output
    (plan,) = json.loads(result.stdout)
    steps = {s["step"]: s for s in plan["steps"]}
    assert not (project / "out").exists()  # plan writes nothing
    assert run("render", "sites/l20-pool.yaml").exit_code == 0
    gitops = project / "out" / "l20-pool" / "gitops"
    for name in ("01-single-node", "02-pairs"):
        step = steps[name]
        assert step["worst_ms"] <= step["step_timeout_ms"] < step["worst_ms"] + 60_000
        # what the rendered Kustomization of the step says, Flux's own `timeout`
        text = (gitops / f"kustomization-l20-pool-readiness-{name}.yaml").read_text()
        (timeout,) = [line.split('"')[1] for line in text.splitlines() if "timeout:" in line]
        assert parse_duration(timeout) == step["step_timeout_ms"]
    lab = json.loads(run("plan", "sites/h20-3e-lab.yaml", "--format", "json").stdout)
    assert all(s["step_timeout_ms"] is None for s in lab[0]["steps"])  # Argo CD: no timeout


def test_worst_case_has_one_meaning_in_plan_nvc313_and_diff(project: Path) -> None:
    """Issue 19: plan said 7h51m where NVC313 and diff said 15h42m (retests left out)."""
    worst = "15h42m (7h51m + 1 retest)"
    text = run("plan", "sites/h20-3e-lab.yaml").stdout
    assert f"worst case {worst};" in text
    assert "worst case 251.2 (125.6 + 1 retest);" in text
    markdown = run("plan", "sites/h20-3e-lab.yaml", "--format", "markdown").stdout
    assert f"worst case {worst};" in markdown
    (plan,) = json.loads(run("plan", "sites/h20-3e-lab.yaml", "--format", "json").stdout)
    assert (plan["worst_ms"], plan["worst_once_ms"], plan["retests"]) == (
        parse_duration("15h42m"),
        parse_duration("7h51m"),
        1,
    )
    assert (plan["worst_gpu_hours"], plan["worst_once_gpu_hours"]) == (251.2, 125.6)
    for step in plan["steps"]:  # each step's worst case counts the retest too
        assert step["worst_ms"] == 2 * step["worst_once_ms"]
    # l20-pool has no retests: its worst case is one attempt, and says nothing more
    (pool,) = json.loads(run("plan", "sites/l20-pool.yaml", "--format", "json").stdout)
    assert pool["retests"] == 0 and pool["worst_ms"] == pool["worst_once_ms"]
    assert "worst case 8h36m;" in run("plan", "sites/l20-pool.yaml").stdout

    # one minute short of that worst case: NVC313 gives the same figure, worded the same
    site = project / "sites" / "h20-3e-lab.yaml"
    site.write_text(site.read_text().replace("deadline: 16h", "deadline: 15h41m"))
    refused = run("validate", "sites/h20-3e-lab.yaml")
    assert refused.exit_code == 2
    assert f"error[NVC313]: the plan's worst case takes {worst} (expected 3h52m)" in (
        refused.output
    )
    assert "stage two-node: expected 2h45m, worst case 11h6m (5h33m + 1 retest)" in (refused.output)
    site.write_text(site.read_text().replace("deadline: 15h41m", "deadline: 15h42m"))
    assert run("validate", "sites/h20-3e-lab.yaml").exit_code == 0  # at the limit: fits


def test_a_window_below_the_fleet_admits_at_most_its_jobs_at_once(project: Path) -> None:
    # Issue 32: 8 nodes, maxConcurrentJobs 4 and a two-node stage. The quota held 4 two-node
    # runs, 8 nodes, so 8 one-node runs ran at once and plan said `does NOT fit` (8/4).
    text = fleet_site(8, packing="perRun").replace("maxConcurrentJobs: 8", "maxConcurrentJobs: 4")
    (project / "sites" / "h20-3e-trainer.yaml").write_text(text.replace("16h", "40h"))
    (found,) = json.loads(run("plan", "sites/h20-3e-trainer.yaml", "--format", "json").stdout)
    at_once = {s["step"].split("/")[0]: s["at_once"] for s in found["steps"]}
    assert at_once == {"01-single-node": 4, "02-two-node": 2}
    assert (found["fits"], found["breaks"]) == (True, [])
    # packed: a node pack's Jobs hold 4 nodes each (never more than the quota admits), so
    # one runs at a time; 4 nodes busy at once, as with one run per node
    packed = text.replace("packing: perRun", "packing: packed")
    (project / "sites" / "h20-3e-trainer.yaml").write_text(packed.replace("16h", "40h"))
    (found,) = json.loads(run("plan", "sites/h20-3e-trainer.yaml", "--format", "json").stdout)
    at_once = {s["step"].split("/")[0]: s["at_once"] for s in found["steps"]}
    assert at_once == {"01-single-node": 1, "02-two-node": 2}
    assert (found["fits"], found["breaks"]) == (True, [])
