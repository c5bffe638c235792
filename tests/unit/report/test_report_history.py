"""`nvcregen history` and the report's history: run over run, regressions flagged."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from reportfactory import bw_rows, groups_run, sample_run

from nvcregen.cli import main
from nvcregen.report.history import Point, Reference, flag_regressions
from nvcregen.report.historyview import load_history
from nvcregen.report.writer import write_report

GIB = 1 << 30
FIELD_REPORT = (363.76, 427.58, 452.28)  # the seed's three RoCE rounds at 1 GiB


def run_with(results: Path, run_id: str, finished: str, busbw: tuple[float, ...]) -> Path:
    """A run whose two-node all-reduce rounds on node-a and node-b had these 1 GiB bus
    bandwidths (all IB)."""
    return groups_run(results, run_id, finished, {("node-b", "node-a"): busbw})


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
    assert series.title == "nccl-all-reduce inter-node over IB at 1GiB, nodes node-a, node-b"
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


PAIRS = {("n1", "n2"), ("n3", "n4"), ("n5", "n6"), ("n7", "n8")}
Groups = dict[tuple[str, ...], tuple[float, ...]]
STEADY: Groups = {("n3", "n4"): (425.0, 430.0, 440.0), ("n5", "n6"): (426.0, 431.0, 439.0)}


def test_one_pair_falling_below_its_threshold_is_a_regression_pooling_hid(
    tmp_path: Path,
) -> None:
    """Issue #31: pair {n1,n2} fell from 427.58 to 342.06 GB/s (threshold 360); pooled with
    the steady pairs into one median it read "no regression", exit 0."""
    healthy: Groups = STEADY | {("n7", "n8"): (428.0, 433.0, 441.0)}
    groups_run(tmp_path, "20261014T080000Z-aaaaaaaaaaaa", "2026-10-14T08:00:00Z",
               {("n2", "n1"): (420.0, 427.58, 435.0), **healthy})  # fmt: skip
    groups_run(tmp_path, "20261015T080000Z-bbbbbbbbbbbb", "2026-10-15T08:00:00Z",
               {("n1", "n2"): (340.0, 342.06, 345.0), **healthy})  # fmt: skip
    site = tmp_path / "edge-lab"
    result = CliRunner().invoke(main, ["history", str(site), "--at", "1GiB"])
    assert result.exit_code == 1, result.output
    found = load_history(site, [GIB]).history
    assert {s.nodes for s in found.series} == PAIRS
    ((series, regressed),) = found.regressions
    assert series.nodes == ("n1", "n2") and regressed.median == 342.06
    assert regressed.why == (
        "85.52 GB/s below the previous runs' median 427.6 GB/s, more than their spread of"
        " 15 GB/s; 342.1 GB/s misses the site threshold >= 2880 Gb/s (360 GB/s) that"
        " 20261014T080000Z-aaaaaaaaaaaa met with 427.6 GB/s"
    )
    title = "nccl-all-reduce inter-node over IB at 1GiB, nodes n1, n2"
    assert f"  20261015T080000Z-bbbbbbbbbbbb: {title}: 85.52 GB/s below" in result.stdout
    doc = json.loads(CliRunner().invoke(main, ["history", str(site), "--format", "json"]).stdout)
    assert sorted(s["nodes"] for s in doc["series"] if s["size_bytes"] == GIB) == sorted(
        [list(p) for p in PAIRS]
    )


def threshold_360() -> Reference:
    return Reference("site threshold >= 2880 Gb/s", 360.0, ">=")


def test_missing_the_threshold_met_before_is_a_regression_even_within_the_spread() -> None:
    first = point(427.58, 300.0, 427.58, 450.0)  # spread 150: a drop of 85.52 is within it
    below = flag_regressions([first, point(359.99, 359.99)], [threshold_360()])
    at = flag_regressions([first, point(360.0, 360.0)], [threshold_360()])
    assert [p.regression for p in below] == [False, True]
    assert below[1].why == (
        "360 GB/s misses the site threshold >= 2880 Gb/s (360 GB/s) that r met with 427.6 GB/s"
    )
    assert [p.regression for p in at] == [False, False]  # meeting the bound exactly passes
    baseline = Reference("catalog baseline", 427.58)  # not a threshold: never missed
    assert [p.regression for p in flag_regressions([first, point(359.99)], [baseline])] == [
        False,
        False,
    ]


def test_a_group_that_missed_the_threshold_before_is_no_new_regression() -> None:
    before = point(350.0, 300.0, 350.0, 450.0)
    again = flag_regressions([before, point(340.0, 340.0)], [threshold_360()])
    assert [p.regression for p in again] == [False, False]


def test_a_node_set_is_one_series_whatever_its_group_is_called(tmp_path: Path) -> None:
    groups_run(tmp_path, "20261014T080000Z-aaaaaaaaaaaa", "2026-10-14T08:00:00Z",
               {("n1", "n2"): (427.58,), ("n3", "n4"): (430.0,)})  # fmt: skip
    groups_run(
        tmp_path,
        "20261015T080000Z-bbbbbbbbbbbb",
        "2026-10-15T08:00:00Z",
        {("n3", "n4"): (431.0,), ("n2", "n1"): (428.0,)},
    )  # n1,n2 is group-1 now
    found = load_history(tmp_path / "edge-lab", [GIB]).history
    assert [(s.nodes, [p.median for p in s.points]) for s in found.series] == [
        (("n1", "n2"), [427.58, 428.0]),
        (("n3", "n4"), [430.0, 431.0]),
    ]


def test_groups_whose_nodes_are_not_recorded_are_told_apart_by_name(tmp_path: Path) -> None:
    rows = [*bw_rows("group-0", 1, (1.0, 2.0, 400.0)), *bw_rows("group-1", 1, (1.0, 2.0, 300.0))]
    sample_run(tmp_path, "undated-aaaaaaaaaaaa", rows=rows)
    found = load_history(tmp_path / "edge-lab", [GIB]).history
    assert [(s.who, s.points[0].median) for s in found.series] == [
        ("group group-0 (its nodes not recorded)", 400.0),
        ("group group-1 (its nodes not recorded)", 300.0),
    ]
