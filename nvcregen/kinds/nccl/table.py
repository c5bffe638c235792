"""The result table of nccl-tests: its column header and its rows, in every known layout.

Layouts seen in real logs (tests/fixtures/real-logs/nccl-tests/):

- 2.x and later: `size count type redop root` then `time algbw busbw #wrong` twice
  (out-of-place, in-place); `#wrong` is `N/A` in place for alltoall and sendrecv.
- old 2.x with `validation: 0`: `error` instead of `#wrong` (printed `N/A`, or a
  float such as `2e-07` with validation on), no `root` column for reductions, no
  `redop` for all_gather and broadcast, and a `redop` column whose cell is blank for
  alltoall; a log pasted indented has blanks before the header's `#`.

Rows are split on blanks, so values that outgrow their column (`1777718.25`) or irregular
header spacing do not matter; the header says which leading columns exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nvcregen.ingest.limits import InputLimitError, bounded_int, finite
from nvcregen.kinds.nccl.models import Measurement, NcclRow

_HALF = 4  # time, algbw, busbw, #wrong
_MEASURED = 2 * _HALF
_HEADER_WORDS = frozenset({"size", "count", "type", "time", "algbw", "busbw"})
ROW_START = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z]\w*(?:\s|$)")


@dataclass(frozen=True)
class Columns:
    """The leading columns of a table and the name of its validation column."""

    lead: tuple[str, ...]
    wrong: str = "#wrong"

    @property
    def width(self) -> int:
        """How many cells a complete row has."""
        return len(self.lead) + _MEASURED


class RowError(ValueError):
    """A line that starts like a row but is not one; `cut` when cells are missing."""

    def __init__(self, message: str, *, cut: bool) -> None:
        super().__init__(message)
        self.cut = cut


def parse_header(line: str) -> Columns | None:
    """Read a column header line (`#  size  count  type  redop ...`), or return None.

    Blanks before the `#` (a log pasted indented, as old READMEs show it) and a `#`
    standing alone are not columns.
    """
    words = [word for word in line.strip().lstrip("#").split() if word != "#"]
    if not set(words) >= _HEADER_WORDS:
        return None
    lead = tuple(words[: words.index("time")])
    measured = words[len(lead) :]
    wrong = measured[_HALF - 1] if len(measured) >= _HALF else "#wrong"
    return Columns(lead, wrong)


def is_row(line: str) -> bool:
    """Whether `line` starts like a result row (size, count, type)."""
    return ROW_START.match(line) is not None


def parse_row(line: str, columns: Columns | None) -> NcclRow:
    """Read one result row.

    Args:
        line: The row, launcher prefix already removed.
        columns: The table's header; None when the log has none (then the leading
            columns are inferred from the row's length).

    Returns:
        The row.

    Raises:
        RowError: The row has too few cells (`cut`) or cells that are not numbers.
        InputLimitError: A number has too many digits, or a measurement is `inf`/`nan`.

    """
    cells = line.split()
    lead = _lead_cells(cells, columns)
    measured = cells[len(cells) - _MEASURED :]
    try:
        size, count = bounded_int(cells[0], "a size"), bounded_int(cells[1], "a count")
        out_of_place = _measurement(measured[:_HALF])
        in_place = _measurement(measured[_HALF:])
    except InputLimitError:
        raise
    except ValueError as exc:
        raise RowError(f"unreadable row: {line.strip()!r}", cut=False) from exc
    redop = lead.get("redop") or None
    return NcclRow(size, count, cells[2], redop, out_of_place, in_place)


def _lead_cells(cells: list[str], columns: Columns | None) -> dict[str, str]:
    """Map leading column names to cells, allowing the blank `redop` cell of old alltoall."""
    if columns is None:
        columns = _infer_columns(cells)
    names = list(columns.lead)
    if _blank_redop(cells, columns):
        names.remove("redop")  # the cell is blank: old alltoall prints no operation
    elif len(cells) != columns.width:
        cut = len(cells) < columns.width
        problem = "row cut short" if cut else "row has more cells than its header"
        raise RowError(f"{problem}: {' '.join(cells)!r}", cut=cut)
    return dict(zip(names, cells, strict=False))


def _blank_redop(cells: list[str], columns: Columns) -> bool:
    """Whether a row is one cell short only because its `redop` cell is blank."""
    if len(cells) != columns.width - 1 or "redop" not in columns.lead:
        return False
    at = columns.lead.index("redop")
    return _is_number(cells[at])  # a root or a time where the operation would be


def _infer_columns(cells: list[str]) -> Columns:
    """Guess the leading columns of a row printed without a header."""
    middle = cells[3 : len(cells) - _MEASURED]
    base = ("size", "count", "type")
    if len(middle) >= 2:
        return Columns((*base, "redop", "root"))
    if len(middle) == 1:
        return Columns((*base, "root" if _is_int(middle[0]) else "redop"))
    return Columns(base if len(cells) >= 3 + _MEASURED else (*base, "redop", "root"))


def _measurement(cells: list[str]) -> Measurement:
    time, algbw, busbw, wrong = cells
    return Measurement(_number(time), _number(algbw), _number(busbw), _wrong(wrong))


def _number(cell: str) -> float | None:
    return None if cell == "N/A" else finite(cell, "a measurement")


def _wrong(cell: str) -> int | float | None:
    if cell == "N/A":
        return None
    return bounded_int(cell, "a #wrong count") if _is_int(cell) else finite(cell, "an error")


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _is_int(cell: str) -> bool:
    return re.fullmatch(r"-?\d+", cell) is not None
