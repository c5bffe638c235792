"""Print a diff report as text (a terminal), Markdown (a pull-request comment) or JSON.

Each renderer shows, per site, the domain summary first and then the object diff. Values
longer than `MAX_VALUE` characters are cut in text and Markdown; JSON carries them whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from nvcregen.diff.domain import Change, Summary
from nvcregen.diff.objectdiff import FieldChange, ObjectChange, ObjectDiff, ObjectRef
from nvcregen.diff.report import WORKING_TREE, DiffReport, SiteDiff, Status

MAX_VALUE = 120
CONTEXT = 30  # characters shown before and after a difference inside a long value
MAX_FIELDS = 30  # per object in text and Markdown; JSON lists every field
ARROW = "→"
MAX_COMMENT = 60_000  # GitHub refuses a comment over 65,536 characters
TOO_LONG = "_Too long for one comment: object diffs left out; `nvcregen diff` shows them all._"
RECREATED = "specs are immutable: each is applied as a new object; the old one stays, never pruned"
STATUSES: tuple[Status, ...] = ("changed", "added", "removed", "invalid", "unchanged")


class DiffRenderer(Protocol):
    """Turns a diff report into the text `nvcregen diff` prints."""

    def render(self, report: DiffReport) -> str:
        """Return the printed form of `report`."""
        ...


def render_report(report: DiffReport, fmt: str) -> str:
    """Render with the renderer named by `--format` (text, markdown or json)."""
    renderers: dict[str, DiffRenderer] = {
        "text": TextRenderer(),
        "markdown": MarkdownRenderer(),
        "json": JsonRenderer(),
    }
    return renderers[fmt].render(report)


def counts(report: DiffReport) -> str:
    """`1 site changed, 1 unchanged`: every status that occurs, in a fixed order."""
    parts = [f"{report.count(s)} {s}" for s in STATUSES if report.count(s)]
    if not parts:
        return "no sites on either side"
    sites = sum(report.count(s) for s in STATUSES)
    return f"{sites} site{'' if sites == 1 else 's'}: " + ", ".join(parts)


def show_value(value: Any) -> str:
    """A field value on one line: strings as written, anything else as compact JSON."""
    if isinstance(value, str) and "\n" not in value:
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def cut(text: str) -> str:
    """At most `MAX_VALUE` characters."""
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def show_pair(old: str, new: str) -> tuple[str, str]:
    """Two long values cut around where they differ, with `CONTEXT` characters each side.

    A dashboard's JSON or a long PromQL expression differs in a few characters; cutting
    both from the start would show two identical prefixes.
    """
    if max(len(old), len(new)) <= MAX_VALUE:
        return old, new
    shorter = min(len(old), len(new))
    start = next((i for i in range(shorter) if old[i] != new[i]), shorter)
    tail = 0
    while tail < shorter - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    begin = max(0, start - CONTEXT)

    def excerpt(text: str) -> str:
        end = min(len(text), len(text) - tail + CONTEXT)
        shown = text[begin:end]
        return cut(("…" if begin else "") + shown + ("…" if end < len(text) else ""))

    return excerpt(old), excerpt(new)


def show_change(change: Change) -> str:
    """`old → new`, or the one value when a side has none or nothing changed."""
    if change.old is None or change.new is None or not change.changed:
        return change.new if change.new is not None else change.old or ""
    return f"{change.old} {ARROW} {change.new}"


def _field(change: FieldChange) -> tuple[str, str]:
    if change.change == "changed":
        return show_pair(show_value(change.old), show_value(change.new))
    if change.change == "added":
        return "(absent)", cut(show_value(change.new))
    return cut(show_value(change.old)), "(absent)"


def _renamed(change: ObjectChange, style: Callable[[str], str] = str) -> str:
    return f" {ARROW} {style(change.new.name)}" if change.old.name != change.new.name else ""


class TextRenderer:
    """Plain text for a terminal: one block per site, indented."""

    def render(self, report: DiffReport) -> str:
        """Return the whole report."""
        lines = [f"nvcregen diff: {report.base} ({report.commit[:12]}) {ARROW} {WORKING_TREE}"]
        lines.append(counts(report))
        for site in report.sites:
            lines += ["", *self._site(site)]
        return "\n".join(lines) + "\n"

    def _site(self, site: SiteDiff) -> Iterator[str]:
        yield f"{site.site}: {site.status} ({site.head_file or site.base_file})"
        for side, errors in site.errors.items():
            yield f"  does not compile at {report_side(side)}:"
            yield from (f"    {e}" for e in errors)
        if site.status in {"unchanged", "invalid"}:
            return
        yield from self._summary(site.summary)
        yield from self._objects(site)

    def _summary(self, summary: Summary) -> Iterator[str]:
        width = max((len(c.label) for c in summary.facts), default=0)
        yield from (f"  {c.label:{width}}  {show_change(c)}" for c in summary.facts)
        if summary.tests:
            yield "  tests:"
        for stage in summary.tests:
            moved = [f"+ {t}" for t in stage.added] + [f"- {t}" for t in stage.removed]
            yield f"    {stage.stage}: {', '.join(moved)}"
        if summary.thresholds:
            yield "  thresholds:"
        yield from (f"    {c.label}: {show_change(c)}" for c in summary.thresholds)
        if summary.images_added or summary.images_removed:
            yield "  images:"
        yield from (f"    + {i}" for i in summary.images_added)
        yield from (f"    - {i}" for i in summary.images_removed)

    def _objects(self, site: SiteDiff) -> Iterator[str]:
        objects = site.objects
        if objects.recreated:
            yield f"  recreated ({RECREATED}):"
        yield from (f"    {c.old}{_renamed(c)}" for c in objects.recreated)
        yield f"  objects: {object_counts(objects)}"
        if site.status != "changed":
            return
        for change in objects.changed:
            yield f"    ~ {change.old}{_renamed(change)} ({change.new.path})"
            for field in change.fields[:MAX_FIELDS]:
                old, new = _field(field)
                yield f"        {field.path}: {old} {ARROW} {new}"
            if hidden := _hidden(change):
                yield f"        ... {hidden} more fields (--format json lists them all)"
        yield from (f"    + {ref} ({ref.path})" for ref in objects.added)
        yield from (f"    - {ref} ({ref.path})" for ref in objects.removed)


def report_side(side: str) -> str:
    """How a side is named to people."""
    return "the base" if side == "base" else f"the {WORKING_TREE}"


def object_counts(objects: ObjectDiff) -> str:
    """`2 changed, 1 added, 0 removed`."""
    return (
        f"{len(objects.changed)} changed, {len(objects.added)} added,"
        f" {len(objects.removed)} removed"
    )


def _hidden(change: ObjectChange) -> int:
    """How many of an object's changed fields text and Markdown leave out."""
    return max(0, len(change.fields) - MAX_FIELDS)


