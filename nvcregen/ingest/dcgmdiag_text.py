"""Read the boxed result table `dcgmi diag` prints without `-j` (DCGM 3.x and 4.x).

```
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 4.2.3                                          |
+-----  Integration  -------+------------------------------------------------+
| pcie                      | Fail                                           |
| Warning                   | There was an internal error during the test:   |
|                           | 'A child process (152) exited with non-zero s  |
|                           | GPU0: Pass                                     |
```

A test row names the test and its result (3.x may add ` - All` or ` - GPUs: 0, 1`);
`Warning` and `Info` rows start a message that continues on rows with an empty left
cell. DCGM wraps messages at a fixed width in the middle of words, so the chunks are
joined as they are. 4.x lists `GPUn: Result` rows under a test.

An `Error` row is DCGM's own verdict that something failed (3.x prints it under a
Deployment test, the message wrapped at 45 characters): the run is failed with that
message as its first reason, whether or not the table was cut. It is attached to the
test just above it, which counts as failed; an `Error` row with no test above it in its
section is the run's alone. A table without its closing border is truncated unless
something failed.

An excerpt pasted from a terminal or an issue is read for what it shows: it may start
inside the table (no top border, no `Diagnostic | Result` header: a section rule or a
test row is enough to know the table), end without its closing border, and have rows
the terminal wrapped (a row whose right border moved to the next line is joined back).
Such a run is `truncated` unless something in it failed.

Field reports often quote less: a few result rows with neither border nor section rule
(`| Memory | Fail - All |` and the `Warning` rows under it). A row whose right cell is a
result word (Pass, Fail, Skip, Warn, with its scope) is enough to know the table, and its
width gives the message width a border would have. A `Warning` row (or a one-cell
`| Warning: ... |`) that says the memory failed (DCGM's "had uncorrectable memory errors"
of a failed row remap, or its volatile "double-bit ECC error(s)") fails the test it belongs
to, and the run when the excerpt starts below that test's row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nvcregen.ingest.dcgmdiag_results import (
    UNKNOWN,
    find_level,
    result_word,
    run_status,
    unique,
    worst,
)
from nvcregen.ingest.limits import InputLimitError, bounded_int, matched
from nvcregen.ingest.lines import strip_prefix
from nvcregen.ingest.models import DcgmGpuResult, DcgmRun, DcgmTest

BORDER = re.compile(r"^\+[-=+]+\+$")
_SECTION = re.compile(r"^[|+]-+\s+(?P<name>\S(?:.*?\S)?)\s+-+\+-*[|+]$")
_GPU_ROW = re.compile(r"^GPU\s*(?P<id>\d+)\s*:\s*(?P<result>\S.*)$")
_RESULT = re.compile(r"^(?P<word>[A-Za-z]+(?: Run)?)\s*(?:-\s*(?P<scope>.*))?$")
MAX_WRAPS = 16  # lines one table row may be wrapped into
_MESSAGE_ROWS = {"warning": "errors", "warnings": "errors", "error": "error", "info": "info"}
_ROW = re.compile(r"^\|[^|]*\S[^|]*\|[^|]*\|$")  # | Name | Result |
_RESULT_ROW = re.compile(r"^\|\s*(?P<name>[^|]*?\S)\s*\|\s*(?P<result>[^|]*?)\s*\|$")
_RESULT_WORDS = frozenset({"Pass", "Fail", "Skip", "Warn"})
_ONE_CELL = re.compile(r"^\|\s*(?P<kind>Warning|Error|Info)\s*:\s*(?P<text>[^|]*?\S)\s*\|$", re.I)
# DCGM_FR_ROW_REMAP_FAILURE_MSG, DCGM_FR_VOLATILE_DBE_DETECTED_MSG (dcgm_errors.h)
_MEMORY_FAILED = re.compile(r"uncorrectable memory errors|double-bit ECC error", re.I)


@dataclass
class _Test:
    name: str
    category: str
    result: str
    gpus: list[DcgmGpuResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)

    def freeze(self) -> DcgmTest:
        """The test row's own verdict; the worst GPU result when the row has none."""
        result = self.result
        if result == UNKNOWN:
            result = worst(g.result for g in self.gpus)
        errors, info = unique(self.errors), unique(self.info)
        return DcgmTest(self.name, self.category, result, tuple(self.gpus), errors, info)


