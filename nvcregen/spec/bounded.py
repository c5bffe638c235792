"""Limits on untrusted JSON and YAML: numbers too long, nesting too deep, keys given twice.

Python refuses to convert an int of more than `MAX_INT_DIGITS` decimal digits
(`sys.int_info`), and its JSON decoder recurses once per nesting level; unbounded, either
surfaces as an internal error deep inside a parser. Every reader of input nvcregen does
not write itself in this run (`index.json`, out/ trees, exports) turns them into
`RefusedInputError`, a `ValueError` with a diagnostic code, which commands print at the
file (NVC605-NVC607). A key given twice in one object is refused with them: readers
disagree on which value wins (Python keeps the last, some YAML tools the first).

This module imports no YAML library: `render --check` reads index.json with it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from nvcregen.core import codes
from nvcregen.core.regular import open_regular

MAX_SITE_BYTES = 1024 * 1024  # a site file (NVC110 above it)
MAX_INT_DIGITS = sys.int_info.default_max_str_digits
TOO_LARGE = 10**MAX_INT_DIGITS  # the smallest int no message could print
TOO_MANY_DIGITS = codes.NVC605.code
TOO_DEEP = codes.NVC606.code
DUPLICATE_KEY = codes.NVC607.code


class RefusedInputError(ValueError):
    """An input nvcregen refuses to read; `code` says why (NVC605, NVC606, NVC607)."""

    def __init__(self, code: str, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line  # 1-based; 0 when not known
        self.column = column


def too_long(length: int, line: int = 0, column: int = 0) -> RefusedInputError:
    """NVC605: a number of `length` characters."""
    return RefusedInputError(
        TOO_MANY_DIGITS,
        f"a number of {length} characters: nvcregen reads numbers of at most"
        f" {MAX_INT_DIGITS} digits",
        line,
        column,
    )


def too_deep() -> RefusedInputError:
    """NVC606: nesting deeper than Python's stack allows."""
    return RefusedInputError(TOO_DEEP, "nested deeper than nvcregen reads")


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise too_long(len(text))
    return int(text)


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise RefusedInputError(DUPLICATE_KEY, "a key is given twice in one JSON object")
    return mapping


def load_json(text: str | bytes) -> Any:
    """Parse JSON from an input nvcregen does not trust (`index.json` of an out/ tree).

    Raises:
        RefusedInputError: A number too long, nesting too deep or a key given twice in
            one object (a `ValueError` too).
        ValueError: It is not JSON (`json.JSONDecodeError`) or not UTF-8.

    """
    try:
        return json.loads(text, parse_int=_json_int, object_pairs_hook=_json_object)
    except RecursionError:  # `[[[[...` a hundred thousand deep
        raise too_deep() from None


def read_limited(path: Path, limit: int) -> bytes | None:
    """A file's bytes, or None when it holds more than `limit` bytes.

    The size is taken from the open file (fstat) before anything is read, so a huge file
    costs no memory; one byte more than `limit` is read, for a file that grows meanwhile.

    Raises:
        OSError: The file cannot be opened or read.

    """
    with open_regular(path) as handle:  # a FIFO is never opened (NotRegularFileError)
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            return None
        # one byte past its size, which would show a file grown meanwhile; never a buffer
        # of `limit` (a 256 MiB cap allocated for each 1 KiB log)
        raw = handle.read(size + 1)
        if len(raw) > size:  # it grew: read on, up to one byte past the limit
            raw += handle.read(limit + 1 - len(raw))
    return raw if len(raw) <= limit else None
