"""`nvcregen rehearse` on the real controllers (issue #34): the shipped trainer site, a step
that cannot be admitted, the replay against the rehearsal, and a killed command.

Opt-in: skipped unless `make controlplane twin` has built what the command runs
(`nvcregen.rehearse.locate.missing`). Each test runs a rehearsal of its own (a twin each:
10-20 s to start on the loaded 2-core machine).

- `nvcregen rehearse sites/h20-3e-trainer.yaml --format json`, once for the module, as a
  user runs it (a subprocess): every step as planned (the site packs its runs: per round,
  two Indexed Jobs of a pod on each node, then the pair's TrainJob), in the replay's order
  and concurrency, every pod on a node its run is pinned to. Before the pins were one
  `nodeSelectorTerm` per node, its two-node runs pinned both nodes in one
  `matchFields: metadata.name In [node-a, node-b]`, which Kubernetes refuses ("must have
  one element"): this rehearsal found it, as the kube-apiserver of the Kueue parity test did.
- The same rehearsal's pods serve the logs their runs would print, and `collect` reads
  them from the twin into a `pass` verdict; `--fail node-a` exits 1 with node-a failed
  and node-b (its pair) suspect, the archive kept with `--keep`.
- A ClusterQueue quota below one run: the render gate refuses such a site (NVC670), so the
  rendered tree is edited as a hand edit would, and rehearsed as the command does: exit 1
  naming the step, with Kueue's reason.
- SIGTERM or SIGINT to the command while its twin runs: it exits 130 and no process it
  started is left.
- The shipped site with `gitops.engine: flux`, in a project of its own, run by Flux's own
  source-controller and kustomize-controller from a Git server on loopback: every step as
  planned, nothing written beside the site.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from nvcregen.rehearse import locate
from nvcregen.rehearse.prepare import Prepared, prepare
from nvcregen.rehearse.rehearsal import Settings, rehearse
from nvcregen.rehearse.report import exit_code, step_reports, to_json
from nvcregen.replay.model import TreeObject

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.slow,
    pytest.mark.skipif(bool(locate.missing()), reason=locate.missing() or "built"),
]

ROOT = Path(__file__).resolve().parents[2]
SITE = "sites/h20-3e-trainer.yaml"
SPEED = "200"  # the plan's 3h51m of runs in about 70 s of pods
FAIL = ("--fail", "node-a", "--keep")
TIMEOUT = "240"  # seconds: the single-node rounds take about 80, two-node ones 100 more


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "nvcregen", "rehearse", *args]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def shipped() -> tuple[int, dict[str, Any], float]:
    """The command's exit code and JSON report for the shipped site, and its wall time."""
    began = time.monotonic()
    done = subprocess.run(
        command(SITE, "--format", "json", "--speed", SPEED, "--timeout", TIMEOUT),
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    wall = time.monotonic() - began
    assert done.returncode in {0, 1}, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    print(f"\nrehearsal of {SITE}: {wall:.1f} s wall, exit {done.returncode}")
    return done.returncode, report, wall


def rendered_pins(prepared: Prepared) -> dict[str, set[str]]:
    """Each run's pinned nodes (`nvcregen.io/nodes`), by `Kind/name`."""
    return {
        f"{o.kind}/{o.name}": set(str(o.meta["annotations"]["nvcregen.io/nodes"]).split(","))
        for o in prepared.objects
        if o.kind in {"Job", "TrainJob"}
    }


def disagreements(report: dict[str, Any], only: str = "") -> list[str]:
    """Steps where the rehearsal and the replay differ on order or concurrency, named."""
    found = []
    for step in report["steps"]:
        planned, observed = step["planned"], step["observed"]
        if planned is None or not step["step"].startswith(only):
            continue
        if observed["order"] != planned["order"]:
            found.append(f"{step['step']}: order {observed['order']}, planned {planned['order']}")
        if observed["at_once"] != planned["at_once"]:
            found.append(
                f"{step['step']}: {observed['at_once']} at once, planned {planned['at_once']}"
            )
    return found


def test_the_shipped_single_node_rounds_run_as_planned_pinned_and_in_order(
    shipped: tuple[int, dict[str, Any], float], tmp_path: Path
) -> None:
    _, report, _ = shipped
    single = [s for s in report["steps"] if s["step"].startswith("01-single-node/")]
    assert [s["step"] for s in single] == [f"01-single-node/round-{r}" for r in (1, 2, 3)]
    assert all(s["as_planned"] for s in single), [s for s in single if not s["as_planned"]]
    assert disagreements(report, "01-single-node/") == []
    assert [s["observed"]["admitted"] for s in single] == [2, 2, 2]  # two node packs a round
    pins = rendered_pins(_prepared(tmp_path))
    for step in single:
        for run, nodes in step["observed"]["placement"].items():
            assert set(nodes) == pins[run], (run, nodes)
    assert report["most_at_once"] <= report["max_concurrent_jobs"] == 2
    assert "Argo CD itself was not run" in report["note"]


def test_the_shipped_trainer_site_rehearses_as_planned(
    shipped: tuple[int, dict[str, Any], float],
) -> None:
    code, report, _ = shipped
    assert (report["unadmitted"], report["unfinished"], report["out_of_order"]) == (0, 0, 0)
    assert report["as_planned"] is True and code == 0


def test_the_shipped_site_collects_to_a_pass_verdict(
    shipped: tuple[int, dict[str, Any], float],
) -> None:
    """Every pod served the log its run would print; `collect` read them from the twin."""
    code, report, _ = shipped
    assert report["collect_error"] is None
    assert report["verdict"] == "pass" and code == 0
    assert report["node_statuses"] == {"node-a": "cleared", "node-b": "cleared"}
    # per round two node packs of a pod per node, and the pair's launcher
    assert report["pod_logs_served"] == 3 * 2 * 2 + 3


def test_a_failing_node_is_failed_and_its_pair_suspect(tmp_path: Path) -> None:
    """`--fail node-a`: node-a's sections fail (DCGM, and NCCL far below its threshold on
    every run holding it): as planned, but exit 1; node-b, its pair, suspect; the archive
    kept in the scratch folder."""
    keep = tmp_path / "kept"
    done = subprocess.run(
        command(SITE, "--format", "json", "--speed", SPEED, "--timeout", TIMEOUT, *FAIL, str(keep)),
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["as_planned"] is True  # kwok completes every pod, whatever its log says
    assert report["verdict"] == "fail"
    assert report["node_statuses"] == {"node-a": "failed", "node-b": "suspect"}
    archive = Path(report["archive"])
    assert archive.parent == keep / "results" / "h20-3e-trainer"
    verdicts = json.loads((archive / "verdicts.json").read_text("utf-8"))
    assert {n["node"]: n["status"] for n in verdicts["nodes"]} == report["node_statuses"]


def test_the_replay_and_the_rehearsal_agree_on_the_shipped_site(
    shipped: tuple[int, dict[str, Any], float],
) -> None:
    _, report, _ = shipped
    assert disagreements(report) == []


def _prepared(folder: Path) -> Prepared:
    prepared = prepare(ROOT / SITE, ROOT, folder)
    assert isinstance(prepared, Prepared), prepared
    return prepared


def _edited(prepared: Prepared, edit: Any) -> Prepared:
    objects = tuple(
        TreeObject(o.file, o.path, edit(copy.deepcopy(dict(o.obj)))) for o in prepared.objects
    )
    return dataclasses.replace(prepared, objects=objects)


def test_every_two_node_run_holds_both_nodes_one_round_at_a_time(
    shipped: tuple[int, dict[str, Any], float],
) -> None:
    _, report, _ = shipped
    two_node = [s for s in report["steps"] if s["step"].startswith("02-two-node/")]
    assert len(two_node) == 3
    for step in two_node:  # the pair's TrainJob on both nodes, the round's one run
        assert [sorted(n) for n in step["observed"]["placement"].values()] == [["node-a", "node-b"]]
        assert step["observed"]["at_once"] == 1


def test_a_step_kueue_cannot_admit_exits_1_naming_it(tmp_path: Path) -> None:
    def halve_gpus(obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") == "ClusterQueue":
            for group in obj["spec"]["resourceGroups"]:
                for flavor in group["flavors"]:
                    for resource in flavor["resources"]:
                        if resource["name"] == "nvidia.com/gpu":
                            resource["nominalQuota"] = 4  # below one run's 8
        return obj

    prepared = _edited(_prepared(tmp_path / "scratch"), halve_gpus)
    rehearsal = rehearse(
        prepared.objects,
        prepared.plan.facts,
        prepared.view,
        prepared.pools,
        locate.builds(),
        tmp_path / "twin",
        Settings(speed=float(SPEED), timeout_s=30.0),
    )
    report = to_json(rehearsal)
    assert exit_code(step_reports(rehearsal)) == 1
    # no run admitted: the site packs them (per round two node packs, then the pair's)
    assert report["as_planned"] is False and report["unadmitted"] == report["runs"] == 9
    first = next(s for s in report["steps"] if s["planned"] is not None)
    assert first["step"] == "01-single-node/round-1" and not first["as_planned"]
    assert first["observed"]["applied_s"] is not None and first["observed"]["admitted"] == 0
    waiting = set(first["observed"]["waiting"].values())
    assert any("nvidia.com/gpu" in why for why in waiting), waiting
    later = [s for s in report["steps"] if s["step"].startswith("01-single-node/round-2")]
    assert later[0]["observed"]["applied_s"] is None  # the engine never got past it


def running_under(folder: Path) -> list[str]:
    """The command lines of the processes naming `folder` (their data, logs, configs)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and proc.name != str(os.getpid()):
            with suppress(OSError):
                line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                if str(folder) in line:
                    found.append(line)
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_killed_rehearsal_leaves_no_process(tmp_path: Path, signum: int) -> None:
    kept = tmp_path / "kept"
    process = subprocess.Popen(
        command(SITE, "--keep", str(kept), "--speed", SPEED),
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not (kept / "twin" / "kueue.log").exists():  # the twin is up to Kueue
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.5)
        assert any("kwok" in line for line in running_under(kept))
        process.send_signal(signum)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "everything it started ended" in err
    assert running_under(kept) == []


def test_a_flux_site_is_run_by_flux_itself(tmp_path: Path) -> None:
    """The shipped site with `gitops.engine: flux`, in a project of its own: the real
    source-controller clones the applied files from the loopback Git server and the real
    kustomize-controller applies its Kustomizations in dependsOn order, each held on its
    own status readers and the site's healthCheckExprs: every step as planned, a pass."""
    (tmp_path / "sites").mkdir()
    text = (ROOT / SITE).read_text("utf-8").replace("engine: argocd", "engine: flux")
    (tmp_path / SITE).write_text(text, "utf-8")
    done = subprocess.run(
        command(SITE, "--format", "json", "--speed", SPEED, "--timeout", TIMEOUT),
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    report = json.loads(done.stdout)
    assert report["engine"] == "flux" and "kustomize-controller ran" in report["note"]
    assert [s["applied_by"] for s in report["steps"]][:4] == [
        "Kustomization h20-3e-trainer-platform",
        "Kustomization h20-3e-trainer-queues",
        "Kustomization h20-3e-trainer-readiness",
        "Kustomization h20-3e-trainer-readiness-01-single-node-r1",
    ]
    assert all(s["as_planned"] for s in report["steps"]), report["steps"]
    assert disagreements(report) == []
    assert report["as_planned"] and report["unadmitted"] == 0 and report["unfinished"] == 0
    assert list(tmp_path.iterdir()) == [tmp_path / "sites"]  # nothing written beside it
