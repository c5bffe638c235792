"""Trainer-mode results: each run's logs read back as the runs NVCRE mode judges (pure).

Each log is placed (`logplace.py`), then read by its kind's own reader (`kindlogs.py`:
an nccl-tests launcher log by the nccl package's, a DCGM log by the dcgm package's). A
collective kind's log becomes one round of its group, a `BandwidthMeasurement` like the
ones NVCRE writes, from what its reader says it measured (`Measured`: per message size
the out-of-place algbw and busbw, as `ingest` and NVCRE average a size's rows,
`samples` the number of rows); a node pack's section of one is bound to its pod's node
first (`packlogs.on_its_node`). Finality:

- a run that finished (`ok`) is final (`JobSucceeded`);
- a failed run, or a TrainJob/Job whose exported status has `Failed=True`, is not
  evaluated (`JobFailed`): the verdict fails with `job-failed`;
- a truncated log is provisional (`LogTruncated`), a log without nccl-tests output
  provisional (`NoDataCollected`): the verdict is `incomplete`;
- a log whose `kubectl logs --timestamps` times go backwards is not read at all
  (NVC749, `TimestampsOutOfOrder`): its lines are not one run's output in order, so it
  is no evidence; its round is provisional and its run incomplete, with the line named.

A test's run is `succeeded` when every planned round and group (or node) has a log that
finished, `failed` when any failed (a DCGM failure names its node as a failed node),
`in-progress` when some logs are missing or truncated, or a node-health log left a check
unjudged (its node an unjudged node of the run), and not found without any log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nvcregen.compile.readiness.launch import launch_of
from nvcregen.core import codes
from nvcregen.ingest.lines import last_timestamp, timestamps_out_of_order
from nvcregen.kindapi.registry import KINDS, kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.plan.packs import CHUNK, Pack, packs_of
from nvcregen.results.kindlogs import (
    KindRead,
    Measured,
    PairReader,
    Side,
    log_reader_of,
    pair_reader_of,
)
from nvcregen.results.liveobjects import Obj, status_of, uid_of
from nvcregen.results.logplace import (
    PackIndex,
    PackPlaced,
    Placed,
    expected_runs,
    objects_by_name,
    place,
)
from nvcregen.results.logrecords import LOGS, LogRecord, RunLog
from nvcregen.results.models import (
    BandwidthMeasurement,
    FailedNode,
    Finality,
    ObjectRef,
    RunState,
)
from nvcregen.results.nodebind import FOREIGN, prints_begin
from nvcregen.results.nodekinds import unjudged_nodes
from nvcregen.results.packlogs import REFUSED, Refusal, Split, on_its_node, same_node, split
from nvcregen.results.runnotes import PortNote, fold_notes
from nvcregen.results.runs import RunResult, RunSet, expected_transport

__all__ = ["LOGS", "LogRecord", "LogResults", "RunLog", "assemble_log_runs"]
DISORDERED = codes.NVC749.code


@dataclass(frozen=True)
class LogResults:
    """The runs the logs make and what each log held.

    `sources` holds, for each record in order, the log it was read from: a whole log, or
    one test's section of a packed run's log (`packlogs.py`).
    """

    runs: RunSet
    records: tuple[LogRecord, ...]
    sources: tuple[RunLog, ...] = ()


@dataclass(frozen=True)
class _Read:
    placed: Placed
    record: LogRecord
    measurement: BandwidthMeasurement | None
    notes: tuple[PortNote, ...] = ()  # said once by the run (`runnotes.py`), not the record


def assemble_log_runs(
    site: str,
    units: Sequence[TestUnit],
    rounds: int,
    logs: Sequence[RunLog],
    objects: Sequence[Obj],
    packing: str = "perRun",
    chunk: int = CHUNK,
    packs: Sequence[Pack] | None = None,
) -> LogResults:
    """Every planned run of a trainer-mode site, from its logs (and exported objects).

    A log that no planned run claims, or a second log of the same run, is a problem:
    the overall verdict is then `incomplete`. With `packing: packed`, a packed run's log
    is split into one log per test first (`packlogs.py`), each section read as a run's;
    `chunk` is the site's node-pack chunk (`packs.chunk_of`); `packs`, when given, are
    the packs instead (a periodic run's: `plan.periodic.periodic_packs`).
    """
    if packs is None:
        packs = packs_of(list(units), packing, chunk)
    index = PackIndex(packs)  # each pack's runs and slots worked out once, for every log
    problems: list[str] = []
    read: dict[tuple[str, ...], tuple[_Read, RunLog]] = {}
    splits: list[Split] = []
    pairs: dict[tuple[str, str], list[tuple[RunLog, Placed]]] = {}
    named: dict[str, dict[str, Obj]] = {}  # each namespace's objects, indexed once
    for log in sorted(logs, key=lambda item: item.path):
        if log.namespace not in named:
            named[log.namespace] = objects_by_name(objects, log.namespace)
        where = place(site, units, log.name, named[log.namespace], index)
        if isinstance(where, str):
            problems.append(f"{log.path}: {where}")
        elif isinstance(where, PackPlaced):
            splits.append(split(log, where))
        elif kind_of(where.unit.test).pair:  # a server's and a client's log, read together
            pairs.setdefault((log.namespace, where.run), []).append((log, where))
        elif (log.namespace, where.run) in read:
            problems.append(f"{log.path}: a second log of {where.run}, not read")
        else:
            read[(log.namespace, where.run)] = (_read(log, where), log)
    sections, more = _read_sections(splits)
    read |= sections
    problems += more
    for key, found in pairs.items():
        if (done := _read_pair(found, problems)) is not None:
            read[key] = done
    reads = [r for r, _ in read.values()]
    runs = [_unit_run(u, [r for r in reads if r.placed.unit is u], rounds) for u in units]
    records = tuple(r.record for r in reads)
    sources = tuple(log for _, log in read.values())
    return LogResults(RunSet(tuple(runs), (), tuple(problems)), records, sources)


def _read_sections(
    splits: Sequence[Split],
) -> tuple[dict[tuple[str, ...], tuple[_Read, RunLog]], list[str]]:
    """Every packed section read as its run's log, by slot, and the problems found.

    Two sections that are evidence for one slot are neither read (`_Claims`); a refused
    section (another node's, a second pod on a node: NVC751, NVC752) holds its slot as
    refused whatever else claims it.
    """
    read: dict[tuple[str, ...], tuple[_Read, RunLog]] = {}
    problems: list[str] = []
    claims = _Claims()
    refusals: list[Refusal] = []
    for done in same_node(splits):
        problems += done.problems
        refusals += done.refused
        for piece in done.pieces:
            if (key := claims.claim(piece.log, piece.placed)) is not None:
                read[key] = (_read(piece.log, piece.placed, failed=piece.rc != 0), piece.log)
    for key in claims.twice:
        read.pop(key, None)
    for refusal in refusals:
        key = _slot(refusal.log, refusal.placed)
        read[key] = (_refused(refusal.log, refusal.placed, refusal.error), refusal.log)
    return read, problems + claims.problems


def _slot(log: RunLog, placed: Placed) -> tuple[str, ...]:
    """A packed section's slot: its run, test and group (node or pair) in its namespace."""
    return (log.namespace, placed.run, placed.unit.test.name, placed.group)


@dataclass
class _Claims:
    """Which log each packed section's slot (run, test, group) came from.

    Two logs of one run's test and slot (the launcher pod's and a copy saved under the
    run's name, say) are, as a second log of a run is, a problem, and here neither is
    evidence: whichever sorted last would otherwise have replaced the other unseen.
    """

    seen: dict[tuple[str, ...], str] = field(default_factory=dict)
    twice: set[tuple[str, ...]] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    def claim(self, log: RunLog, placed: Placed) -> tuple[str, ...] | None:
        """The slot's key when `log` is the first to fill it; None (noted) for a second."""
        key = _slot(log, placed)
        first = self.seen.setdefault(key, log.path)
        if first == log.path:
            return key
        group = f", {placed.group}" if placed.group else ""
        self.problems.append(
            f"{log.path}: a second log of {placed.run} ({placed.unit.test.name}{group}) "
            f"beside {first}: neither is read"
        )
        self.twice.add(key)
        return None


def _kind(unit: TestUnit) -> str:
    """A log record's kind: its test's."""
    return kind_of(unit.test).name


def _base(log: RunLog, placed: Placed, text: str, *, failed: bool) -> dict[str, Any]:
    return {
        "path": log.path,
        "sha256": hashlib.sha256(log.data).hexdigest(),
        "stage": placed.unit.stage.name,
        "test": placed.unit.test.name,
        "run": placed.run,
        "round": placed.round,
        "group": placed.group,
        "nodes": placed.nodes,
        "job_failed": failed,
        "finished_at": _finished(text, placed.obj),
        "pod_node": log.node,
    }


def _refused(log: RunLog, placed: Placed, error: str) -> _Read:
    """A packed run's section refused as evidence (`packlogs.py`): its run has no log."""
    text = log.data.decode("utf-8", errors="replace")
    base = _base(log, placed, text, failed=False)
    record = LogRecord(**base, kind=_kind(placed.unit), status=REFUSED, errors=(error,))
    nccl = kind_of(placed.unit.test).collective
    return _Read(placed, record, _bandwidth(placed, record, None) if nccl else None)


def _read(log: RunLog, placed: Placed, failed: bool | None = None) -> _Read:
    """One run's log read; `failed` is a packed section's exit code (else the Job's)."""
    text = log.data.decode("utf-8", errors="replace")
    failed = _job_failed(placed.obj) if failed is None else failed
    base = _base(log, placed, text, failed=failed)
    disorder = timestamps_out_of_order(text)
    kind = kind_of(placed.unit.test)
    if disorder is not None:
        at = f"{log.path} (the section after line {log.line})" if log.line else log.path
        why = f"{DISORDERED}: {at}: kubectl --timestamps {disorder}: not one run's output"
        record = LogRecord(**base, kind=kind.name, status="disordered", errors=(why,))
        measured = _bandwidth(placed, record, None) if kind.collective else None
        return _Read(placed, record, measured)
    if kind.pair:  # its sides are read together (`_read_pair`); one alone is no evidence
        return _read_one_side(log, placed, text, base)
    own = log_reader_of(kind.name)
    if own is None:  # the plan runs no such test where logs are read; never a guess
        why = f"test {placed.unit.test.name} prints no log nvcregen reads"
        record = LogRecord(**base, kind=kind.name, status="no-data", errors=(why,))
        return _Read(placed, record, None)
    names_itself = prints_begin(placed.obj)
    got = own.read(text, base, placed.unit, names_itself=names_itself, offset=log.line)
    if log.pod and got.measured is not None:  # a node pack's section: its ranks, its pod's
        bound = on_its_node(got.record, got.measured, log.pod, placed.nodes, log.line)
        if isinstance(bound, str):
            return _refused(log, placed, bound)
        got = KindRead(bound[0], got.notes, bound[1])
    measured = _bandwidth(placed, got.record, got.measured) if kind.collective else None
    return _Read(placed, got.record, measured, got.notes)


def _read_pair(
    found: Sequence[tuple[RunLog, Placed]], problems: list[str]
) -> tuple[_Read, RunLog] | None:
    """One pair run's server and client logs read together (the kind's `logs.PAIR`).

    The record is the client's log's (the TrainJob's launcher); its round fails or stays
    incomplete with the reason and every rail's error, which name both nodes and the HCA.
    """
    placed = found[0][1]
    pair = _pair_reader(placed)
    named = [(log.name, log.path, _side(log)) for log, _ in found]
    client, server, more = pair.sides(named, placed.run)
    problems += more
    log = next((g for g, _ in found if client is not None and g.path == client.path), None)
    log = log or next((g for g, _ in found if server is not None and g.path == server.path), None)
    if log is None:  # every log of the run was a second one of its side: none is read
        return None
    text = log.data.decode("utf-8", errors="replace")
    base = _base(log, placed, text, failed=_job_failed(placed.obj))
    record = LogRecord.model_validate(pair.read(client, server, base, placed.unit))
    measured = _bandwidth(placed, record, None)
    if record.errors:  # the round's reason names the nodes and the HCA of every error
        why = _PAIR_REASONS.get(record.status, "RailFailed")
        measured = measured.model_copy(update={"reason": f"{why}: {'; '.join(record.errors)}"})
    return _Read(placed, record, measured), log


# Why a pair's round is not a pass, by its record's status (a rail that failed by default).
_PAIR_REASONS = {"no-data": "OneSided", FOREIGN: "Foreign"}


def _read_one_side(log: RunLog, placed: Placed, text: str, base: dict[str, Any]) -> _Read:
    """A pair run's log read on its own: one side without the other, no evidence (NVC774)."""
    pair = _pair_reader(placed)
    side = Side(log.path, text, log.node)
    server = pair.role_of(log.name, placed.run) == "server"
    fields = pair.read(None if server else side, side if server else None, base, placed.unit)
    record = LogRecord.model_validate(fields)
    return _Read(placed, record, None)


def _pair_reader(placed: Placed) -> PairReader:
    """The pair reader of a pair kind's run (`kindlogs.py`).

    Raises:
        ValueError: The kind says it is a pair and holds no pair reader (a bug of the kind).

    """
    kind = kind_of(placed.unit.test)
    found = pair_reader_of(kind.name)
    if found is None:
        raise ValueError(f"the pair kind {kind.name} holds no pair reader (its logs.PAIR)")
    return found


def _side(log: RunLog) -> Side:
    return Side(log.path, log.data.decode("utf-8", errors="replace"), log.node)


def _finished(text: str, obj: Obj | None) -> str | None:
    """When a run finished, as its log's timestamps or its exported object say.

    The last `kubectl logs --timestamps` time, else the TrainJob's or Job's
    `completionTime` (or the time of its last true condition).
    """
    stamp = last_timestamp(text)
    if stamp is not None:
        return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:11]}:{stamp[11:13]}:{stamp[13:15]}Z"
    status = status_of(obj or {})
    times = [str(c.get("lastTransitionTime") or "") for c in status.get("conditions") or []
             if isinstance(c, Mapping) and c.get("status") == "True"]  # fmt: skip
    found = [t for t in (str(status.get("completionTime") or ""), *times) if t]
    return max(found, default=None)


