"""Medians over rounds: one line per kind of run and message size seen in several runs.

Runs are pooled only when they are alike: same collective, same data type and operation
(a `-d all` or `-o all` sweep prints one table per type or operation), same node set
(single-node and two-node runs of one test are different measurements), same transports
(a round that fell back to Socket is not a slow RDMA round). Each run is a round.
Within a round, rows of the same size (the `-N` cycles, or the repeated 0-byte rows of
old logs) are averaged per figure, as NVCRE does. Across rounds,
each figure gets its own median: the median bus bandwidth is the median of the rounds'
bus bandwidths, never a value derived from the median time or another median. Failed
runs do not count; truncated runs count with the rows they completed. Figures are the
out-of-place ones, which is what NVCRE's `nccl-bandwidth` LogProfile reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean, median

from nvcregen.kinds.nccl.models import NcclRow, NcclRun, SummaryRow

_MIN_ROUNDS = 2
Key = tuple[str, str, str, tuple[str, ...], tuple[str, ...], int]


@dataclass(frozen=True)
class _Round:
    """One run's figures at one size (each averaged over that run's rows of the size)."""

    busbw: float | None
    algbw: float | None
    time: float | None


def summarize(runs: Iterable[NcclRun], at: int | None = None) -> list[SummaryRow]:
    """Summarize runs of the same test into medians over rounds.

    Args:
        runs: Runs from `parse_nccl`, usually one per file.
        at: Only this message size in bytes; None for every size.

    Returns:
        One row per (collective, type, operation, node set, transports, size) seen in at
        least two runs that did not fail, sorted by those; with `at`, in one run
        already (a file of one round, its `-N` cycles averaged, still gives that size's
        figure: `--at` selects, whatever the rounds and cycles per file).

    """
    rounds: dict[Key, list[_Round]] = defaultdict(list)
    for run in runs:
        if run.status == "failed":
            continue
        nodes = tuple(sorted(set(run.hosts)))
        for (kind, redop, size), rows in _rows_by_kind(run.rows).items():
            if at is None or size == at:
                key = (run.collective, kind, redop, nodes, run.transports, size)
                rounds[key].append(_round(rows))
    least = 1 if at is not None else _MIN_ROUNDS
    return [_summary_row(k, found) for k, found in sorted(rounds.items()) if len(found) >= least]


def _rows_by_kind(rows: Iterable[NcclRow]) -> dict[tuple[str, str, int], list[NcclRow]]:
    by_kind: dict[tuple[str, str, int], list[NcclRow]] = defaultdict(list)
    for row in rows:
        by_kind[(row.type, row.redop or "", row.size_bytes)].append(row)
    return by_kind


def _round(rows: list[NcclRow]) -> _Round:
    halves = [row.out_of_place for row in rows]
    return _Round(
        busbw=_mean(m.busbw_gbs for m in halves),
        algbw=_mean(m.algbw_gbs for m in halves),
        time=_mean(m.time_us for m in halves),
    )


def _summary_row(key: Key, found: list[_Round]) -> SummaryRow:
    collective, kind, redop, nodes, transports, size = key
    busbw = [r.busbw for r in found if r.busbw is not None]
    mid = _median(busbw)
    spread = (max(busbw) - min(busbw)) / mid if busbw and mid else None
    return SummaryRow(
        collective=collective,
        type=kind,
        redop=redop or None,
        nodes=nodes,
        transports=transports,
        size_bytes=size,
        rounds=len(found),
        median_busbw_gbs=mid,
        median_algbw_gbs=_median([r.algbw for r in found if r.algbw is not None]),
        median_time_us=_median([r.time for r in found if r.time is not None]),
        spread=spread,
    )


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else fmean(present)


def _median(values: list[float]) -> float | None:
    return median(values) if values else None
