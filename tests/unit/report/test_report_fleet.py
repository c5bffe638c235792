"""The report of a 1,024-node run (issue 32): bounded summary.md, ranges, plots, run words.

`reportfactory.fleet_run`: one group per node, 40 nodes below the threshold (failed), two
suspect, 982 cleared; the run itself succeeded, so verdicts.json words it `pass`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from reportfactory import FLEET_FAILED, fleet_run

from nvcregen.report.archive import ReadArchive, read_archive
from nvcregen.report.charts import MORE, MUTED, PALETTE, charts
from nvcregen.report.markdown import (
    CELL_ITEMS_MAX,
    ROWS_MAX,
    SUMMARY_MAX,
    _items,
    bounded,
    clip,
    summary_markdown,
)
from nvcregen.report.page import build_page, render_page
from nvcregen.report.tables import hold_back_text, run_rows
from nvcregen.report.writer import write_report

RANGES = "gpu-[0000-0099], gpu-[0140-0511], gpu-[0513-0776], gpu-[0778-1023]"
HOLD_BACK = (
    "Hold back 42 of 1024 nodes: gpu-[0100-0139] (failed), gpu-0512 (suspect), gpu-0777 (suspect)."
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> ReadArchive:
    return read_archive(fleet_run(tmp_path_factory.mktemp("fleet")))


def escaped(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]")


# summary.md: bounded, cleared nodes counted as ranges


@pytest.mark.slow
def test_summary_of_1024_nodes_is_short_and_gives_cleared_nodes_as_ranges(
    fleet: ReadArchive,
) -> None:
    text = summary_markdown(fleet)
    assert len(text) < 20_000  # 98,490 characters before issue 32
    assert f"✅ 982 nodes cleared: {escaped(RANGES)}" in text.splitlines()
    assert "gpu-0000 |" not in text  # no cleared node has a row


def test_summary_lists_failing_groups_first_and_counts_the_rest(fleet: ReadArchive) -> None:
    (row,) = [x for x in summary_markdown(fleet).splitlines() if x.startswith("| ❌ fail | nccl")]
    medians = row.split(" | ")[5].split("<br>")
    assert medians[0].startswith("gpu-0100: 300 GB/s")
    assert medians[-1] == "… 1019 more groups: index.html"
    assert len(medians) == 6


def test_the_hold_back_line_gives_ranges(fleet: ReadArchive) -> None:
    assert hold_back_text(fleet) == HOLD_BACK
    assert summary_markdown(fleet).splitlines()[2] == f"**{escaped(HOLD_BACK)}**"


@pytest.mark.slow
def test_summary_stays_bounded_when_every_other_node_fails(tmp_path: Path) -> None:
    failed = tuple(f"gpu-{i:04d}" for i in range(1, 1024, 2))
    text = summary_markdown(read_archive(fleet_run(tmp_path, failed_nodes=failed)))
    assert len(text) < SUMMARY_MAX
    # 512 failed and gpu-0512 suspect (gpu-0777 is odd: failed)
    assert f"… and {513 - ROWS_MAX} more held-back nodes: index.html" in text
    assert f"… and {512 - ROWS_MAX} more excluded or failed nodes: index.html" in text
    held = text.splitlines()[2]
    assert held.endswith(", … (every name in index.html)**")
    assert len(held) < 2_100


def test_bounded_cuts_at_a_line_and_says_so() -> None:
    lines = ["x" * 99] * 10  # 1,000 characters with the newlines
    assert bounded(lines, 1_000) == "\n".join(lines) + "\n"
    cut = bounded(lines, 999)
    assert all(len(bounded(lines, limit)) <= limit for limit in range(400, 1000))
    assert cut.endswith("index.html has everything._\n")
    assert cut.startswith("x" * 99 + "\n")


def test_clip_cuts_a_list_after_a_comma() -> None:
    assert clip("a, b, c", 7) == "a, b, c"
    assert clip("aa, bb, cc", 7) == "aa, bb, … (every name in index.html)"
    assert clip("aa, bb, cc", 5) == "aa, … (every name in index.html)"


@pytest.mark.slow
def test_the_written_summary_is_under_the_limit(tmp_path: Path) -> None:
    report = write_report(fleet_run(tmp_path / "results"), tmp_path / "out")
    summary = next(f for f in report.files if f.name == "summary.md")
    assert len(summary.read_text(encoding="utf-8")) < SUMMARY_MAX


# index.html: names that do not wrap, plots that show the failing groups


def test_node_names_never_break_in_the_page(fleet: ReadArchive) -> None:
    html = render_page(build_page(fleet))
    assert ".node, td.node { white-space: nowrap; }" in html
    held = html[html.index('id="hold-back"') :].split("</p>", 1)[0]
    assert '<span class="node">gpu-[0100-0139]</span> (failed),' in held
    assert held.endswith('<span class="node">gpu-0777</span> (suspect).</strong>')
    assert '<td class="mono node">gpu-0000</td>' in html
    assert not re.search(r'<td class="mono">gpu-', html)


def test_many_groups_draw_passing_ones_muted_and_label_the_failing(fleet: ReadArchive) -> None:
    (view,) = charts(fleet)
    muted = [line for line in view.chart.lines if line.muted]
    assert len(muted) == 982
    assert {line.color for line in muted} == {MUTED}
    assert all(line.kind == "median" and not line.dots for line in muted)
    labelled = [e for e in view.legend if e.kind == "median"]
    assert [e.color for e in labelled[:7]] == list(PALETTE)  # distinct colours
    assert [e.label for e in labelled[:2]] == ["gpu-0100 median", "gpu-0101 median"]
    assert (labelled[7].label, labelled[7].color) == ("35 more failing or suspect groups", MORE)
    assert "gpu-0000 median" not in {e.label for e in view.legend}
    colors = [line.color for line in view.chart.lines]
    last_more = max(i for i, c in enumerate(colors) if c == MORE)
    assert min(i for i, c in enumerate(colors) if c in PALETTE) > last_more  # drawn on top
    assert view.groups.startswith("1024 groups drawn: 42 that failed or hold a failed or")
    assert "982 that passed in grey" in view.groups


def test_muted_lines_are_drawn_first(fleet: ReadArchive) -> None:
    html = render_page(build_page(fleet))
    first_loud = html.index('class="series round"')
    assert html.rindex('class="series muted"') < first_loud
    assert "982 that passed in grey" in html


# the runs table agrees with the verdict


def test_a_run_that_succeeded_below_its_threshold_is_not_shown_as_passing(
    fleet: ReadArchive,
) -> None:
    (row,) = run_rows(fleet)
    assert (row.word, row.state) == ("fail", "succeeded")
    assert row.reasons[-1].message == "threshold 1 (busbw >= 420 GB/s at 1GiB): fail"
    line = next(x for x in summary_markdown(fleet).splitlines() if "succeeded |" in x)
    assert line.startswith("| ❌ fail | single-node | nccl-all-reduce | succeeded |")


def test_failed_nodes_are_the_ones_drawn_in_colour(fleet: ReadArchive) -> None:
    (view,) = charts(fleet)
    loud = {line.label.split()[0] for line in view.chart.lines if not line.muted}
    assert loud == {*FLEET_FAILED, "gpu-0512", "gpu-0777"}


@pytest.mark.slow
@pytest.mark.parametrize(("failed", "more"), [(48, None), (49, 1)])
def test_held_back_rows_stop_at_rows_max(tmp_path: Path, failed: int, more: int | None) -> None:
    # failed nodes and the two suspects: 50 rows fit, the 51st is counted instead
    names = tuple(f"gpu-{i:04d}" for i in range(failed))
    text = summary_markdown(read_archive(fleet_run(tmp_path, failed_nodes=names)))
    rows = [x for x in text.split("### Thresholds")[0].splitlines() if x.startswith("| gpu-")]
    assert len(rows) == min(failed + 2, ROWS_MAX)
    counted = [x for x in text.splitlines() if "more held-back nodes" in x]
    assert counted == ([] if more is None else [f"… and {more} more held-back nodes: index.html"])


@pytest.mark.parametrize(("count", "muted"), [(len(PALETTE), 0), (len(PALETTE) + 1, 7)])
def test_groups_are_muted_only_past_the_palette(tmp_path: Path, count: int, muted: int) -> None:
    # one node failed (gpu-0000), every other passed
    archive = read_archive(fleet_run(tmp_path, count=count, failed_nodes=("gpu-0000",)))
    (view,) = charts(archive)
    assert sum(line.muted for line in view.chart.lines) == muted
    assert bool(view.groups) == bool(muted)
    medians = [e for e in view.legend if e.kind == "median"]
    assert len(medians) == (1 if muted else count)


def test_a_cell_lists_cell_items_max_items() -> None:
    assert _items(["a"] * CELL_ITEMS_MAX, "groups") == "<br>".join(["a"] * CELL_ITEMS_MAX)
    assert _items(["a"] * (CELL_ITEMS_MAX + 1), "groups").endswith(
        "<br>… 1 more groups: index.html"
    )