def _job_failed(obj: Obj | None) -> bool:
    """Whether an exported TrainJob or Job says it failed (`Failed=True`)."""
    if obj is None:
        return False
    conditions = status_of(obj).get("conditions") or []
    return any(
        isinstance(c, Mapping) and c.get("type") == "Failed" and c.get("status") == "True"
        for c in conditions
    )


def _finality(record: LogRecord) -> tuple[Finality, str]:
    if record.job_failed or record.status == "failed":
        return Finality.NOT_EVALUATED, "JobFailed"
    if record.status == "ok":
        return Finality.FINAL, "JobSucceeded"
    if record.status == "disordered":
        return Finality.PROVISIONAL, "TimestampsOutOfOrder"
    return (
        Finality.PROVISIONAL,
        "LogTruncated" if record.status == "truncated" else "NoDataCollected",
    )


def _bandwidth(
    placed: Placed, record: LogRecord, measured: Measured | None
) -> BandwidthMeasurement:
    """One round as NVCRE would record it: bandwidths per size, finality, transport."""
    finality, reason = _finality(record)
    kind = "Job" if kind_of(placed.unit.test).per_node else "TrainJob"
    namespace = record.path.split("/")[1]
    ref = ObjectRef(kind=kind, namespace=namespace, name=placed.run, uid=uid_of(placed.obj or {}))
    return BandwidthMeasurement(
        ref=ref,
        job=placed.run,
        group=placed.group,
        nodes=placed.nodes,
        iteration=placed.round,
        finality=finality,
        reason=reason,
        test_type=measured.test_type if measured else "",
        rows=measured.rows if measured else (),
        transports=record.transports,
        completion_time=record.finished_at,
        from_log=True,
        ranks=measured.ranks if measured else (),
        scheduled_on=(record.pod_node,) if record.pod_node else (),
    )


