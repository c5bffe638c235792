"""Issue #37: one period of readiness.periodic collected into an archive of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from oncallfactory import healthy
from periodicfactory import periodic_text, write_period_logs

from nvcregen.cli import main
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome
from nvcregen.core.errors import ExitCode

ROOT = Path(__file__).resolve().parents[3]
SITE = "h20-3e-trainer"
WEEK = 7 * 24 * 60  # minutes
FIRST = 29_412_000  # a period's scheduled minute since the epoch (2025-12)


def slow_on(node: str, factor: float) -> Any:
    """node's single-node NCCL tests measure `factor` of a healthy node's bandwidth."""

    def busbw(stage: str, test: str, nodes: tuple[str, ...]) -> float:
        figure = healthy(stage, test, nodes)
        return figure * factor if stage == "single-node" and nodes == (node,) else figure

    return busbw


def period(tmp: Path, minutes: int, busbw: Any = healthy, asked: str = "") -> CollectOutcome:
    site = tmp / "site.yaml"
    site.write_text(periodic_text(), encoding="utf-8")
    saved = tmp / f"saved-{minutes}"
    jobs = write_period_logs(saved, periodic_text(), minutes, busbw)
    options = CollectOptions(
        str(site), tmp / "results", ROOT, from_dir=saved, period=asked or jobs[0]
    )
    return collect(options)


def test_a_period_is_read_like_a_packed_run_into_its_own_archive(tmp_path: Path) -> None:
    outcome = period(tmp_path, FIRST, asked="latest")
    assert outcome.exit_code is ExitCode.OK, outcome.verdicts
    assert {n.node: str(n.status) for n in outcome.verdicts.nodes} == {
        "node-a": "cleared",
        "node-b": "cleared",
    }
    summary = json.loads((outcome.archive.path / "summary.json").read_text())
    # the periodic stage's five tests on each node, one round; no two-node test expected
    assert len(summary["logs"]) == 2 * 5
    assert {(r["stage"], r["test"]) for r in summary["runs"]} == {
        ("single-node", t)
        for t in ("dcgm-l1", "dcgm-l2", "nccl-all-reduce", "nccl-all-gather", "nccl-alltoall")
    }
    assert {log["round"] for log in summary["logs"]} == {1}
    runs = {log["run"] for log in summary["logs"]}
    assert all(run.endswith(f"-{FIRST}") for run in runs)  # the period's Job: its run id
    second = period(tmp_path, FIRST + WEEK, asked="latest")
    assert second.archive.path != outcome.archive.path
    assert sorted(p.name for p in (tmp_path / "results" / SITE).iterdir()) == sorted(
        [outcome.archive.path.name, second.archive.path.name]
    )


def test_one_period_of_two_in_the_folder_is_read_the_other_left(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    site = tmp_path / "site.yaml"
    site.write_text(periodic_text(), encoding="utf-8")
    first = write_period_logs(saved, periodic_text(), FIRST)
    objects = (saved / "objects.yaml").read_text(encoding="utf-8")
    write_period_logs(saved, periodic_text(), FIRST + WEEK, slow_on("node-a", 0.5))
    (saved / "objects.yaml").write_text(objects, encoding="utf-8")  # only the first's Jobs
    for asked, minutes, node_a in (
        ("latest", FIRST + WEEK, "failed"),  # named by its logs alone
        (str(FIRST), FIRST, "cleared"),  # by its minutes
        (first[1], FIRST, "cleared"),  # by one of its Jobs: every Job of that period
    ):
        options = CollectOptions(str(site), tmp_path / asked, ROOT, from_dir=saved, period=asked)
        outcome = collect(options)
        logs = json.loads((outcome.archive.path / "summary.json").read_text())["logs"]
        assert {log["run"].rsplit("-", 1)[1] for log in logs} == {str(minutes)}
        assert len(logs) == 2 * 5
        words = {n.node: str(n.status) for n in outcome.verdicts.nodes}
        assert words == {"node-a": node_a, "node-b": "cleared"}


def test_an_unknown_period_or_a_site_without_periodic_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        CollectError, match=rf"--period nope: no log of that period \(periods found: {FIRST}\)"
    ):
        period(tmp_path, FIRST, asked="nope")
    site = tmp_path / "plain.yaml"
    site.write_text(periodic_text(""), encoding="utf-8")
    options = CollectOptions(
        str(site), tmp_path / "r", ROOT, from_dir=tmp_path / f"saved-{FIRST}", period="latest"
    )
    with pytest.raises(CollectError, match=r"has no readiness\.periodic"):
        collect(options)


def test_the_cli_collects_a_period(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(periodic_text(), encoding="utf-8")
    write_period_logs(tmp_path / "saved", periodic_text(), FIRST)
    args = ["collect", "--site", str(site), "--from", str(tmp_path / "saved")]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "r"), "--period", "latest"])
    assert result.exit_code == 0, result.output
    (archive,) = (tmp_path / "r" / SITE).iterdir()
    logs = json.loads((archive / "summary.json").read_text())["logs"]
    assert len(logs) == 2 * 5


def test_two_periods_and_history_show_a_regression_of_one_node(tmp_path: Path) -> None:
    period(tmp_path, FIRST)
    period(tmp_path, FIRST + WEEK, slow_on("node-a", 0.8))
    result = CliRunner().invoke(
        main, ["history", str(tmp_path / "results" / SITE), "--format", "json"]
    )
    data = json.loads(result.output)
    flagged = [
        (s["test"], s["nodes"])
        for s in data["series"]
        if any(p.get("regression") for p in s["points"])
    ]
    assert ("nccl-all-reduce", ["node-a"]) in flagged
    assert all(nodes == ["node-a"] for _, nodes in flagged)
