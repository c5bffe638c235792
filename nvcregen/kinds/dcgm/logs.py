"""A trainer-mode DCGM log -> its run's record: bound to its node, its diagnostics read (pure).

The script (`templates/dcgm-diag.sh.j2`) prints `@@nvcregen-dcgm begin node=N pod=P
start=T` and then `dcgmi diag --run <level> --json`. The log is bound to its node by that
line (`results/nodebind.py`: a log naming another node is foreign, NVC730; an older
render's log without one is bound by its Job's name, NVC739), then read by the `dcgmi
diag` reader burn-in shares (`ingest/dcgmdiag.py`): its status is the worst of its
diagnostics, its errors each failed test and each error DCGM printed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nvcregen.ingest import IngestFormatError, parse_dcgm
from nvcregen.kinds.dcgm.kind import MARK
from nvcregen.plan.model import TestUnit
from nvcregen.results.kindlogs import KindRead, kind_record
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.nodebind import FOREIGN, bind_node_log

KIND = "dcgm"


def read_dcgm(
    text: str, base: Mapping[str, Any], *, names_itself: bool = False, offset: int = 0
) -> LogRecord:
    """A DCGM log's status (the worst of its diagnostics) and its failed tests.

    A log whose begin line names another node than its run's (`nodebind.py`) is
    `foreign`: none of its diagnostics is read, and its node is neither failed nor cleared.
    """
    bound = bind_node_log(text, base, names_itself=names_itself, offset=offset, mark=MARK)
    if isinstance(bound, str):
        return kind_record(KIND, base, FOREIGN, (bound,))
    base = {**base, "hosts": bound}
    try:
        dcgm = parse_dcgm(text, str(base["path"]))
    except IngestFormatError as exc:
        return kind_record(KIND, base, "no-data", (str(exc),))
    errors = [f"{t.name}: {t.result}" for d in dcgm for t in d.tests if t.result == "Fail"]
    errors += [e for d in dcgm for e in d.errors]
    versions = tuple(d.dcgm_version for d in dcgm if d.dcgm_version)
    status = _worst_status(d.status for d in dcgm)
    return kind_record(KIND, {**base, "versions": versions}, status, tuple(errors))


class DcgmLogs:
    """The dcgm kind's log reader (`results/kindlogs.py`'s `LogReader`)."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The record of one DCGM log of `unit` (`read_dcgm`)."""
        return KindRead(read_dcgm(text, base, names_itself=names_itself, offset=offset))


READER = DcgmLogs()


def _worst_status(statuses: Iterable[str]) -> str:
    found = set(statuses)
    return next((s for s in ("failed", "truncated", "ok") if s in found), "no-data")