def _unit_run(unit: TestUnit, reads: Sequence[_Read], rounds: int) -> RunResult:
    """One test's run from its logs: state, failed nodes (DCGM), rounds (NCCL)."""
    base = RunResult(
        stage=unit.stage.name,
        scope=unit.stage.scope,
        test=unit.test.name,
        expected_transport=expected_transport(unit),
        pinned_transport=_pinned(unit, reads),
    )
    expected = expected_runs(unit, rounds)
    unjudged = _unjudged_nodes(unit, reads, expected)
    if not reads:
        what = "Job" if kind_of(unit.test).per_node else "TrainJob launcher"
        update = {"reason": "NotFound", "message": f"no {what} log", "unjudged_nodes": unjudged}
        return base.model_copy(update=update)
    failed = [r.record for r in reads if r.record.job_failed or r.record.status == "failed"]
    done = {(r.placed.round, r.placed.index) for r in reads if r.record.status == "ok"}
    if failed:
        state, reason = RunState.FAILED, "JobFailed"
        message = "; ".join(f"{r.run}: {', '.join(r.errors) or 'failed'}" for r in failed)
    elif expected <= done:
        state, reason, message = RunState.SUCCEEDED, "LogsComplete", ""
    else:
        state, reason = RunState.IN_PROGRESS, "LogsIncomplete"
        message = f"{len(done & expected)} of {len(expected)} runs have a finished log"
        message += "".join(f"; {n.name}: {n.message}" for n in unjudged)
    first = reads[0].placed
    source = ObjectRef(kind=_source_kind(unit), namespace=reads[0].record.path.split("/")[1],
                       name=first.run, uid=uid_of(first.obj or {}))  # fmt: skip
    measured = sorted(
        (r.measurement for r in reads if r.measurement is not None),
        key=lambda m: (m.group, m.iteration or 0),
    )
    return base.model_copy(
        update={
            "source": source,
            "state": state,
            "reason": reason,
            "message": message,
            "failed_nodes": _failed_nodes(unit, failed),
            "succeeded_nodes": _succeeded_nodes(unit, reads),
            "unjudged_nodes": unjudged,
            "bandwidth": tuple(measured),
            "problems": tuple(
                e for r in reads for e in r.record.errors if e.startswith(DISORDERED)
            ),
            "notes": fold_notes(n for r in reads for n in r.notes),
        }
    )


