"""perftest bandwidth outputs (`ib_write_bw`, `ib_read_bw`, `ib_send_bw`) -> runs (pure).

Two forms: the text a client or server prints (a header naming the device, link type,
GID index, MTU and queue pairs; the GIDs of both ends; a table of `#bytes #iterations
BW peak BW average MsgRate` in `Gb/sec` with `--report_gbits`, else `MB/sec`, which is
perftest's 2^20 bytes a second), and the file `--out_json` writes. Every figure is kept
in Gb/s. The JSON does not say its unit: it is told from the figures themselves (bytes
a second = MsgRate x 10^6 x MsgSize), and JSON whose figures fit neither unit is refused
(NVC831). A text's table ends at its closing dashes (`ok`); an error line after the
header (`Completion with error`, `Failed to complete ...`, `Couldn't ...`) fails the
run, a table that stops without either is `truncated`. Every line is read through
`limits.py` (64 KiB a line, 30 digits a number, finite figures).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from nvcregen.ingest import limits
from nvcregen.ingest.lines import logical_lines
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.rdma import codes

Status = Literal["ok", "failed", "truncated"]
MARK = "@@nvcregen-rdma"  # the rails script's begin line; its `rail begin/end` lines are not it
UNKNOWN_UNIT = codes.NVC831.code
MB_SEC = 1024 * 1024 * 8 / 1e9  # perftest's MB/sec (2^20 bytes a second) in Gb/s
_UNITS = {"Gb/sec": 1.0, "MB/sec": MB_SEC}
_TEST = re.compile(
    r"^\s*((?:RDMA_Write|RDMA_Read|Send)(?: Bidirectional)?(?: Post List)? BW Test)$"
)
_DEVICE = re.compile(r"\bDevice\s+:\s+([A-Za-z0-9_.:-]{1,64})")
_LINK = re.compile(r"\bLink type\s+:\s+(\S{1,16})")
_GID_INDEX = re.compile(r"\bGID index\s+:\s+(\d{1,5})")
_QPS = re.compile(r"\bNumber of qps\s+:\s+(\d{1,6})")
_MTU = re.compile(r"\bMtu\s+:\s+(\d{1,6})\[B\]")
_ADDRESS = re.compile(r"^\s*(local|remote) address:")
_GID = re.compile(r"^\s*GID:\s+([0-9a-fA-F:]{1,64})$")
_GPU = re.compile(r"device name = \[([^\]]{1,80})\]")
_TABLE = re.compile(
    r"^\s*#bytes\s+#iterations\s+BW peak\[(Gb/sec|MB/sec)\]\s+BW average\[(Gb/sec|MB/sec)\]"
)
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")
_DASHES = re.compile(r"^\s*-{20,}\s*$")
_ERROR = re.compile(r"(?i)(completion with error|failed to|failed status|couldn't|unable to)")


@dataclass(frozen=True)
class PerftestRow:
    """One message size: bytes, iterations, peak and average bandwidth (Gb/s), MsgRate."""

    size_bytes: int
    iterations: int
    peak_gbps: float
    average_gbps: float
    msg_rate_mpps: float

    def to_json(self) -> dict[str, Any]:
        """The row as `ingest --format json` prints it."""
        return {
            "sizeBytes": self.size_bytes,
            "iterations": self.iterations,
            "peakGbps": round(self.peak_gbps, 6),
            "averageGbps": round(self.average_gbps, 6),
            "msgRateMpps": self.msg_rate_mpps,
        }


@dataclass(frozen=True)
class PerftestRun:
    """One perftest bandwidth run as its output shows it."""

    file: str
    line: int  # where its test header (or JSON) starts, 1-based
    form: Literal["text", "json"]
    test: str = ""
    device: str = ""
    link_type: str = ""
    gid_index: int | None = None
    qps: int | None = None
    mtu: int | None = None
    local_gid: str = ""
    remote_gid: str = ""
    gpu: str = ""  # the CUDA device perftest picked (`--use_cuda`), "" for host memory
    unit: str = ""  # the unit the output printed: `Gb/sec` or `MB/sec`
    rows: tuple[PerftestRow, ...] = ()
    status: Status = "truncated"
    errors: tuple[str, ...] = ()

    def at(self, size_bytes: int) -> PerftestRow | None:
        """The row of one message size, if the run measured it."""
        return next((r for r in self.rows if r.size_bytes == size_bytes), None)

    def to_json(self) -> dict[str, Any]:
        """The run as `ingest perftest --format json` prints it."""
        return {
            "file": self.file,
            "line": self.line,
            "form": self.form,
            "test": self.test,
            "device": self.device,
            "linkType": self.link_type,
            "gidIndex": self.gid_index,
            "qps": self.qps,
            "mtu": self.mtu,
            "localGid": self.local_gid,
            "remoteGid": self.remote_gid,
            "gpu": self.gpu,
            "unit": self.unit,
            "status": self.status,
            "errors": list(self.errors),
            "rows": [r.to_json() for r in self.rows],
        }


@dataclass
class _Open:
    run: PerftestRun
    rows: list[PerftestRow] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    table: float | None = None  # the table's unit factor once its header is read
    address: str = ""
    closed: bool = False


def parse_perftest(text: str, file: str) -> list[PerftestRun]:
    """Every perftest bandwidth run of one output, text or `--out_json`.

    Raises:
        IngestFormatError: The text holds no perftest bandwidth output.
        InputLimitError: A bound of `limits.py` is broken (NVC713-NVC716), or JSON whose
            unit its figures do not tell (NVC831).

    """
    if text.lstrip().startswith("{"):
        return [parse_perftest_json(text, file)]
    runs: list[PerftestRun] = []
    current: _Open | None = None
    gpu = ""
    for number, raw in enumerate(logical_lines(text), start=1):
        line = limits.matched(raw)
        if (found := _GPU.search(line)) is not None:
            gpu = found.group(1)
        elif (test := _TEST.match(line)) is not None:
            if current is not None:
                runs.append(_close(current))
            current = _Open(PerftestRun(file, number, "text", test=test.group(1), gpu=gpu))
            gpu = ""
        elif current is not None:
            _read_line(current, line, number)
    if current is not None:
        runs.append(_close(current))
    if not runs:
        raise IngestFormatError(f"{file}: no perftest bandwidth output (no `... BW Test` header)")
    return runs


def _read_line(current: _Open, line: str, number: int) -> None:
    """One line after a test header: a header field, a GID, the table, an error."""
    run = current.run
    if current.table is not None and not current.closed:
        if (row := _ROW.match(line)) is not None:
            current.rows.append(_row(row.groups(), current.table, number))
            return
        if _DASHES.match(line) and current.rows:
            current.closed = True
            return
    if _ERROR.search(line):
        current.errors.append(f"line {number}: {line.strip()}")
    elif (table := _TABLE.match(line)) is not None:
        if table.group(1) != table.group(2):
            current.errors.append(f"line {number}: peak and average in different units")
        current.table = _UNITS[table.group(2)]
        current.run = replace(run, unit=table.group(2))
    elif (address := _ADDRESS.match(line)) is not None:
        current.address = address.group(1)
    elif (gid := _GID.match(line)) is not None and current.address:
        if current.address == "local" and not run.local_gid:
            current.run = replace(run, local_gid=gid.group(1))
        elif current.address == "remote" and not run.remote_gid:
            current.run = replace(run, remote_gid=gid.group(1))
    else:
        current.run = _header(run, line)


def _header(run: PerftestRun, line: str) -> PerftestRun:
    """A header line's fields (one line may hold two: `Number of qps : 1  Transport ...`)."""
    found: dict[str, Any] = {}
    if (device := _DEVICE.search(line)) is not None and not run.device:
        found["device"] = device.group(1)
    if (link := _LINK.search(line)) is not None:
        found["link_type"] = link.group(1)
    if (gid := _GID_INDEX.search(line)) is not None:
        found["gid_index"] = limits.bounded_int(gid.group(1), "a GID index")
    if (qps := _QPS.search(line)) is not None:
        found["qps"] = limits.bounded_int(qps.group(1), "a queue pair count")
    if (mtu := _MTU.search(line)) is not None:
        found["mtu"] = limits.bounded_int(mtu.group(1), "an MTU")
    return replace(run, **found) if found else run


