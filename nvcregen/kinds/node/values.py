"""The words and units `nvidia-smi` prints, read into numbers and flags, and lines found.

`N/A`, `[N/A]`, `Not Supported`, `Unknown Error` and kin are all unknown (`None`), never
zero or false: a fact the driver did not give is not a healthy fact.

Every number is parsed by `integer`, which takes at most `limits.MAX_DIGITS` digits
(Python refuses to convert 4,300 and raised an internal error). A longer one is refused
as unreadable: the readers read each value through `Refusals`, which keeps the refusal
(NVC800, at the value's line) and leaves the fact unknown, and read on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from nvcregen.core.errors import Span
from nvcregen.ingest.limits import InputLimitError, bounded_int
from nvcregen.kinds.node.models import UNREADABLE, Unjudged

_NUMBER = re.compile(r"^\s*(-?\d+)(?:\.\d+)?\s*(?:x|C|W|MHz|MiB|us|bank\(s\)|%)?\s*$")
_HEX = re.compile(r"^\s*0x([0-9a-fA-F]+)\s*$")
_TRUE = {"enabled", "active", "yes", "true", "1"}
_FALSE = {"disabled", "not active", "no", "false", "0"}


def known(value: str | None) -> str | None:
    """The value, or None where nvidia-smi printed a placeholder for an unknown."""
    if value is None:
        return None
    text = value.strip()
    if not text or text.strip("[]").lower() in ("n/a", "not supported", "unknown error", "none"):
        return None
    if text.lower().startswith(("unknown error", "requested functionality")):
        return None
    return text


def integer(value: str | None) -> int | None:
    """`16x`, `37 C`, `3072 bank(s)`, `0x5` -> the number; unknowns -> None.

    Raises:
        InputLimitError: The number has more than `limits.MAX_DIGITS` digits.

    """
    text = known(value)
    if text is None:
        return None
    if (match := _NUMBER.match(text)) is not None:
        return bounded_int(match.group(1), "the number")
    if (match := _HEX.match(text)) is not None:
        return bounded_int(match.group(1), "the hexadecimal number", 16)
    return None


T = TypeVar("T")
REFUSED_HINT = (
    "no nvidia-smi output prints a number this long: the output is damaged or was not made"
    " by nvidia-smi; capture it again (the node is not cleared on this fact until then)"
)


class Refusals:
    """The values one output refused (numbers too long), each kept with its place."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Unjudged] = []

    def read(
        self,
        reader: Callable[[str | None], T],
        raw: str | None,
        fact: str,
        span: Span | None,
        gpu: int | None = None,
    ) -> T | None:
        """`reader(raw)`, or None with the refusal kept when the value is refused."""
        try:
            return reader(raw)
        except InputLimitError as exc:
            where = span or Span(self.file)
            if not any((u.span, u.gpu) == (where, gpu) for u in self.found):  # read twice
                check = fact if gpu is None else f"GPU {gpu} {fact}"
                self.found.append(Unjudged(UNREADABLE, check, str(exc), REFUSED_HINT, where, gpu))
            return None


def flag(value: str | None) -> bool | None:
    """`Enabled`/`Active`/`Yes` -> True, `Disabled`/`Not Active`/`No` -> False."""
    text = known(value)
    if text is None:
        return None
    word = text.lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    return None


def nonzero(value: int | None) -> bool:
    """Whether a count is known and above zero."""
    return value is not None and value > 0


class LineFinder:
    """Finds the line of a nested label, walking down from a starting line.

    `find(start, ("ecc_errors", "volatile", "dram_uncorrectable"))` finds the first line
    holding `ecc_errors` at or after `start`, then `volatile` after it, and so on: enough to
    tell the volatile from the aggregate count of the same name without a second parser.
    """

    def __init__(self, text: str, file: str, pattern: str) -> None:
        self._lines = text.splitlines()
        self._file = file
        self._pattern = pattern  # a format string with {label}, e.g. "<{label}>"

    def line_of(self, needle: str, start: int = 0) -> int | None:
        """The 0-based index of the first line at or after `start` that holds `needle`."""
        for index in range(start, len(self._lines)):
            if needle in self._lines[index]:
                return index
        return None

    def find(self, start: int, labels: tuple[str, ...]) -> Span:
        """The span of the last label of `labels`, each searched after the one before."""
        line = start
        for label in labels:
            found = self.line_of(self._pattern.format(label=label), line)
            if found is None:
                break
            line = found
        text = self._lines[line] if line < len(self._lines) else ""
        column = len(text) - len(text.lstrip()) + 1
        return Span(self._file, line + 1, column)
