"""On-call questions answered from a failing run (issue #13): which node, what to retest.

A four-node trainer-mode site, collected from saved logs written as the tools print them
(`oncallfactory.py`), then reported, as an on-call engineer would read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from oncallfactory import healthy, site_text, write_logs

from nvcregen.cli import main

SITE_NAME = "h20-3e-four"


def two_node_pair_ab_slow(stage: str, test: str, nodes: tuple[str, ...]) -> float:
    """The two-node all-reduce of (node-a, node-b) at 300 GB/s; everything else healthy."""
    if (stage, test) == ("two-node", "nccl-all-reduce") and "node-a" in nodes:
        return 300.0
    return healthy(stage, test, nodes)


def node_a_slow_alone_too(stage: str, test: str, nodes: tuple[str, ...]) -> float:
    """node-a also fails its own single-node all-reduce (310 < 420 GB/s)."""
    if (stage, test, nodes) == ("single-node", "nccl-all-reduce", ("node-a",)):
        return 310.0
    return two_node_pair_ab_slow(stage, test, nodes)


def collect_and_report(tmp: Path, busbw: object) -> Path:
    site = tmp / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    write_logs(tmp / "saved", site_text(), busbw)  # type: ignore[arg-type]
    runner = CliRunner()
    args = [
        "collect",
        "--site",
        str(site),
        "--from",
        str(tmp / "saved"),
        "--out",
        str(tmp / "results"),
    ]
    assert runner.invoke(main, args).exit_code == 1  # a threshold failed
    report = runner.invoke(
        main, ["report", str(tmp / "results" / SITE_NAME), "--out", str(tmp / "report")]
    )
    assert report.exit_code == 0, report.output
    (run,) = (tmp / "results" / SITE_NAME).iterdir()
    return run


@pytest.fixture(scope="module")
def pair_failure(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archive of the (node-a, node-b) failure; its report is in ../../../report."""
    return collect_and_report(tmp_path_factory.mktemp("pair"), two_node_pair_ab_slow)


def nodes_of(run: Path) -> dict[str, dict[str, object]]:
    verdicts = json.loads((run / "verdicts.json").read_text())
    return {n["node"]: n for n in verdicts["nodes"]}


def test_a_two_node_failure_makes_its_pair_suspect_and_clears_the_rest(pair_failure: Path) -> None:
    nodes = nodes_of(pair_failure)
    assert {n: v["status"] for n, v in nodes.items()} == {
        "node-a": "suspect",
        "node-b": "suspect",
        "node-c": "cleared",
        "node-d": "cleared",
    }
    assert [v["word"] for v in nodes.values()] == ["fail", "fail", "pass", "pass"]
    assert nodes["node-a"]["reasons"] == [
        "only in failing groups of two-node / nccl-all-reduce g0 with node-b: median busbw"
        " 300 GB/s over 3 rounds, needs >= 360 GB/s (written >= 2880 Gb/s)"
    ]
    runs = nodes["node-a"]["runs"]
    assert isinstance(runs, list)
    assert {(r["stage"], r["test"], r["word"]) for r in runs} >= {
        ("single-node", "nccl-all-reduce", "pass"),
        ("two-node", "nccl-all-reduce", "fail"),
        ("two-node", "nccl-all-gather", "pass"),
    }


def test_report_and_summary_name_the_suspects_first(pair_failure: Path) -> None:
    report = pair_failure.parents[2] / "report"
    lines = (report / "summary.md").read_text().splitlines()
    assert lines[0] == "## Readiness of h20-3e-four: ❌ fail"
    assert lines[2] == "**Hold back 2 of 4 nodes: node-a (suspect), node-b (suspect).**"
    html = (report / "index.html").read_text()
    header = html[html.index("<header>") : html.index("</header>")]
    assert "Hold back 2 of 4 nodes: node-a (suspect), node-b (suspect)." in header


def test_a_node_that_failed_its_single_node_run_is_failed_not_suspect(tmp_path: Path) -> None:
    run = collect_and_report(tmp_path, node_a_slow_alone_too)
    nodes = nodes_of(run)
    assert (nodes["node-a"]["status"], nodes["node-b"]["status"]) == ("failed", "suspect")
    assert nodes["node-a"]["reasons"] == [
        "failed alone in single-node / nccl-all-reduce g0: median busbw 310 GB/s over 3"
        " rounds, needs >= 420 GB/s"
    ]
    lines = (tmp_path / "report" / "summary.md").read_text().splitlines()
    assert lines[2] == "**Hold back 2 of 4 nodes: node-a (failed), node-b (suspect).**"
