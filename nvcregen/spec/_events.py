"""Turn ruamel parser events into plain data, spans and load diagnostics (for load.py)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    MappingStartEvent,
    ScalarEvent,
)

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.core.secrets import shown
from nvcregen.spec.bounded import MAX_INT_DIGITS
from nvcregen.spec.positions import escape

MAX_DEPTH = 64

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NUMBERS: tuple[tuple[re.Pattern[str], Callable[[str], object]], ...] = (
    (re.compile(r"[-+]?[0-9]+"), int),
    (re.compile(r"0o[0-7]+"), lambda s: int(s[2:], 8)),
    (re.compile(r"0x[0-9a-fA-F]+"), lambda s: int(s[2:], 16)),
    (re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"), float),
    (re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"), lambda s: float(s.replace(".", ""))),
)
_TOO_LARGE = 10**MAX_INT_DIGITS
_YAML11_BOOLS = frozenset({"yes", "no", "on", "off", "y", "n"})

_SPACES = re.compile(r"[ \t]*")
_TAG = re.compile(r"![^\s,\[\]{}]*")
_QUOTE_KEY = "quote the key, e.g. '1': ..., so that it is a string"


class Mark(Protocol):
    """The parts of a ruamel mark used here (0-based line and column, character index)."""

    line: int
    column: int
    index: int


def resolve_plain(text: str) -> object:
    """Resolve a plain (unquoted) scalar with the YAML 1.2 core schema.

    Args:
        text: The scalar as the parser read it.

    Returns:
        None, a bool, an int, a float, or ``text`` itself when it is a string.
        Integers too long for Python to convert stay strings.

    """
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    for pattern, convert in _NUMBERS:
        if pattern.fullmatch(text):
            try:
                value = convert(text)
            except ValueError:  # more digits than sys.get_int_max_str_digits()
                return text
            # hex and octal convert at any length, but no message could print the int
            return text if isinstance(value, int) and abs(value) >= _TOO_LARGE else value
    return text


def is_unconvertible_number(text: str, value: object) -> bool:
    """Whether a plain scalar is an int of more decimal digits than Python converts."""
    return value is text and any(p.fullmatch(text) for p, _ in _NUMBERS[:3])  # the int forms


@dataclass
class _Frame:
    """An open mapping or sequence while events stream in."""

    is_map: bool
    pointer: str | None  # None: not recorded (inside a rejected key or a duplicate)
    container: dict[str, object] | list[object]
    start: Mark
    flow: bool
    is_key: bool  # the collection is itself used as a mapping key
    has_key: bool = False  # a mapping waits for the value of `key`
    key: str | None = None  # None: the pending key is rejected or a duplicate
    key_end: Mark | None = None
    index: int = 0
    first_lines: dict[str, int] = field(default_factory=dict)


class Builder:
    """Turn parser events into plain data, spans and diagnostics without expanding aliases."""

    def __init__(self, path: str, text: str, tabs: list[int]) -> None:
        self.path, self.text, self.tabs = path, text, tabs
        self.tolerated: set[int] = set()  # tab indexes inside parsed scalars/flow collections
        self.diags: list[Diagnostic] = []
        self.spans: dict[str, Span] = {}
        self.key_spans: dict[str, Span] = {}
        self.raw: dict[str, str] = {}
        self.stack: list[_Frame] = []
        self.documents = 0
        self.root: object = None
        self.has_root = False
        self.last: Mark | None = None

    def error(self, span: Span, code: str, message: str, hint: str, ptr: str | None = "") -> None:
        """Record an error diagnostic."""
        self.diags.append(Diagnostic(span, Severity.ERROR, code, message, ptr or "", hint))

    def span(self, start: Mark, end: Mark | None = None) -> Span:
        """Return the span from parser marks; single-line ranges get an end column."""
        single = end is not None and end.line == start.line
        end_column = end.column + 1 if single and end is not None else None
        return Span(self.path, start.line + 1, start.column + 1, end_column)

    def feed(self, event: Any) -> bool:
        """Take one parser event; return False when loading must stop."""
        self.last = event.start_mark
        if isinstance(event, DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                msg = "a site file must hold exactly one YAML document"
                self.error(
                    self.span(event.start_mark),
                    codes.NVC107.code,
                    msg,
                    "split it into one file per site",
                )
                return False
        elif isinstance(event, CollectionEndEvent):
            self.end_collection(event)
        elif isinstance(event, AliasEvent | ScalarEvent | CollectionStartEvent):
            return self.node(event)
        return True

    def slot(self) -> tuple[str | None, bool]:
        """Return (pointer, is_key) for the node that comes next."""
        if not self.stack:
            return "", False
        top = self.stack[-1]
        if top.is_map:
            if not top.has_key:
                return None, True
            if top.pointer is None or top.key is None:
                return None, False
            return f"{top.pointer}/{escape(top.key)}", False
        return (None if top.pointer is None else f"{top.pointer}/{top.index}"), False

    def place(self, value: object) -> None:
        """Store a finished value in its parent (or as the root)."""
        if not self.stack:
            self.root, self.has_root = value, True
            return
        top = self.stack[-1]
        if isinstance(top.container, list):
            top.container.append(value)
            top.index += 1
            return
        if top.key is not None:
            top.container[top.key] = value
        top.has_key = False

    def node(self, event: Any) -> bool:
        """Check anchors and tags of any node, then dispatch on its kind and position."""
        ptr, is_key = self.slot()
        span = self.span(event.start_mark, event.end_mark)
        if isinstance(event, AliasEvent):
            msg = f"alias *{event.anchor} is not allowed in a site file"
            self.error(span, codes.NVC105.code, msg, "write the value out in full", ptr)
        elif event.anchor is not None:
            msg = f"anchor &{event.anchor} is not allowed in a site file"
            self.error(
                span, codes.NVC105.code, msg, "remove the anchor and write values out in full", ptr
            )
        if getattr(event, "ctag", None) is not None:
            found = _TAG.search(self.text, event.start_mark.index)
            tag = found.group() if found else str(event.ctag)
            msg = f"YAML tag {tag} is not allowed in a site file"
            self.error(
                span, codes.NVC112.code, msg, "remove the tag; quote the value to make it a string"
            )
        if isinstance(event, CollectionStartEvent):
            return self.start_collection(event, ptr, is_key)
        if is_key:
            self.key(event, span)
        elif isinstance(event, AliasEvent):
            self.place(None)
        else:
            self.scalar(event, ptr, span)
        return True

    def key(self, event: Any, span: Span) -> None:
        """Handle a scalar or alias in key position of the innermost mapping."""
        top = self.stack[-1]
        top.has_key, top.key, top.key_end = True, None, event.end_mark
        if isinstance(event, AliasEvent):
            return
        name: str = event.value
        plain = event.style is None and event.ctag is None
        value = resolve_plain(name) if plain else name
        if not isinstance(value, str):
            what = f"mapping key {shown(name, quote='`')}" if name else "an empty mapping key"
            msg = f"{what} is read as {_kind(value)}, not a string"
            self.error(span, codes.NVC111.code, msg, _QUOTE_KEY, top.pointer)
        elif plain and name == "<<":
            msg = "merge key <<: is not allowed in a site file"
            self.error(
                span, codes.NVC105.code, msg, "write the merged keys out in full", top.pointer
            )
        elif name in top.first_lines:
            key = shown(name, quote="'")  # a key is free text: shown only when known safe
            msg = f"duplicate key {key} (first defined on line {top.first_lines[name]})"
            ptr = None if top.pointer is None else f"{top.pointer}/{escape(name)}"
            self.error(span, codes.NVC104.code, msg, "remove one of the two entries", ptr)
        else:
            top.first_lines[name] = span.line
            top.key = name
            if top.pointer is not None:
                self.key_spans[f"{top.pointer}/{escape(name)}"] = span

    def scalar(self, event: Any, ptr: str | None, span: Span) -> None:
        """Handle a scalar value: resolve it, record its span and raw text, warn on 1.1 booleans."""
        text: str = event.value
        plain = event.style is None and event.ctag is None
        value = resolve_plain(text) if plain else text
        if not text and plain:
            span = self.empty_span(span)
        if event.start_mark.line != event.end_mark.line:
            self.tolerate(event.start_mark.index, event.end_mark.index)
        if not self.stack and value is None and not text:
            msg = "the file is empty or holds only comments"
            self.error(Span(self.path), codes.NVC106.code, msg, "write the site as a YAML mapping")
        elif not self.stack:
            self.not_mapping(span, value)
        if plain and text.lower() in _YAML11_BOOLS:
            self.diags.append(_yaml11_warning(span, text, ptr))
        if plain and is_unconvertible_number(text, value):
            msg = f"a number of {len(text)} characters; nvcregen reads {MAX_INT_DIGITS} digits"
            self.error(span, codes.NVC118.code, msg, "write a smaller number", ptr)
        if ptr is not None:
            self.spans[ptr] = span
            if not isinstance(value, str):
                self.raw[ptr] = self.text[event.start_mark.index : event.end_mark.index]
        self.place(value)

    def empty_span(self, span: Span) -> Span:
        """Place an empty mapping value just after its `:`, not at the next token."""
        top = self.stack[-1] if self.stack else None
        if top is None or not top.is_map or top.key_end is None:
            return span
        end = top.key_end
        spaces = _SPACES.match(self.text, end.index)
        colon = spaces.end() if spaces else end.index
        if colon >= len(self.text) or self.text[colon] != ":":
            return span
        column = end.column + (colon - end.index) + 2
        return Span(self.path, end.line + 1, column, column)

    def not_mapping(self, span: Span, value: object) -> None:
        """Report a top level that is not a mapping."""
        msg = f"the top level must be a mapping of keys to values, not {_kind(value)}"
        self.error(
            span, codes.NVC108.code, msg, "start the file with `apiVersion: ...` and `kind: Site`"
        )

    def start_collection(self, event: Any, ptr: str | None, is_key: bool) -> bool:
        """Open a mapping or sequence; False when nesting is too deep."""
        span = self.span(event.start_mark)
        if len(self.stack) >= MAX_DEPTH:
            msg = f"nesting is deeper than {MAX_DEPTH} levels"
            self.error(span, codes.NVC110.code, msg, "flatten the structure", ptr)
            return False
        is_map = isinstance(event, MappingStartEvent)
        container: dict[str, object] | list[object] = {} if is_map else []
        if is_key:
            msg = "a mapping key must be a plain string, not a mapping or sequence"
            self.error(span, codes.NVC111.code, msg, _QUOTE_KEY, self.stack[-1].pointer)
        else:
            if not self.stack and not is_map:
                self.not_mapping(span, container)
            if ptr is not None:
                self.spans[ptr] = span
            self.place(container)
        flow = bool(event.flow_style)
        self.stack.append(_Frame(is_map, ptr, container, event.start_mark, flow, is_key))
        return True

    def end_collection(self, event: Any) -> None:
        """Close the innermost collection."""
        frame = self.stack.pop()
        if frame.flow:
            self.tolerate(frame.start.index, event.end_mark.index)
        if frame.is_key:
            top = self.stack[-1]
            top.has_key, top.key, top.key_end = True, None, event.end_mark

    def tolerate(self, start: int, end: int) -> None:
        """Accept tabs between two indexes: they are content or flow-context spacing."""
        i = bisect.bisect_left(self.tabs, start)
        while i < len(self.tabs) and self.tabs[i] < end:
            self.tolerated.add(self.tabs[i])
            i += 1


def _kind(value: object) -> str:
    """Name the YAML type of a resolved value for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a sequence"
    return "a string"


def _yaml11_warning(span: Span, text: str, ptr: str | None) -> Diagnostic:
    """Warn that YAML 1.1 readers take `text` for a boolean."""
    msg = f"`{text}` is the string {text!r} in YAML 1.2 but a boolean in YAML 1.1 tools"
    hint = f'quote it ("{text}") if you mean a string, or write true/false'
    return Diagnostic(span, Severity.WARNING, codes.NVC109.code, msg, ptr or "", hint)
