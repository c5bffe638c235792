"""The HTML page: self-contained, escaped, deterministic; and the `report` command."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from reportfactory import sample_run

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from nvcregen.report.archive import read_archive
from nvcregen.report.page import build_page, render_page
from nvcregen.report.writer import write_report


class Tags(HTMLParser):
    """Every start tag and its attributes, and the text of each table cell."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture
def html(tmp_path: Path) -> str:
    return render_page(build_page(read_archive(sample_run(tmp_path))))


def parse(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def test_the_page_needs_nothing_from_the_network(html: str) -> None:
    tags = parse(html)
    names = {tag for tag, _ in tags.tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed"}
    urls = [v for _, attrs in tags.tags for k, v in attrs.items() if k in {"src", "href"}]
    assert urls and all(u is not None and u.startswith("#") for u in urls)
    assert "@import" not in html and "url(" not in html
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"] * 4


def test_names_and_messages_are_escaped(html: str) -> None:
    assert "<script" not in html and "<taint>" not in html and "node-<b>" not in html
    assert "node-&lt;b&gt;: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    cells = parse(html).cells
    assert "NodeNotReady: <taint> & cordoned" in cells  # shown as written once parsed


def test_the_verdict_table_lists_every_threshold(html: str) -> None:
    tags = parse(html)
    assert ("table", {"class": "verdicts", "id": "verdict-table"}) in tags.tags
    cells = tags.cells
    assert cells[:5] == [
        "fail",
        "nccl-all-reduce",
        "two-node (inter-node)",
        "busbw >= 2880 Gb/s at 1GiB",
        "expected IB · seen IB, Socket",
    ]
    assert "group-0: 0.9462 over 2 rounds, spread 0.8%" in cells


def test_each_chart_has_its_lines_thresholds_and_markers(html: str) -> None:
    tags = parse(html).tags
    assert sum(t == "svg" and a.get("class") == "chart" for t, a in tags) == 4
    lines = [a["class"] for t, a in tags if t == "polyline"]
    assert lines.count("series median") == 4
    assert lines.count("series provisional") == 2  # round 4, in the busbw and algbw IB charts
    rules = [a for t, a in tags if t == "line" and a.get("class") == "threshold"]
    markers = [a for t, a in tags if t == "path" and a.get("class") == "marker"]
    assert len(rules) == len(markers) == 2  # on the IB charts only, not over Socket rounds


def test_provenance_and_nodes_are_shown(html: str) -> None:
    cells = parse(html).cells
    assert "nvcr.io/nvidia/pytorch:26.01-py3" in cells
    assert "sha256:" + "4c" * 32 in cells
    start = cells.index("node-c")
    assert cells[start : start + 4] == ["node-c", "excluded", "two-node", "nccl-all-reduce"]
    assert "ab" * 32 in html and "2.27.3" in html


def test_the_same_archive_gives_the_same_bytes_wherever_it_is(tmp_path: Path) -> None:
    run = sample_run(tmp_path / "a")
    copy = tmp_path / "b" / "edge-lab" / run.name
    shutil.copytree(run, copy)
    first = write_report(run, tmp_path / "out1")
    second = write_report(copy, tmp_path / "out2")
    for one, two in zip(first.files, second.files, strict=True):
        assert one.read_bytes() == two.read_bytes()
    assert [f.name for f in first.files] == ["index.html", "summary.md"]


def test_the_command_writes_the_page_and_the_summary(tmp_path: Path) -> None:
    sample_run(tmp_path / "results")
    out = tmp_path / "report"
    args = ["report", str(tmp_path / "results" / "edge-lab"), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.OK, result.output
    assert result.stdout.splitlines()[0] == "edge-lab 20261014T130100Z-0123456789ab: fail"
    assert (out / "index.html").read_text().startswith("<!DOCTYPE html>")
    assert (out / "summary.md").read_text().startswith("## Readiness of edge-lab")
    rerun = CliRunner().invoke(main, args)
    assert rerun.exit_code == ExitCode.OK
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "summary.md"]  # no temp left