@dataclass
class _Table:
    """One table while it is read."""

    split: int | None = None
    width: int | None = None
    section: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    tests: list[_Test] = field(default_factory=list)
    message: tuple[str, list[str]] | None = None  # (kind, chunks)
    closed: bool = False
    opened: bool = False  # a top border or the header was seen before any row
    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the run's own `Error` rows
    section_tests: int = 0
    failures: list[str] = field(default_factory=list)  # memory failures with no test row


def parse_dcgm_text(text: str, source: str) -> list[DcgmRun]:
    """Read every result table in a text output.

    Args:
        text: The captured output; lines outside tables are ignored except a
            `dcgmi diag -r N` command line, which gives the level.
        source: The name to record as each run's `file`.

    Returns:
        One run per table that holds at least one test or metadata row.

    """
    tables = [_Table()]
    for number, raw in _unwrapped(text.splitlines()):
        line = strip_prefix(raw).strip()
        if _is_header(line) and (tables[-1].tests or tables[-1].metadata):
            tables.append(_Table())
        tables[-1].lines.append(raw)
        try:
            _read_line(tables[-1], line)
        except InputLimitError as exc:
            raise InputLimitError(exc.code, str(exc), number) from exc
    for table in tables:
        _flush(table)  # a message still open may be the only failure an excerpt shows
    return [_freeze(t, source) for t in tables if t.tests or t.metadata or t.failures]


def looks_like_table(text: str) -> bool:
    """Whether a text holds a result table, or an excerpt of one."""
    for _, raw in _unwrapped(text.splitlines()):
        line = strip_prefix(raw).strip()
        if BORDER.match(line) or _SECTION.match(line) or _is_header(line):
            return True
        if _result_row(line) is not None or _warning_row(line):
            return True
    return False


def _result_row(line: str) -> re.Match[str] | None:
    """A `| Name | Result |` row whose result is a result word, as test rows print it."""
    row = _RESULT_ROW.match(line)
    if row is None:
        return None
    result = _RESULT.match(row["result"])
    return row if result is not None and result_word(result["word"]) in _RESULT_WORDS else None


def _warning_row(line: str) -> bool:
    """Whether a line is a `Warning` row, of one cell or two (what it says is judged later)."""
    row = _ONE_CELL.match(line) or _RESULT_ROW.match(line)
    label = "" if row is None else row["kind"] if "kind" in row.re.groupindex else row["name"]
    return _MESSAGE_ROWS.get(label.lower()) == "errors"


def _unwrapped(lines: list[str]) -> list[tuple[int, str]]:
    """Lines with a table row that a terminal wrapped joined back to its right border.

    Each with the number of its first line, cut to MAX_LINE characters; a row takes at
    most MAX_WRAPS lines (a terminal wraps one into a few), so a long run of wrapped
    lines costs linear time.
    """
    out: list[tuple[int, str]] = []
    joined = 0
    for number, whole in enumerate(lines, 1):
        raw = matched(whole)  # no pattern scans more than MAX_LINE characters
        stripped = raw.strip()
        last = out[-1][1].rstrip() if out else ""
        wrapped = last.lstrip().startswith("|") and not last.endswith(("|", "+"))
        if wrapped and stripped and not stripped.startswith(("|", "+")) and len(last) > 2:
            if joined < MAX_WRAPS:
                out[-1] = (out[-1][0], matched(last + stripped))
                joined += 1
            continue  # past MAX_WRAPS: the rest of a runaway row is dropped
        out.append((number, raw))
        joined = 0
    return out


def _is_header(line: str) -> bool:
    return re.fullmatch(r"\|\s*Diagnostic\s*\|\s*Result\s*\|", line) is not None


def _read_line(table: _Table, line: str) -> None:
    if not line.startswith(("|", "+")):
        return
    table.closed = False
    if _is_header(line) or (BORDER.match(line) and not (table.tests or table.metadata)):
        table.opened = True
    if section := _SECTION.match(line):
        _flush(table)
        table.section = section["name"]
        table.section_tests = 0
    elif BORDER.match(line):
        _measure(table, line)
        table.closed = True
    elif one := _ONE_CELL.match(line):
        _flush(table)
        table.message = (_MESSAGE_ROWS[one["kind"].lower()], [one["text"]])
    elif line.endswith("|") and not _is_header(line):
        if table.split is None and _result_row(line) is not None:
            _measure(table, line)  # an excerpt: a test row is as wide as a border
        left, cell = _cells(table, line)
        if left:
            _named_row(table, left, cell)
        else:
            _continuation(table, cell)


