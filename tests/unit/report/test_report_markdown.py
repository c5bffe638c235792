"""summary.md: the verdict table and key numbers, every archive string escaped."""

from __future__ import annotations

from pathlib import Path

import pytest
from reportfactory import sample_run

from nvcregen.report.archive import ReadArchive, read_archive
from nvcregen.report.folder import locate
from nvcregen.report.markdown import md, summary_markdown, table


@pytest.fixture
def archive(tmp_path: Path) -> ReadArchive:
    return read_archive(sample_run(tmp_path))


def cells(line: str) -> list[str]:
    """The cells of a table row, split on unescaped pipes."""
    parts, cell, escaped = [], "", False
    for char in line.strip()[1:-1]:
        if char == "|" and not escaped:
            parts.append(cell.strip())
            cell = ""
            continue
        escaped = char == "\\" and not escaped
        cell += char
    return [*parts, cell.strip()]


def section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(title) + 2
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def test_the_heading_names_the_site_the_verdict_and_the_counts(archive: ReadArchive) -> None:
    text = summary_markdown(archive)
    assert text.startswith("## Readiness of edge-lab: ❌ fail\n")
    assert "Run 20261014T130100Z-0123456789ab · 1 pass, 0 incomplete, 3 fail" in text
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_the_threshold_table_has_a_row_per_verdict_with_its_key_numbers(
    archive: ReadArchive,
) -> None:
    rows = section(summary_markdown(archive), "### Thresholds")
    header, rule, *body = rows
    assert cells(header) == [
        "verdict", "test", "stage", "check", "transport", "median", "reasons"
    ]  # fmt: skip
    assert rule == "|---|---|---|---|---|---|---|"
    assert [cells(r) for r in body] == [
        [
            "❌ fail",
            "nccl-all-reduce",
            "two-node (inter-node)",
            "busbw >= 2880 Gb/s at 1GiB",
            "expected IB · seen IB, Socket",
            "group-0: 395.7 GB/s over 2 rounds, spread 16.1%",
            "expected IB (RDMA), but the rounds ran over Socket",
        ],
        [
            "❌ fail",
            "nccl-all-reduce",
            "two-node (inter-node)",
            "algbw >= 150 GB/s at 64MiB",
            "expected IB · seen IB, Socket",
            "group-0: 157.6 GB/s over 2 rounds, spread 3.0%",
            "expected IB (RDMA), but the rounds ran over Socket",
        ],
        [
            "✅ pass",
            "training-goodput",
            "two-node (inter-node)",
            "goodput >= 0.9",
            "—",
            "group-0: 0.9462 over 2 rounds, spread 0.8%",
            "—",
        ],
    ]


def test_nodes_goodput_and_provenance_are_listed(archive: ReadArchive) -> None:
    text = summary_markdown(archive)
    nodes = section(text, "### Excluded, failed and unjudged nodes")
    assert cells(nodes[2])[:3] == ["node-c", "excluded", "two-node / nccl-all-reduce"]
    assert cells(nodes[2])[3] == "NodeNotReady: &lt;taint> &amp; cordoned"
    goodput = section(text, "### Goodput: two-node / training-goodput")
    assert cells(goodput[-1])[:4] == ["median", "2 final", "—", "0.9462"]
    assert cells(goodput[-2])[:3] == ["group-0", "3", "provisional (Measuring)"]
    assert "- NCCL: 2.27.3" in text
    assert "- site file sha256: " + "ab" * 32 in text


def test_names_and_messages_are_escaped(archive: ReadArchive) -> None:
    text = summary_markdown(archive)
    assert "<script" not in text and "<taint" not in text
    runs = section(text, "### Runs")
    assert len(cells(runs[2])) == 5  # the `|` in the message did not split the row
    assert cells(runs[2])[4] == (
        "node-&lt;b>: &lt;script>alert('x')&lt;/script> \\| \\*bold\\* \\_it\\_ \\`code\\`"
    )


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a|b", "a\\|b"),
        ("two\nlines\r\n here", "two lines here"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)>"),
        ("&amp;", "&amp;amp;"),
        ("[link](http://x)", "\\[link\\](http://x)"),
        ("# not a heading", "\\# not a heading"),
        ("a\\|b", "a\\\\\\|b"),
        ("node-a_1 *x*", "node-a\\_1 \\*x\\*"),
    ],
)
def test_md_escapes(raw: str, escaped: str) -> None:
    assert md(raw) == escaped


def test_an_empty_cell_shows_a_dash() -> None:
    assert table(("a", "b"), [("x", "")]) == ["| a | b |", "|---|---|", "| x | — |"]


def test_other_runs_of_the_site_folder_are_listed(tmp_path: Path) -> None:
    sample_run(tmp_path, "20261013T090000Z-aaaaaaaaaaaa")
    newest = sample_run(tmp_path, "20261014T130100Z-0123456789ab")
    located = locate(tmp_path / "edge-lab")
    text = summary_markdown(read_archive(newest), located.runs)
    assert "- 20261013T090000Z-aaaaaaaaaaaa — measured until 2026-10-13T09:00:00Z\n" in text
    assert (
        "- 20261014T130100Z-0123456789ab — measured until 2026-10-14T13:01:00Z (this report)\n"
        in text
    )
    assert "Runs are ordered by when their measurements finished" in text
