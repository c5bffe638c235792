"""What `results` asks of a kind that reads its own trainer-mode logs (a part of its package).

A kind whose package holds a `logs` module with a `READER` (`LogReader`) reads each log
of its runs itself: bound to its node, judged, and returned as the run's `LogRecord`
(with the notes its run says once: `KindRead`).
`logruns.py` asks `log_reader_of(kind)` for a kind its own table of formats does not read;
this layer never imports a kind (`kindapi/registry.py` finds the module by name).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, runtime_checkable

from nvcregen.kindapi.registry import part_of
from nvcregen.plan.model import TestUnit
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.runnotes import PortNote


@dataclass(frozen=True)
class KindRead:
    """What a kind read of one log: the run's record, and notes its run says once."""

    record: LogRecord
    notes: tuple[PortNote, ...] = ()  # `runnotes.py`: a note of many ports, said once


@runtime_checkable
class LogReader(Protocol):
    """A kind's reader of one log of one of its runs."""

    def read(
        self, text: str, base: Mapping[str, Any], unit: TestUnit, *, names_itself: bool, offset: int
    ) -> KindRead:
        """The run's record: `base` (path, run, nodes...) with the kind, status and errors.

        `names_itself`: the run's script prints a begin line naming its node (a log
        without one is then foreign); `offset`: the line the log starts at in its file.
        """
        ...


def reads_logs(found: object) -> TypeGuard[LogReader]:
    """Whether a kind's `logs.READER` is a `LogReader`."""
    return isinstance(found, LogReader)


def log_reader_of(kind: str) -> LogReader | None:
    """The log reader of a registered kind, None when its package holds none."""
    return part_of(kind, "logs", "READER", reads_logs)