class MarkdownRenderer:
    """GitHub-flavoured Markdown for a pull-request comment; object diffs fold away.

    A comment holds at most 65,536 characters: past `MAX_COMMENT`, the object diffs are
    left out (the summaries stay), and past it again the text is cut, each time saying so.
    """

    def render(self, report: DiffReport) -> str:
        """Return the whole comment."""
        text = self._render(report, objects=True)
        if len(text) > MAX_COMMENT:
            text = self._render(report, objects=False) + f"\n{TOO_LONG}\n"
        if len(text) > MAX_COMMENT:
            text = text[: MAX_COMMENT - len(TOO_LONG) - 10] + f"\n\n…\n\n{TOO_LONG}\n"
        return text

    def _render(self, report: DiffReport, *, objects: bool) -> str:
        lines = [f"## nvcregen diff: `{report.base}` {ARROW} {WORKING_TREE}", ""]
        lines.append(f"Base `{report.base}` (`{report.commit[:12]}`); {counts(report)}.")
        for site in report.sites:
            lines += ["", *self._site(site, objects=objects)]
        return "\n".join(lines) + "\n"

    def _site(self, site: SiteDiff, *, objects: bool) -> Iterator[str]:
        files = sorted({f for f in (site.base_file, site.head_file) if f})
        yield f"### `{site.site}`: {site.status}"
        yield ""
        yield f"Site file: {', '.join(code(f) for f in files)}"
        for side, errors in site.errors.items():
            yield ""
            yield f"Does not compile at {report_side(side)}:"
            yield ""
            yield from (f"- {code(e)}" for e in errors)
        if site.status in {"unchanged", "invalid"}:
            return
        yield from _md_summary(site.summary)
        yield from _md_recreated(site.objects)
        if objects:
            yield from _md_objects(site.objects)


