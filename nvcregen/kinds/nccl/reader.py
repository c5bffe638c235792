"""Read nccl-tests output (`all_reduce_perf` and friends) into runs with rows and a status.

A log is read line by line after launcher prefixes are removed (`lines.py`). A run starts
at the top of the file, and again at a banner (`# nThread ... nGpus ...` or
`# Collective test starting`) once the previous run has shown its table. Everything else
attaches to the current run: NCCL_DEBUG lines (transport, NCCL version), the device
list (which hosts ran it), the column header, rows, the `Out of bounds values` and `Avg
bus bandwidth` summary, and failures (`Test NCCL failure`, `Test CUDA failure`, `.. host
pid N: Test failure`, and what launchers print when a process dies: `launcher.py`).

A script that runs several collectives into one file introduces each with a marker
line (`=== all_gather_perf ===`, or the echoed command): a marker seen after a run's
table names the *next* run, never the one before it.

A run is `failed` when the log shows a failure, a non-zero `#wrong`, an out-of-bounds
count, several single-process tests printing into one table, or a summary with no row
that could be read (a run is never `ok` without rows); `truncated` when it ends before
the `Avg bus bandwidth` line or on a cut row; `ok` otherwise. Warnings (an `Avg bus
bandwidth` that is not the mean of the rows, as after an edit) do not change the status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nvcregen.ingest.limits import InputLimitError, bounded_int, finite, matched
from nvcregen.ingest.lines import strip_prefix
from nvcregen.ingest.models import IngestFormatError, RunStatus
from nvcregen.ingest.transport import detect_transports
from nvcregen.kinds.nccl.collective import (
    collective_from_binary,
    find_collective,
    marker_collective,
    trace_collective,
)
from nvcregen.kinds.nccl.launcher import continues_failure, launcher_failure
from nvcregen.kinds.nccl.models import NcclRow, NcclRun, PluginFailure, Rank
from nvcregen.kinds.nccl.runcheck import average_warning, failures
from nvcregen.kinds.nccl.table import Columns, RowError, is_row, parse_header, parse_row

_DEBUG = re.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b")
_STARTING = re.compile(r"Collective test starting:\s*(?P<binary>\S+)")
_CONCLUDED = re.compile(r"Collective test concluded")
_BANNER = re.compile(r"\bnThread\s+\d+\s+nGpus\s+\d+")
_DEVICE = re.compile(
    r"^\s*#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device"
    r"(?:\s+(?P<device>\d+)(?:\s+\[[^\]]*\])?(?:\s+(?P<model>\S.*))?)?"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVER = re.compile(r"\bcudaDriverVersion\s+(?P<version>\d+)\b")
_OUT_OF_BOUNDS = re.compile(r"Out of bounds values\s*:\s*(?P<count>\d+)\s*(?P<word>\w*)")
_AVG_BUSBW = re.compile(r"Avg bus bandwidth\s*:\s*(?P<value>\S+)")
_FAILURE = re.compile(r"\bTest (?:NCCL|CUDA) failure\b.*")
_STACK = re.compile(r"\bTest failure\b.*")
_WARN = re.compile(r"\bNCCL WARN\s+(?P<message>.*)")  # trailing blanks stripped after
_VERSION = re.compile(r"\bNCCL version (?P<version>\S+)")
MAX_LINES = 2_000_000  # bounds an untrusted log: about 200 MB of nccl-tests output


@dataclass
class _Run:
    """A run while it is being read (mutable; frozen into NcclRun at the end)."""

    lines: list[str] = field(default_factory=list)
    phase: str = "preamble"  # preamble -> table -> done
    banners: int = 0
    binary: str | None = None
    named: str | None = None
    next_name: str | None = None
    hosts: dict[str, None] = field(default_factory=dict)
    ranks: list[Rank] = field(default_factory=list)
    drivers: list[str] = field(default_factory=list)
    columns: Columns | None = None
    rows: list[NcclRow] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    launcher: list[str] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    out_of_bounds: list[str] = field(default_factory=list)
    avg_busbw: list[float | None] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    cut: bool = False
    versions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def has_evidence(self) -> bool:
        """Whether anything nccl-tests prints was seen."""
        seen = (self.banners, self.binary, self.columns, self.rows, self.failures)
        return any(seen) or any((self.stack, self.avg_busbw, self.out_of_bounds))


def parse_nccl(text: str, source: str) -> list[NcclRun]:
    """Read every nccl-tests run in a log.

    Args:
        text: The log as captured (prefixes from srun -l, mpirun --tag-output, pdsh,
            `kubectl logs --timestamps` allowed; NCCL_DEBUG lines may be interleaved).
        source: The name to record as each run's `file`.

    Returns:
        The runs in log order.

    Raises:
        IngestFormatError: Nothing in the text looks like nccl-tests output, or the log
            is longer than MAX_LINES lines; an `InputLimitError` (with its line) when a
            number is too long or a measurement is not finite (`limits.py`).

    """
    raw = text.splitlines()
    if len(raw) > MAX_LINES:
        raise IngestFormatError(f"{len(raw)} lines: more than the {MAX_LINES} read at most")
    runs = _split_runs(raw)
    if not any(run.has_evidence for run in runs):
        raise IngestFormatError(
            "not nccl-tests output: no banner, column header, result row or test failure"
        )
    fallback = find_collective([], source) or "unknown"
    return [_freeze(run, source, fallback) for run in runs if run.has_evidence]


def _split_runs(raw: list[str]) -> list[_Run]:
    runs = [_Run()]
    for number, whole in enumerate(raw, 1):
        captured = matched(whole)  # no pattern scans more than MAX_LINE characters
        line = strip_prefix(captured)
        starts = _STARTING.search(line) or (_BANNER.search(line) and not _DEBUG.search(line))
        if starts and runs[-1].phase != "preamble":
            runs.append(_Run(named=runs[-1].next_name))
        runs[-1].lines.append(line)
        try:
            _read_line(runs[-1], line, captured)
        except InputLimitError as exc:
            raise InputLimitError(exc.code, str(exc), number) from exc
    return runs


def _read_line(run: _Run, line: str, captured: str) -> None:
    """Attach one line to the run being read."""
    if _DEBUG.search(line):
        _read_debug(run, line)
    elif match := _STARTING.search(line):
        run.binary = match["binary"]
    elif _BANNER.search(line):
        run.banners += 1
    elif _CONCLUDED.search(line):
        run.phase = "done"
    elif match := _DEVICE.match(line):
        run.hosts.setdefault(match["host"])
        device = bounded_int(match["device"], "a device number") if match["device"] else None
        model, host = _printable(match["model"] or "").strip(), _printable(match["host"])
        run.ranks.append(Rank(bounded_int(match["rank"], "a rank"), host, device, model))
    elif (columns := parse_header(line)) is not None:
        run.columns = columns
        if run.phase == "preamble":
            run.phase = "table"
    else:
        _read_result(run, line, captured)


def _read_result(run: _Run, line: str, captured: str) -> None:
    """Attach a summary, failure, version, marker or row line."""
    if match := _OUT_OF_BOUNDS.search(line):
        if (
            bounded_int(match["count"], "an out-of-bounds count")
            or match["word"].upper() == "FAILED"
        ):
            run.out_of_bounds.append(f"Out of bounds values: {match['count']} {match['word']}")
    elif match := _AVG_BUSBW.search(line):
        run.avg_busbw.append(_float_or_none(match["value"]))
        run.phase = "done"
    elif match := _FAILURE.search(line):
        run.failures.append(match[0].strip())
        run.phase = "done"
    elif match := _STACK.search(line):
        run.stack.append(match[0].strip())
    elif match := _VERSION.search(line):
        run.versions.append(match["version"])
    elif is_row(line):
        _read_row(run, line)
    else:
        _read_other(run, line, captured)


def _read_other(run: _Run, line: str, captured: str) -> None:
    """A launcher failure, or a marker naming this run (before its table) or the next."""
    if (failure := launcher_failure(captured, line)) is not None:
        run.launcher.append(failure)
    elif continues_failure(line) and run.launcher:
        run.launcher[-1] += " " + line.strip()
    elif (name := marker_collective(line)) is not None:
        if run.phase == "preamble":
            run.named = run.named or name
        else:
            run.next_name = name


def _read_row(run: _Run, line: str) -> None:
    if run.phase == "preamble":
        run.phase = "table"
    try:
        run.rows.append(parse_row(line, run.columns))
    except RowError as exc:
        run.cut = run.cut or exc.cut
        run.problems.append(str(exc))


def _read_debug(run: _Run, line: str) -> None:
    if match := _VERSION.search(line):
        run.versions.append(match["version"])
    elif match := _DRIVER.search(line):
        number = bounded_int(match["version"], "a CUDA driver version")
        run.drivers.append(f"{number // 1000}.{number % 1000 // 10}")
    elif match := _WARN.search(line):
        run.warnings.append(f"NCCL WARN {match['message'].rstrip()}")


def _freeze(run: _Run, source: str, fallback: str) -> NcclRun:
    found = failures(run.failures, run.stack, run.out_of_bounds, run.rows, run.banners)
    found += run.launcher
    transport = detect_transports(run.lines, finished=not found)
    if found:
        found += run.warnings
    elif run.avg_busbw and not run.rows:
        found.append(
            "the run printed its summary but no result row could be read: the table is"
            " unreadable (an unknown launcher prefix or layout)"
        )
    truncated = not run.avg_busbw or run.cut
    status: RunStatus = "failed" if found else "truncated" if truncated else "ok"
    errors = found + run.problems
    if status == "truncated" and not run.avg_busbw:
        errors.append("no 'Avg bus bandwidth' line: the log ends before the run finished")
    avg = run.avg_busbw[0] if run.avg_busbw else None
    checkable = status == "ok" and run.banners <= 1
    warning = average_warning(avg, run.rows) if checkable else None
    plugins = tuple(PluginFailure(host, name) for host, name in transport.failed_plugins)
    named = collective_from_binary(run.binary) if run.binary else None
    return NcclRun(
        file=source,
        collective=named or run.named or trace_collective(run.lines) or fallback,
        status=status,
        errors=tuple(_unique(errors)),
        transports=transport.transports,
        avg_busbw_gbs=avg,
        rows=tuple(run.rows),
        gdrdma=transport.gdrdma,
        nccl_versions=tuple(_unique(run.versions)),
        warnings=((warning,) if warning else ()) + tuple(p.message for p in plugins),
        hosts=tuple(run.hosts),
        ranks=tuple(run.ranks),
        cuda_driver=tuple(_unique(run.drivers)),
        networks=transport.networks,
        plugin_failures=plugins,
    )


def _printable(text: str) -> str:
    """A name from the log with each control character made `?`.

    An escape sequence would otherwise reach a terminal through verdict messages.
    """
    return _CONTROL.sub("?", text)


def _float_or_none(value: str) -> float | None:
    """The summary's number; None when it is no number (`N/A`), an error when `inf`/`nan`."""
    try:
        return finite(value, "'Avg bus bandwidth'")
    except InputLimitError:
        raise
    except ValueError:
        return None


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