def _unjudged_nodes(
    unit: TestUnit, reads: Sequence[_Read], expected: set[tuple[int, int | None]]
) -> tuple[FailedNode, ...]:
    """Per-node tests: the nodes some round has no log of, and why; never cleared by it.

    A packed pod without the test's section, a log not saved: the node's other rounds do
    not clear it. Node-health: also the nodes whose log did not judge them whole.
    """
    kind = kind_of(unit.test)
    if not kind.per_node:
        return ()
    named = unit.pool.spec.nodes or ()
    logged = {(r.placed.round, r.placed.index) for r in reads}
    absent = sorted({i for _, i in expected - logged if i is not None and i < len(named)})
    if kind.node_health:
        missing = dict.fromkeys(named[i] for i in absent)
        return unjudged_nodes(kind.name, (r.record for r in reads), missing)
    rounds: dict[int, list[int]] = {}  # each node's missing rounds, found in one pass
    for round_, index in sorted((r, i) for r, i in expected - logged if i is not None):
        rounds.setdefault(index, []).append(round_)
    return tuple(
        FailedNode(
            name=named[i],
            reason="LogMissing",
            message=f"no log of round {', '.join(map(str, rounds[i]))}",
        )
        for i in absent
    )


def _source_kind(unit: TestUnit) -> str:
    return "Job" if kind_of(unit.test).per_node else "TrainJob"


