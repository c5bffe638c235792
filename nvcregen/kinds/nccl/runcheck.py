"""Why an nccl-tests run failed, and whether its summary line agrees with its rows (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from nvcregen.kinds.nccl.models import NcclRow

ROW_ROUNDING = 0.005  # busbw cells are printed with two decimals ("%7.2f")


def failures(
    printed: Sequence[str],
    stack: Sequence[str],
    out_of_bounds: Sequence[str],
    rows: Sequence[NcclRow],
    banners: int,
) -> list[str]:
    """Every reason the log gives for calling the run failed, most specific first.

    Args:
        printed: `Test NCCL failure` / `Test CUDA failure` lines.
        stack: `.. host pid N: Test failure file.cu:line` lines.
        out_of_bounds: Non-zero `Out of bounds values` summaries.
        rows: The result rows (a non-zero `#wrong` fails the run).
        banners: How many banners the run printed (several: one per lone process).

    """
    found = [*printed, *out_of_bounds, *wrong_rows(rows)]
    if not printed:
        found += stack  # the trace says where, when no failure line says why
    if banners > 1:
        found.append(
            f"{banners} separate test processes printed into one table (one banner "
            "each): nccl-tests was likely launched by mpirun without MPI support, so "
            "each process ran alone and the rows cannot be told apart"
        )
    return found


def wrong_rows(rows: Sequence[NcclRow]) -> list[str]:
    """One message per row whose `#wrong` count is not zero."""
    found = []
    for row in rows:
        halves = (("out-of-place", row.out_of_place), ("in-place", row.in_place))
        wrong = [f"{half} {m.wrong}" for half, m in halves if _is_wrong(m.wrong)]
        if wrong:
            found.append(f"{row.size_bytes} bytes: #wrong {', '.join(wrong)}")
    return found


def _is_wrong(value: int | float | None) -> bool:
    """A non-zero `#wrong` count; the old float `error` column is judged by its summary."""
    return isinstance(value, int) and value > 0


def average_warning(avg: float | None, rows: Sequence[NcclRow]) -> str | None:
    """A warning when `Avg bus bandwidth` is not the mean of the rows' bus bandwidths.

    nccl-tests averages the bus bandwidth of every row, out-of-place and in-place, and
    prints it with six significant digits; the rows print two decimals. A difference
    larger than both roundings means the summary or a row was changed after the run.
    """
    values = [m.busbw_gbs for row in rows for m in (row.out_of_place, row.in_place)]
    present = [v for v in values if v is not None]
    if avg is None or not present or len(present) != len(values):
        return None
    mean = math.fsum(present) / len(present)
    printed = 0.5 * 10 ** (math.floor(math.log10(abs(avg))) - 5) if avg else 0.0
    if abs(mean - avg) <= ROW_ROUNDING + printed + 1e-9:
        return None
    return (
        f"'Avg bus bandwidth' says {avg!r} GB/s but the rows average {mean:.4f} GB/s:"
        " the summary or the rows were edited after the run"
    )
