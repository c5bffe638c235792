"""Show diagnostics to people (text with source snippets) or to machines (JSON).

Output stays bounded whatever the input: at most `MAX_PER_FILE` diagnostics are shown
per file, then one line says how many were left out (`cap_per_file`); a source excerpt
reads only the lines it shows, streaming the file and keeping at most `MAX_LINE` bytes
of a line (`read_lines`), so a huge input costs no more memory than a small one; it
shows at most `MAX_EXCERPT` characters of the line, around the column, marked where cut,
and a message, note or hint is cut at `MAX_TEXT` characters. The
values of secrets are masked: the whole value in the excerpt of a secret's own
diagnostic (NVC113, NVC114, NVC669), and any recognisable secret in every other line
printed (`core.secrets.redact`), since a message may quote the value it is about.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from nvcregen.core import codes
from nvcregen.core.errors import SECRET_CODES, Diagnostic, Severity, Span
from nvcregen.core.regular import open_regular
from nvcregen.core.secrets import redact, redact_pointer

MAX_PER_FILE = 200
MAX_LINE = 4096  # bytes of a source line kept for an excerpt
MAX_EXCERPT = 160  # characters of a source line shown, around the column (`CUT` marks a cut)
MAX_TEXT = 1000  # characters of a message, note or hint shown
CUT = "…"
MAX_SCAN = 64 * 1024 * 1024  # bytes read looking for the lines to show
_CHUNK = 1 << 16
_BREAK = re.compile(rb"\r\n|\r|\n")  # as spec/positions.py counts lines


class DiagnosticRenderer(Protocol):
    """Turns a list of diagnostics into the text a command prints."""

    def render(self, diagnostics: list[Diagnostic]) -> str:
        """Return the printed form of `diagnostics`."""
        ...


def cap_per_file(diagnostics: list[Diagnostic], limit: int = MAX_PER_FILE) -> list[Diagnostic]:
    """Keep the first `limit` diagnostics of each file (in order); say what was left out.

    The note (NVC001, info) follows the last diagnostic shown for its file.
    """
    counts: dict[str, int] = {}
    for diag in diagnostics:
        counts[diag.span.file] = counts.get(diag.span.file, 0) + 1
    shown: list[Diagnostic] = []
    seen: dict[str, int] = {}
    for diag in diagnostics:
        file = diag.span.file
        seen[file] = seen.get(file, 0) + 1
        if seen[file] <= limit:
            shown.append(diag)
        if seen[file] == min(limit, counts[file]) and counts[file] > limit:
            shown.append(_left_out(diag.span, counts[file] - limit, limit))
    return shown


def _left_out(span: Span, hidden: int, limit: int) -> Diagnostic:
    return Diagnostic(
        Span(span.file, span.line, span.column),
        Severity.INFO,
        codes.NVC001.code,
        f"{hidden} more diagnostic{'s' if hidden != 1 else ''} in this file not shown"
        f" (at most {limit} per file)",
        hint="fix these first, then run again to see the rest",
    )


def read_lines(file: Path, wanted: Iterable[int]) -> dict[int, str]:
    """The text of the `wanted` lines of a file (1-based), read without keeping the rest.

    Lines longer than `MAX_LINE` bytes are cut there; the file is read at most up to
    `MAX_SCAN` bytes; a line not found is absent. Raises OSError when it cannot be read.
    """
    need = set(wanted)
    found: dict[int, bytearray] = {}
    if not need:
        return {}
    last, line, done, carry_cr = max(need), 1, 0, False
    with open_regular(file) as handle:  # a FIFO named by a diagnostic is never opened
        while line <= last and done < MAX_SCAN:
            chunk = handle.read(_CHUNK)
            if not chunk:
                break
            done += len(chunk)
            pos = 1 if carry_cr and chunk.startswith(b"\n") else 0  # a CRLF split in two
            carry_cr = False
            for match in _BREAK.finditer(chunk, pos):
                _keep(found, need, line, chunk[pos : match.start()])
                line, pos = line + 1, match.end()
                carry_cr = match.group() == b"\r" and pos == len(chunk)
                if line > last:
                    break
            else:
                _keep(found, need, line, chunk[pos:])
    return {n: bytes(text).decode("utf-8", errors="replace") for n, text in found.items()}


def _keep(found: dict[int, bytearray], need: set[int], line: int, piece: bytes) -> None:
    if line in need:
        kept = found.setdefault(line, bytearray())
        kept += piece[: MAX_LINE - len(kept)]


class TextRenderer:
    """Compiler-style text: `file:line:column: severity[CODE]: message`, then the source line."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lines: dict[str, dict[int, str]] = {}

    def render(self, diagnostics: list[Diagnostic]) -> str:
        """Return every diagnostic with a snippet, pointer and hint."""
        wanted: dict[str, set[int]] = {}
        for diag in diagnostics:
            wanted.setdefault(diag.span.file, set()).add(diag.span.line)
        for file, lines in wanted.items():
            try:
                self._lines[file] = read_lines(self._root / file, lines)
            except OSError:
                self._lines[file] = {}
        return "".join(self._one(d) for d in diagnostics)

    def _one(self, diag: Diagnostic) -> str:
        span = diag.span
        text = f"{span}: {diag.severity}[{diag.code}]: {_cut(redact(diag.message))}\n"
        source = self._lines.get(span.file, {}).get(span.line)
        if source is not None and diag.code != codes.NVC001.code:
            source = source.replace("\t", " ")
            width = max(1, (span.end_column or span.column + 1) - span.column)
            if diag.code in SECRET_CODES:
                end = span.end_column - 1 if span.end_column else len(source)
                source = source[: span.column - 1] + "*" * max(0, end - span.column + 1)
            shown, column, width = excerpt(redact(source), span.column, width)
            gutter = " " * len(str(span.line))
            text += f"{gutter} |\n{span.line} | {shown}\n"
            text += f"{gutter} | {' ' * (column - 1)}{'^' * width}\n"
        if diag.path:
            text += f"   = at {_cut(redact_pointer(diag.path))}\n"
        text += "".join(f"   = note: {_cut(redact(note))}\n" for note in diag.notes)
        if diag.hint:
            text += f"   = hint: {_cut(redact(diag.hint))}\n"
        return text


def excerpt(line: str, column: int, width: int) -> tuple[str, int, int]:
    """A source line cut to `MAX_EXCERPT` characters around `column`, `CUT` where cut.

    Returns the text shown and the column and width of the caret in it.
    """
    if len(line) <= MAX_EXCERPT:
        return line, column, width
    start = max(0, min(column - 1 - MAX_EXCERPT // 4, len(line) - MAX_EXCERPT))
    end = start + MAX_EXCERPT
    head = CUT if start > 0 else ""
    tail = CUT if end < len(line) else ""
    caret = column - start + len(head)
    width = max(1, min(width, MAX_EXCERPT - (column - 1 - start)))
    return f"{head}{line[start:end]}{tail}", caret, width


def _cut(text: str) -> str:
    """A message, note or hint of at most `MAX_TEXT` characters, with how much was cut."""
    if len(text) <= MAX_TEXT:
        return text
    return f"{text[:MAX_TEXT]}{CUT} ({len(text) - MAX_TEXT} more characters)"


class JsonRenderer:
    """One JSON object per diagnostic, in a JSON array."""

    def render(self, diagnostics: list[Diagnostic]) -> str:
        """Return the diagnostics as a JSON array."""
        return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"


# The code of an example digest refused under --strict (nvcregen.compile.platform.pins).
EXAMPLE_DIGEST = codes.NVC376.code


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
