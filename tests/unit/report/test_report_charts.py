"""Charts of an archive: one per test, stage and transport; medians over final rounds only."""

from __future__ import annotations

from pathlib import Path

import pytest
from reportfactory import GIB, MIB, bw_rows, csv_text, sample_rows, sample_run

from nvcregen.report.archive import ReadArchive, read_archive, read_bandwidth
from nvcregen.report.charts import (
    bandwidth_series,
    charts,
    median_points,
    threshold_rules,
    transport_text,
)
from nvcregen.report.folder import ReportError
from nvcregen.results.archivemodel import BandwidthCsvRow


@pytest.fixture
def archive(tmp_path: Path) -> ReadArchive:
    return read_archive(sample_run(tmp_path))


def rows_of(*groups: list[dict[str, object]]) -> list[dict[str, object]]:
    return [row for rows in groups for row in rows]


def read_bandwidth_rows(rows: list[dict[str, object]]) -> tuple[BandwidthCsvRow, ...]:
    return read_bandwidth(csv_text(rows))


def test_one_chart_per_transport_and_an_algbw_chart_where_a_threshold_compares_algbw(
    archive: ReadArchive,
) -> None:
    found = [(c.test, c.stage, c.metric, c.transport) for c in charts(archive)]
    assert found == [
        ("nccl-all-reduce", "two-node", "bus bandwidth", "over IB; expected IB"),
        ("nccl-all-reduce", "two-node", "algorithm bandwidth", "over IB; expected IB"),
        ("nccl-all-reduce", "two-node", "bus bandwidth", "over Socket; expected IB"),
        ("nccl-all-reduce", "two-node", "algorithm bandwidth", "over Socket; expected IB"),
    ]
    assert [c.anchor for c in charts(archive)] == [f"chart-{n}" for n in range(1, 5)]


def test_thresholds_are_drawn_on_the_chart_of_their_figure(archive: ReadArchive) -> None:
    views = charts(archive)
    busbw, algbw = views[0].chart.rules, views[1].chart.rules
    assert [r.label for r in busbw] == ["busbw >= 2880 Gb/s (= 360 GB/s) at 1GiB: fail"]
    assert [r.label for r in algbw] == ["algbw >= 150 GB/s at 64MiB: fail"]
    assert busbw[0].word == "fail"


def test_a_round_per_line_and_the_median_over_final_rounds_only(archive: ReadArchive) -> None:
    ib = [r for r in archive.bandwidth if r.transports == ("IB",)]
    found = bandwidth_series(ib, "busbw")
    assert [(s.label, s.kind) for s in found] == [
        ("group-0 round 1", "round"),
        ("group-0 round 2", "round"),
        ("group-0 round 4 (provisional: Measuring)", "provisional"),
        ("group-0 median", "median"),
    ]
    median = dict(found[-1].points)
    assert median[GIB] == pytest.approx((363.76 + 427.58) / 2)  # round 4 (410) left out
    assert {s.color for s in found} == {found[0].color}


def test_the_median_is_taken_size_by_size_not_from_other_medians() -> None:
    rows = read_bandwidth_rows(
        rows_of(
            bw_rows("g", 1, (10.0, 100.0, 300.0)),
            bw_rows("g", 2, (30.0, 50.0, 200.0)),
            bw_rows("g", 3, (20.0, 400.0, 100.0)),
        )
    )
    assert median_points(rows, "busbw") == ((MIB, 20.0), (64 * MIB, 100.0), (GIB, 200.0))
    algbw = dict(median_points(rows, "algbw"))
    assert algbw[GIB] == pytest.approx(200.0 / 1.875, abs=1e-3)  # the CSV keeps 6 digits


def test_each_group_gets_its_own_color_and_median() -> None:
    rows = read_bandwidth_rows(
        rows_of(bw_rows("node-a", 1, (1.0, 2.0, 3.0)), bw_rows("node-b", 1, (1.0, 2.0, 4.0)))
    )
    medians = [s for s in bandwidth_series(rows, "busbw") if s.kind == "median"]
    assert [m.label for m in medians] == ["node-a median", "node-b median"]
    assert medians[0].color != medians[1].color


def test_a_group_without_a_final_round_has_no_median() -> None:
    rows = read_bandwidth_rows(bw_rows("g", 1, (1.0, 2.0, 3.0), finality="provisional"))
    assert [s.kind for s in bandwidth_series(rows, "busbw")] == ["provisional"]


def test_thresholds_without_a_bound_are_not_drawn(archive: ReadArchive) -> None:
    transport_only = archive.verdicts.thresholds[0].model_copy(
        update={"bound": None, "field": "transport"}
    )
    assert threshold_rules([transport_only]) == []
    best = archive.verdicts.thresholds[0].model_copy(update={"at": None, "size_bytes": None})
    (rule,) = threshold_rules([best])
    assert rule.at is None and rule.label.endswith("(best size): fail")


def test_transport_text_without_a_run() -> None:
    assert transport_text((), None) == "transport not recorded"


def test_an_unreadable_bandwidth_row_is_refused_with_its_line() -> None:
    text = "stage,scope,test,group,round,measurement,finality,reason,size_bytes,algbw_gbs,"
    text += "busbw_gbs,transport\ns,i,t,g,1,m,final,r,1024,nan,1,IB\n"
    with pytest.raises(ReportError, match="line 2"):
        read_bandwidth(text)
    with pytest.raises(ReportError, match="line 2"):
        read_bandwidth("stage,scope\ns,i\n")


def test_sample_rows_cover_every_size(archive: ReadArchive) -> None:
    assert len(archive.bandwidth) == len(sample_rows())


def test_an_ib_threshold_is_not_drawn_over_socket_rounds(archive: ReadArchive) -> None:
    """The 2.25 GB/s TCP curve keeps an axis of its own, not one scaled to 360 GB/s."""
    socket = [c for c in charts(archive) if c.transport.startswith("over Socket")]
    assert [c.chart.rules for c in socket] == [(), ()]
    assert socket[0].note == (
        "busbw >= 2880 Gb/s not drawn: it expects IB, these rounds ran over Socket"
    )
    top = float(socket[0].chart.y_ticks[-1].label)
    assert top < 5  # 2.25 GB/s reaches up the axis instead of lying flat at its bottom
    ib = [c for c in charts(archive) if c.transport.startswith("over IB")]
    assert [len(c.chart.rules) for c in ib] == [1, 1]
    assert ib[0].note == ""
