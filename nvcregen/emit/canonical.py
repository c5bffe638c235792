"""Canonical YAML text: the one deterministic dumper for every YAML file nvcregen writes.

The output reads back as the same data under YAML 1.1 (PyYAML, go-yaml v2 as used
by Kubernetes) and YAML 1.2 (ruamel.yaml): keys are sorted, collections are in
block style with sequences indented under their key, there are never anchors,
aliases, directives or document markers, and a string is written plain only when
no reader of either version can take it for anything but that string.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Final

__all__ = ["dump_yaml", "load_yaml_plain"]

_INDENT: Final = 2

# Implicit ("simple") keys are limited to 1024 characters by PyYAML and ruamel;
# longer keys are written as explicit "? key" entries.
_MAX_SIMPLE_KEY: Final = 1000

# A conservative allow-list: plain strings start with a letter, "_", "/" or "."
# followed by a letter, and contain only ASCII letters, digits and a few
# punctuation characters that are no indicator in block context. This rules out
# every number, timestamp and sexagesimal form, which all start with a digit,
# a sign or "." followed by a digit.
_PLAIN_RE: Final = re.compile(r"(?:[A-Za-z_/]|\.[A-Za-z])[A-Za-z0-9 _./:=+@,()-]*")

# Words some reader resolves to a bool, null or special float; compared lower-cased,
# so case variants (yEs, nULL) are quoted too.
_RESERVED: Final = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ".inf", ".nan"}
)

# Characters escaped inside double quotes: quote and backslash, C0 and C1 controls,
# DEL, line and paragraph separators (line breaks in YAML 1.1), the byte order mark,
# non-characters and lone surrogates.
_ESCAPE_RE: Final = re.compile(
    r'["\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]'
)
_SHORT_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}

# Characters a literal block scalar may hold: tab, line feed and printable characters
# other than LS, PS and the byte order mark (no CR or NEL either: readers normalise
# those line breaks).
_NOT_BLOCK_RE: Final = re.compile(
    r"[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_TRAILING_BLANK_RE: Final = re.compile(r"[ \t](?:\n|\Z)")


def dump_yaml(obj: object, *, header: str | None = None) -> str:
    """Write JSON-like data as canonical YAML text.

    Args:
        obj: A dict with str keys, list, tuple, str, int, float, bool or None,
            nested freely. Shared sub-objects are written out in full each time.
        header: Text put at the top as comment lines, one "# " line per line.

    Returns:
        The YAML text, ending in exactly one newline.

    Raises:
        TypeError: When obj holds a value of another type or a non-str key.
        ValueError: When obj contains itself, or header holds a control character.

    """
    lines = [] if header is None else _header_lines(header)
    try:
        lines.extend(_document_lines(obj))
    except (TypeError, RecursionError):
        # Writing fails on every value of another type, on a key that is no str (no
        # pattern matches it) and on a cycle (too deep): `_validate` says where, once,
        # instead of a walk over every object written that finds nothing.
        _validate(obj, "", set())
        raise
    return "\n".join(lines) + "\n"


def _document_lines(obj: object) -> list[str]:
    """The lines of a document holding `obj`."""
    if isinstance(obj, dict | list | tuple) and obj:
        return _collection_lines(obj, 0, at_end=True)
    head, tail = _scalar(obj, _INDENT, at_end=True)
    if head.startswith(f"|{_INDENT}") and isinstance(obj, str):
        # Readers disagree on what an indentation indicator means at the top level.
        head, tail = _quote(obj), []
    return [head, *tail]


def load_yaml_plain(text: str) -> object:
    """Parse YAML text into plain Python data with ruamel.yaml's YAML 1.2 safe loader.

    Args:
        text: One YAML document.

    Returns:
        dicts, lists, str, int, float, bool and None (timestamps, should the text
        hold unquoted ones, come back as datetime values).

    """
    from ruamel.yaml import YAML  # imported here: a no-op `render --check` never loads YAML

    return YAML(typ="safe", pure=True).load(text)


def _validate(value: object, path: str, active: set[int]) -> None:
    """Raise TypeError or ValueError when value is no JSON-like tree."""
    where = path or "the top level"
    if value is None or isinstance(value, str | int | float):
        return
    if not isinstance(value, dict | list | tuple):
        raise TypeError(
            f"cannot write {type(value).__name__} at {where} as YAML: only dict, list, "
            "tuple, str, int, float, bool and None are supported"
        )
    if id(value) in active:
        raise ValueError(f"cannot write {where} as YAML: it contains itself")
    active.add(id(value))
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(
                    f"cannot write mapping key {key!r} ({type(key).__name__}) at {where} "
                    "as YAML: keys must be str"
                )
            _validate(item, f"{path}.{key}" if path else key, active)
    else:
        for index, item in enumerate(value):
            _validate(item, f"{path}[{index}]", active)
    active.discard(id(value))


def _header_lines(header: str) -> list[str]:
    """Turn header text into comment lines without trailing blanks."""
    lines = []
    for line in header.splitlines():
        if _NOT_BLOCK_RE.search(line):
            raise ValueError(f"header line {line!r} holds a control character")
        text = line.rstrip()
        lines.append(f"# {text}" if text else "#")
    return lines


def _collection_lines(
    value: dict[str, object] | list[object] | tuple[object, ...], indent: int, *, at_end: bool
) -> list[str]:
    """Write a non-empty mapping or sequence as block lines starting at column indent."""
    if isinstance(value, dict):
        return _mapping_lines(value, indent, at_end=at_end)
    return _sequence_lines(value, indent, at_end=at_end)


def _mapping_lines(mapping: dict[str, object], indent: int, *, at_end: bool) -> list[str]:
    """Write a non-empty mapping, keys sorted, keys at column indent."""
    pad = " " * indent
    keys = sorted(mapping)
    lines: list[str] = []
    for number, key in enumerate(keys, start=1):
        key_text = _plain_or_quoted(key)
        if len(key_text) > _MAX_SIMPLE_KEY:
            lines.append(f"{pad}? {key_text}")
            prefix = f"{pad}:"
        else:
            prefix = f"{pad}{key_text}:"
        value = mapping[key]
        if type(value) is str and "\n" not in value:  # most values: as `_scalar` writes it
            lines.append(f"{prefix} {_plain_or_quoted(value)}")
            continue
        last = at_end and number == len(keys)
        lines.extend(_entry(prefix, value, indent + _INDENT, at_end=last, compact=False))
    return lines


def _sequence_lines(
    items: list[object] | tuple[object, ...], indent: int, *, at_end: bool
) -> list[str]:
    """Write a non-empty sequence, its "-" indicators at column indent."""
    prefix = " " * indent + "-"
    lines: list[str] = []
    for number, item in enumerate(items, start=1):
        if type(item) is str and "\n" not in item:  # as `_scalar` writes it
            lines.append(f"{prefix} {_plain_or_quoted(item)}")
            continue
        last = at_end and number == len(items)
        lines.extend(_entry(prefix, item, indent + _INDENT, at_end=last, compact=True))
    return lines


def _entry(prefix: str, value: object, indent: int, *, at_end: bool, compact: bool) -> list[str]:
    """Write value after prefix ("key:" or "-"); nested content goes to column indent.

    A compact entry (a sequence item) starts a nested collection on the prefix line,
    as in "- name: x"; a mapping value starts it on the next line.
    """
    if isinstance(value, dict | list | tuple) and value:
        body = _collection_lines(value, indent, at_end=at_end)
        if compact:
            return [f"{prefix} {body[0][indent:]}", *body[1:]]
        return [prefix, *body]
    head, tail = _scalar(value, indent, at_end=at_end)
    return [f"{prefix} {head}", *tail]


def _scalar(value: object, indent: int, *, at_end: bool) -> tuple[str, list[str]]:
    """Write a scalar or empty collection: the text for its line and any block lines."""
    if isinstance(value, str):
        text = str.__str__(value)
        block = _block_scalar(text, indent, at_end=at_end)
        return block if block is not None else (_plain_or_quoted(text), [])
    return _word(value), []


def _word(value: object) -> str:
    """Write a scalar other than a string, or an empty collection, in flow style."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    raise TypeError(f"cannot write {type(value).__name__} as YAML")