def _row(groups: tuple[str | Any, ...], factor: float, number: int) -> PerftestRow:
    size, iterations, peak, average, rate = (str(g) for g in groups)
    where = f"line {number}"
    return PerftestRow(
        size_bytes=limits.bounded_int(size, f"{where}: a message size"),
        iterations=limits.bounded_int(iterations, f"{where}: an iteration count"),
        peak_gbps=_number(peak, f"{where}: BW peak") * factor,
        average_gbps=_number(average, f"{where}: BW average") * factor,
        msg_rate_mpps=_number(rate, f"{where}: MsgRate"),
    )


def _number(text: str, what: str) -> float:
    if len(text.replace(".", "")) > limits.MAX_DIGITS:
        raise limits.InputLimitError(limits.TOO_LONG, f"{what} has more than 30 digits")
    try:
        return limits.finite(text, what)
    except limits.InputLimitError:
        raise
    except ValueError as exc:
        raise IngestFormatError(f"{what} is {text!r}, not a number") from exc


def _close(current: _Open) -> PerftestRun:
    if current.errors:
        status: Status = "failed"
    else:
        status = "ok" if current.closed else "truncated"
    return replace(current.run, rows=tuple(current.rows), status=status,
                   errors=tuple(current.errors))  # fmt: skip


def parse_perftest_json(text: str, file: str) -> PerftestRun:
    """The file `--out_json` writes: `test_info` and one `results` row.

    Raises:
        IngestFormatError: Not perftest's JSON (perftest before 24.10 wrote unquoted
            keys, which is not JSON at all).
        InputLimitError: NVC713-NVC716, or NVC831 when the unit cannot be told.

    """
    decoder = json.JSONDecoder(parse_constant=_constant)
    start = len(text) - len(text.lstrip())
    try:
        data, _ = limits.raw_decode(decoder, text, start)
    except json.JSONDecodeError as exc:
        raise IngestFormatError(
            f"{file}: not JSON ({exc.msg} at line {exc.lineno}); perftest before 24.10 "
            "wrote --out_json without quotes around its keys"
        ) from exc
    info, results = _section(data, "test_info", file), _section(data, "results", file)
    test = str(info.get("test") or "")
    if not test.endswith("BW_Test"):
        raise IngestFormatError(f"{file}: test_info.test is {test!r}, not a perftest BW test")
    size = _json_int(results, "MsgSize", file)
    rate = _json_float(results, "MsgRate", file)
    peak, average = _json_float(results, "BW_peak", file), _json_float(results, "BW_average", file)
    unit = json_unit(size, rate, average)
    if unit is None:
        raise limits.InputLimitError(
            UNKNOWN_UNIT,
            f"{file}: BW_average {average} fits neither Gb/sec nor MB/sec for "
            f"MsgRate {rate} Mpps of {size} bytes: its unit cannot be told",
        )
    row = PerftestRow(size, _json_int(results, "n_iterations", file),
                      peak * _UNITS[unit], average * _UNITS[unit], rate)  # fmt: skip
    device = str(info.get("Device") or "")[:64]
    gid = info.get("GID_index")
    return PerftestRun(
        file, 1, "json", test=test.replace("_", " "), device=device,
        link_type=str(info.get("Link_type") or "")[:16],
        gid_index=gid if isinstance(gid, int) and not isinstance(gid, bool) else None,
        gpu="cuda" if "cuda_device" in info else "", unit=unit, rows=(row,), status="ok",
    )  # fmt: skip


