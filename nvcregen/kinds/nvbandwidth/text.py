"""nvbandwidth's plain-text output (v0.4 to v0.8) -> one run, read line by line, bounded.

```
nvbandwidth Version: v0.8
CUDA Runtime Version: 13000
Driver Version: 580.159.04
vm                                          <- v0.8: the host name
Device 0: NVIDIA H100 80GB HBM3 (00000000:00:06)
Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     55.30     55.10
SUM host_to_device_memcpy_ce 110.40
Waived:                                     <- v0.7/v0.8; v0.4: `Waiving <name>.`
```

Lines before the version line (nvcregen's begin line, a launcher's) are not read; a
second version line is a second run, refused. Matrices hold at most `MAX_GPUS` labels a
side, every row as many cells as the header has columns; numbers are held to the bounds
of `limits.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nvcregen.ingest.limits import MAX_DIGITS, TOO_LONG, InputLimitError, finite, matched
from nvcregen.ingest.lines import strip_prefix
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nvbandwidth.models import Device, Matrix, NvbwRun, Status, Testcase

MAX_GPUS = 1024  # labels a side of one matrix: far above any node (or NVLink domain)
_NAME = r"[a-z][a-z0-9_]{0,63}"
VERSION = re.compile(r"^nvbandwidth Version: (?P<v>\S{1,64})$")
_GIT = re.compile(r"^Built from Git version: (?P<v>\S{1,64})$")
_RUNTIME = re.compile(r"^CUDA Runtime Version: (?P<n>\d{1,12})$")
_CUDA_DRIVER = re.compile(r"^CUDA Driver Version: (?P<n>\d{1,12})$")
_DRIVER = re.compile(r"^Driver Version: (?P<v>\S{1,64})$")
_DEVICE = re.compile(
    r"^Device (?P<i>\d{1,5}): (?P<name>[^()]{1,200}?)"
    r"(?: \((?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)\))?$"
)
_HOST = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]{0,252}$")
_RUNNING = re.compile(rf"^Running (?P<name>{_NAME})\.$")
_WAIVING = re.compile(rf"^Waiving (?P<name>{_NAME})\.$")
_WAIVED = re.compile(r"^Waived:")
_SUM = re.compile(rf"^SUM (?P<name>{_NAME}) (?P<value>\S+)$")
_HEADER = re.compile(r"^\s*\d+(?:\s+\d+)*$")
_ROW = re.compile(r"^\s*(?P<label>\d+)\s+(?P<cells>\S.*)$")
_CELL = re.compile(r"^(?:N/A|[-+]?(?:\d+(?:\.\d*)?|inf|nan))$", re.IGNORECASE)


def number(text: str, what: str, line: int) -> float:
    """A finite figure of at most `MAX_DIGITS` digits.

    Raises:
        InputLimitError: NVC713 for more digits, NVC715 for `inf` or `nan`.
        IngestFormatError: No number at all.

    """
    digits = sum(ch.isdigit() for ch in text)
    if digits > MAX_DIGITS:
        raise InputLimitError(TOO_LONG, f"{what} has {digits} digits, more than {MAX_DIGITS}", line)
    try:
        return finite(text, what)
    except InputLimitError as exc:
        raise InputLimitError(exc.code, str(exc), line) from exc
    except ValueError as exc:  # found by fuzzing: a SUM that is no number at all
        raise IngestFormatError(f"line {line}: {what} is {text[:20]!r}, no number") from exc


def label(text: str, line: int) -> int:
    """A GPU index of a matrix, at most `MAX_GPUS`."""
    if len(text) > 5 or int(text) >= MAX_GPUS:
        raise IngestFormatError(f"line {line}: GPU {text[:12]} of a matrix: more than {MAX_GPUS}")
    return int(text)


@dataclass
class _Open:
    """A testcase being read."""

    name: str
    line: int
    description: str | None = None
    columns: tuple[int, ...] | None = None
    rows: list[int] = field(default_factory=list)
    cells: list[tuple[float | None, ...]] = field(default_factory=list)

    def row(self, text: str, number_at: int) -> None:
        match = _ROW.match(text)
        if match is None or self.columns is None:
            raise IngestFormatError(f"line {number_at}: not a row of {self.name}'s matrix")
        tokens = match["cells"].split()
        if len(tokens) != len(self.columns):
            raise IngestFormatError(
                f"line {number_at}: {len(tokens)} cells under {len(self.columns)} columns"
                f" in {self.name}'s matrix"
            )
        if len(self.rows) >= MAX_GPUS:
            raise IngestFormatError(f"line {number_at}: more than {MAX_GPUS} rows in a matrix")
        values: list[float | None] = []
        for token in tokens:
            if _CELL.match(token) is None:
                raise IngestFormatError(f"line {number_at}: {token[:20]!r} is no figure")
            na = token.upper() == "N/A"
            values.append(None if na else number(token, f"a cell of {self.name}", number_at))
        self.rows.append(label(match["label"], number_at))
        self.cells.append(tuple(values))

    def close(self, total: float | None, status: Status) -> Testcase:
        matrix = None
        if self.columns is not None:
            matrix = Matrix(tuple(self.rows), self.columns, tuple(self.cells))
        return Testcase(self.name, status, self.line, self.description, matrix, total)


@dataclass
class _Head:
    version: str | None = None
    git: str | None = None
    runtime: int | None = None
    cuda_driver: int | None = None
    driver: str | None = None
    host: str | None = None
    devices: list[Device] = field(default_factory=list)

    def read(self, text: str) -> bool:
        """Whether the line is one of the run's header lines (and keep it)."""
        for pattern, key in ((_GIT, "git"), (_DRIVER, "driver")):
            if (m := pattern.match(text)) is not None:
                setattr(self, key, m["v"])
                return True
        if (m := _RUNTIME.match(text)) is not None:
            self.runtime = int(m["n"])
        elif (m := _CUDA_DRIVER.match(text)) is not None:
            self.cuda_driver = int(m["n"])
        elif (m := _DEVICE.match(text)) is not None:
            self.devices.append(Device(int(m["i"]), m["name"].strip(), m["bus"]))
        elif not self.devices and self.driver is not None and _HOST.match(text):
            self.host = text  # v0.8 prints the host name between the driver and the devices
        else:
            return False
        return True


