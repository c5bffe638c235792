"""Bounds on what an untrusted log may hold, each broken bound an error with its own code.

Raw logs come from pods, saved folders and archives (`docs/threat-model.md`), so a
reader never lets one of them raise anything but `IngestFormatError`:

- NVC713: a number longer than `MAX_DIGITS` digits (no size, count, GPU id or node
  count nccl-tests or DCGM prints comes close; Python refuses to convert 4300 digits);
- NVC714: JSON nested deeper than the decoder's recursion allows;
- NVC715: a measurement that is not a finite number (`inf`, `nan`);
- NVC716: JSON whose decoder fails in any other way.

A log is read up to `MAX_LOG_BYTES` (`capped.py`: from a file, a pipe or a device
alike); a longer one is refused whole (NVC700), as `ingest node` refuses an nvidia-smi
output over 16 MiB (NVC800). Kubernetes keeps 10 MiB of a container's current log by
default (the kubelet's `containerLogMaxSize`), and a rank prints about 7 KB of NCCL
INFO lines at INIT,NET (`tests/fixtures/nccl-h200-1gpu/`), so a launcher log of
thousands of ranks stays far inside 256 MiB.

Lines are matched up to `MAX_LINE` characters (`matched`): no regular expression then
scans more than that, so one line of megabytes costs no more than its first 64 KiB.
nccl-tests rows, NCCL_DEBUG lines and DCGM tables are far shorter.
"""

from __future__ import annotations

import json
import math
from typing import Any

from nvcregen.core import codes
from nvcregen.ingest.models import IngestFormatError

MAX_DIGITS = 30
MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_LINE = 64 * 1024
TOO_LONG = codes.NVC713.code
TOO_DEEP = codes.NVC714.code
NOT_FINITE = codes.NVC715.code
UNDECODABLE = codes.NVC716.code


class InputLimitError(IngestFormatError):
    """An input breaks one of the bounds above; `code` says which, `line` where (or None)."""

    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.line = line


def matched(line: str) -> str:
    """The part of a line that regular expressions see: its first `MAX_LINE` characters.

    A longer line is cut at its last blank within the bound, so no word is read cut in
    two (`IB` cut to `I`); one without a blank there is cut at the bound.
    """
    if len(line) <= MAX_LINE:
        return line
    cut = line[:MAX_LINE]
    blank = cut.rfind(" ")
    return cut[:blank] if blank > 0 else cut


def bounded_int(digits: str, what: str, base: int = 10) -> int:
    """An integer of at most `MAX_DIGITS` digits in `base` (sign and blanks aside).

    Raises:
        InputLimitError: NVC713 when it has more.

    """
    count = len(digits.strip().lstrip("+-"))
    if count > MAX_DIGITS:
        raise InputLimitError(TOO_LONG, f"{what} has {count} digits, more than {MAX_DIGITS}")
    return int(digits, base)


def finite(text: str, what: str) -> float:
    """A finite float.

    Raises:
        ValueError: When `text` is not a number at all.
        InputLimitError: NVC715 for `inf` or `nan`.

    """
    value = float(text)
    if not math.isfinite(value):
        raise InputLimitError(NOT_FINITE, f"{what} is {text.strip()!r}, not a finite number")
    return value


def raw_decode(decoder: json.JSONDecoder, text: str, start: int) -> tuple[Any, int]:
    """`decoder.raw_decode` with every failure but a plain syntax error as an InputLimitError.

    Raises:
        json.JSONDecodeError: The text there is not JSON (callers salvage around it).
        InputLimitError: NVC714 nested too deep, NVC713 a number too long, NVC716 any
            other decoder error.

    """
    try:
        return decoder.raw_decode(text, start)
    except json.JSONDecodeError:
        raise
    except RecursionError as exc:
        raise InputLimitError(TOO_DEEP, "JSON nested too deeply to be read") from exc
    except ValueError as exc:  # int() of thousands of digits, and the like
        code = TOO_LONG if "digits" in str(exc) else UNDECODABLE
        raise InputLimitError(code, f"JSON that cannot be decoded: {exc}") from exc