def _measure(table: _Table, border: str) -> None:
    """Learn the column split and the message chunk width from a border line (or test row)."""
    inner = border[1:-1]
    mark = "+" if "+" in inner else "|"
    if table.split is None and mark in inner:
        table.split = border.index(mark, 1)
        table.width = len(border) - table.split - 2 - 3  # one blank before, two after


def _cells(table: _Table, line: str) -> tuple[str, str]:
    split = table.split
    if split is None or split >= len(line) or line[split] != "|":
        split = line.find("|", 1)
    return line[1:split].strip(), line[split + 1 : -1]


def _named_row(table: _Table, left: str, cell: str) -> None:
    _flush(table)
    kind = _MESSAGE_ROWS.get(left.lower())
    if kind == "error":
        table.message = (kind, [_chunk(table, cell)])
    elif table.section.lower() == "metadata":
        table.metadata[left] = cell.strip()
    elif kind is not None and (table.tests or not table.opened):
        table.message = (kind, [_chunk(table, cell)])  # an excerpt may start below its test
    else:
        test = _Test(left, table.section, UNKNOWN)
        _apply_result(test, cell.strip())
        table.tests.append(test)
        table.section_tests += 1


def _continuation(table: _Table, cell: str) -> None:
    right = cell.strip()
    gpu = _GPU_ROW.match(right)
    if gpu is not None and table.tests:
        _flush(table)
        word = result_word(gpu["result"])
        table.tests[-1].gpus.append(DcgmGpuResult(bounded_int(gpu["id"], "a GPU id"), word))
    elif table.message is not None:
        table.message[1].append(_chunk(table, cell))
    elif table.tests and _RESULT.match(right):
        _apply_result(table.tests[-1], right)  # 3.x: a second `Fail - GPU: 3` line


def _chunk(table: _Table, cell: str) -> str:
    """The text of a message cell, keeping the blank a fixed-width wrap may end on.

    A cell no wider than the table's is cut to the message width (its padding dropped); a
    longer one is a row the terminal wrapped and joined back, kept whole.
    """
    text = cell[1:]
    if table.width and len(text) <= table.width + 2:
        return text[: table.width]
    return text


def _apply_result(test: _Test, right: str) -> None:
    match = _RESULT.match(right)
    if match is None:
        test.result = right or UNKNOWN
        return
    word = result_word(match["word"])
    scope = match["scope"] or ""
    test.result = worst([test.result, word]) if test.result != UNKNOWN else word
    if scope.upper().startswith("GPU"):
        ids = re.findall(r"\d+", scope)
        test.gpus += [DcgmGpuResult(bounded_int(i, "a GPU id"), word) for i in ids]


def _flush(table: _Table) -> None:
    """Finish the message being read and attach it to the last test."""
    if table.message is None:
        return
    kind, chunks = table.message
    text = " ".join("".join(chunks).split())
    table.message = None
    if not text:
        return
    if kind == "error":
        table.errors.append(text)
        if table.section_tests:
            test = table.tests[-1]
            test.errors.append(text)
            test.result = "Fail"
    elif table.tests:
        getattr(table.tests[-1], kind).append(text)
        if kind == "errors" and _MEMORY_FAILED.search(text):
            table.tests[-1].result = "Fail"  # DCGM's words for memory that failed
    elif kind == "errors" and _MEMORY_FAILED.search(text):
        table.failures.append(text)  # the excerpt starts below the test that failed


def _freeze(table: _Table, source: str) -> DcgmRun:
    _flush(table)
    tests = [test.freeze() for test in table.tests]
    errors = [f"Error: {e}" for e in table.errors]
    errors += [f"Warning (its test row is not in the excerpt): {e}" for e in table.failures]
    if not table.opened:
        errors.append("the table has no top border or header: an excerpt from inside it")
    if not table.closed:
        errors.append("the table has no closing border: output cut short")
    return DcgmRun(
        file=source,
        format="text",
        status=run_status(
            tests,
            runtime_error=bool(table.errors or table.failures),
            truncated=not (table.closed and table.opened),
        ),
        tests=tuple(tests),
        dcgm_version=table.metadata.get("DCGM Version") or None,
        level=find_level("\n".join(table.lines)),
        errors=unique(errors),
    )
