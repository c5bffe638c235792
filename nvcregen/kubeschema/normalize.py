"""Copy an object into plain JSON data before validating it.

Loaders and builders hand over mapping and sequence subclasses (ruamel's CommentedMap,
tuples) and scalar subclasses; JSON Schema validators expect dict, list, str, int, float,
bool and None. An unquoted YAML timestamp (a date or datetime here) reaches the API server
as a string, so it becomes its ISO 8601 string. Anything else (bytes, sets, objects)
cannot be written as JSON, so it becomes a problem instead of a crash.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from nvcregen.kubeschema.problems import SCHEMA_VIOLATION, Issue, JsonPath, Problem

JsonValue = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None


def to_json(value: object) -> tuple[JsonValue, list[Problem]]:
    """Return a plain-JSON copy of `value` and the problems with values JSON cannot hold.

    Data that is plain JSON already (what libyaml and nvcregen's own compiler produce)
    is returned as it is, not copied: validators only read it.
    """
    if _plain(value):
        return value, []  # type: ignore[return-value]
    issues: list[Issue] = []
    data = _copy(value, (), issues)
    return data, [issue.at() for issue in issues]


_PLAIN_SCALARS = (str, int, bool, type(None))


# More containers than any object holds: past it, `_plain` gives up and `_copy` (which
# ends in RecursionError on a value that holds itself, as a recursive walk would) decides.
_CONTAINER_LIMIT = 1_000_000


def _plain(value: Any) -> bool:
    """Whether `value` is made only of dict, list, str, int, bool, None and finite floats.

    This runs on every node of every object: a loop over a stack of containers, their
    scalars tested in place.
    """
    stack = [value]
    budget = _CONTAINER_LIMIT
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            for key in node:
                if type(key) is not str:
                    return False
            items = node.values()
        elif kind is list:
            items = node
        else:
            return _plain_scalar(node)  # only the value itself can be a scalar here
        budget -= 1
        if budget < 0:
            return False
        for item in items:
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                continue
            if kind is dict or kind is list:
                stack.append(item)
            elif not _plain_scalar(item):
                return False
    return True


def _plain_scalar(value: object) -> bool:
    kind = type(value)
    if kind is float:
        return math.isfinite(value)  # type: ignore[arg-type]
    return kind in _PLAIN_SCALARS


def _copy(value: object, path: JsonPath, issues: list[Issue]) -> JsonValue:
    if isinstance(value, Mapping):
        out: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                message = f"key {key!r} is a {type(key).__name__}, not a string"
                issues.append(Issue(path, message, SCHEMA_VIOLATION))
            out[str(key)] = _copy(item, (*path, str(key)), issues)
        return out
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        return [_copy(item, (*path, index), issues) for index, item in enumerate(value)]
    return _scalar(value, path, issues)


def _scalar(value: object, path: JsonPath, issues: list[Issue]) -> JsonValue:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        # ruamel.yaml loads an anchored boolean as ScalarBoolean, an int subclass.
        return bool(value) if type(value).__name__ == "ScalarBoolean" else int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            issues.append(Issue(path, f"{value} is not a JSON number", SCHEMA_VIOLATION))
        return float(value)
    if isinstance(value, date):  # datetime is a date too
        return value.isoformat()
    message = f"a {type(value).__name__} value cannot be written as JSON"
    issues.append(Issue(path, message, SCHEMA_VIOLATION))
    return None
