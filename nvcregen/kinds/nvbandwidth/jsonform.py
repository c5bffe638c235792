"""nvbandwidth's JSON output (`-j`, v0.5 and later) -> one run, every value checked.

```
{"nvbandwidth": {"CUDA Runtime Version": 13000, "Driver Version": "580.159.04",
  "GPU Device list": ["0: NVIDIA H100 80GB HBM3 (00000000:00:06): (vm)"],
  "git_version": "v0.8", "version": "v0.8",
  "testcases": [{"name": "...", "status": "Passed", "bandwidth_description": "...",
                 "bandwidth_matrix": [["55.1623"]], "sum": 55.16}, ...]}}
```

The object may follow other lines (nvcregen's begin line); it is decoded from the first
line that opens it, within the bounds of `limits.py`. Matrix cells are strings (`N/A`
where no figure); rows and columns are labelled by position, as the text form labels them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from nvcregen.ingest.limits import UNDECODABLE, InputLimitError, raw_decode
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nvbandwidth.models import Device, Matrix, NvbwRun, Status, Testcase
from nvcregen.kinds.nvbandwidth.text import MAX_GPUS, number

_ENTRY = re.compile(
    r"^(?P<i>\d{1,5}): (?P<name>[^()]{1,200}?)"
    r"(?: \((?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)\))?"
    r"(?:: \((?P<host>[A-Za-z0-9][-A-Za-z0-9_.]{0,252})\))?$"
)
_STATUS: dict[str, Status] = {"Passed": "passed", "Waived": "waived"}
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def json_start(text: str) -> int | None:
    """Where the first line opening a JSON object starts, if any."""
    match = re.search(r"^[ \t]*\{", text, re.MULTILINE)
    return None if match is None else match.end() - 1


def parse_json(text: str, file: str, start: int) -> NvbwRun:
    """One nvbandwidth run from its `-j` output, decoded at `start`.

    Raises:
        IngestFormatError: Not nvbandwidth's object, or a field of the wrong shape
            (`InputLimitError` for JSON too deep, a number too long or not finite).

    """
    try:
        found, _end = raw_decode(json.JSONDecoder(), text, start)
    except json.JSONDecodeError as exc:
        line = text.count("\n", 0, start) + 1
        raise InputLimitError(UNDECODABLE, f"JSON that cannot be decoded: {exc.msg}", line) from exc
    body = found.get("nvbandwidth") if isinstance(found, dict) else None
    if not isinstance(body, dict):
        raise IngestFormatError("a JSON object without `nvbandwidth`: not nvbandwidth's -j output")
    devices, host = _devices(body.get("GPU Device list", []))
    cases = body.get("testcases", [])
    if not isinstance(cases, list):
        raise IngestFormatError("`testcases` is not a list")
    return NvbwRun(
        file=file,
        form="json",
        version=_text(body.get("version"), "version"),
        git_version=_text(body.get("git_version"), "git_version"),
        cuda_runtime=_int(body.get("CUDA Runtime Version"), "CUDA Runtime Version"),
        cuda_driver=_int(body.get("CUDA Driver Version"), "CUDA Driver Version"),
        driver=_text(body.get("Driver Version"), "Driver Version"),
        host=host,
        devices=devices,
        testcases=tuple(_testcase(c) for c in cases),
    )


def _text(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= 64:
        raise IngestFormatError(f"`{what}` is not a short string")
    return value


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 10**12:
        raise IngestFormatError(f"`{what}` is not a version number")
    return value


def _devices(entries: Any) -> tuple[tuple[Device, ...], str | None]:
    if not isinstance(entries, list) or len(entries) > MAX_GPUS:
        raise IngestFormatError(f"`GPU Device list` is not a list of at most {MAX_GPUS}")
    devices, hosts = [], set()
    for entry in entries:
        match = _ENTRY.match(entry) if isinstance(entry, str) else None
        if match is None:
            raise IngestFormatError(f"`GPU Device list` entry {str(entry)[:80]!r} does not read")
        devices.append(Device(int(match["i"]), match["name"].strip(), match["bus"]))
        if match["host"]:
            hosts.add(match["host"])
    if len(hosts) > 1:
        raise IngestFormatError(f"`GPU Device list` names {len(hosts)} hosts; one run is one node")
    return tuple(devices), next(iter(hosts), None)


def _testcase(case: Any) -> Testcase:
    if not isinstance(case, dict):
        raise IngestFormatError("a testcase that is not an object")
    name, status = case.get("name"), case.get("status")
    if not isinstance(name, str) or _NAME.match(name) is None:
        raise IngestFormatError(f"a testcase named {str(name)[:80]!r}")
    if status not in _STATUS:
        raise IngestFormatError(f"testcase {name}: status {str(status)[:40]!r} (Passed or Waived)")
    if _STATUS[status] == "waived":
        return Testcase(name, "waived", 1)
    description = _text_long(case.get("bandwidth_description"), name)
    total = case.get("sum")
    if isinstance(total, bool) or not isinstance(total, int | float):
        raise IngestFormatError(f"testcase {name}: `sum` is not a number")
    matrix = _matrix(case.get("bandwidth_matrix"), name)
    return Testcase(name, "passed", 1, description, matrix, number(repr(total), "a sum", 1))


def _text_long(value: Any, name: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 200:
        raise IngestFormatError(f"testcase {name}: `bandwidth_description` is not a short string")
    return value


def _matrix(rows: Any, name: str) -> Matrix:
    if not isinstance(rows, list) or not 0 < len(rows) <= MAX_GPUS:
        raise IngestFormatError(f"testcase {name}: `bandwidth_matrix` holds no rows")
    width = len(rows[0]) if isinstance(rows[0], list) else 0
    cells: list[tuple[float | None, ...]] = []
    for row in rows:
        if not isinstance(row, list) or len(row) != width or not 0 < width <= MAX_GPUS:
            raise IngestFormatError(f"testcase {name}: `bandwidth_matrix` rows differ in width")
        cells.append(tuple(_cell(v, name) for v in row))
    return Matrix(tuple(range(len(rows))), tuple(range(width)), tuple(cells))


def _cell(value: Any, name: str) -> float | None:
    if value == "N/A":
        return None
    if not isinstance(value, str) or re.fullmatch(r"[-+]?\d{1,30}(\.\d{0,30})?", value) is None:
        if isinstance(value, str) and value.lower().lstrip("+-") in ("inf", "nan", "infinity"):
            number(value, f"a cell of {name}", 1)
        raise IngestFormatError(f"testcase {name}: cell {str(value)[:20]!r} is no figure")
    return number(value, f"a cell of {name}", 1)
