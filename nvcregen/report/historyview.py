"""`nvcregen history`: a site folder's runs read, then shown as text, Markdown or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvcregen.report.archive import read_archive
from nvcregen.report.folder import ORDER_NOTE, ReportError, RunEntry, locate, standing
from nvcregen.report.history import History, Series, history
from nvcregen.report.markdown import md, table
from nvcregen.report.tables import number


@dataclass(frozen=True)
class Loaded:
    """A site's history and the runs left out because they do not verify."""

    history: History
    skipped: tuple[str, ...]


def load_history(site_dir: Path, at: Sequence[int] = ()) -> Loaded:
    """Read every run of a site folder that verifies, oldest first.

    Raises:
        ReportError: When the folder holds no run, or none verifies.

    """
    located = locate(site_dir)
    return history_of(located.runs, at, located.findings)


def history_of(
    runs: Sequence[RunEntry], at: Sequence[int] = (), findings: Sequence[str] = ()
) -> Loaded:
    """The history of some located runs (those that verify and are not refused).

    `findings` (folders holding a run listed already) are told with the runs left out.
    """
    good = [r for r in runs if not r.problems]
    if not good:
        raise ReportError("no run of this site folder verifies against its SHA256SUMS")
    archives = [(read_archive(r.path), r.finished_at) for r in good]
    skipped = tuple(f"{r.run_id}: {standing(r)}" for r in runs if r.problems)
    return Loaded(history(archives, at), (*skipped, *findings))


def _refs(series: Series) -> str:
    return "; ".join(f"{r.label}: {number(r.value)} GB/s" for r in series.references)


def render_text(loaded: Loaded) -> str:
    """Readable lines: one block per series, one line per run."""
    h = loaded.history
    lines = [f"history of {h.site}: {len(h.runs)} run(s). {ORDER_NOTE}"]
    lines += [f"left out: {s}" for s in loaded.skipped]
    for series in h.series:
        lines += ["", f"{series.title} (median bus bandwidth, GB/s)"]
        if series.references:
            lines.append(f"  against {_refs(series)}")
        for p in series.points:
            when = p.finished_at or "no measurement time"
            flag = f"  REGRESSION: {p.why}" if p.regression else ""
            lines.append(
                f"  {p.run_id}  {when}  {number(p.median):>8}  ({len(p.rounds)} rounds){flag}"
            )
    found = h.regressions
    lines += ["", f"{len(found)} regression(s)" if found else "no regression"]
    lines += [f"  {p.run_id}: {s.title}: {p.why}" for s, p in found]
    return "\n".join(lines) + "\n"


def render_markdown(loaded: Loaded) -> str:
    """A section for a pull request or a ticket (also the report's history section)."""
    return "\n".join(markdown_lines(loaded.history, loaded.skipped)) + "\n"


def markdown_lines(h: History, skipped: Sequence[str] = ()) -> list[str]:
    """The history as Markdown lines: a table per series."""
    lines = [f"### History of {md(h.site)}", "", md(ORDER_NOTE)]
    lines += [f"- left out: {md(s)}" for s in skipped]
    for series in h.series:
        lines += [
            "",
            f"**{md(series.title)}**" + (f" — {md(_refs(series))}" if series.references else ""),
        ]
        rows = [
            (
                md(p.run_id),
                md(p.finished_at or "—"),
                number(p.median),
                str(len(p.rounds)),
                f"⚠️ regression: {md(p.why)}" if p.regression else "—",
            )
            for p in series.points
        ]
        lines += [
            "",
            *table(("run", "measured until", "median busbw (GB/s)", "rounds", "regression"), rows),
        ]
    return lines


def render_json(loaded: Loaded) -> str:
    """The history as JSON (sorted keys, two-space indent)."""
    h = loaded.history
    doc = {
        "site": h.site,
        "order": ORDER_NOTE,
        "runs": [{"run_id": r, "finished_at": w} for r, w in h.runs],
        "skipped": list(loaded.skipped),
        "series": [
            {
                "test": s.test,
                "scope": s.scope,
                "transport": s.transport,
                "nodes": list(s.nodes),
                "group": s.group,
                "size_bytes": s.size_bytes,
                "references": [{"label": r.label, "gbs": r.value} for r in s.references],
                "points": [
                    {
                        "run_id": p.run_id,
                        "finished_at": p.finished_at,
                        "median_busbw_gbs": p.median,
                        "rounds": list(p.rounds),
                        "regression": p.regression,
                        "why": p.why,
                    }
                    for p in s.points
                ],
            }
            for s in h.series
        ],
        "regressions": len(h.regressions),
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
