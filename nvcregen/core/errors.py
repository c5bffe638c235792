"""Diagnostics, source spans and exit codes shared by every stage."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from nvcregen.core import codes
from nvcregen.core.secrets import redact, redact_pointer


class ExitCode(enum.IntEnum):
    """Process exit codes of the command line (design §8)."""

    OK = 0
    DRIFT = 1
    INVALID = 2
    INTERNAL = 70  # EX_SOFTWARE: a bug in nvcregen, reported without a traceback


class Severity(enum.StrEnum):
    """How bad a diagnostic is; only errors fail a run."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class Span:
    """A place in a source file: 1-based line and column, as editors count."""

    file: str
    line: int = 1
    column: int = 1
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in an input or an output, pointing at where it came from.

    Codes by stage: NVC0xx about the output itself (NVC001: diagnostics left out),
    NVC1xx YAML/load (NVC113/NVC114: secrets in a site; NVC115: a label map's key or
    value no Kubernetes label takes, `validate/labelmaps.py`; NVC118: a number too long
    to convert), NVC2xx schema, NVC3xx references and semantics, NVC4xx compile/render,
    NVC5xx emit (NVC504-NVC509: filesystem faults, `emit/faults.py`), NVC6xx checks of
    generated objects (NVC605-NVC607: a number too long, nesting too deep, a key given
    twice, `spec/bounded.py`; NVC608: an unreadable index.json; NVC669: secrets in a
    generated tree).
    """

    span: Span
    severity: Severity
    code: str
    message: str
    path: str = ""
    hint: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def is_error(self) -> bool:
        """Whether this diagnostic fails the run."""
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Order diagnostics by file, line, column, then code and message."""
        return (self.span.file, self.span.line, self.span.column, self.code, self.message)

    def to_json(self) -> dict[str, object]:
        """Return the fields `--format json` prints, in a stable order, secrets masked."""
        return {
            "file": self.span.file,
            "line": self.span.line,
            "column": self.span.column,
            "severity": str(self.severity),
            "code": self.code,
            "path": redact_pointer(self.path),
            "message": redact(self.message),
            "hint": redact(self.hint),
        }


# Diagnostics about secrets: their source excerpts are printed with the value masked.
SECRET_CODES = frozenset({codes.NVC113.code, codes.NVC114.code, codes.NVC669.code})


def has_errors(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> bool:
    """Return True when any diagnostic is an error."""
    return any(d.is_error for d in diagnostics)


class NvcregenError(Exception):
    """A run cannot go on; carries the diagnostics that explain why."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(f"{d.span}: {d.message}" for d in diagnostics))
        self.diagnostics = diagnostics