def _float_text(value: float) -> str:
    """Write a float so both YAML versions read it back as that float."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    # YAML 1.1 needs a "." in every float, "1.0e+16" rather than repr's "1e+16".
    mantissa, e, exponent = repr(float(value)).partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _block_scalar(text: str, indent: int, *, at_end: bool) -> tuple[str, list[str]] | None:
    """Write a multi-line string as a literal block scalar, or None when it cannot be one.

    Strings with trailing blanks on a line, with characters a block scalar cannot
    hold, made of line breaks only, or ending the document with several line
    breaks (the output ends in exactly one) are left to double quotes.
    """
    if (
        "\n" not in text
        or not text.strip("\n")
        or _NOT_BLOCK_RE.search(text)
        or _TRAILING_BLANK_RE.search(text)
    ):
        return None
    breaks = len(text) - len(text.rstrip("\n"))
    if breaks > 1 and at_end:
        return None
    chomping = "-" if breaks == 0 else "" if breaks == 1 else "+"
    # Readers guess the indentation from the first line unless told.
    hint = str(_INDENT) if text[0] in " \n" else ""
    body = text[:-1] if breaks else text
    pad = " " * indent
    return f"|{hint}{chomping}", [pad + line if line else "" for line in body.split("\n")]


@functools.lru_cache(maxsize=1 << 16, typed=True)
def _plain_or_quoted(text: str) -> str:
    """Write a string on one line: plain when that is safe, else double-quoted.

    Remembered: a fleet's objects repeat the same keys and values thousands of times.
    """
    return text if _is_plain(text) else _quote(text)


def _is_plain(text: str) -> bool:
    """Whether text, written plain, reads back as that string in YAML 1.1 and 1.2."""
    return (
        _PLAIN_RE.fullmatch(text) is not None
        and not text.endswith((" ", ":"))
        and ": " not in text
        and " #" not in text
        and text.lower() not in _RESERVED
    )


def _quote(text: str) -> str:
    """Write text as a double-quoted scalar with JSON-style escapes valid in YAML."""
    return '"' + _ESCAPE_RE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    """Escape one character for a double-quoted scalar."""
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"
