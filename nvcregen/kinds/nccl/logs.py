"""A trainer-mode nccl-tests launcher log -> its run's record and what it measured (pure).

The launcher runs one test: the log's last run (`reader.py`) gives the record's status,
errors, transports, NCCL versions, hosts and GPU models, and the round's measurement
(`results/kindlogs.py`'s `Measured`): the collective, per message size the mean
out-of-place algbw and busbw over that size's rows (as `ingest` and NVCRE average them,
`samples` the number of rows), and the ranks. A log that is no nccl-tests output is
`no-data`, measuring nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nccl.models import NcclRow
from nvcregen.kinds.nccl.reader import parse_nccl
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import KindRead, Measured, capped, kind_record
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.models import BandwidthRow, RankRecord

KIND = "nccl"


def read_nccl(text: str, base: Mapping[str, Any]) -> KindRead:
    """An nccl-tests launcher's log: its rows, transports and hosts, and the bandwidth."""
    try:
        run = parse_nccl(text, str(base["path"]))[-1]  # a launcher runs one test
    except IngestFormatError as exc:
        return KindRead(kind_record(KIND, base, "no-data", (str(exc),)))
    record = LogRecord(
        **base,
        kind=KIND,
        status=run.status,
        errors=tuple(capped(run.errors)),  # one per unreadable row: a record stays small
        transports=run.transports,
        gdrdma=run.gdrdma,
        versions=run.nccl_versions,
        warnings=tuple(capped(run.warnings)),
        hosts=run.hosts,
        models=tuple(dict.fromkeys(r.model for r in run.ranks if r.model)),
        cuda_driver=run.cuda_driver,
    )
    ranks = tuple(RankRecord(**vars(r)) for r in run.ranks)
    return KindRead(record, measured=Measured(run.collective, tuple(_rows(run.rows)), ranks))


def _rows(rows: Sequence[NcclRow]) -> list[BandwidthRow]:
    """Per size: mean out-of-place algbw and busbw over that size's rows, and their count."""
    by_size: dict[int, list[NcclRow]] = {}
    for row in rows:
        by_size.setdefault(row.size_bytes, []).append(row)
    found = []
    for size, same in sorted(by_size.items()):
        algbw = _mean([r.out_of_place.algbw_gbs for r in same])
        busbw = _mean([r.out_of_place.busbw_gbs for r in same])
        if algbw is not None and busbw is not None:
            data = {"sizeBytes": size, "algBW": algbw, "busBW": busbw, "samples": len(same)}
            found.append(BandwidthRow.model_validate(data))
    return found


def _mean(values: Sequence[float | None]) -> float | None:
    """As `ingest` averages a size's rows: the value itself when there is one."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else fmean(present)


class NcclLogs:
    """The nccl kind's log reader (`results/kindlogs.py`'s `LogReader`)."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The record and the measurement of one launcher log of `unit` (`read_nccl`)."""
        return read_nccl(text, base)


READER = NcclLogs()  # what `results/kindlogs.py` finds by the kind's name
