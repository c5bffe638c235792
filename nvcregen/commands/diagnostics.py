"""Show diagnostics to people (text with source snippets) or to machines (JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from nvcregen.core.errors import Diagnostic, Severity


class DiagnosticRenderer(Protocol):
    """Turns a list of diagnostics into the text a command prints."""

    def render(self, diagnostics: list[Diagnostic]) -> str:
        """Return the printed form of `diagnostics`."""
        ...


class TextRenderer:
    """Compiler-style text: `file:line:column: severity[CODE]: message`, then the source line."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lines: dict[str, list[str] | None] = {}

    def render(self, diagnostics: list[Diagnostic]) -> str:
        """Return every diagnostic with a snippet, pointer and hint."""
        return "".join(self._one(d) for d in diagnostics)

    def _one(self, diag: Diagnostic) -> str:
        span = diag.span
        text = f"{span}: {diag.severity}[{diag.code}]: {diag.message}\n"
        source = self._source_line(span.file, span.line)
        if source is not None:
            gutter = " " * len(str(span.line))
            width = max(1, (span.end_column or span.column + 1) - span.column)
            text += f"{gutter} |\n{span.line} | {source}\n"
            text += f"{gutter} | {' ' * (span.column - 1)}{'^' * width}\n"
        if diag.path:
            text += f"   = at {diag.path}\n"
        text += "".join(f"   = note: {note}\n" for note in diag.notes)
        if diag.hint:
            text += f"   = hint: {diag.hint}\n"
        return text

    def _source_line(self, file: str, line: int) -> str | None:
        if file not in self._lines:
            path = self._root / file
            try:
                raw = path.read_bytes().decode("utf-8", errors="replace")
                self._lines[file] = raw.splitlines()
            except OSError:
                self._lines[file] = None
        lines = self._lines[file]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1].replace("\t", " ")


class JsonRenderer:
    """One JSON object per diagnostic, in a JSON array."""

    def render(self, diagnostics: list[Diagnostic]) -> str:
        """Return the diagnostics as a JSON array."""
        return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"


# The code of an example digest refused under --strict (nvcregen.compile.platform.pins).
EXAMPLE_DIGEST = "NVC376"


def summary(diagnostics: list[Diagnostic], *, wrote: str) -> str:
    """One closing line: counts of errors and warnings, and what happened to `out/`.

    When every error is an example digest (only `--strict` refuses those), the line says
    so: the site is otherwise pinned, and only the real digests are missing.
    """
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    warnings = [d for d in diagnostics if d.severity is Severity.WARNING]
    files = len({d.span.file for d in errors})
    parts = []
    if errors:
        parts.append(f"{_count(len(errors), 'error')} in {_count(files, 'file')}")
    if warnings:
        parts.append(_count(len(warnings), "warning"))
    head = ", ".join(parts) if parts else "no problems"
    if errors and all(d.code == EXAMPLE_DIGEST for d in errors):
        head += (
            " (every error is an example digest: pin the digests your registry reports; "
            "catalog/example-digests.yaml lists the examples)"
        )
    return f"nvcregen: {head}; {wrote}\n"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