def code(text: str) -> str:
    """Inline code safe in a table cell: backticks fenced, pipes escaped."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Iterator[str]:
    yield ""
    yield "| " + " | ".join(header) + " |"
    yield "|" + " --- |" * len(header)
    yield from ("| " + " | ".join(row) + " |" for row in rows)


def _md_summary(summary: Summary) -> Iterator[str]:
    def bold(change: Change, text: str) -> str:
        return f"**{text}**" if change.changed and change.old and change.new else text

    facts = [(bold(c, c.label), bold(c, show_change(c))) for c in summary.facts]
    yield from _table(("fact", "value"), facts)
    if summary.tests:
        rows = [
            (s.stage, " ".join(map(code, s.added)), " ".join(map(code, s.removed)))
            for s in summary.tests
        ]
        yield from ["", "**Tests per stage**", *_table(("stage", "added", "removed"), rows)]
    if summary.thresholds:
        changes = [(c.label, _md_change(c, code)) for c in summary.thresholds]
        yield from ["", "**Thresholds**", *_table(("threshold", "change"), changes)]
    if summary.images_added or summary.images_removed:
        yield from ["", "**Images**", ""]
        yield from (f"- added {code(i)}" for i in summary.images_added)
        yield from (f"- removed {code(i)}" for i in summary.images_removed)


def _md_change(change: Change, style: Callable[[str], str]) -> str:
    old = style(change.old) if change.old is not None else "(none)"
    new = style(change.new) if change.new is not None else "(none)"
    return f"{old} {ARROW} {new}"


def _md_recreated(objects: ObjectDiff) -> Iterator[str]:
    if not objects.recreated:
        return
    rows = [(c.old.kind, code(c.old.name), code(c.new.name)) for c in objects.recreated]
    yield from ["", f"**Recreated** ({RECREATED})", *_table(("kind", "old", "new"), rows)]


def _md_objects(objects: ObjectDiff) -> Iterator[str]:
    yield ""
    yield f"<details><summary>Object diff: {object_counts(objects)}</summary>"
    for change in objects.changed:
        yield ""
        name = f"{code(str(change.old))}{_renamed(change, code)}"
        yield f"**changed** {name} in {code(change.new.path)}"
        rows = [(code(f.path), *map(_md_value, _field(f))) for f in change.fields[:MAX_FIELDS]]
        yield from _table(("field", "old", "new"), rows)
        if hidden := _hidden(change):
            yield from ["", f"... {hidden} more fields (`--format json` lists them all)"]
    for label, refs in (("added", objects.added), ("removed", objects.removed)):
        if refs:
            yield from ["", f"**{label}**", ""]
            yield from (f"- {code(str(r))} in {code(r.path)}" for r in refs)
    yield ""
    yield "</details>"


def _md_value(text: str) -> str:
    return text if text == "(absent)" else code(text)


class JsonRenderer:
    """Everything, values unabridged, for tools."""

    def render(self, report: DiffReport) -> str:
        """Return the report as one JSON object."""
        data = {
            "base": {"ref": report.base, "commit": report.commit},
            "head": WORKING_TREE,
            "counts": {s: report.count(s) for s in STATUSES},
            "sites": [_json_site(s) for s in report.sites],
        }
        return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def _json_site(site: SiteDiff) -> dict[str, Any]:
    summary = site.summary
    return {
        "site": site.site,
        "status": site.status,
        "files": {"base": site.base_file, "head": site.head_file},
        "errors": {side: list(errors) for side, errors in site.errors.items()},
        "summary": {
            "facts": [{"label": c.label, "old": c.old, "new": c.new} for c in summary.facts],
            "tests": [
                {"stage": s.stage, "added": list(s.added), "removed": list(s.removed)}
                for s in summary.tests
            ],
            "thresholds": [
                {"threshold": c.label, "old": c.old, "new": c.new} for c in summary.thresholds
            ],
            "images": {
                "added": list(summary.images_added),
                "removed": list(summary.images_removed),
            },
            "recreated": [_json_change(c, fields=False) for c in site.objects.recreated],
        },
        "objects": {
            "added": [_json_ref(r) for r in site.objects.added],
            "removed": [_json_ref(r) for r in site.objects.removed],
            "changed": [_json_change(c, fields=True) for c in site.objects.changed],
        },
    }


def _json_ref(ref: ObjectRef) -> dict[str, str]:
    return {"kind": ref.kind, "namespace": ref.namespace, "name": ref.name, "path": ref.path}


def _json_change(change: ObjectChange, *, fields: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": change.new.kind,
        "namespace": change.new.namespace,
        "oldName": change.old.name,
        "newName": change.new.name,
        "oldPath": change.old.path,
        "path": change.new.path,
        "recreated": change.recreated,
    }
    if fields:
        data["fields"] = [_json_field(f) for f in change.fields]
    return data


def _json_field(field: FieldChange) -> dict[str, Any]:
    data: dict[str, Any] = {"path": field.path, "change": field.change}
    if field.change != "added":
        data["old"] = field.old
    if field.change != "removed":
        data["new"] = field.new
    return data