@dataclass
class _Reader:
    """The lines after the version line: header lines, then testcases."""

    head: _Head
    tests: list[Testcase] = field(default_factory=list)
    current: _Open | None = None

    def feed(self, line: str, at: int) -> None:
        current = self.current
        if current is not None and current.columns is not None and _ROW.match(line):
            current.row(line, at)
        elif not self._event(line, at) and current is not None:
            if current.description is None:
                current.description = line[:200]
            elif current.columns is None and _HEADER.match(line):
                labels = line.split()
                if len(labels) > MAX_GPUS:
                    raise IngestFormatError(f"line {at}: more than {MAX_GPUS} columns")
                current.columns = tuple(label(t, at) for t in labels)
        elif current is None and not self.tests:
            self.head.read(line)

    def _event(self, line: str, at: int) -> bool:
        """A testcase starts, ends or is waived on this line (and is kept)."""
        if (m := _RUNNING.match(line)) is not None:
            self.end()
            self.current = _Open(m["name"], at)
        elif (m := _SUM.match(line)) is not None and self.current is not None:
            if m["name"] != self.current.name:
                raise IngestFormatError(f"line {at}: SUM of {m['name']} in {self.current.name}")
            self.tests.append(self.current.close(number(m["value"], "a SUM", at), "passed"))
            self.current = None
        elif (m := _WAIVING.match(line)) is not None:
            self.tests.append(Testcase(m["name"], "waived", at))
        elif _WAIVED.match(line):
            self.tests.append(Testcase(None, "waived", at))
        else:
            return False
        return True

    def end(self) -> None:
        """The open testcase ends without its SUM: read if its rows were, else cut off."""
        if self.current is not None:
            ended: Status = "passed" if self.current.cells else "truncated"
            self.tests.append(self.current.close(None, ended))
            self.current = None


def parse_text(text: str, file: str) -> NvbwRun:
    """One nvbandwidth run from its plain-text output; unnamed waived tests stay unnamed.

    Raises:
        IngestFormatError: No `nvbandwidth Version:` line, a second one, or a matrix
            that does not read (`InputLimitError` for a bound broken).

    """
    head = _Head()
    reader: _Reader | None = None
    for at, raw in enumerate(text.splitlines(), start=1):
        line = strip_prefix(matched(raw))
        if (m := VERSION.match(line)) is not None:
            if reader is not None:
                raise IngestFormatError(f"line {at}: a second nvbandwidth run in one file")
            head.version = m["v"]
            reader = _Reader(head)
        elif reader is not None and line:
            reader.feed(line, at)
    if reader is None:
        raise IngestFormatError("no `nvbandwidth Version:` line: not nvbandwidth's output")
    if reader.current is not None:
        reader.tests.append(reader.current.close(None, "truncated"))
    return NvbwRun(
        file=file,
        form="text",
        version=head.version,
        git_version=head.git,
        cuda_runtime=head.runtime,
        cuda_driver=head.cuda_driver,
        driver=head.driver,
        host=head.host,
        devices=tuple(head.devices),
        testcases=tuple(reader.tests),
    )
