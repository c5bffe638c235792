"""What `results` asks of a kind that reads its own trainer-mode logs (a part of its package).

A kind whose package holds a `logs` module with a `READER` (`LogReader`) reads each log
of its runs itself: bound to its node, judged, and returned as the run's `LogRecord`
(with the notes its run says once: `KindRead`).
`logruns.py` asks `log_reader_of(kind)` for every kind's log; a collective kind's reader
also says what its launcher's log measured (`Measured`: its test, per message size the
bandwidths, its ranks), which `logruns.py` makes the round's `BandwidthMeasurement`.
This layer never imports a kind (`kindapi/registry.py` finds the module by name). A pair
kind (`TestKind.pair`: a server on one node, its client on another) reads both sides'
logs of a run together: its `logs.PAIR` (`PairReader`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, runtime_checkable

from nvcregen.kindapi.registry import part_of
from nvcregen.plan.model import TestUnit
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.models import BandwidthRow, RankRecord
from nvcregen.results.runnotes import PortNote

MAX_ERRORS = 64  # a record names at most this many errors (GPUs, pairs), then counts the rest


def kind_record(
    kind: str, base: Mapping[str, Any], status: str, errors: Sequence[str]
) -> LogRecord:
    """A kind's record of one log: what collect knows of it (`base`), its status, errors."""
    fields = {**base, "kind": kind, "status": status, "errors": tuple(errors)}
    return LogRecord.model_validate(fields)


def capped(errors: Sequence[str], most: int = MAX_ERRORS) -> list[str]:
    """The first `most` errors, then `and N more` for the rest: a record stays small."""
    if len(errors) <= most:
        return list(errors)
    return [*errors[:most], f"and {len(errors) - most} more"]


@dataclass(frozen=True)
class Measured:
    """What a collective kind's launcher log measured, as NVCRE records a round.

    `test_type`: the collective it ran; `rows`: per message size the out-of-place
    bandwidths; `ranks`: who produced them, as the log's device list names them.
    """

    test_type: str
    rows: tuple[BandwidthRow, ...] = ()
    ranks: tuple[RankRecord, ...] = ()


@dataclass(frozen=True)
class KindRead:
    """What a kind read of one log: the run's record, notes its run says once, what it measured.

    `measured` is a collective kind's (`TestKind.collective`), for a log it could read;
    None otherwise.
    """

    record: LogRecord
    notes: tuple[PortNote, ...] = ()  # `runnotes.py`: a note of many ports, said once
    measured: Measured | None = None


@dataclass(frozen=True)
class Side:
    """One side's log of a pair run: its archive path, text, the node the API put its pod on."""

    path: str
    text: str
    pod_node: str = ""


@runtime_checkable
class PairReader(Protocol):
    """A pair kind's reader of a run's two logs, its server's and its client's."""

    def role_of(self, name: str, run: str) -> str:
        """Which side a log is, by its name: `server` or `client`."""
        ...

    def sides(
        self, logs: Sequence[tuple[str, str, Side]], run: str
    ) -> tuple[Side | None, Side | None, list[str]]:
        """The client's and the server's log of one run (name, path, side), and problems."""
        ...

    def read(
        self, client: Side | None, server: Side | None, base: Mapping[str, Any], unit: TestUnit
    ) -> dict[str, Any]:
        """A LogRecord's fields for one round of one pair (one side alone is no evidence)."""
        ...


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


def reads_pairs(found: object) -> TypeGuard[PairReader]:
    """Whether a kind's `logs.PAIR` is a `PairReader`."""
    return isinstance(found, PairReader)


def pair_reader_of(kind: str) -> PairReader | None:
    """The pair reader of a registered pair kind, None when its package holds none."""
    return part_of(kind, "logs", "PAIR", reads_pairs)
