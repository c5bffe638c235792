"""The HTML page: `templates/report.html.j2` rendered with autoescaping and strict variables.

The page is self-contained: inline CSS, inline SVG, no script, no external resource, so
it opens from a file, an artifact store or an air-gapped laptop. Everything the page
shows is computed before rendering (`charts.py`, `tables.py`); the template only lays
it out, and escapes every value it writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import jinja2

from nvcregen.report.archive import ReadArchive
from nvcregen.report.charts import ChartView, charts
from nvcregen.report.folder import ORDER_NOTE, RunEntry, standing, when_text
from nvcregen.report.history import History
from nvcregen.report.tables import (
    GoodputTable,
    HeldNodes,
    NodeLine,
    NodeRow,
    RunRow,
    VerdictRow,
    evidence_lines,
    goodput_tables,
    hold_back,
    hold_back_text,
    node_lines,
    node_rows,
    number,
    provenance_rows,
    run_rows,
    verdict_rows,
)
from nvcregen.results.archivemodel import ImageRecord
from nvcregen.results.verdicts import ExportVerdict


@dataclass(frozen=True)
class Page:
    """Everything the template shows."""

    site: str
    run_id: str
    word: str
    counts: tuple[tuple[str, int], ...]
    hold_back: str
    hold_back_lead: str  # hold_back, its names apart (each kept on one line)
    hold_back_nodes: tuple[HeldNodes, ...]
    evidence: tuple[str, ...]
    held: tuple[NodeLine, ...]
    cleared: tuple[NodeLine, ...]
    verdicts: tuple[VerdictRow, ...]
    runs: tuple[RunRow, ...]
    charts: tuple[ChartView, ...]
    nodes: tuple[NodeRow, ...]
    goodput: tuple[GoodputTable, ...]
    exports: tuple[ExportVerdict, ...]
    provenance: tuple[tuple[str, str], ...]
    images: tuple[ImageRecord, ...]
    history: History | None
    folder_runs: tuple[tuple[str, bool, str, str], ...]  # id, this one, standing, when
    folder_findings: tuple[str, ...]  # folders holding a run listed already (NVC756)
    notes: tuple[str, ...]


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("nvcregen.report", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def build_page(
    archive: ReadArchive,
    runs: Sequence[RunEntry] = (),
    history: History | None = None,
    findings: Sequence[str] = (),
) -> Page:
    """The page of one archive.

    `runs` lists every run of its site folder, `findings` the folders that held one of
    them again.
    """
    s = archive.summary
    held, cleared = node_lines(archive)
    lead, held_nodes = hold_back(archive)
    return Page(
        site=s.site,
        run_id=s.run_id,
        word=s.verdict,
        counts=tuple((w, s.counts.get(w, 0)) for w in ("pass", "incomplete", "fail")),
        hold_back=hold_back_text(archive),
        hold_back_lead=lead,
        hold_back_nodes=held_nodes,
        evidence=tuple(evidence_lines(archive)),
        held=tuple(held),
        cleared=tuple(cleared),
        verdicts=tuple(verdict_rows(archive)),
        runs=tuple(run_rows(archive)),
        charts=tuple(charts(archive)),
        nodes=tuple(node_rows(archive)),
        goodput=tuple(goodput_tables(archive)),
        exports=archive.verdicts.exports,
        provenance=tuple(provenance_rows(archive)),
        images=archive.provenance.images,
        history=history,
        folder_runs=tuple(
            (r.run_id, r.path == archive.path, standing(r), when_text(r))
            for r in runs
            if len(runs) > 1
        ),
        folder_findings=tuple(findings),
        notes=(*s.notes, *s.problems),
    )


def render_page(page: Page) -> str:
    """The HTML text of a page."""
    template = _environment().get_template("report.html.j2")
    return template.render(page=page, ORDER_NOTE=ORDER_NOTE, number=number)