def json_unit(size: int, rate_mpps: float, average: float) -> str | None:
    """The unit a JSON's BW_average is in, told from its message rate (None if neither).

    MsgRate is printed with 6 decimals: half its last digit is the rounding it may carry.
    """
    moved = rate_mpps * 1e6 * size  # bytes a second
    if moved <= 0 or average <= 0:
        return None
    slack = max(0.02, 0.5e-6 / rate_mpps)
    for unit, per in (("Gb/sec", 125_000_000.0), ("MB/sec", 1024.0 * 1024.0)):
        if abs(average * per - moved) <= slack * moved:
            return unit
    return None


def _constant(name: str) -> float:
    """`NaN` and `Infinity`, which Python's JSON reads: refused where a figure is read."""
    return math.nan if name == "NaN" else math.inf


def _section(data: object, key: str, file: str) -> dict[str, Any]:
    found = data.get(key) if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise IngestFormatError(f"{file}: no `{key}` object: not perftest's --out_json")
    return found


def _json_int(results: dict[str, Any], key: str, file: str) -> int:
    value = results.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise IngestFormatError(f"{file}: results.{key} is {value!r}, not a count")
    return value


def _json_float(results: dict[str, Any], key: str, file: str) -> float:
    value = results.get(key)
    if isinstance(value, float) and not math.isfinite(value):
        raise limits.InputLimitError(limits.NOT_FINITE, f"{file}: results.{key} is {value}")
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise IngestFormatError(f"{file}: results.{key} is {value!r}, not a figure")
    return float(value)
