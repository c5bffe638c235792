"""summary.md: the verdicts and key numbers of a run, for a pull request or a ticket (pure).

Every name and message from the archive is escaped: `|` cannot end a table cell,
Markdown emphasis, code and link characters are taken literally, and `<` and `&` cannot
start HTML or an entity (GitHub renders inline HTML in Markdown). Line breaks become
spaces, so a message cannot end a table row.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.report.archive import Archive
from nvcregen.report.folder import ORDER_NOTE, RunEntry, standing, when_text
from nvcregen.report.tables import (
    NONE,
    ReasonText,
    evidence_lines,
    goodput_tables,
    hold_back_text,
    node_lines,
    node_rows,
    provenance_rows,
    run_rows,
    verdict_rows,
)

_ESCAPED = "\\`*_[]{}#|!~"
_ENTITIES = {"&": "&amp;", "<": "&lt;"}  # `>` starts no tag, and no quote inside a line
_WORD = {"pass": "✅ pass", "fail": "❌ fail", "incomplete": "⚠️ incomplete"}


def md(text: str) -> str:
    """Text as literal Markdown inside a table cell or a list item."""
    out = []
    for char in " ".join(text.split()):
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char in _ESCAPED:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def word(text: str) -> str:
    """A verdict word with its sign."""
    return _WORD.get(text, md(text))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table of already escaped cells."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell or NONE for cell in row) + " |" for row in rows]
    return lines


def _reasons(reasons: Sequence[ReasonText]) -> str:
    return "<br>".join(md(r.message) for r in reasons) or NONE


def summary_markdown(
    archive: Archive,
    runs: Sequence[RunEntry] = (),
    history: Sequence[str] = (),
    findings: Sequence[str] = (),
) -> str:
    """The whole summary.md text.

    `history` is the history section's lines, if any; `findings` name the folders that
    held a listed run again.
    """
    s = archive.summary
    counts = ", ".join(f"{s.counts.get(w, 0)} {w}" for w in ("pass", "incomplete", "fail"))
    lines = [
        f"## Readiness of {md(s.site)}: {word(s.verdict)}",
        "",
        *[f"- **{md(line)}**" for line in evidence_lines(archive)],
        *([""] if evidence_lines(archive) else []),
        f"**{md(hold_back_text(archive))}**",
        "",
        f"Run {md(s.run_id)} · {counts} · plots and details: index.html",
        *_node_table(archive),
        "",
        "### Thresholds",
        "",
        *_thresholds(archive),
        "",
        "### Runs",
        "",
        *table(
            ("verdict", "stage", "test", "state", "reasons"),
            [
                (word(r.word), md(r.stage), md(r.test), md(r.state), _reasons(r.reasons))
                for r in run_rows(archive)
            ],
        ),
        *_nodes(archive),
        *_goodput(archive),
        *_other_runs(archive, runs, findings),
        *(["", *history] if history else []),
        "",
        "### Provenance",
        "",
        *[f"- {label}: {md(value)}" for label, value in provenance_rows(archive)],
        *[f"- image: {md(i.image)}" for i in archive.provenance.images],
    ]
    return "\n".join(lines) + "\n"


def _node_table(archive: Archive) -> list[str]:
    held, cleared = node_lines(archive)
    if not held and not cleared:
        return []
    rows = [(md(n.node), md(n.status), word(n.word), md(n.why)) for n in (*held, *cleared)]
    return ["", "### Nodes", "", *table(("node", "status", "verdict", "why"), rows)]


def _thresholds(archive: Archive) -> list[str]:
    rows = verdict_rows(archive)
    if not rows:
        return ["The site sets no thresholds."]
    return table(
        ("verdict", "test", "stage", "check", "transport", "median", "reasons"),
        [
            (
                word(r.word),
                md(r.test),
                md(f"{r.stage} ({r.scope})"),
                md(r.check),
                md(r.transport),
                "<br>".join(md(m) for m in r.medians) or NONE,
                _reasons(r.reasons),
            )
            for r in rows
        ],
    )


def _nodes(archive: Archive) -> list[str]:
    rows = node_rows(archive)
    if not rows:
        return []
    cells = [(md(r.node), r.status, md(f"{r.stage} / {r.test}"), md(r.reason)) for r in rows]
    return [
        "",
        "### Excluded, failed and unjudged nodes",
        "",
        *table(("node", "status", "run", "reason"), cells),
    ]


def _goodput(archive: Archive) -> list[str]:
    lines = []
    for t in goodput_tables(archive):
        keep = (0, 1, 2, 3, 4, 5, 6, 7, 8)  # group, round, finality, goodput, its components
        rows = [[md(row[i]) for i in keep] for row in (*t.rows, t.median)]
        headers = [md(t.headers[i]) for i in keep]
        lines += ["", f"### Goodput: {md(t.stage)} / {md(t.test)}", "", *table(headers, rows)]
    return lines


def _other_runs(archive: Archive, runs: Sequence[RunEntry], findings: Sequence[str]) -> list[str]:
    if len(runs) < 2:
        return []
    items = [
        f"- {md(r.run_id)} — {md(when_text(r))}"
        + (" (this report)" if r.path == archive.path else "")
        + (f" — {md(standing(r))}" if standing(r) else "")
        for r in runs
    ]
    items += [f"- {md(f)}" for f in findings]
    return ["", "### Runs in this site folder", "", md(ORDER_NOTE), "", *items]
