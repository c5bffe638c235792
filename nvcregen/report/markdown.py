"""summary.md: the verdicts and key numbers of a run, for a pull request or a ticket (pure).

Every name and message from the archive is escaped: `|` cannot end a table cell,
Markdown emphasis, code and link characters are taken literally, and `<` and `&` cannot
start HTML or an entity (GitHub renders inline HTML in Markdown). Line breaks become
spaces, so a message cannot end a table row.

summary.md stays under SUMMARY_MAX characters at any fleet size (a pull-request comment
holds 65,536): cleared nodes are counted and given as ranges (`gpu-[0000-1023]`), a
table lists at most ROWS_MAX rows and a cell CELL_ITEMS_MAX of its items, each saying how
many more index.html holds; a summary still longer (an archive of thousands of
thresholds or runs) is cut at a line and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.report.archive import ReadArchive
from nvcregen.report.folder import ORDER_NOTE, RunEntry, standing, when_text
from nvcregen.report.tables import (
    NONE,
    ReasonText,
    evidence_lines,
    goodput_tables,
    hold_back_text,
    node_lines,
    node_ranges,
    node_rows,
    provenance_rows,
    run_rows,
    verdict_rows,
)

SUMMARY_MAX = 60_000
ROWS_MAX = 50
CELL_ITEMS_MAX = 5
NAMES_MAX = 2_000  # characters of one list of node names and ranges
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
    return _items([md(r.message) for r in reasons], "reasons") or NONE


def _items(cells: Sequence[str], what: str) -> str:
    """Escaped items of one cell, one a line, at most CELL_ITEMS_MAX and the count of the rest."""
    shown = list(cells[:CELL_ITEMS_MAX])
    if len(cells) > CELL_ITEMS_MAX:
        shown.append(f"… {len(cells) - CELL_ITEMS_MAX} more {what}: index.html")
    return "<br>".join(shown)


def _capped(rows: Sequence[Sequence[str]], what: str) -> tuple[list[Sequence[str]], list[str]]:
    """At most ROWS_MAX rows of a table, and the line that counts the rest (if any)."""
    if len(rows) <= ROWS_MAX:
        return list(rows), []
    return list(rows[:ROWS_MAX]), ["", f"… and {len(rows) - ROWS_MAX} more {what}: index.html"]


def clip(text: str, limit: int = NAMES_MAX) -> str:
    """Text of at most about `limit` characters, cut after a comma, saying where the rest is."""
    if len(text) <= limit:
        return text
    cut = text.rfind(", ", 0, limit + 2)  # text[:cut] holds at most `limit`
    return text[: cut if cut > 0 else limit] + ", … (every name in index.html)"


def summary_markdown(
    archive: ReadArchive,
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
        f"**{md(clip(hold_back_text(archive)))}**",
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
        *_table(
            ("verdict", "stage", "test", "state", "reasons"),
            [
                (word(r.word), md(r.stage), md(r.test), md(r.state), _reasons(r.reasons))
                for r in run_rows(archive)
            ],
            "runs",
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
    return bounded(lines)


def bounded(lines: Sequence[str], limit: int = SUMMARY_MAX) -> str:
    """The lines as one text of at most `limit` characters: cut at a line, saying so."""
    text = "\n".join(lines) + "\n"
    if len(text) <= limit:
        return text
    note = (
        f"\n_summary.md is cut here to stay under {limit:,} characters (a pull-request "
        "comment holds 65,536); index.html has everything._\n"
    )
    kept: list[str] = []
    size = len(note)
    for line in lines:
        if size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept) + "\n" + note


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], what: str) -> list[str]:
    """A table of at most ROWS_MAX rows, and a line counting the rest."""
    shown, rest = _capped(rows, what)
    return [*table(headers, shown), *rest]


def _node_table(archive: ReadArchive) -> list[str]:
    """Held-back nodes row by row; cleared ones counted and given as ranges."""
    held, cleared = node_lines(archive)
    if not held and not cleared:
        return []
    lines = ["", "### Nodes", ""]
    if held:
        rows = [(md(n.node), md(n.status), word(n.word), md(n.why)) for n in held]
        lines += _table(("node", "status", "verdict", "why"), rows, "held-back nodes")
    if cleared:
        names = clip(", ".join(node_ranges(n.node for n in cleared)))
        lines += [*([""] if held else []), f"✅ {len(cleared)} nodes cleared: {md(names)}"]
    return lines


def _thresholds(archive: ReadArchive) -> list[str]:
    rows = verdict_rows(archive)
    if not rows:
        return ["The site sets no thresholds."]
    return _table(
        ("verdict", "test", "stage", "check", "transport", "median", "reasons"),
        [
            (
                word(r.word),
                md(r.test),
                md(f"{r.stage} ({r.scope})"),
                md(r.check),
                md(r.transport),
                _items([md(m) for m in r.medians], "groups") or NONE,
                _reasons(r.reasons),
            )
            for r in rows
        ],
        "thresholds",
    )


def _nodes(archive: ReadArchive) -> list[str]:
    rows = node_rows(archive)
    if not rows:
        return []
    cells = [(md(r.node), r.status, md(f"{r.stage} / {r.test}"), md(r.reason)) for r in rows]
    return [
        "",
        "### Excluded, failed and unjudged nodes",
        "",
        *_table(("node", "status", "run", "reason"), cells, "excluded or failed nodes"),
    ]


def _goodput(archive: ReadArchive) -> list[str]:
    lines = []
    for t in goodput_tables(archive):
        keep = (0, 1, 2, 3, 4, 5, 6, 7, 8)  # group, round, finality, goodput, its components
        rows = [[md(row[i]) for i in keep] for row in (*t.rows, t.median)]
        headers = [md(t.headers[i]) for i in keep]
        title = f"### Goodput: {md(t.stage)} / {md(t.test)}"
        lines += ["", title, "", *_table(headers, rows, "training rounds")]
    return lines


def _other_runs(
    archive: ReadArchive, runs: Sequence[RunEntry], findings: Sequence[str]
) -> list[str]:
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