def _failed_nodes(unit: TestUnit, failed: Sequence[LogRecord]) -> tuple[FailedNode, ...]:
    """Per-node failures name their node; an NCCL failure is the group's, not one node's."""
    if not kind_of(unit.test).per_node:
        return ()
    return tuple(
        FailedNode(
            name=node,
            reason=_failed_reason(r.kind),
            message=f"round {r.round}: {', '.join(r.errors) or 'failed'}",
        )
        for r in failed
        for node in r.nodes
    )


def _succeeded_nodes(unit: TestUnit, reads: Sequence[_Read]) -> tuple[str, ...]:
    """Per-node tests: the nodes whose every log finished and passed."""
    if not kind_of(unit.test).per_node:
        return ()
    bad = {
        n for r in reads if r.record.status != "ok" or r.record.job_failed for n in r.placed.nodes
    }
    good = [n for r in reads if r.record.status == "ok" for n in r.placed.nodes]
    return tuple(n for n in dict.fromkeys(good) if n not in bad)


def _pinned(unit: TestUnit, reads: Sequence[_Read]) -> str | None:
    """The transport the TrainJobs pin (its kind's launch's variable, `NCCL_NET`).

    From an exported TrainJob, else from the plan.
    """
    if not kind_of(unit.test).collective:
        return None
    launch = launch_of(unit)
    variable = launch.transport_variable
    for r in reads:
        trainer = ((r.placed.obj or {}).get("spec") or {}).get("trainer") or {}
        for env in trainer.get("env") or []:
            if isinstance(env, Mapping) and env.get("name") == variable:
                return launch.transport(str(env.get("value")))
    return launch.transport(launch.env(unit).get(variable, ""))


def _failed_reason(kind: str) -> str:
    """Why a per-node run of `kind` failed its node (its kind's `failed_reason`)."""
    known = KINDS.get(kind)
    return known.failed_reason if known is not None else "DiagnosticFailed"
