"""JSON pointers and the loaded source document that maps them to spans."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from nvcregen.core.errors import Span

# The only line breaks the loader lets through (see load.py); ruamel counts the same.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def escape(part: str | int) -> str:
    """Return one reference token of a JSON pointer (RFC 6901 §3), escaped.

    Args:
        part: A mapping key or a sequence index.

    Returns:
        The token with ``~`` written as ``~0`` and ``/`` as ``~1``.

    """
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer(parts: Iterable[str | int]) -> str:
    """Build an RFC 6901 JSON pointer.

    Args:
        parts: Mapping keys and sequence indexes from the root down.

    Returns:
        ``""`` for the root, otherwise e.g. ``"/spec/nodePools/0/gpusPerNode"``.

    """
    return "".join("/" + escape(part) for part in parts)


def split_pointer(p: str) -> list[str]:
    """Split an RFC 6901 JSON pointer into its unescaped reference tokens.

    Args:
        p: A pointer such as ``"/spec/nodePools/0"``; ``""`` is the root.

    Returns:
        The tokens, e.g. ``["spec", "nodePools", "0"]``; ``[]`` for the root.

    Raises:
        ValueError: When ``p`` is neither empty nor starts with ``/``.

    """
    if not p:
        return []
    if not p.startswith("/"):
        raise ValueError(f"JSON pointer must be empty or start with '/': {p!r}")
    return [token.replace("~1", "/").replace("~0", "~") for token in p[1:].split("/")]


def parent_pointer(p: str) -> str | None:
    """Return the pointer one level up, or None for the root."""
    if not p:
        return None
    return p[: p.rfind("/")]


@dataclass(frozen=True)
class Document:
    """A loaded site file: plain data plus where every part of it was written.

    Attributes:
        path: The file name shown in diagnostics.
        text: The decoded source text (a leading BOM removed).
        data: Plain Python data: dicts with str keys, lists, str, int, float,
            bool and None.
        spans: JSON pointer -> span of the value. Lines and columns are 1-based
            and count characters; ``end_column`` (exclusive: one past the last
            character) is set for scalars written on a single line. A block
            mapping's span starts at its first key, a block sequence's at its
            first ``-``.
        key_spans: JSON pointer of a mapping member -> span of its key.
        raw: JSON pointer -> exact source text of each plain (unquoted) scalar
            that resolved to int, float, bool or null (``""`` for an empty
            value), e.g. ``"1.30"`` for the number 1.3.

    """

    path: str
    text: str
    data: object
    spans: Mapping[str, Span]
    key_spans: Mapping[str, Span]
    raw: Mapping[str, str]

    def span(self, pointer: str, *, key: bool = False) -> Span:
        """Return where the value (or with ``key=True`` the key) at a pointer was written.

        Args:
            pointer: An RFC 6901 JSON pointer into ``data``.
            key: Prefer the span of the mapping key when there is one.

        Returns:
            The span at ``pointer``, else that of its nearest ancestor that has
            one, else line 1 column 1 of the file.

        """
        if key and pointer in self.key_spans:
            return self.key_spans[pointer]
        current: str | None = pointer
        while current is not None:
            found = self.spans.get(current)
            if found is not None:
                return found
            current = parent_pointer(current)
        return Span(self.path, 1, 1)

    def source_line(self, line: int) -> str:
        """Return the text of a 1-based line without its line break ("" if out of range)."""
        if 1 <= line <= len(self._lines):
            return self._lines[line - 1]
        return ""

    @cached_property
    def _lines(self) -> list[str]:
        return LINE_BREAK.split(self.text)
