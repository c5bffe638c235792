"""`nvcregen history` and the report's history: run over run, regressions flagged."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from reportfactory import bw_rows, sample_run, sample_summary

from nvcregen.cli import main
from nvcregen.report.history import Point, flag_regressions
from nvcregen.report.historyview import load_history
from nvcregen.report.writer import write_report

GIB = 1 << 30
FIELD_REPORT = (363.76, 427.58, 452.28)  # the seed's three RoCE rounds at 1 GiB


def run_with(results: Path, run_id: str, finished: str, busbw: tuple[float, ...]) -> Path:
    """A run whose two-node all-reduce rounds had these 1 GiB bus bandwidths (all IB)."""
    rows = [
        row
        for n, value in enumerate(busbw, 1)
        for row in bw_rows("group-0", n, (value / 10, value / 2, value))
    ]
    summary = sample_summary() | {"run_id": run_id, "finished_at": finished}
    return sample_run(results, run_id, rows=rows, summary=summary)


def point(median: float, *rounds: float) -> Point:
    return Point("r", None, median, rounds)


def test_a_drop_beyond_the_previous_spread_is_a_regression() -> None:
    first = point(427.58, *FIELD_REPORT)  # spread 452.28 - 363.76 = 88.52
    within = flag_regressions([first, point(427.58 - 88.52, 339.06)])
    beyond = flag_regressions([first, point(427.58 - 88.53, 339.05)])
    assert [p.regression for p in within] == [False, False]
    assert [p.regression for p in beyond] == [False, True]
    assert beyond[1].why == (
        "88.53 GB/s below the previous runs' median 427.6 GB/s, more than their spread of"
        " 88.52 GB/s"
    )
    assert not flag_regressions([point(1.0, 1.0)])[0].regression  # the first run never is


def test_history_orders_runs_by_measurement_and_flags_the_drop(tmp_path: Path) -> None:
    # run ids sort the other way round: the order must come from finished_at
    run_with(tmp_path, "undated-ffffffffffff", "2026-10-14T08:00:00Z", FIELD_REPORT)
    run_with(tmp_path, "undated-aaaaaaaaaaaa", "2026-10-15T08:00:00Z", (431.0, 440.2, 436.9))
    run_with(tmp_path, "undated-555555555555", "2026-10-16T08:00:00Z", (301.0, 298.3, 305.5))
    loaded = load_history(tmp_path / "edge-lab")
    (series,) = [s for s in loaded.history.series if s.size_bytes == GIB]
    assert series.title == "nccl-all-reduce inter-node over IB at 1GiB"
    assert [(p.run_id, p.median, p.regression) for p in series.points] == [
        ("undated-ffffffffffff", 427.58, False),
        ("undated-aaaaaaaaaaaa", 436.9, False),
        ("undated-555555555555", 301.0, True),
    ]
    assert [(r.label, r.value) for r in series.references] == [
        ("site threshold >= 2880 Gb/s", 360.0),
        ("catalog h20-3e-2node-roce-all-reduce (H20-3e, 2 node(s))", 427.58),
    ]


def test_no_regression_when_runs_hold_steady(tmp_path: Path) -> None:
    run_with(tmp_path, "undated-ffffffffffff", "2026-10-14T08:00:00Z", FIELD_REPORT)
    run_with(tmp_path, "undated-aaaaaaaaaaaa", "2026-10-15T08:00:00Z", (371.0, 420.5, 449.9))
    result = CliRunner().invoke(main, ["history", str(tmp_path / "edge-lab"), "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["regressions"] == 0
    assert doc["order"].startswith("Runs are ordered by when their measurements finished")
    text = CliRunner().invoke(main, ["history", str(tmp_path / "edge-lab")]).stdout
    assert text.splitlines()[-1] == "no regression"


def test_the_command_exits_1_on_a_regression_and_the_report_shows_it(tmp_path: Path) -> None:
    run_with(tmp_path, "undated-ffffffffffff", "2026-10-14T08:00:00Z", FIELD_REPORT)
    run_with(tmp_path, "undated-555555555555", "2026-10-16T08:00:00Z", (301.0, 298.3, 305.5))
    site = tmp_path / "edge-lab"
    result = CliRunner().invoke(
        main, ["history", str(site), "--format", "markdown", "--at", "1GiB"]
    )
    assert result.exit_code == 1
    assert (
        "| undated-555555555555 | 2026-10-16T08:00:00Z | 301 | 3 | ⚠️ regression:" in result.stdout
    )
    write_report(site, tmp_path / "report")
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "### History of edge-lab" in summary
    assert "⚠️ regression: 126.6 GB/s below the previous runs' median 427.6 GB/s" in summary
    html = (tmp_path / "report" / "index.html").read_text()
    assert '<section id="history">' in html and "regression</span> 126.6 GB/s below" in html
