"""What the text forms of `nvcregen ingest` share: tables of padded columns, figures as printed.

Each kind's `ingest` renders its own runs with these (`ingest nccl`'s and `ingest dcgm`'s
in their kinds' packages).
"""

from __future__ import annotations

from collections.abc import Sequence


def number(value: float | None) -> str:
    """A figure as the log printed it: every digit kept, float noise of medians cut."""
    if value is None:
        return "N/A"
    if isinstance(value, int):
        return str(value)
    return repr(round(value, 4)).removesuffix(".0")


def table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Columns padded to their widest cell; text left-aligned, numbers right-aligned."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = []
    for cells in (header, *rows):
        padded = [
            cell.rjust(width) if _numeric(cell) else cell.ljust(width)
            for cell, width in zip(cells, widths, strict=True)
        ]
        lines.append(indent + "  ".join(padded).rstrip())
    return "\n".join(lines) + "\n"


def _numeric(cell: str) -> bool:
    return bool(cell) and (cell[0].isdigit() or cell in ("N/A", "n/a")) and " " not in cell
