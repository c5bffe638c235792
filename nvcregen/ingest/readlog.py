"""One log file read and parsed, or the one NVC700-style diagnostic saying why not (pure).

Every `ingest` reader (nccl-tests, DCGM, nvbandwidth, perftest, burn-in, link counters)
reads a file the same way: at most `limits.MAX_LOG_BYTES` (`capped.py`), decoded as UTF-8
with replacement, parsed; a file too large, unreadable, over an input limit (its own code
and line) or not that kind of output becomes one error naming the file, with the reader's
hints. `read_logs` reads the files of one `ingest` command so, each on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.ingest import limits
from nvcregen.ingest.capped import TooLargeError, read_capped, too_large
from nvcregen.ingest.limits import InputLimitError
from nvcregen.ingest.models import IngestFormatError

T = TypeVar("T")


@dataclass(frozen=True)
class Hints:
    """What a reader tells the user for each way a file can fail.

    Attributes:
        output: Not that kind of output (also the default of the others).
        too_large: Over the size cap.
        limit: Over an input limit (a line, a number, nesting).
        unreadable: The file cannot be read at all.

    """

    output: str
    too_large: str | None = None
    limit: str | None = None
    unreadable: str = ""


def read_log(
    path: Path, parse: Callable[[str, str], T], hints: Hints
) -> tuple[T | None, Diagnostic | None]:
    """`parse(text, name)` of the file, or None and the diagnostic that says why not."""
    name = str(path)
    try:
        data = read_capped(path, limits.MAX_LOG_BYTES)
        return parse(data.decode("utf-8", errors="replace"), name), None
    except TooLargeError as exc:
        return None, ingest_error(name, too_large(exc, "a log"), hints.too_large or hints.output)
    except OSError as exc:
        return None, ingest_error(
            name, f"cannot read the file: {exc.strerror or exc}", hints.unreadable
        )
    except InputLimitError as exc:
        span = Span(name, exc.line or 1)
        hint = hints.limit or hints.output
        return None, Diagnostic(span, Severity.ERROR, exc.code, str(exc), hint=hint)
    except IngestFormatError as exc:
        return None, ingest_error(name, str(exc), hints.output)


def read_logs(
    paths: Iterable[Path], parse: Callable[[str, str], T], hints: Hints
) -> tuple[list[T], list[Diagnostic]]:
    """`parse(text, name)` of each file that reads, in order, and each other's diagnostic.

    Each file is read on its own (`read_log`): one that fails never stops the others.
    """
    found: list[T] = []
    problems: list[Diagnostic] = []
    for path in paths:
        parsed, problem = read_log(path, parse, hints)
        if problem is not None:
            problems.append(problem)
        elif parsed is not None:
            found.append(parsed)
    return found, problems


def ingest_error(file: str, message: str, hint: str = "") -> Diagnostic:
    """An NVC700 error naming a file (no line: the file as a whole)."""
    return Diagnostic(Span(file), Severity.ERROR, codes.NVC700.code, message, hint=hint)
